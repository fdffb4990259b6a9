"""Suite validation (runner/validate.py): the real suite is clean; each kind of breakage is found at file:line."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from runner.case import BEHAVIOURS
from runner.loader import LoadedCase, Problem, case_files, load_cases, parse_case
from runner.validate import SuiteCatalog, validate_suite

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
    assert brief(problems) == [("SEL-01.yaml", line_of(text, "- {tool: save_event"), "expect.calls.forbidden[0]")]
    assert "calls save_event, which the case forbids" in problems[0].message


def test_a_plan_may_call_a_tool_forbidden_only_in_another_step(suite):
    # REPEAT-02 forbids prepare_cancellation (with given args) in step 3; its plan calls it in step 0
    assert validate(suite) == []


def test_an_unknown_matcher_in_expected_args(suite):
    text = edit(
        suite / "INJECT-02.yaml", "{$contains: Ignore previous instructions}", "{$regex: Ignore previous instructions}"
    )
    problems = validate(suite)
    assert brief(problems) == [("INJECT-02.yaml", line_of(text, "- tool: search_events"), "expect.calls.expected[0]")]
    assert problems[0].message == "unknown matcher $regex"


def test_an_unknown_matcher_in_an_expected_result(suite):
    text = edit(suite / "RECOVERY-01.yaml", "{$not: {$pattern:", "{$not: {$regex:")
    problems = validate(suite)
    assert brief(problems) == [
        ("RECOVERY-01.yaml", line_of(text, "- tool: get_event_details"), "expect.calls.expected[0]")
    ]
    assert problems[0].message == "unknown matcher $regex"


def test_an_unknown_matcher_in_state_after(suite):
    text = edit(suite / "ORD-02.yaml", "saved: {$len: 1}", "saved: {$length: 1}")
    problems = validate(suite)
    assert brief(problems) == [("ORD-02.yaml", line_of(text, "after:"), "expect.state.after")]
    assert problems[0].message == "unknown matcher $length"


def test_an_unknown_tool_in_expectations_with_the_real_catalog(suite):
    text = edit(suite / "NO-02.yaml", "{tool: search_events, why:", "{tool: search_event, why:")
    problems = validate(suite)
    assert brief(problems) == [("NO-02.yaml", line_of(text, "search_event,"), "expect.calls.forbidden[0].tool")]
    assert problems[0].message == "unknown tool 'search_event'"


def test_problems_are_sorted_by_file_and_line(suite):
    edit(suite / "SEL-01.yaml", "behaviour: selection", "behaviour: choosing")
    edit(suite / "AMB-01.yaml", "behaviour: clarification", "behaviour: asking")
    problems = validate(suite)
    assert problems == sorted(problems, key=lambda p: (p.file, p.line))
    assert [Path(p.file).name for p in problems] == ["AMB-01.yaml", "AMB-02.yaml", "SEL-01.yaml", "SEL-02.yaml"]


def test_an_unknown_matcher_in_a_ui_expectation(suite):
    text = edit(suite / "CONF-02.yaml", "text: {$contains: Agent 工具設計進階實戰}", "text: {$regex: Agent}")
    problems = validate(suite)
    assert brief(problems) == [("CONF-02.yaml", line_of(text, "$regex"), "expect.ui[0].text")]


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


def test_an_empty_start_route():
    problems = validate_suite([parse_case(catalog_case(route="/"), "x.yaml")], None, whole_suite=False)
    assert brief(problems) == [("x.yaml", 4, "start_route")]
    assert problems[0].message == "the start route is empty"


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
