"""What the trials of a case or a series cost: wall time, tool calls, tokens and money."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from webmcp_eval.results.text import money, num, seconds
from webmcp_eval.results.trial_figures import grader_tokens, tokens_total
from webmcp_eval.trace import Trace


@dataclass(frozen=True)
class CostSummary:
    """What the trials cost: wall time, tool calls and, for model agents, tokens and money.

    ``*_per_trial`` divide by the trials, ``*_per_case`` by the cases (each case's
    trials summed). ``tokens``/``cost_usd`` are None when no trial reported them.
    """

    trials: int
    cases: int
    wall_ms: float
    tool_calls: int
    tokens: int | None
    cost_usd: float | None

    @classmethod
    def of(cls, traces: Sequence[Trace]) -> CostSummary:
        toks = [n for t in traces if (n := tokens_total(t)) is not None]
        costs = [t.cost_usd for t in traces if t.cost_usd is not None]
        return cls(
            trials=len(traces),
            cases=len({t.case_id for t in traces}),
            wall_ms=sum(t.duration_ms for t in traces),
            tool_calls=sum(len(t.calls) for t in traces),
            tokens=sum(toks) if toks else None,
            cost_usd=sum(costs) if costs else None,
        )

    @classmethod
    def of_grader(cls, traces: Sequence[Trace]) -> CostSummary:
        """What a model grader spent judging the trials (its own latency, tokens and money)."""
        toks = [n for t in traces if (n := grader_tokens(t)) is not None]
        costs = [float(c) for t in traces if (c := t.grader.get("cost_usd")) is not None]
        return cls(
            trials=len(traces),
            cases=len({t.case_id for t in traces}),
            wall_ms=sum(float(t.grader.get("latency_ms") or 0.0) for t in traces),
            tool_calls=0,
            tokens=sum(toks) if toks else None,
            cost_usd=sum(costs) if costs else None,
        )

    @staticmethod
    def _per(value: float | None, n: int) -> float | None:
        return None if value is None or n == 0 else value / n

    @property
    def wall_ms_per_trial(self) -> float | None:
        return self._per(self.wall_ms, self.trials)

    @property
    def wall_ms_per_case(self) -> float | None:
        return self._per(self.wall_ms, self.cases)

    @property
    def tool_calls_per_trial(self) -> float | None:
        return self._per(self.tool_calls, self.trials)

    @property
    def tool_calls_per_case(self) -> float | None:
        return self._per(self.tool_calls, self.cases)

    @property
    def tokens_per_trial(self) -> float | None:
        return self._per(self.tokens, self.trials)

    @property
    def tokens_per_case(self) -> float | None:
        return self._per(self.tokens, self.cases)

    @property
    def cost_per_trial(self) -> float | None:
        return self._per(self.cost_usd, self.trials)

    @property
    def cost_per_case(self) -> float | None:
        return self._per(self.cost_usd, self.cases)

    def text(self) -> str:
        parts = [
            f"{self.trials} trial(s), {self.cases} case(s)",
            f"wall {seconds(self.wall_ms_per_trial)}/trial, {seconds(self.wall_ms_per_case)}/case",
            f"tool calls {num(self.tool_calls_per_trial)}/trial, {num(self.tool_calls_per_case)}/case",
        ]
        if self.tokens is not None:
            parts.append(f"tokens {num(self.tokens_per_trial, 0)}/trial, {num(self.tokens_per_case, 0)}/case")
        if self.cost_usd is not None:
            parts.append(f"{money(self.cost_per_trial)}/trial, {money(self.cost_per_case)}/case")
        return " · ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "trials": self.trials,
            "cases": self.cases,
            "wall_ms": round(self.wall_ms, 1),
            "tool_calls": self.tool_calls,
            "tokens": self.tokens,
            "cost_usd": self.cost_usd,
        }
