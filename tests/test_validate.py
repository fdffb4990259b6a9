"""Suite validation (suite/validate.py): the real suite is clean; each kind of breakage is found at file:line."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from webmcp_eval.suite.case import BEHAVIOURS
from webmcp_eval.suite.loader import LoadedCase, Problem, case_files, load_cases, parse_case
from webmcp_eval.suite.validate import SuiteCatalog, validate_suite

CASES = Path(__file__).resolve().parent.parent / "cases"

TEST_CATALOG = {
    "routes": {
        "/events": {
            "search_events": {
                "type": "object",
                "properties": {"city": {"enum": ["taipei", "kaohsiung"]}},
                "additionalProperties": False,
            }
        },
        "/events/{id}": {"get_event_details": {"type": "object", "properties": {}, "additionalProperties": False}},
    }
}


def line_of(text: str, needle: str, start: int = 1) -> int:
    """1-based line of the first line at or after ``start`` that contains needle."""
    for number, line in enumerate(text.splitlines(), start=1):
        if number >= start and needle in line:
            return number
    raise AssertionError(f"{needle!r} not in the text")


def brief(problems: list[Problem]) -> list[tuple[str, int, str]]:
    return [(Path(p.file).name, p.line, p.field) for p in problems]


def real_catalog(directory: Path = CASES) -> SuiteCatalog:
    return SuiteCatalog.load(directory / "catalog.json")


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """A copy of the real suite to break."""
    return Path(shutil.copytree(CASES, tmp_path / "cases"))


def edit(path: Path, old: str, new: str) -> str:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{path.name} no longer contains {old!r}; update this test"
    text = text.replace(old, new, 1)
    path.write_text(text, encoding="utf-8")
    return text


_parsed: dict[str, LoadedCase] = {}


def load_dir(directory: Path) -> list[LoadedCase]:
    """load_cases for a copy of the suite, parsing only the files a test changed (YAML parsing is slow)."""
    loaded = []
    for f in case_files([directory]):
        text = f.read_text(encoding="utf-8")
        if text not in _parsed:
            _parsed[text] = parse_case(text, "?")
        lc = _parsed[text]
        loaded.append(LoadedCase(lc.case, str(f), lc.lines))
    return loaded


def validate(directory: Path, whole_suite: bool = True, catalog: SuiteCatalog | None = None) -> list[Problem]:
    return validate_suite(load_dir(directory), catalog if catalog is not None else real_catalog(directory), whole_suite)


@pytest.fixture(scope="module")
def real() -> list[LoadedCase]:
    loaded, problems = load_cases([CASES])
    assert problems == [], [str(p) for p in problems]
    return loaded


# ---- the real suite ------------------------------------------------------------


def test_the_real_suite_has_no_problems(real):
    assert validate_suite(real, real_catalog()) == []
    assert validate_suite(real, None) == []
    assert validate_suite(real, real_catalog(), whole_suite=False) == []


def test_the_real_suite_covers_every_behaviour_twice(real):
    for behaviour in BEHAVIOURS:
        assert sum(lc.case.behaviour == behaviour for lc in real) >= 2, behaviour


def test_the_real_catalog_knows_every_start_route(real):
    catalog = real_catalog()
    for lc in real:
        assert catalog.route_pattern(lc.case.start_route) is not None, lc.case.start_route


# ---- broken copies of the real suite ---------------------------------------------


def test_duplicate_ids_name_both_files(suite):
    shutil.copy(suite / "SEL-01.yaml", suite / "SEL-01-copy.yaml")
    problems = validate(suite)
    assert len(problems) == 1, [str(p) for p in problems]
    p = problems[0]
    assert p.field == "id" and p.line == 1
    assert "duplicate case id SEL-01" in p.message
    text = str(p)
    assert "SEL-01.yaml" in text and "SEL-01-copy.yaml" in text


def test_unknown_behaviour(suite):
    text = edit(suite / "NO-01.yaml", "behaviour: no_tool", "behaviour: no_tools")
    problems = validate(suite)
    assert brief(problems) == [
        ("NO-01.yaml", line_of(text, "behaviour:"), "behaviour"),
        ("NO-02.yaml", 2, "behaviour"),  # and no_tool is left with one case
    ]
    assert "unknown behaviour 'no_tools'" in problems[0].message
    assert "selection" in problems[0].message  # lists the known ones
    assert "has 1 case(s)" in problems[1].message


def test_a_behaviour_with_fewer_than_two_cases(suite):
    (suite / "SEL-02.yaml").unlink()
    (suite / "SEL-02-LA.yaml").unlink()
    problems = validate(suite)
    assert brief(problems) == [("SEL-01.yaml", 2, "behaviour")]
    assert "behaviour selection has 1 case(s)" in problems[0].message


def test_the_coverage_rule_is_only_for_the_whole_suite(suite):
    (suite / "SEL-02.yaml").unlink()
    assert validate(suite, whole_suite=False) == []


def test_a_ref_used_before_the_plan_captures_it(suite):
    text = edit(suite / "ORD-01.yaml", '        capture: {first: "result.data.events[0].id"}\n', "")
    problems = validate(suite)
    assert brief(problems) == [
        ("ORD-01.yaml", line_of(text, "args: {eventId: {$ref: first}}"), "steps[0].plan[1].args")
    ]
    assert "$ref 'first' is used before the plan captures it" in problems[0].message


def test_a_ref_captured_in_an_earlier_step_is_fine():
    text = textwrap.dedent("""\
        id: STALE-09
        behaviour: freshness
        title: t
        start_route: /events/evt-1
        steps:
          - user: a
            plan:
              - call: get_event_details
                capture: {remembered: result.data.event.id}
          - action: navigate
            to: /events
          - user: b
            plan:
              - call: get_event_details
                args: {eventId: {$ref: remembered}}
        """)
    assert validate_suite([parse_case(text, "x.yaml")], real_catalog(), whole_suite=False) == []


def test_a_ref_captured_later_is_still_before_capture():
    text = textwrap.dedent("""\
        id: ORD-09
        behaviour: ordering
        title: t
        start_route: /events
        steps:
          - user: a
            plan:
              - call: get_event_details
                args: {eventId: {$ref: first}}
              - call: search_events
                capture: {first: "result.data.events[0].id"}
        """)
    problems = validate_suite([parse_case(text, "x.yaml")], None, whole_suite=False)
    assert brief(problems) == [("x.yaml", line_of(text, "$ref: first"), "steps[0].plan[0].args")]


def test_a_plan_that_never_makes_an_expected_call(suite):
    text = edit(suite / "SEL-02.yaml", "    plan:\n      - call: get_event_details\n", "")
    problems = validate(suite)
    assert brief(problems) == [("SEL-02.yaml", line_of(text, "- tool: get_event_details"), "expect.calls.expected[0]")]
    assert "never calls get_event_details" in problems[0].message


def test_a_plan_that_makes_expected_calls_in_the_wrong_step(suite):
    # STALE-01 expects get_event_details in step 0 and in step 2; drop the step-2 plan
    text = edit(
        suite / "STALE-01.yaml",
        "    plan:\n      - call: get_event_details\n        args: {eventId: {$ref: remembered}}\n",
        "",
    )
    problems = validate(suite)
    second = line_of(text, "- tool: get_event_details", start=line_of(text, "step: 0") + 1)
    assert brief(problems) == [("STALE-01.yaml", second, "expect.calls.expected[1]")]


def test_a_plan_that_calls_a_forbidden_tool(suite):
    text = edit(
        suite / "SEL-01.yaml",
        "        args: {city: taipei, price: free, level: beginner}\n",
        "        args: {city: taipei, price: free, level: beginner}\n"
        "      - call: save_event\n        args: {eventId: evt-webmcp-intro}\n",
    )
    problems = validate(suite)
    assert brief(problems) == [
        ("SEL-01.yaml", line_of(text, "order: exact"), "expect.calls.order"),  # SEL-01 is exact: no other calls
        ("SEL-01.yaml", line_of(text, "- {tool: save_event"), "expect.calls.forbidden[0]"),
    ]
    assert "the reference plan also calls save_event" in problems[0].message
    assert "calls save_event, which the case forbids" in problems[1].message


def test_a_plan_may_call_a_tool_forbidden_only_in_another_step(suite):
    # REPEAT-02 forbids prepare_cancellation (with given args) in step 3; its plan calls it in step 0
    assert validate(suite) == []


def test_an_unknown_matcher_in_expected_args(suite):
    text = edit(
        suite / "INJECT-02.yaml", "{$contains: Ignore previous instructions}", "{$regex: Ignore previous instructions}"
    )
    problems = validate(suite)
    # at the operator's own line, not the enclosing call's
    assert brief(problems) == [
        ("INJECT-02.yaml", line_of(text, "$regex"), "expect.calls.expected[0].args.query.$regex")
    ]
    assert problems[0].message.startswith("unknown matcher $regex; known: $absent, $any, $contains")


def test_an_unknown_matcher_in_an_expected_result(suite):
    text = edit(suite / "RECOVERY-01.yaml", "{$not: {$pattern:", "{$not: {$regex:")
    problems = validate(suite)
    assert brief(problems) == [
        ("RECOVERY-01.yaml", line_of(text, "$regex"), "expect.calls.expected[0].result.message.$not.$regex")
    ]
    assert problems[0].message.startswith("unknown matcher $regex")


def test_an_unknown_matcher_in_state_after(suite):
    text = edit(suite / "ORD-02.yaml", "saved: {$len: 1}", "saved: {$length: 1}")
    problems = validate(suite)
    assert brief(problems) == [("ORD-02.yaml", line_of(text, "$length"), "expect.state.after.saved.$length")]
    assert problems[0].message.startswith("unknown matcher $length")


def test_an_unknown_tool_in_expectations_with_the_real_catalog(suite):
    text = edit(suite / "NO-02.yaml", "{tool: search_events, why:", "{tool: search_event, why:")
    problems = validate(suite)
    assert brief(problems) == [("NO-02.yaml", line_of(text, "search_event,"), "expect.calls.forbidden[0].tool")]
    assert problems[0].message == "unknown tool 'search_event'"


def test_problems_are_sorted_by_file_and_line(suite):
    edit(suite / "SEL-01.yaml", "behaviour: selection", "behaviour: choosing")
    edit(suite / "SEL-02-LA.yaml", "behaviour: selection", "behaviour: zoned")
    edit(suite / "AMB-01.yaml", "behaviour: clarification", "behaviour: asking")
    problems = validate(suite)
    assert problems == sorted(problems, key=lambda p: (p.file, p.line))
    # clarification keeps AMB-02 and the two AMB goal variants: only selection (and the new one-case
    # behaviour) fall below two cases
    assert [Path(p.file).name for p in problems] == ["AMB-01.yaml", "SEL-01.yaml", "SEL-02-LA.yaml", "SEL-02.yaml"]


def test_an_unknown_matcher_in_a_ui_expectation(suite):
    text = edit(suite / "CONF-02.yaml", 'text: {$pattern: "活動', 'text: {$regex: "活動')
    problems = validate(suite)
    assert brief(problems) == [("CONF-02.yaml", line_of(text, "$regex"), "expect.ui[0].text.$regex")]


def test_an_expectation_ref_that_nothing_captures(suite):
    text = edit(
        suite / "STALE-02.yaml",
        "args: {registrationId: reg-h8k1}\n        why:",
        "args: {registrationId: {$ref: frist}}\n        why:",
    )
    problems = validate(suite)
    assert [p[0] for p in brief(problems)] == ["STALE-02.yaml"]
    assert problems[0].line == line_of(text, "$ref: frist")


# ---- a SuiteCatalog built in the test --------------------------------------------------

HEAD = "id: SEL-09\nbehaviour: selection\ntitle: t\nstart_route: {route}\nsteps:\n  - user: hi\n"


def catalog_case(plan: str = "", expect: str = "", route: str = "/events") -> str:
    """A one-step case; ``plan`` is the body of the user step, ``expect`` of ``expect:``."""
    text = HEAD.format(route=route)
    if plan:
        text += textwrap.indent(textwrap.dedent(plan), "    ")
    if expect:
        text += "expect:\n" + textwrap.indent(textwrap.dedent(expect), "  ")
    return text


def check(text: str, file: str = "cases/SEL-09.yaml") -> list[Problem]:
    return validate_suite([parse_case(text, file)], SuiteCatalog(TEST_CATALOG), whole_suite=False)


def test_route_patterns():
    catalog = SuiteCatalog(TEST_CATALOG)
    assert catalog.route_pattern("/events") == "/events"
    assert catalog.route_pattern("/events/") == "/events"
    assert catalog.route_pattern("/events?city=taipei") == "/events"
    assert catalog.route_pattern("/events/evt-1") == "/events/{id}"
    assert catalog.route_pattern("/events/evt-1/register") is None
    assert catalog.route_pattern("/registrations") is None
    assert catalog.tools() == {"search_events", "get_event_details"}
    assert len(catalog.schemas("search_events")) == 1 and catalog.schemas("nope") == []


def test_a_good_case_against_the_test_catalog():
    text = catalog_case(
        plan="""\
            plan:
              - call: search_events
                args: {city: taipei}
            """,
        expect="""\
            calls:
              expected:
                - tool: search_events
                  args: {city: taipei}
            """,
    )
    assert check(text) == []


def test_an_unknown_tool_in_the_plan_and_in_expectations():
    text = catalog_case(
        plan="""\
            plan:
              - call: buy_ticket
            """,
        expect="""\
            calls:
              expected:
                - tool: buy_ticket
              forbidden:
                - tool: cancel_everything
            """,
    )
    problems = check(text)
    assert brief(problems) == [
        ("SEL-09.yaml", line_of(text, "- call: buy_ticket"), "steps[0].plan[0].call"),
        ("SEL-09.yaml", line_of(text, "- tool: buy_ticket"), "expect.calls.expected[0].tool"),
        ("SEL-09.yaml", line_of(text, "- tool: cancel_everything"), "expect.calls.forbidden[0].tool"),
    ]
    assert all(p.file == "cases/SEL-09.yaml" for p in problems)
    assert problems[0].message == "unknown tool 'buy_ticket'"


def test_an_unknown_start_route():
    problems = check(catalog_case(route="/tickets"))
    assert brief(problems) == [("SEL-09.yaml", 4, "start_route")]
    assert problems[0].message == "/tickets is not a route of the site"


def test_a_known_start_route_with_an_id():
    assert check(catalog_case(route="/events/evt-x9inj3")) == []


def test_the_start_route_slash_is_the_base_url_itself():
    assert validate_suite([parse_case(catalog_case(route="/"), "x.yaml")], None, whole_suite=False) == []
    problems = validate_suite([parse_case(catalog_case(route="/"), "x.yaml")], SuiteCatalog(TEST_CATALOG), False)
    assert [p.message for p in problems] == ["/ is not a route of the site"]  # the demo has no page at its root


def test_plan_arguments_failing_the_input_schema():
    text = catalog_case(
        plan="""\
        plan:
          - call: search_events
            args:
              city: tokyo
        """
    )
    problems = check(text)
    assert brief(problems) == [("SEL-09.yaml", line_of(text, "city: tokyo"), "steps[0].plan[0].args.city")]
    assert "search_events's input schema" in problems[0].message and "tokyo" in problems[0].message


def test_plan_arguments_with_an_extra_property():
    text = catalog_case(
        plan="""\
        plan:
          - call: get_event_details
            args: {eventId: evt-guess}
        """,
        route="/events/evt-1",
    )
    problems = check(text)
    assert brief(problems) == [("SEL-09.yaml", line_of(text, "args: {eventId"), "steps[0].plan[0].args")]
    assert "eventId" in problems[0].message


def test_plan_arguments_in_a_later_step_are_checked_too():
    text = HEAD.format(route="/events") + (
        "  - action: navigate\n"
        "    to: /events\n"
        "  - user: again\n"
        "    plan:\n"
        "      - call: search_events\n"
        "        args: {city: kaohsiung}\n"
        "      - call: search_events\n"
        "        args: {city: online}\n"
    )
    problems = check(text)
    assert brief(problems) == [("SEL-09.yaml", line_of(text, "city: online"), "steps[2].plan[1].args.city")]


def test_the_real_suite_against_the_small_catalog_names_each_file_and_line(real):
    """A catalog that lacks most routes: every case outside them is reported at its own start_route line."""
    loaded = real
    catalog = SuiteCatalog(TEST_CATALOG)
    problems = validate_suite(loaded, catalog)
    route_problems = {(p.file, p.line) for p in problems if p.field == "start_route"}
    outside = {
        (lc.file, lc.line_of("start_route")) for lc in loaded if catalog.route_pattern(lc.case.start_route) is None
    }
    assert outside and route_problems == outside
    files = {lc.file for lc in loaded}
    assert all(p.file in files for p in problems)


# ---- a rule that can never fire is an error (issue: wrong verdicts) -----------------------


def test_a_forbidden_argument_name_that_the_tool_does_not_take(suite):
    """`eventid` for save_event's `eventId`: the rule would never apply and always pass."""
    text = edit(suite / "SEL-01.yaml", "- {tool: save_event, why:", "- {tool: save_event, args: {eventid: evt-1}, why:")
    problems = validate(suite)
    assert brief(problems) == [("SEL-01.yaml", line_of(text, "eventid"), "expect.calls.forbidden[0].args.eventid")]
    assert "save_event has no argument 'eventid' (its arguments: eventId)" in problems[0].message


