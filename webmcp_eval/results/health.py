"""Suite health: what a run with many trials says about the cases themselves.

docs/design.md, "Suite health" (Zhu et al. 2025, on task validity): a case no agent ever passes
over many trials is usually a broken task, not a weak agent; a case every
trial of every agent passes has stopped measuring capability and is a
regression check. A suite labels its cases ``purpose: capability`` or
``purpose: regression``; reports show the two groups apart, because their pass
rates mean different things (a capability suite starts low and climbs; a
regression suite should stay near 100%).

The control section is about the cases too: a case the null agent (which does
nothing) passes measures no agent, unless it says why doing nothing is right
there (``null_agent``). Null-agent trials are kept out of the flags above: a
case the silent agent fails is doing its job, not broken.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from webmcp_eval.results.run_results import CONTROL
from webmcp_eval.trace import Trace

DEFAULT_MIN_TRIALS = 5
BROKEN = "probably a broken task"
SATURATED = "saturated: regression only"


@dataclass
class CaseHealth:
    case_id: str
    purpose: str  # capability | regression | unlabelled
    ran: int = 0
    passed: int = 0
    agents: set[str] = field(default_factory=set)
    flag: str | None = None

    @property
    def rate(self) -> float | None:
        return self.passed / self.ran if self.ran else None


@dataclass
class SuiteHealth:
    min_trials: int
    cases: list[CaseHealth]
    control: ControlHealth = field(default_factory=lambda: ControlHealth())

    @property
    def flagged(self) -> list[CaseHealth]:
        return [c for c in self.cases if c.flag]

    def groups(self) -> dict[str, tuple[int, int, int]]:
        """purpose -> (cases, trials passed, trials ran)."""
        out: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        for c in self.cases:
            g = out[c.purpose]
            g[0] += 1
            g[1] += c.passed
            g[2] += c.ran
        return {k: (v[0], v[1], v[2]) for k, v in sorted(out.items())}

    def to_json(self) -> dict[str, object]:
        return {
            "min_trials": self.min_trials,
            "cases": [
                {
                    "case": c.case_id,
                    "purpose": c.purpose,
                    "trials": c.ran,
                    "passed": c.passed,
                    "agents": sorted(c.agents),
                    "flag": c.flag,
                }
                for c in self.cases
            ],
            "groups": {k: {"cases": n, "passed": p, "trials": r} for k, (n, p, r) in self.groups().items()},
            "control": self.control.to_json(),
        }


@dataclass
class ControlHealth:
    """The do-nothing control over the suite: which cases the null agent passed, and which say why."""

    ran: list[str] = field(default_factory=list)  # case ids with a control trial that ran
    passed: dict[str, str] = field(default_factory=dict)  # case id -> the case's reason ("" unexplained)
    not_judged: dict[str, str] = field(default_factory=dict)  # case id -> why no control trial could judge it

    @property
    def unexplained(self) -> list[str]:
        return [cid for cid, why in self.passed.items() if not why]

    def lines(self) -> list[str]:
        if not (self.ran or self.not_judged):
            return []
        n = len(self.ran)
        out = [
            f"control (the null agent): passes {len(self.passed)} of {n} case(s) "
            f"({len(self.passed) / n:.0%}), {len(self.unexplained)} unexplained"
            if n
            else "control (the null agent): no trial ran"
        ]
        for cid, why in self.passed.items():
            out.append(f"{cid}: passes with no agent ({'why: ' + why if why else 'unexplained: add null_agent'})")
        out += [f"{cid}: not judged by the control ({why})" for cid, why in self.not_judged.items()]
        return out

    def to_json(self) -> dict[str, object]:
        return {
            "cases_ran": len(self.ran),
            "passes_with_no_agent": [{"case": c, "reason": w, "explained": bool(w)} for c, w in self.passed.items()],
            "unexplained": self.unexplained,
            "not_judged": self.not_judged,
        }


# A null agent's trial that stopped at a scripted user step (a page element only a working agent brings up) did not
# pass.
CONTROL_STOPPED = "step"


def control_health(traces: list[Trace]) -> ControlHealth:
    """Per case, over the control series' trials: passed (any trial), failed, or not judged (could not run)."""
    health = ControlHealth()
    for t in traces:
        if t.evidence_kind != CONTROL:
            continue
        if t.verdict == "not_run" and t.not_run_kind != CONTROL_STOPPED:
            if t.case_id not in health.ran:
                health.not_judged.setdefault(t.case_id, t.verdict_reason)
            continue
        health.not_judged.pop(t.case_id, None)
        if t.case_id not in health.ran:
            health.ran.append(t.case_id)
        if t.verdict == "passed":
            said = t.case.get("null_agent")
            health.passed[t.case_id] = str(said.get("reason") or "") if isinstance(said, dict) else ""
    return health


def _agent(trace: Trace) -> str:
    return f"{trace.agent}:{trace.model}" if trace.model else trace.agent


def suite_health(traces: list[Trace], min_trials: int = DEFAULT_MIN_TRIALS) -> SuiteHealth:
    """Per case over the trials that ran (not_run is no evidence); flags need at least ``min_trials``.

    Broken: no trial passed, whatever the evidence kind (the reference agent
    failing its own plan is a broken case for certain). Saturated: every trial
    passed, and agent evidence was among them (the reference agent passing is
    what it is for, not saturation).
    """
    by_case: dict[str, CaseHealth] = {}
    kinds: dict[str, set[str]] = defaultdict(set)
    for t in traces:
        if t.evidence_kind == CONTROL:  # the null agent is expected to fail: its own section, never a flag here
            continue
        purpose = (t.case or {}).get("purpose") or "unlabelled"
        h = by_case.setdefault(t.case_id, CaseHealth(t.case_id, purpose))
        if t.verdict == "not_run":
            continue
        h.ran += 1
        h.passed += t.verdict == "passed"
        h.agents.add(_agent(t))
        kinds[t.case_id].add(t.evidence_kind)
    for h in by_case.values():
        if h.ran < min_trials:
            continue
        if h.passed == 0:
            h.flag = BROKEN
        elif h.passed == h.ran and kinds[h.case_id] & {"agent", "simulated_user"}:
            h.flag = SATURATED
    return SuiteHealth(min_trials, list(by_case.values()), control_health(traces))


def health_lines(health: SuiteHealth) -> list[str]:
    lines = []
    groups = health.groups()
    if set(groups) != {"unlabelled"}:
        for purpose, (n, passed, ran) in groups.items():
            rate = f"{passed / ran:.0%}" if ran else "—"
            lines.append(f"{purpose}: {n} case(s), {passed}/{ran} trials passed ({rate})")
    for c in health.flagged:
        lines.append(f"{c.case_id}: {c.flag} ({c.passed}/{c.ran} trials passed, {', '.join(sorted(c.agents))})")
    return lines + health.control.lines()
