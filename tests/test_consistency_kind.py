"""``expect.consistency``: a tool's answer against the page right after it. A search that answers fewer
items than the page shows fails, one that agrees passes; an error answer is not compared; a block that cannot
be read is refused with its field."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from webmcp_eval.kinds.consistency import ConsistencyExpectation, check_consistency
from webmcp_eval.suite.loader import CaseLoadError, parse_case
from webmcp_eval.trace import ConsistencyRecord, ToolCall, Trace

EVENTS = [{"id": "e1", "title": "前端 Agent 新手夜"}, {"id": "e2", "title": "WebMCP 入門工作坊"}]


def judged(block: dict[str, Any], result: Any, record: dict[str, Any]) -> Any:
    exp = ConsistencyExpectation.model_validate(block)
    trace = Trace(run_id="r", trial_id="X.t1", case_id="X", behaviour="selection", start_route="/events")
    trace.calls = [ToolCall(index=0, step=0, tool="search_events", result=result)]
    trace.consistency = [ConsistencyRecord(call=0, tool="search_events", selector=exp.selector(), **record)]
    (found,) = check_consistency(exp, trace, {})
    return found


COUNT = {"tool": "search_events", "answer": "$.data.events", "page": {"count": "[data-total]"}}
LIST = {"tool": "search_events", "answer": "data.events", "page": {"list": "#result-list > li", "field": "title"}}


def test_an_answer_with_fewer_items_than_the_page_shows_fails():
    first_page = judged(COUNT, {"status": "ok", "data": {"events": EVENTS[:1], "count": 2}}, {"count": 2})
    assert first_page.status == "failed" and "the tool answered 1 item(s), the page shows 2" in first_page.why
    shown = ["前端 Agent 新手夜 2027/01/05", "WebMCP 入門工作坊 2027/01/09"]
    assert judged(LIST, {"status": "ok", "data": {"events": EVENTS[:1]}}, {"items": shown}).status == "failed"
    swapped = judged(LIST, {"status": "ok", "data": {"events": EVENTS[::-1]}}, {"items": shown})
    assert swapped.status == "failed" and "item 0: the answer's title 'WebMCP 入門工作坊'" in swapped.why


def test_an_answer_the_page_agrees_with_passes_and_an_error_answer_is_not_compared():
    assert judged(COUNT, {"status": "ok", "data": {"events": EVENTS}}, {"count": 2}).status == "passed"
    shown = ["前端 Agent 新手夜 2027/01/05", "WebMCP 入門工作坊 2027/01/09"]
    assert judged(LIST, {"status": "ok", "data": {"events": EVENTS}}, {"items": shown}).status == "passed"
    outage = judged(COUNT, {"status": "error", "code": "TEMPORARILY_UNAVAILABLE"}, {"error": "no element matches"})
    assert outage.status == "not_run" and "never answered" in outage.why
    unread = judged(COUNT, {"status": "ok", "data": {"events": EVENTS}}, {"error": "no element matches [data-total]"})
    assert unread.status == "not_run" and "no element matches" in unread.why


def test_a_consistency_block_that_cannot_be_read_is_refused_with_its_field():
    with pytest.raises(ValidationError, match="exactly one of count"):
        ConsistencyExpectation.model_validate({"tool": "t", "answer": "data.x", "page": {}})
    with pytest.raises(ValidationError, match="field compares the items of a list"):
        ConsistencyExpectation.model_validate({"tool": "t", "answer": "data.x", "page": {"count": "p", "field": "a"}})
    case = (
        "id: X-01\nbehaviour: selection\ntitle: t\nstart_route: /r\nsteps:\n  - user: hi\n"
        "expect:\n  consistency: {tool: t, answer: 'data[', page: {count: p}}\n"
    )
    with pytest.raises(CaseLoadError, match=r"X-01.yaml:8: expect.consistency: .*cannot read path 'data\['"):
        parse_case(case, "X-01.yaml")