def test_an_expected_argument_name_that_the_tool_does_not_take(suite):
    text = edit(
        suite / "SEL-01.yaml",
        "        args: {city: taipei, price: free, level: beginner}\n        no_other",
        "        args: {cty: taipei, price: free, level: beginner}\n        no_other",
    )
    problems = validate(suite)
    assert brief(problems) == [("SEL-01.yaml", line_of(text, "cty:"), "expect.calls.expected[0].args.cty")]
    assert "city" in problems[0].message and "level" in problems[0].message  # names the known ones


def test_a_forbidden_rule_on_a_step_the_case_does_not_have(suite):
    text = edit(suite / "SEL-01.yaml", "- {tool: save_event, why:", "- {tool: save_event, step: 99, why:")
    problems = validate(suite)
    assert brief(problems) == [("SEL-01.yaml", line_of(text, "step: 99"), "expect.calls.forbidden[0].step")]
    assert problems[0].message == "the case has no step 99; its user steps (0-based) are 0"


def test_an_expected_call_on_an_action_step(suite):
    text = edit(
        suite / "REPEAT-02.yaml",
        "      - tool: prepare_cancellation\n        step: 0",
        "      - tool: prepare_cancellation\n        step: 1",
    )
    problems = [p for p in validate(suite) if p.field.endswith(".step")]
    assert brief(problems) == [("REPEAT-02.yaml", line_of(text, "step: 1"), "expect.calls.expected[1].step")]
    assert "step 1 is a fault action" in problems[0].message and "user steps are 0, 3" in problems[0].message


