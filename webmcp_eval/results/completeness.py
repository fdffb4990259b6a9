"""The plan a run directory keeps, and how complete its traces are against it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from webmcp_eval.results.trial_figures import SeriesKey
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.rundir.plan import PlannedTrial, RunPlan


def plan_series(plan: RunPlan) -> SeriesKey:
    """The series a plan's trials belong to (its agent, model and evidence kind)."""
    if plan["evidence_kind"] == "deterministic":
        return ("deterministic",)
    return (plan["evidence_kind"], plan["agent"], plan["model"] or "")


@dataclass(frozen=True)
class RunStatus:
    """One run directory: ``planned`` is None when it has no plan (completeness unknown)."""

    run_id: str
    planned: int | None
    traced: int  # planned trials that have a trace (all traces, without a plan)
    missing: tuple[PlannedTrial, ...] = ()


@dataclass(frozen=True)
class Completeness:
    runs: tuple[RunStatus, ...]

    @property
    def state(self) -> Literal["complete", "incomplete", "unknown"]:
        if any(r.missing for r in self.runs):
            return "incomplete"
        if not self.runs or any(r.planned is None for r in self.runs):
            return "unknown"
        return "complete"

    @property
    def planned(self) -> int:
        return sum(r.planned or 0 for r in self.runs)

    @property
    def traced(self) -> int:
        return sum(r.traced for r in self.runs if r.planned is not None)

    @property
    def missing(self) -> tuple[PlannedTrial, ...]:
        return tuple(m for r in self.runs for m in r.missing)

    @property
    def unplanned_runs(self) -> tuple[str, ...]:
        return tuple(r.run_id for r in self.runs if r.planned is None)

    def text(self) -> str:
        """One line: "complete: 6 of 6 trials", "incomplete: 4 of 6 trials (…)" or why it is unknown."""
        if self.state == "unknown":
            runs = ", ".join(self.unplanned_runs) or "no run"
            return f"completeness unknown: no {RunDir.PLAN} in {runs} (the planned trials are not recorded)"
        head = f"{self.state}: {self.traced} of {self.planned} trials"
        if self.state == "complete":
            return head
        ids = [m["trial_id"] for m in self.missing]
        shown = ", ".join(ids[:8]) + (f", … ({len(ids) - 8} more)" if len(ids) > 8 else "")
        tail = f"; completeness unknown for {', '.join(self.unplanned_runs)}" if self.unplanned_runs else ""
        return f"{head} ({len(ids)} planned trial(s) have no trace: {shown}){tail}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            # over the runs that have a plan; None when none has
            "planned": self.planned if len(self.unplanned_runs) < len(self.runs) else None,
            "traced": self.traced if len(self.unplanned_runs) < len(self.runs) else None,
            "missing": [m["trial_id"] for m in self.missing],
            "unplanned_runs": list(self.unplanned_runs),
            "text": self.text(),
        }
