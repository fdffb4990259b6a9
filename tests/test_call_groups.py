"""Groups of expected calls ({ordered}, {unordered}), optional calls and scalar results: pass and fail each."""

from __future__ import annotations

from tests.test_checks import case, make_trace, tc
from webmcp_eval.judge.checks import check_calls
from webmcp_eval.suite.loader import parse_case
from webmcp_eval.suite.validate import validate_suite

PIZZA = """\
calls:
  order: {order}
  expected:
    - unordered:
        - {{tool: set_style, args: {{style: Pesto}}}}
        - {{tool: set_size, args: {{size: Small}}}}
        - {{tool: add_topping, args: {{topping: onion}}}}
        - {{tool: add_topping, args: {{topping: pepper}}}}
        - {{tool: get_summary, optional: true}}
    - tool: share
"""


def verdicts(order: str, *calls):
    out, _ = check_calls(case(PIZZA.format(order=order)).expect.calls, make_trace(*calls))
    return {a.id: a.status for a in out if a.kind == "calls"}


TOPPINGS = [tc("add_topping", {"topping": "pepper"}), tc("add_topping", {"topping": "onion"})]


def test_five_in_any_order_then_share_passes_with_or_without_the_optional_call():
    calls = [*TOPPINGS, tc("set_size", {"size": "Small"}), tc("set_style", {"style": "Pesto"}), tc("share")]
    assert set(verdicts("exact", *calls).values()) == {"passed"}
    with_summary = [*calls[:2], tc("get_summary"), *calls[2:]]
    got = verdicts("exact", *with_summary)
    assert set(got.values()) == {"passed"} and "calls.expected[0].unordered[4]" in got


def test_share_before_the_group_fails():
    calls = [tc("share"), *TOPPINGS, tc("set_size", {"size": "Small"}), tc("set_style", {"style": "Pesto"})]
    got = verdicts("exact", *calls)
    assert got["calls.expected[1]"] == "failed" and got["calls.exact"] == "failed"
    got = verdicts("sequence", *calls)
    assert "failed" in got.values()


def test_a_wrong_argument_in_the_group_fails_that_call_only():
    calls = [
        tc("add_topping", {"topping": "ham"}),
        TOPPINGS[1],
        tc("set_size", {"size": "Small"}),
        tc("set_style", {"style": "Pesto"}),
        tc("share"),
    ]
    got = verdicts("exact", *calls)
    assert got["calls.expected[0].unordered[3]"] == "failed" and got["calls.exact"] == "failed"
    assert got["calls.expected[1]"] == "passed"


def test_an_optional_call_made_wrong_fails_under_exact():
    calls = [
        *TOPPINGS,
        tc("get_summary", {"x": 1}),
        tc("set_size", {"size": "Small"}),
        tc("set_style", {"style": "Pesto"}),
        tc("share"),
    ]
    assert verdicts("exact", *calls)["calls.exact"] == "passed"  # args are not constrained: it matches
    text = PIZZA.replace("{{tool: get_summary, optional: true}}", "{{tool: get_summary, optional: true, result: 3}}")
    exp = case(text.format(order="exact")).expect.calls
    out, _ = check_calls(exp, make_trace(*calls[:2], calls[2].model_copy(update={"result": 4}), *calls[3:]))
    assert {a.id: a.status for a in out}["calls.exact"] == "failed"


def test_ordered_inside_unordered():
    text = """\
calls:
  order: sequence
  expected:
    - unordered:
        - ordered: [{tool: a}, {tool: b}]
        - {tool: c}
"""
    exp = case(text).expect.calls
    ok = {a.status for a in check_calls(exp, make_trace(tc("c"), tc("a"), tc("b")))[0] if a.kind == "calls"}
    assert ok == {"passed"}
    bad = {a.id: a.status for a in check_calls(exp, make_trace(tc("b"), tc("c"), tc("a")))[0]}
    assert "failed" in bad.values()