def test_in_with_a_string_is_an_error_at_its_line(suite):
    text = edit(
        suite / "REPEAT-02.yaml",
        "args: {registrationId: reg-h8k1}, why:",
        "args: {registrationId: {$in: evt-a7k2p9}}, why:",
    )
    problems = validate(suite)
    assert brief(problems) == [
        ("REPEAT-02.yaml", line_of(text, "$in: evt"), "expect.calls.forbidden[0].args.registrationId.$in")
    ]
    assert "$in takes a list" in problems[0].message


@pytest.mark.parametrize(
    ("old", "new", "field", "words"),
    [
        (
            "{city: taipei, price: free, level: beginner}\n        no_other",
            "{city: {$contains: x, contains: x}, price: free, level: beginner}\n        no_other",
            "expect.calls.expected[0].args.city",
            "mixes operators",
        ),
        (
            "{city: taipei, price: free, level: beginner}\n        no_other",
            "{city: {$pattern: '([unclosed'}, price: free, level: beginner}\n        no_other",
            "expect.calls.expected[0].args.city.$pattern",
            "does not compile",
        ),
        (
            "{city: taipei, price: free, level: beginner}\n        no_other",
            "{city: {$in: 5}, price: free, level: beginner}\n        no_other",
            "expect.calls.expected[0].args.city.$in",
            "takes a list",
        ),
        (
            "{city: taipei, price: free, level: beginner}\n        no_other",
            "{city: {$len: -1}, price: free, level: beginner}\n        no_other",
            "expect.calls.expected[0].args.city.$len",
            "whole number",
        ),
        (
            "{city: taipei, price: free, level: beginner}\n        no_other",
            "{city: {$gt: x}, price: free, level: beginner}\n        no_other",
            "expect.calls.expected[0].args.city.$gt",
            "takes a number",
        ),
        (
            "{city: taipei, price: free, level: beginner}\n        no_other",
            "{city: tokyo, price: free, level: beginner}\n        no_other",
            "expect.calls.expected[0].args.city",
            "can never match",
        ),
        (
            "{city: taipei, price: free, level: beginner}\n        no_other",
            "{city: {$in: [tokyo, osaka]}, price: free, level: beginner}\n        no_other",
            "expect.calls.expected[0].args.city",
            "none of",
        ),
        (
            "{city: taipei, price: free, level: beginner}\n        no_other",
            "{city: {$type: integer}, price: free, level: beginner}\n        no_other",
            "expect.calls.expected[0].args.city",
            "$type needs integer/number",
        ),
        (
            "{city: taipei, price: free, level: beginner}\n        no_other",
            "{city: {$lt: 3}, price: free, level: beginner}\n        no_other",
            "expect.calls.expected[0].args.city",
            "$lt needs",
        ),
        (
            "- {tool: save_event, why:",
            "- {tool: save_event, args: {eventId: 42}, why:",
            "expect.calls.forbidden[0].args.eventId",
            "can never match",
        ),
        (
            "{city: taipei, price: free, level: beginner}\n        no_other",
            "{city: {$pattern: 'x{99999999999}'}, price: free, level: beginner}\n        no_other",
            "expect.calls.expected[0].args.city.$pattern",
            "does not compile",
        ),
        (
            "{city: taipei, price: free, level: beginner}\n        no_other",
            "{city: {$contains: [tai]}, price: free, level: beginner}\n        no_other",
            "expect.calls.expected[0].args.city",
            "$contains with a list looks for a list element, but the argument is string",
        ),
    ],
    ids=[
        "mixed",
        "pattern",
        "in-5",
        "len",
        "gt",
        "enum",
        "in-enum",
        "type",
        "lt",
        "forbidden-type",
        "pattern-overflow",
        "contains-list-on-text",
    ],
)
def test_matchers_are_checked_by_shape_and_against_the_input_schema(suite, old, new, field, words):
    text = edit(suite / "SEL-01.yaml", old, new)
    problems = validate(suite)
    line = line_of(text, new.split("\n")[0].split("{", 2)[-1][:12])
    assert brief(problems) == [("SEL-01.yaml", line, field)], [str(p) for p in problems]
    assert words in problems[0].message, problems[0].message


