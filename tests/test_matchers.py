"""Value matchers and paths (webmcp_eval/matchers.py): each operator passes and fails."""

from __future__ import annotations

import re

import pytest

from webmcp_eval.matchers import (
    MISSING,
    OPERATORS,
    PathError,
    is_operator,
    match,
    matcher_problems,
    parse_path,
    refs_in,
    resolve,
    short,
    substitute,
)


def ok(matcher, value, captures=None) -> bool:
    passed, why = match(matcher, value, captures)
    if not passed:
        assert why, "a failed match must say why"
    return passed


# ---- scalars -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("matcher", "value"),
    [("taipei", "taipei"), (3, 3), (3, 3.0), (2.5, 2.5), (True, True), (False, False), (None, None)],
)
def test_scalar_equal_passes(matcher, value):
    assert ok(matcher, value)


@pytest.mark.parametrize(
    ("matcher", "value"),
    [
        ("taipei", "Taipei"),
        ("taipei", "kaohsiung"),
        (3, 4),
        (3, "3"),
        ("3", 3),
        (None, 0),
        (None, ""),
        (0, None),
        (False, None),
    ],
)
def test_scalar_unequal_fails(matcher, value):
    assert not ok(matcher, value)


@pytest.mark.parametrize(("matcher", "value"), [(True, 1), (1, True), (False, 0), (0, False), (1.0, True)])
def test_bool_is_never_equal_to_an_int(matcher, value):
    passed, why = match(matcher, value)
    assert not passed
    assert "expected" in why


def test_scalar_against_missing_fails_and_says_missing():
    passed, why = match("x", MISSING)
    assert not passed
    assert "missing" in why


# ---- mappings and lists ------------------------------------------------------


def test_mapping_is_a_partial_match():
    value = {"status": "ok", "data": {"count": 1, "events": [{"id": "evt-1", "title": "A"}]}, "extra": 1}
    assert ok({"status": "ok"}, value)
    assert ok({"data": {"count": 1}}, value)
    assert ok({}, value)


def test_mapping_fails_on_a_wrong_or_missing_key_and_names_it():
    value = {"status": "ok", "data": {"count": 1}}
    passed, why = match({"data": {"count": 2}}, value)
    assert not passed and why.startswith("data: count:")
    passed, why = match({"code": "CONFIRMATION_REQUIRED"}, value)
    assert not passed and "code" in why and "missing" in why


def test_mapping_against_a_non_mapping_fails():
    assert not ok({"a": 1}, [1])
    assert not ok({"a": 1}, "a")
    assert not ok({}, None)
    assert not ok({}, MISSING)


def test_list_is_exact_element_by_element():
    assert ok([1, 2], [1, 2])
    assert ok([], [])
    assert not ok([1, 2], [2, 1])
    assert not ok([1, 2], [1, 2, 3])
    assert not ok([1, 2, 3], [1, 2])
    assert not ok([1], "1")
    assert not ok([], {})


def test_list_elements_are_matched_partially_when_they_are_mappings():
    value = [{"id": "evt-1", "title": "A"}]
    assert ok([{"id": "evt-1"}], value)
    passed, why = match([{"id": "evt-2"}], value)
    assert not passed and why.startswith("[0]: id:")


def test_list_of_booleans_does_not_equal_list_of_ints():
    assert not ok([True, False], [1, 0])


# ---- operators ---------------------------------------------------------------


def test_contains_on_a_string():
    assert ok({"$contains": "previous"}, "Ignore previous instructions")
    assert not ok({"$contains": "Previous"}, "Ignore previous instructions")


def test_contains_on_a_list_matches_an_element():
    assert ok({"$contains": "b"}, ["a", "b"])
    assert ok({"$contains": {"id": "evt-1"}}, [{"id": "evt-0"}, {"id": "evt-1", "x": 1}])
    assert not ok({"$contains": "c"}, ["a", "b"])
    assert not ok({"$contains": 1}, [True])