def test_scalar_results_match_and_fail():
    exp = case("calls:\n  expected:\n    - {tool: count, result: 3}\n").expect.calls
    assert check_calls(exp, make_trace(tc("count", result=3)))[0][0].status == "passed"
    assert check_calls(exp, make_trace(tc("count", result=4)))[0][0].status == "failed"
    exp = case("calls:\n  expected:\n    - {tool: count, result: {$gt: 2}}\n").expect.calls
    assert check_calls(exp, make_trace(tc("count", result=3)))[0][0].status == "passed"
    assert check_calls(exp, make_trace(tc("count", result="3")))[0][0].status == "failed"


HEAD = "id: g.1\nbehaviour: selection\ntitle: t\nstart_route: /events\n"


def problems(expect: str, plan: str) -> list[str]:
    text = HEAD + "steps:\n  - user: hi\n    plan:\n" + plan + "expect:\n" + expect
    return [f"{p.field}: {p.message}" for p in validate_suite([parse_case(text, "g.yaml")], None, whole_suite=False)]


GROUP = """\
  calls:
    order: exact
    expected:
      - unordered: [{tool: a}, {tool: b, optional: true}]
      - {tool: c}
"""


def test_validate_plays_the_plan_through_the_groups():
    assert problems(GROUP, "      - {call: b}\n      - {call: a}\n      - {call: c}\n") == []
    assert problems(GROUP, "      - {call: a}\n      - {call: c}\n") == []
    wrong = problems(GROUP, "      - {call: c}\n      - {call: a}\n")
    assert any(p.startswith("expect.calls.expected[1]: the reference plan never calls c") for p in wrong), wrong


def test_an_optional_call_outside_order_exact_cannot_fire_and_is_an_error():
    text = GROUP.replace("order: exact", "order: sequence")
    got = problems(text, "      - {call: a}\n      - {call: c}\n")
    assert got == [
        "expect.calls.expected[0].unordered[1].optional: an optional call can never fail under order: sequence "
        "(other calls are allowed anyway); it only means something under order: exact"
    ]


def test_an_empty_group_is_refused():
    text = HEAD + "steps:\n  - user: hi\nexpect:\n  calls:\n    expected:\n      - unordered: []\n"
    try:
        parse_case(text, "g.yaml")
    except Exception as err:  # noqa: BLE001
        assert "expect.calls.expected[0].unordered" in str(err)
    else:
        raise AssertionError("an empty group was accepted")


def test_a_history_call_names_a_tool_of_the_catalog():
    from webmcp_eval.suite.validate import SuiteCatalog

    catalog = SuiteCatalog({"routes": {"/events": {"a": {"type": "object"}}}})
    text = HEAD + "steps:\n  - history:\n      - {user: hi}\n      - {call: %s, result: 3}\n    user: and now?\n"
    ok = validate_suite([parse_case(text % "a", "g.yaml")], catalog, whole_suite=False)
    bad = validate_suite([parse_case(text % "nope", "g.yaml")], catalog, whole_suite=False)
    assert ok == [] and [(p.field, p.message) for p in bad] == [
        ("steps[0].history[1].call", "unknown tool 'nope' in the history")
    ]


def test_under_order_exact_a_group_is_one_block_as_in_the_public_format():
    text = """\
calls:
  order: {order}
  expected:
    - unordered:
        - ordered: [{{tool: a}}, {{tool: b}}]
        - {{tool: c}}
"""

    def statuses(order: str, *tools: str) -> set[str]:
        exp = case(text.format(order=order)).expect.calls
        return {a.status for a in check_calls(exp, make_trace(*map(tc, tools)))[0] if a.kind == "calls"}

    assert statuses("exact", "c", "a", "b") == {"passed"}
    assert statuses("exact", "a", "b", "c") == {"passed"}
    assert "failed" in statuses("exact", "a", "c", "b")  # c between the ordered group's calls
    assert statuses("sequence", "a", "c", "b") == {"passed"}  # other orders let calls come between
