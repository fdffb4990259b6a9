"""A model agent's limits per trial (model requests, agent time, tokens) and what it asserts about them.

A limit reached stops the agent (:class:`Stop`); its ``agent.limits`` assertion then fails, and in cassette
replay its ``agent.cassette`` assertion says whether every request was answered from the cassette.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from webmcp_eval.trace import Assertion


@dataclass
class Limits:
    max_steps: int = 16  # model requests per trial
    max_seconds: float = 90.0  # agent time per trial: model requests and tool calls (not scripted actions)
    max_tokens: int = 200_000  # input + output tokens per trial


class Stop(Exception):
    """The agent stops: a limit reached, or a request its cassette cannot answer (``reason``)."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason, self.detail = reason, detail


def limit_assertions(
    lim: Limits, stopped: dict[str, Any] | None, steps: int, used: int, replay: bool
) -> list[Assertion]:
    """The agent's own assertions: within its limits (``used``: tokens) and, in replay, answered by the cassette."""
    desc = (
        f"the agent finished within its limits ({lim.max_steps} model requests, "
        f"{lim.max_seconds:g} s, {lim.max_tokens} tokens)"
    )
    reason = stopped["reason"] if stopped else None
    detail = stopped["detail"] if stopped else ""
    out = []
    if reason in ("steps", "time", "tokens"):
        out.append(Assertion(id="agent.limits", kind="agent", description=desc, status="failed", why=detail))
    elif reason:
        out.append(
            Assertion(
                id="agent.limits",
                kind="agent",
                description=desc,
                status="not_run",
                why=f"the agent stopped for another reason: {reason}",
            )
        )
    else:
        why = f"{steps} model request(s), {used} tokens"  # no timing: replay must match record
        out.append(Assertion(id="agent.limits", kind="agent", description=desc, status="passed", why=why))
    if replay:
        miss = reason == "cassette_miss"
        why = detail if miss else f"{steps} request(s) answered"
        out.append(
            Assertion(
                id="agent.cassette",
                kind="agent",
                description="every model request was answered from the cassette",
                status="failed" if miss else "passed",
                why=why,
            )
        )
    return out