def test_contains_needs_a_string_or_list():
    assert not ok({"$contains": "1"}, 1)
    assert not ok({"$contains": "a"}, {"a": 1})
    assert not ok({"$contains": "a"}, MISSING)


def test_pattern():
    assert ok({"$pattern": r"^evt-[a-z0-9]+$"}, "evt-q4m8z1")
    assert ok({"$pattern": "(?i)traceback"}, "a TraceBack here")
    assert not ok({"$pattern": r"^evt-"}, "reg-h8k1")
    assert not ok({"$pattern": "1"}, 1)
    assert not ok({"$pattern": "x"}, MISSING)


def test_any_needs_presence_only():
    assert ok({"$any": True}, None)
    assert ok({"$any": True}, "")
    assert ok({"$any": True}, 0)
    assert not ok({"$any": True}, MISSING)


def test_in():
    assert ok({"$in": ["taipei", "kaohsiung"]}, "taipei")
    assert not ok({"$in": ["taipei", "kaohsiung"]}, "tokyo")
    assert not ok({"$in": [1, 2]}, True)
    assert not ok({"$in": ["a"]}, MISSING)


def test_len():
    assert ok({"$len": 2}, [1, 2])
    assert ok({"$len": 0}, [])
    assert ok({"$len": 3}, "abc")
    assert ok({"$len": 1}, {"a": 1})
    assert not ok({"$len": 1}, [1, 2])
    assert not ok({"$len": 1}, 1)
    assert not ok({"$len": 0}, MISSING)


def test_absent():
    assert ok({"$absent": True}, MISSING)
    assert not ok({"$absent": True}, None)
    assert not ok({"$absent": True}, "taipei")
    assert ok({"$absent": False}, "x")
    assert not ok({"$absent": False}, MISSING)


def test_not():
    assert ok({"$not": {"$pattern": "(?i)traceback|sqlite"}}, "please retry later")
    assert not ok({"$not": {"$pattern": "(?i)traceback|sqlite"}}, "sqlite3.OperationalError")
    assert ok({"$not": "a"}, "b")
    assert not ok({"$not": "a"}, "a")


def test_several_operators_must_all_hold():
    matcher = {"$pattern": "^evt-", "$len": 5}
    assert ok(matcher, "evt-1")
    assert not ok(matcher, "evt-12")
    assert not ok(matcher, "reg-1")


def test_operators_nested_in_a_partial_mapping():
    matcher = {"query": {"$contains": "WebMCP"}, "city": {"$absent": True}}
    assert ok(matcher, {"query": "WebMCP 入門"})
    assert not ok(matcher, {"query": "WebMCP", "city": "taipei"})


def test_an_unknown_operator_raises():
    with pytest.raises(ValueError, match=r"\$regex"):
        match({"$regex": "x"}, "x")


# ---- $ref --------------------------------------------------------------------


def test_ref_equal_to_the_captured_value():
    captures = {"first": "evt-1"}
    assert ok({"$ref": "first"}, "evt-1", captures)
    assert not ok({"$ref": "first"}, "evt-2", captures)
    assert not ok({"$ref": "first"}, MISSING, captures)


def test_ref_to_a_captured_int_is_not_a_bool():
    assert not ok({"$ref": "n"}, True, {"n": 1})
    assert ok({"$ref": "n"}, 1, {"n": 1})


def test_ref_without_a_capture_fails_and_says_so():
    passed, why = match({"$ref": "first"}, "evt-1", {})
    assert not passed
    assert "captured" in why and "first" in why
    passed, _ = match({"$ref": "first"}, "evt-1")
    assert not passed


def test_ref_inside_a_result_matcher():
    result = {"status": "ok", "data": {"event": {"id": "evt-1"}}}
    assert ok({"data": {"event": {"id": {"$ref": "first"}}}}, result, {"first": "evt-1"})
    assert not ok({"data": {"event": {"id": {"$ref": "first"}}}}, result, {"first": "evt-9"})


# ---- paths -------------------------------------------------------------------