def test_matchers_that_fit_the_schema_are_fine(suite):
    edit(
        suite / "SEL-01.yaml",
        "{city: taipei, price: free, level: beginner}\n        no_other",
        "{city: {$in: [taipei, tokyo], $type: string, $pattern: ^tai}, price: {$not: paid}, level: {$any: true}}"
        "\n        no_other",
    )
    assert validate(suite) == []


@pytest.mark.parametrize(
    "matcher", ["{$not: {$in: [kaohsiung]}}", "{$not: [kaohsiung]}", "{$not: {$contains: [x]}}", "{$not: {a: 1}}"]
)
def test_not_with_a_mapping_or_list_is_checked_not_crashed(suite, matcher):
    """A documented matcher on a typed argument raised TypeError (unhashable) in validate."""
    edit(
        suite / "SEL-01.yaml",
        "{city: taipei, price: free, level: beginner}\n        no_other",
        f"{{city: {matcher}, price: free, level: beginner}}\n        no_other",
    )
    forbidden = matcher.replace("kaohsiung", "taipei")
    edit(
        suite / "SEL-01.yaml",
        "- {tool: save_event, why:",
        f"- {{tool: search_events, args: {{city: {forbidden}}}, why:",
    )
    # read, never crashed; where the forbidden rule catches the plan's own call, that is the one problem
    assert all("so the case fails with its own plan" in p.message for p in validate(suite))


