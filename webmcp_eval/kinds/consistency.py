"""``expect.consistency``: what a tool answered against what the page shows for the same call.

A search tool that answers only the first page of its results (10) while the page says 13 passes every
check that reads the tool or the page alone. ``consistency: {tool: search_events, answer: data.events,
page: {count: "[data-total]"}}`` reads the page right after each call of the tool (the trace's
``consistency``: the page as the tool left it) and holds the number of items at ``answer`` (a path in the
call's result; a list, or a number) to the page's:

- ``count``: a CSS selector of the element that shows the total; its number is the attribute the selector
  ends with (``[data-total]``, ``#result-count[data-total]``), else the first whole number of its text;
- ``list``: a CSS selector of the page's items (``#result-list > li``): as many as the answer has, and with
  ``field``, each answer item's field (its title) shown in the page's item at the same place.

Calls that failed (no result, an error result) are not compared: what the page shows then is the error.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from webmcp_eval.kinds import CallPageReader, CallWatch, Captures, Evidence, Kind, assertion
from webmcp_eval.matchers import MISSING, PathError, parse_path, resolve
from webmcp_eval.trace import Assertion, ConsistencyRecord, ToolCall, Trace

# the attribute a count selector ends with ("[data-total]"): the page's number is its value
COUNT_ATTRIBUTE = re.compile(r"\[([A-Za-z_][\w-]*)\]\s*$")


class PageSide(BaseModel):
    model_config = ConfigDict(extra="forbid")

    count: str | None = Field(
        default=None,
        description="CSS selector of the element showing the total: the attribute it ends with "
        "([data-total]), else the first whole number of its text",
    )
    list: str | None = Field(default=None, description="CSS selector of the page's items (#result-list > li)")
    field: str | None = Field(
        default=None, description="with list: each answer item's field (title) is shown in the page's item"
    )

    @model_validator(mode="after")
    def _one(self) -> PageSide:
        if (self.count is None) == (self.list is None):
            raise ValueError("page takes exactly one of count (the element showing the total) or list (its items)")
        if self.field is not None and self.list is None:
            raise ValueError("field compares the items of a list: give page.list")
        return self


class ConsistencyExpectation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1, description="the tool whose answers are compared with the page")
    answer: str = Field(
        description="path in the call's result to its items (a list) or their number (data.events; "
        "a leading $. is allowed)"
    )
    page: PageSide = Field(description="what the page shows for the same call: count or list")

    @model_validator(mode="after")
    def _path(self) -> ConsistencyExpectation:
        try:
            parse_path(answer_path(self.answer))
        except PathError as err:
            raise ValueError(f"answer: {err}") from None
        return self

    def selector(self) -> str:
        return self.page.count or self.page.list or ""


def answer_path(path: str) -> str:
    return path[2:] if path.startswith("$.") else path


def check_consistency(exp: ConsistencyExpectation, trace: Trace, captures: Captures) -> list[Assertion]:
    desc = f"{exp.tool}'s answer ({exp.answer}) agrees with the page ({exp.selector()})"
    calls = [c for c in trace.calls if c.tool == exp.tool and c.error is None and not _failed(c.result)]
    if not calls:
        return [assertion("consistency", "consistency", desc, None, f"{exp.tool} never answered: nothing to compare")]
    seen = {r.call: r for r in trace.consistency or []}
    problems, compared = [], 0
    for call in calls:
        record = seen.get(call.index)
        if record is None or record.error:
            why = record.error if record else "the page was not read after it"
            return [assertion("consistency", "consistency", desc, None, f"call #{call.index}: {why}")]
        items = resolve(call.result, answer_path(exp.answer))
        problem = _differs(exp, items, record)
        compared += 1
        if problem:
            problems.append(f"call #{call.index}: {problem}")
    why = "; ".join(problems) or f"{compared} answer(s) as the page shows them"
    return [assertion("consistency", "consistency", desc, not problems, why, [r.model_dump() for r in seen.values()])]


def _failed(result: Any) -> bool:
    """No answer, or an error answer (the site's error shape or MCP's isError): the page shows the error then."""
    if not isinstance(result, dict):
        return result is None
    return result.get("status") == "error" or result.get("isError") is True


def _differs(exp: ConsistencyExpectation, items: Any, record: ConsistencyRecord) -> str:
    """What differs between one answer and the page after it ("" when nothing)."""
    if items is MISSING:
        return f"the answer has nothing at {exp.answer}"
    number = len(items) if isinstance(items, list) else items if isinstance(items, int) else None
    if number is None or isinstance(number, bool):
        return f"the answer's {exp.answer} is neither a list nor a number"
    page = record.count if exp.page.count else len(record.items or [])
    if page != number:
        return f"the tool answered {number} item(s), the page shows {page}"
    if exp.page.field and isinstance(items, list):
        for i, (item, shown) in enumerate(zip(items, record.items or [], strict=False)):
            value = item.get(exp.page.field) if isinstance(item, dict) else None
            if value is None or str(value) not in shown:
                return f"item {i}: the answer's {exp.page.field} {value!r} is not in the page's item {shown[:80]!r}"
    return ""


def unobserved(exp: ConsistencyExpectation, trace: Trace) -> str:
    if trace.consistency is None:
        return "the page was not read after the tool's calls in this trial (a trace made before they were)"
    return ""


def watch_calls(exp: ConsistencyExpectation, trace: Trace) -> CallWatch:
    """The trace's record of the page after the tool's calls, begun empty (a trial that reads it), and what
    reads the page as each call of the tool left it: its count or its items."""
    trace.consistency = []

    async def after(call: ToolCall, page: CallPageReader) -> None:
        if call.tool != exp.tool or call.error is not None:
            return
        found = COUNT_ATTRIBUTE.search(exp.page.count or "")
        attribute = found.group(1) if found else None
        record = await page.page_side(call.index, call.tool, exp.selector(), attribute, exp.page.list is not None)
        trace.consistency = [*(trace.consistency or []), record]

    return after


PAGE = Evidence(
    "consistency",
    ("consistency", "calls"),  # the page after each call, and the calls' answers it is held to
    lambda t: {
        "page": [r.model_dump(exclude={"call"}) for r in t.consistency] if t.consistency is not None else None,
        "answers": [c.result for c in t.calls if any(r.call == c.index for r in t.consistency or [])],
    },
)

KIND = Kind(
    "consistency",
    ConsistencyExpectation,
    check_consistency,
    (PAGE,),
    unobserved,
    watch_calls=watch_calls,
    description="a tool's answer against the page after it: {tool, answer: path to its items, page: {count: "
    "selector} or {list: selector, field}}",
)
