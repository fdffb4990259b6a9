"""Suite health: what a run with many trials says about the cases themselves.

docs/design.md, "Suite health" (Zhu et al. 2025, on task validity): a case no agent ever passes
over many trials is usually a broken task, not a weak agent; a case every
trial of every agent passes has stopped measuring capability and is a
regression check. A suite labels its cases ``purpose: capability`` or
``purpose: regression``; reports show the two groups apart, because their pass
rates mean different things (a capability suite starts low and climbs; a
regression suite should stay near 100%).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from runner.trace import Trace

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

    def to_json(self) -> dict:
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
        }


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
        elif h.passed == h.ran and "agent" in kinds[h.case_id]:
            h.flag = SATURATED
    return SuiteHealth(min_trials, list(by_case.values()))


def health_lines(health: SuiteHealth) -> list[str]:
    lines = []
    groups = health.groups()
    if set(groups) != {"unlabelled"}:
        for purpose, (n, passed, ran) in groups.items():
            rate = f"{passed / ran:.0%}" if ran else "—"
            lines.append(f"{purpose}: {n} case(s), {passed}/{ran} trials passed ({rate})")
    for c in health.flagged:
        lines.append(f"{c.case_id}: {c.flag} ({c.passed}/{c.ran} trials passed, {', '.join(sorted(c.agents))})")
    return lines