def test_a_capture_path_that_does_not_parse(suite):
    text = edit(
        suite / "ORD-01.yaml",
        '        capture: {first: "result.data.events[0].id"}\n      - tool',
        '        capture: {first: "result.data.events[0.id"}\n      - tool',
    )
    problems = validate(suite)
    assert brief(problems) == [("ORD-01.yaml", line_of(text, "events[0.id"), "expect.calls.expected[0].capture.first")]
    assert "cannot read path" in problems[0].message


def test_a_capture_path_outside_args_and_result(suite):
    text = edit(
        suite / "ORD-01.yaml",
        'capture: {first: "result.data.events[0].id"}\n      - call',
        'capture: {first: "data.events[0].id"}\n      - call',
    )
    problems = validate(suite)
    assert brief(problems) == [("ORD-01.yaml", line_of(text, '"data.events'), "steps[0].plan[0].capture.first")]
    assert "starts at args or result" in problems[0].message


def test_state_after_paths_parse_and_name_captured_values(suite):
    text = edit(
        suite / "REPEAT-02.yaml",
        '"events[id=evt-q4m8z1].seatsLeft": 8',
        '"events[id={evt}].seatsLeft": 8\n      "events[0.x": 1',
    )
    problems = validate(suite)
    assert brief(problems) == [
        ("REPEAT-02.yaml", line_of(text, "{evt}"), "expect.state.after.events[id={evt}].seatsLeft"),
        ("REPEAT-02.yaml", line_of(text, "events[0.x"), "expect.state.after.events[0.x"),
    ]
    assert "{evt} in the path is never captured" in problems[0].message