def test_parse_path():
    assert parse_path("result.data.events[0].id") == ["result", "data", "events", 0, "id"]
    assert parse_path("events[id=evt-1].seatsLeft") == ["events", ("id", "evt-1"), "seatsLeft"]
    assert parse_path("saved") == ["saved"]
    assert parse_path("a[0][1]") == ["a", 0, 1]
    assert parse_path("a[k=]") == ["a", ("k", "")]


@pytest.mark.parametrize("path", ["", ".", "..", "a[", "a[x]", "a[-1]", "a]", "a[=x]"])
def test_parse_path_errors(path):
    with pytest.raises(PathError):
        parse_path(path)


def test_path_error_is_a_value_error():
    assert issubclass(PathError, ValueError)


DATA = {
    "result": {"data": {"events": [{"id": "evt-1", "seatsLeft": 3}, {"id": "evt-2", "seatsLeft": 0}]}},
    "events": [{"id": "evt-1", "seatsLeft": 3}, {"id": 7, "seatsLeft": 1}],
    "zero": 0,
    "none": None,
}


def test_resolve_by_key_and_index():
    assert resolve(DATA, "result.data.events[0].id") == "evt-1"
    assert resolve(DATA, "result.data.events[1].seatsLeft") == 0
    assert resolve(DATA, "zero") == 0
    assert resolve(DATA, "none") is None


def test_resolve_by_selector():
    assert resolve(DATA, "events[id=evt-1].seatsLeft") == 3
    assert resolve(DATA, "events[id=7].seatsLeft") == 1  # selector values compare as text


@pytest.mark.parametrize(
    "path",
    [
        "result.data.events[2].id",  # index out of range
        "result.data.events[0].title",  # key not there
        "events[id=evt-9].seatsLeft",  # no element selected
        "zero.x",  # key into a scalar
        "zero[0]",  # index into a scalar
        "result[id=x]",  # selector on a mapping
        "result.data[0]",  # index into a mapping
        "nothing",
        "none.x",
    ],
)
def test_resolve_missing(path):
    assert resolve(DATA, path) is MISSING


def test_resolve_bad_path_raises():
    with pytest.raises(PathError):
        resolve(DATA, "events[")


def test_selector_does_not_pick_an_element_without_the_field():
    assert resolve([{"x": 1}], "[id=None]") is MISSING


# ---- helpers used by validate and the reference agent -----------------------


def test_is_operator():
    assert is_operator({"$any": True})
    assert not is_operator({"a": 1})
    assert not is_operator({})
    assert not is_operator("$any")


def problems_of(matcher) -> list[tuple[tuple, str]]:
    return matcher_problems(matcher)


def test_matcher_problems_find_unknown_operators_anywhere_with_their_path():
    assert [p for p, _ in problems_of({"a": {"$regex": "x"}})] == [("a", "$regex")]
    assert [p for p, _ in problems_of([{"$not": {"$regexp": "x"}}])] == [(0, "$not", "$regexp")]
    assert [p for p, _ in problems_of({"data": {"events": [{"id": {"$eq": 1}}]}})] == [
        ("data", "events", 0, "id", "$eq")
    ]
    assert [p for p, _ in problems_of({"$in": [{"$foo": 1}]})] == [("$in", 0, "$foo")]
    (_, message), *_ = problems_of({"$regex": "x"})
    assert "unknown matcher $regex" in message and "$pattern" in message  # names the known ones


def test_matcher_problems_accept_every_known_operator_with_a_good_argument():
    good = {
        "$contains": "x",
        "$pattern": "^a+$",
        "$any": True,
        "$ref": "first",
        "$in": ["a", 1],
        "$len": 0,
        "$absent": False,
        "$not": {"$type": "null"},
        "$type": "integer",
        "$gt": 1,
        "$gte": 1.5,
        "$lt": -2,
        "$lte": 0,
    }
    assert set(good) == OPERATORS
    assert all(problems_of({op: arg}) == [] for op, arg in good.items())
    assert problems_of(None) == []
    assert problems_of("$regex") == []  # a plain string value is not an operator
    assert problems_of({"city": "taipei", "q": {"$contains": "x"}}) == []


