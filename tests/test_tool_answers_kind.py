"""``expect.tool_answers``: the answers of the tools the agent called hold what the case names. A search
answered wider than asked fails, one answered as asked passes, a tool never called so is not judged, and a
matcher that cannot work is refused at its line."""

from __future__ import annotations

from typing import Any

import pytest

from webmcp_eval.kinds.tool_answers import ToolAnswers, check_tool_answers
from webmcp_eval.suite.loader import CaseLoadError, parse_case
from webmcp_eval.trace import ToolCall, Trace

WANT = [{"tool": "search_events", "args": {"query": {"$contains": "線上問答"}},
         "result": {"status": "ok", "data": {"events": [{"id": "evt-o2d5v8"}]}}}]  # fmt: skip
ONE = {"status": "ok", "data": {"events": [{"id": "evt-o2d5v8", "title": "WebMCP 線上問答"}]}}
WIDE = {"status": "ok", "data": {"events": [{"id": "evt-a"}, {"id": "evt-o2d5v8"}]}}


def judged(calls: list[tuple[str, dict[str, Any], Any]], want: list[dict[str, Any]] = WANT) -> Any:
    trace = Trace(run_id="r", trial_id="X.t1", case_id="X", behaviour="selection", start_route="/events")
    trace.calls = [ToolCall(index=i, step=0, tool=t, args=a, result=r) for i, (t, a, r) in enumerate(calls)]
    (found,) = check_tool_answers(ToolAnswers.model_validate(want), trace, {})
    return found


def test_an_answer_wider_than_the_case_names_fails():
    wide = judged([("search_events", {"query": "WebMCP 線上問答"}, WIDE)])
    assert wide.status == "failed" and "#0 search_events" in wide.why and "data: events: expected" in wide.why


def test_an_answer_as_named_passes_and_a_call_it_does_not_name_is_not_judged():
    calls = [("search_events", {"query": "WebMCP"}, WIDE), ("search_events", {"query": "WebMCP 線上問答"}, ONE)]
    found = judged(calls)
    assert found.status == "passed" and found.evidence == [1], found.why  # the first call's query is another
    never = judged([("save_event", {"eventId": "evt-o2d5v8"}, {"status": "ok"})])
    assert never.status == "not_run" and "never called search_events" in never.why


def test_a_tool_answers_matcher_that_cannot_work_is_refused_at_its_line():
    case = (
        "id: X-01\nbehaviour: selection\ntitle: t\nstart_route: /r\nsteps:\n  - user: hi\n"
        "expect:\n  tool_answers:\n    - {tool: t, result: {count: {$len: -1}}}\n"
    )
    with pytest.raises(CaseLoadError, match=r"X-01.yaml:9: expect.tool_answers\[0\]: .*result.count.\$len"):
        parse_case(case, "X-01.yaml")