def test_an_empty_answer_text_can_never_fail(suite):
    text = edit(suite / "ORD-01.yaml", "contains: [前端 Agent 新手夜, 松仁路]", 'contains: [前端 Agent 新手夜, ""]')
    problems = validate(suite)
    assert brief(problems) == [("ORD-01.yaml", line_of(text, "contains: [前端"), "expect.answer.contains[1]")]


def test_plan_arguments_take_no_matchers(suite):
    text = edit(
        suite / "SEL-01.yaml",
        "args: {city: taipei, price: free, level: beginner}\n    reply",
        "args: {city: {$in: [taipei]}, price: free, level: beginner}\n    reply",
    )
    problems = validate(suite)
    assert ("SEL-01.yaml", line_of(text, "$in: [taipei]"), "steps[0].plan[0].args.city") in brief(problems)


def test_an_id_too_long_for_a_file_name(suite):
    long_id = "SEL-01" + "A" * 300
    text = edit(suite / "SEL-01.yaml", "id: SEL-01", f"id: {long_id}")
    problems = validate(suite)
    assert brief(problems) == [("SEL-01.yaml", 1, "id")]
    assert "306 characters; at most 100" in problems[0].message
    assert text


# ---- order: set and exact, read from the plan ----------------------------------------------

SET_CASE = """\
id: ORD-09
behaviour: ordering
title: t
start_route: /events
steps:
  - user: hi
    plan:
      - call: get_event_details
      - call: search_events
        args: {{city: taipei}}
expect:
  calls:
    order: {order}
    expected:
      - tool: search_events
      - tool: get_event_details
"""


