"""The null agent: the do-nothing control.

It reads the page's tools, calls none of them and answers with nothing. A case
it passes measures nothing about an agent (Zhu et al. 2025: a do-nothing agent
passes 38% of one public benchmark's tasks), unless the case says why doing
nothing is right there (``null_agent: {passes: true, reason: ...}``). Its
evidence kind is ``control``: a series of its own, never pooled with the
reference agent's or a model's.
"""

from __future__ import annotations

from typing import Final

from webmcp_eval.agents.protocol import AgentReport, ToolHost
from webmcp_eval.suite.case import UserStep
from webmcp_eval.trace import Assertion, EvidenceKind

NULL_AGENT = "none"
CONTROL: Final = "control"


class NullAgent:
    name = NULL_AGENT
    model: str | None = None
    evidence_kind: EvidenceKind = CONTROL

    def __init__(self) -> None:
        self.seen: list[list[str]] = []  # the tool names it was offered, per user turn

    def start_trial(self, trial_id: str) -> None:
        self.seen = []

    async def turn(self, step: UserStep, host: ToolHost) -> str:
        # Read the tools as any agent would (the catalog read is part of what a trial exercises), then do nothing.
        self.seen.append([t.name for t in await host.catalog()])
        return ""

    def report(self) -> AgentReport:
        return {"log": {"offered_tools": self.seen}}

    def assertions(self) -> list[Assertion]:
        return []