@pytest.mark.parametrize(
    ("matcher", "words"),
    [
        ({"$in": "evt-a7k2p9"}, ["$in takes a list", '["evt-a7k2p9"]']),
        ({"$in": 5}, ["$in takes a list"]),
        ({"$pattern": "([unclosed"}, ["$pattern", "does not compile"]),
        ({"$pattern": 5}, ["$pattern takes a regular expression"]),
        ({"$len": -1}, ["$len takes a whole number"]),
        ({"$len": "3"}, ["$len takes a whole number"]),
        ({"$len": True}, ["$len takes a whole number"]),
        ({"$any": False}, ["$any takes true"]),
        ({"$absent": "yes"}, ["$absent takes true or false"]),
        ({"$ref": 3}, ["$ref takes the name"]),
        ({"$type": "str"}, ["$type takes one of", "string"]),
        ({"$gt": "5"}, ["$gt takes a number"]),
        ({"$lte": True}, ["$lte takes a number"]),
        ({"$gte": float("nan")}, ["$gte takes a number"]),
        ({"$contains": "x", "contains": "x"}, ["mixes operators ($contains) with field names (contains)"]),
        ({1: "x"}, ["field name 1 is not a string"]),
    ],
)
def test_matcher_problems_name_the_operator_and_what_it_takes(matcher, words):
    found = problems_of({"arg": matcher})
    assert len(found) == 1, found
    path, message = found[0]
    assert path[0] == "arg"
    for word in words:
        assert word in message, message


@pytest.mark.parametrize(
    "matcher",
    [
        {"$in": "evt-a7k2p9"},
        {"$in": 5},
        {"$pattern": "([unclosed"},
        {"$len": -1},
        {"$type": "str"},
        {"$gt": "5"},
        {"$contains": "x", "contains": "x"},
        {"$any": False},
    ],
)
def test_a_bad_operator_argument_raises_at_check_time_naming_the_operator(matcher):
    """The second line of defence: never iterate a string for $in, never a silent miss or match."""
    op = next(k for k in matcher if k.startswith("$"))
    with pytest.raises(ValueError, match=re.escape(op)):
        match(matcher, "evt-a7k2p9")


def test_in_with_a_string_never_matches_by_letters():
    # The wrong verdict of the issue: "e" is a letter of "evt-a7k2p9", so iterating the string "matched".
    with pytest.raises(ValueError, match=r"\$in takes a list"):
        match({"$in": "evt-a7k2p9"}, "e")


# ---- $type and the comparisons ------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "yes", "no"),
    [
        ("string", ["", "x"], [1, None, True, [], {}]),
        ("number", [1, 1.5, 0, -3], ["1", True, None, []]),
        ("integer", [1, 0, -3, 2.0], [1.5, "1", True, None]),
        ("boolean", [True, False], [0, 1, "true", None]),
        ("object", [{}, {"a": 1}], [[], "x", None]),
        ("array", [[], [1]], [{}, "x", None]),
        ("null", [None], [0, "", False, [], MISSING]),
    ],
)
def test_type(kind, yes, no):
    for value in yes:
        assert ok({"$type": kind}, value), (kind, value)
    for value in no:
        assert not ok({"$type": kind}, value), (kind, value)
    assert not ok({"$type": kind}, MISSING)


def test_comparisons():
    assert ok({"$gt": 1}, 2) and not ok({"$gt": 2}, 2)
    assert ok({"$gte": 2}, 2) and not ok({"$gte": 2.5}, 2)
    assert ok({"$lt": 3}, 2.5) and not ok({"$lt": 2}, 2)
    assert ok({"$lte": 2}, 2.0) and not ok({"$lte": 1}, 2)
    assert ok({"$gt": 0, "$lte": 10}, 10) and not ok({"$gt": 0, "$lte": 10}, 0)