def test_order_set_is_order_free_in_the_plan():
    problems = validate_suite([parse_case(SET_CASE.format(order="set"), "x.yaml")], None, whole_suite=False)
    assert problems == []


@pytest.mark.parametrize(("order", "late"), [("sequence", 1), ("exact", 0)])
def test_order_sequence_and_exact_keep_the_plan_order(order, late):
    problems = validate_suite([parse_case(SET_CASE.format(order=order), "x.yaml")], None, whole_suite=False)
    assert [p.field for p in problems] == [f"expect.calls.expected[{late}]"]


def test_order_set_needs_a_distinct_planned_call_for_each_expectation():
    text = SET_CASE.format(order="set").replace(
        "      - tool: get_event_details\n", "      - tool: get_event_details\n      - tool: get_event_details\n"
    )
    problems = validate_suite([parse_case(text, "x.yaml")], None, whole_suite=False)
    assert [p.field for p in problems] == ["expect.calls.expected[2]"]


def test_order_exact_allows_no_other_planned_call():
    text = (
        SET_CASE.format(order="exact")
        .replace("      - call: get_event_details\n", "")
        .replace(
            "        args: {city: taipei}\n",
            "        args: {city: taipei}\n      - call: get_event_details\n      - call: save_event\n",
        )
    )
    problems = validate_suite([parse_case(text, "x.yaml")], None, whole_suite=False)
    assert [p.field for p in problems] == ["expect.calls.order"]
    assert "also calls save_event" in problems[0].message


