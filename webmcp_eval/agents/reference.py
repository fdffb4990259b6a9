"""Agents: who decides which tools to call.

The reference agent plays the case's own plan through the tool host. Its
evidence kind is ``deterministic``: it proves the site and the checks, never
that a model can do the task (docs/design.md, "Evidence kinds": the two kinds
never stand in for each other).
"""

from __future__ import annotations

import re
from typing import Any

from webmcp_eval.agents.protocol import AgentError, AgentReport, ToolHost
from webmcp_eval.matchers import MISSING, resolve, short, substitute
from webmcp_eval.suite.case import UserStep
from webmcp_eval.suite.synthesize import described, from_schema
from webmcp_eval.trace import Assertion, EvidenceKind


class ReferenceAgent:
    name = "reference"
    model: str | None = None
    evidence_kind: EvidenceKind = "deterministic"

    def __init__(self) -> None:
        self.captures: dict[str, Any] = {}
        self.missed: dict[str, str] = {}  # capture name -> why the plan's call gave nothing to capture

    def start_trial(self, trial_id: str) -> None:
        self.captures = {}
        self.missed = {}

    def assertions(self) -> list[Assertion]:
        return []

    def report(self) -> AgentReport:
        return {}

    async def turn(self, step: UserStep, host: ToolHost) -> str:
        for planned in step.plan:
            try:
                args = substitute(planned.args, self.captures)
            except KeyError as err:
                raise AgentError(self._why_missing(err)) from None
            made_up = await _better_made_up_values(planned.call, planned.synthesized, args, host)
            call = await host.call(planned.call, args)
            if made_up:
                call.synthesized = made_up
            for name, path in planned.capture.items():
                value = resolve({"args": call.args, "result": call.result}, path)
                if value is not MISSING:
                    self.captures[name] = value
                    self.missed.pop(name, None)
                else:
                    outcome = call.error or f"it answered {short(call.result, 160)}"
                    self.missed[name] = f"the plan's {call.tool} call gave nothing at {path} ({outcome})"
        return _fill_reply(step.reply, self.captures)

    def _why_missing(self, err: KeyError) -> str:
        """The plan needs a value an earlier call failed to give: the site did not answer as planned.

        For the reference agent that is never the agent's failure (the plan is
        the case's own), so the trial is not_run with the call's own outcome.
        """
        for name, why in self.missed.items():
            if repr(name) in str(err):
                return f"the site did not answer as the case's reference plan expects: {why}, so {name!r} is unknown"
        return str(err).strip("\"'")


async def _better_made_up_values(
    tool: str, synthesized: dict[str, Any], args: dict[str, Any], host: ToolHost
) -> dict[str, str]:
    """Made-up values replaced, in ``args``, by what the tool's live schema offers; how each was chosen."""
    if not synthesized:
        return {}
    schema = next((t.input_schema for t in await host.catalog() if t.name == tool), None)
    props = schema.get("properties") if isinstance(schema, dict) else None
    out: dict[str, str] = {}
    for name, matcher in synthesized.items():
        value, source = from_schema(matcher, (props or {}).get(name))
        if value is not MISSING:
            args[name] = value
        out[name] = f"made up from {described(matcher)}" + (f", {source}" if source else "")
    return out


def _fill_reply(reply: str, captures: dict[str, Any]) -> str:
    """Replies may quote captured values as ``{name}``."""
    return re.sub(r"\{(\w+)\}", lambda m: str(captures.get(m.group(1), m.group(0))), reply)