@pytest.mark.parametrize("value", ["3", True, None, [3], MISSING])
def test_comparisons_need_a_number(value):
    passed, why = match({"$gt": 1}, value)
    assert not passed and why


def test_refs_in():
    assert refs_in({"eventId": {"$ref": "first"}}) == ["first"]
    assert sorted(refs_in({"a": [{"$ref": "x"}], "b": {"c": {"$ref": "y"}}})) == ["x", "y"]
    assert refs_in({"a": 1, "b": [1, "$ref"]}) == []
    assert refs_in(None) == []


def test_substitute_replaces_refs():
    template = {"eventId": {"$ref": "first"}, "ids": [{"$ref": "first"}, "x"], "n": 1}
    assert substitute(template, {"first": "evt-1"}) == {"eventId": "evt-1", "ids": ["evt-1", "x"], "n": 1}


def test_substitute_leaves_other_operators_and_values():
    assert substitute({"q": {"$contains": "x"}}, {}) == {"q": {"$contains": "x"}}
    assert substitute("plain", {}) == "plain"


def test_substitute_errors_on_an_unknown_ref():
    with pytest.raises(KeyError, match="first"):
        substitute({"eventId": {"$ref": "first"}}, {"other": 1})


def test_short():
    assert short(MISSING) == "(missing)"
    assert short({"b": 1, "a": "台北"}) == '{"a": "台北", "b": 1}'
    text = short("x" * 200, limit=20)
    assert len(text) == 20 and text.endswith("…")


# ---- the second line of defence: the checks never judge with a rule they cannot read ---------


def _calls_case(forbidden: str):
    from webmcp_eval.suite.loader import parse_case

    text = (
        "id: X-01\nbehaviour: selection\ntitle: t\nstart_route: /events\nsteps:\n  - user: hi\n"
        f"expect:\n  calls:\n    forbidden:\n      - {forbidden}\n"
    )
    return parse_case(text, "x.yaml").case


def _trace_with(*calls):
    from webmcp_eval.trace import ToolCall, Trace

    made = [ToolCall(index=i, step=0, tool=t, args=a) for i, (t, a) in enumerate(calls)]
    return Trace(run_id="r", trial_id="X-01.t1", case_id="X-01", behaviour="selection", start_route="/", calls=made)


def test_a_forbidden_in_with_a_string_is_a_checker_error_not_a_pass():
    """Before: $in iterated "evt-a7k2p9" letter by letter, the call did not match, and the rule passed."""
    from webmcp_eval.judge.checks import check_calls

    case = _calls_case("{tool: save_event, args: {eventId: {$in: evt-a7k2p9}}}")
    trace = _trace_with(("save_event", {"eventId": "evt-a7k2p9"}))
    with pytest.raises(ValueError, match=r"\$in takes a list"):
        check_calls(case.expect.calls, trace)


def test_a_forbidden_rule_with_a_list_fires():
    from webmcp_eval.judge.checks import check_calls

    case = _calls_case("{tool: save_event, args: {eventId: {$in: [evt-a7k2p9]}}}")
    trace = _trace_with(("save_event", {"eventId": "evt-a7k2p9"}))
    (forbidden,) = [a for a in check_calls(case.expect.calls, trace)[0] if a.kind == "forbidden"]
    assert forbidden.status == "failed" and "called at #0" in forbidden.why


def test_a_capture_path_that_cannot_be_read_is_a_checker_error():
    from webmcp_eval.judge.checks import check_calls
    from webmcp_eval.suite.loader import parse_case

    text = (
        "id: X-01\nbehaviour: selection\ntitle: t\nstart_route: /events\nsteps:\n  - user: hi\n"
        "expect:\n  calls:\n    expected:\n      - tool: search_events\n"
        '        capture: {first: "result.data.events[0.id"}\n'
    )
    case = parse_case(text, "x.yaml").case
    with pytest.raises(ValueError, match=r"capture 'first' of search_events: cannot read path"):
        check_calls(case.expect.calls, _trace_with(("search_events", {})))