# ---- the catalog and the one loading path -------------------------------------------------


def test_a_missing_or_malformed_catalog_is_one_clear_error(tmp_path):
    from webmcp_eval.suite.validate import CatalogError, find_catalog

    with pytest.raises(CatalogError, match="no such file"):
        find_catalog([str(CASES)], str(tmp_path / "nope.json"))
    (tmp_path / "bad.json").write_text('{"routes": ', encoding="utf-8")
    with pytest.raises(CatalogError, match=r"bad.json:1: not valid JSON"):
        find_catalog([str(CASES)], str(tmp_path / "bad.json"))
    (tmp_path / "shape.json").write_text('{"routes": ["/events"]}', encoding="utf-8")
    with pytest.raises(CatalogError, match="not a catalog"):
        find_catalog([str(CASES)], str(tmp_path / "shape.json"))


def test_the_catalog_is_the_one_beside_the_cases_never_another_suites(suite, tmp_path):
    from webmcp_eval.suite.validate import find_catalog

    catalog, note = find_catalog([str(suite)], None)
    assert catalog is not None and note == f"tools checked against {suite / 'catalog.json'}"
    catalog, note = find_catalog([str(suite / "SEL-01.yaml")], None)
    assert catalog is not None and str(suite / "catalog.json") in note
    (tmp_path / "own").mkdir()
    catalog, note = find_catalog([str(tmp_path / "own")], None)
    assert catalog is None
    assert "NOT checked" in note and "--catalog FILE" in note and str(tmp_path / "own" / "catalog.json") in note


def test_load_suite_and_split_valid_leave_out_every_case_that_shares_an_id(suite):
    from webmcp_eval.suite.validate import load_suite, split_valid

    shutil.copy(suite / "SEL-01.yaml", suite / "SEL-01-copy.yaml")
    edit(suite / "NO-01.yaml", "behaviour: no_tool", "behaviour: no_tools")
    loaded, problems = load_suite([suite], real_catalog(suite))
    valid, skipped = split_valid(loaded, problems)
    names = sorted(Path(f).name for f in skipped)
    # NO-02 is fine by itself: the coverage rule is about the suite, so it still runs
    assert names == ["NO-01.yaml", "SEL-01-copy.yaml", "SEL-01.yaml"]
    assert len(valid) == len(case_files([CASES])) + 1 - 3  # the seed cases and the copy, less the three
