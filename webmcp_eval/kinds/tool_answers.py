"""``expect.tool_answers``: what the answers of the tools the agent called must contain.

In a goal case the agent chooses its calls, so the case cannot pin them in ``calls.expected``; what it can
say is what an answer must hold when the agent asks for it. A site that strips the Chinese characters of a
search keyword answers "WebMCP 線上問答" with every WebMCP event, and an agent that then saves the right
one passes every other check:

    tool_answers:
      - tool: search_events
        args: {query: {$contains: 線上問答}}   # the calls it judges (absent: every call of the tool)
        result: {status: ok, data: {events: [{title: WebMCP 線上問答}]}}

Every call of ``tool`` whose arguments match ``args`` must have an answer that matches ``result`` (the
value matchers of expected calls, ``$ref`` to the calls' captures too). A tool the agent never called so is
``not_run``: there is no answer to judge, and the other checks say whether it should have called it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, RootModel, model_validator

from webmcp_eval.kinds import Captures, Evidence, Kind, assertion
from webmcp_eval.matchers import match, matcher_problems, short
from webmcp_eval.trace import Assertion, Trace


class ToolAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1, description="the tool whose answers are judged")
    args: Any = Field(default=None, description="matcher of the calls it judges (absent: every call of the tool)")
    result: Any = Field(description="matcher every such call's answer must meet")

    @model_validator(mode="after")
    def _matchers(self) -> ToolAnswer:
        for name in ("args", "result"):
            problems = matcher_problems(getattr(self, name))
            if problems:
                where, why = problems[0]
                raise ValueError(f"{'.'.join([name, *map(str, where)])}: {why}")
        return self


class ToolAnswers(RootModel[list[ToolAnswer]]):
    """One entry per tool (and calls) whose answers the case names."""


def check_tool_answers(exp: ToolAnswers, trace: Trace, captures: Captures) -> list[Assertion]:
    return [_judged(i, want, trace, captures) for i, want in enumerate(exp.root)]


def _judged(i: int, want: ToolAnswer, trace: Trace, captures: Captures) -> Assertion:
    which = f" with {short(want.args, 60)}" if want.args is not None else ""
    desc = f"every answer of {want.tool}{which} holds {short(want.result, 80)}"
    calls = [
        c for c in trace.calls if c.tool == want.tool and (want.args is None or match(want.args, c.args, captures)[0])
    ]
    if not calls:
        why = f"the agent never called {want.tool}{which}: no answer to judge"
        return assertion(f"tool_answers[{i}]", "tool_answers", desc, None, why)
    wrong = []
    for call in calls:
        ok, why = match(want.result, call.result if call.error is None else {"error": call.error}, captures)
        if not ok:
            wrong.append(f"#{call.index} {want.tool}({short(call.args, 60)}): {why}")
    why = "; ".join(wrong) or f"{len(calls)} answer(s) as named"
    return assertion(f"tool_answers[{i}]", "tool_answers", desc, not wrong, why, [c.index for c in calls])


def _named_answers(trace: Trace) -> list[dict[str, Any]]:
    """The answers of the tools the case's tool_answers names (none for a case without it: the calls'
    own evidence already holds every call)."""
    named = (trace.case.get("expect") or {}).get("tool_answers") or []
    tools = {w.get("tool") for w in named if isinstance(w, dict)}
    return [
        {"tool": c.tool, "args": c.args, "result": c.result, "error": c.error} for c in trace.calls if c.tool in tools
    ]


ANSWERS = Evidence("tool_answers", ("calls",), _named_answers)


def answerable(exp: ToolAnswers, trace: Trace) -> str:
    return ""  # every trace that played keeps its calls and their answers


KIND = Kind(
    "tool_answers",
    ToolAnswers,
    check_tool_answers,
    (ANSWERS,),
    answerable,
    description="what the answers of the tools the agent called must contain (for goal cases): "
    "[{tool, args: matcher of the calls, result: matcher of their answers}]",
)
