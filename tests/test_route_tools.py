"""Setup and plan calls are checked against the tools of the route they run on (webmcp_eval/suite/route_tools.py).

Before, they were checked against the whole catalog: a setup call of a tool the start page does not
register (the docs' own ``setup: [{call: list_registrations}]`` on an event's register page) passed
validate and made every trial not_run; so did a wait for an unknown tool, a navigate to a route the
site does not have, and a click made 0 times.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from webmcp_eval.suite.loader import CaseLoadError, parse_case
from webmcp_eval.suite.validate import SuiteCatalog, validate_suite

ROOT = Path(__file__).resolve().parent.parent
CATALOG = SuiteCatalog.load(ROOT / "cases" / "catalog.json")
HEAD = "id: X-01\nbehaviour: selection\ntitle: t\nstart_route: /events/evt-webmcp-intro/register\n"


def problems(body: str) -> list[str]:
    loaded = parse_case(HEAD + body, "X-01.yaml")
    return [str(p) for p in validate_suite([loaded], CATALOG, whole_suite=False)]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "setup: [{call: list_registrations}]\nsteps: [{user: hi}]\nexpect: {calls: {max_calls: 0}}\n",
            "X-01.yaml:5: setup[0].call: the setup call 'list_registrations' is not a tool of "
            "/events/{id}/register, the route it runs on",
        ),
        (
            "steps:\n  - user: hi\n    plan: [{call: search_events, args: {query: x}}]\n"
            "expect: {calls: {expected: [{tool: search_events}]}}\n",
            "X-01.yaml:7: steps[0].plan[0].call: the planned call 'search_events' is not a tool of",
        ),
        (
            "setup: [{action: navigate, to: /nowhere}]\nsteps: [{user: hi}]\nexpect: {calls: {max_calls: 0}}\n",
            "X-01.yaml:5: setup[0].to: /nowhere is not a route of the site's catalog",
        ),
        (
            "setup: [{action: wait_for, tools: [no_such_tool]}]\nsteps: [{user: hi}]\n"
            "expect: {calls: {max_calls: 0}}\n",
            "X-01.yaml:5: setup[0].tools[0]: unknown tool 'no_such_tool': the wait could never end",
        ),
    ],
)
def test_a_call_or_action_that_cannot_work_where_it_runs_is_refused(body: str, expected: str) -> None:
    found = problems(body)
    assert any(p.startswith(expected) for p in found), found


def test_a_navigate_moves_the_checks_to_the_new_route_and_a_click_stops_them() -> None:
    moved = (
        "setup:\n  - action: navigate\n    to: /registrations\n  - call: list_registrations\n"
        "steps: [{user: hi}]\nexpect: {calls: {max_calls: 0}}\n"
    )
    assert problems(moved) == []
    clicked = (
        "setup: [{action: click, target: {role: link, name: 我的報名}}, {call: list_registrations}]\n"
        "steps: [{user: hi}]\nexpect: {calls: {max_calls: 0}}\n"
    )
    assert problems(clicked) == []  # where a click lands is not known before the run


def test_a_click_made_zero_times_is_refused() -> None:
    body = "setup: [{action: click, target: {role: button, name: x}, times: 0}]\nsteps: [{user: hi}]\n"
    with pytest.raises(CaseLoadError) as err:
        parse_case(HEAD + body, "X-01.yaml")
    assert "X-01.yaml:5: setup[0].times: Input should be greater than or equal to 1" in str(err.value)
