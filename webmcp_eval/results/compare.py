"""Comparing two runs, and the power of a suite (docs/statistics.md, Miller 2024).

``compare_runs(a, b)`` (two :class:`webmcp_eval.results.run_results.Results`, or two runs'
traces) pairs the cases both runs have and takes the per-case difference of
the **case pass rate** (b − a; a trial passes only when every assertion
passed), with :func:`webmcp_eval.results.paired.paired_difference`: mean difference, its 95%
interval, the cases that flipped each way and a plain sentence saying whether
the difference is distinguishable from noise. Evidence kinds are never mixed:
deterministic trials are compared with deterministic ones, each agent (and
model) with itself -- or, when each run has exactly one agent series, the two
with each other (two models). Runs that share no kind of evidence are never
paired, and the text says so. ``not_run`` trials are no evidence; a case whose
trials all were ``not_run`` in a run is reported as not run there, and like a
case only one run has, it is left out of the pairing and listed.

``power_text(power_analysis(base_rate, delta, trials, n_cases))`` answers the two questions to
ask before a run: how many cases (and trials) detect a given difference, and
the smallest difference the suite's size can detect
(:func:`webmcp_eval.results.power.cases_needed`, :func:`webmcp_eval.results.power.min_detectable_difference`).

Pure functions on results and numbers; no I/O. Text comes back as a string for
the console.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from webmcp_eval.results.paired import PairedDifference, paired_difference
from webmcp_eval.results.power import cases_needed, min_detectable_difference
from webmcp_eval.results.run_results import (
    CaseResult,
    CostSummary,
    Results,
    SeriesKey,
    SeriesResult,
    pct,
    results_of,
    series_label,
    series_order,
)
from webmcp_eval.results.stats import signed
from webmcp_eval.trace import Trace

__all__ = [
    "CaseDelta",
    "CompareResult",
    "CostSummary",
    "PowerResult",
    "SeriesComparison",
    "compare_runs",
    "power_analysis",
    "power_text",
    "render_compare",
]


# --------------------------------------------------------------------------- compare


@dataclass(frozen=True)
class CaseDelta:
    """One case in both runs: case pass rates (passed / trials that ran) and b − a."""

    case_id: str
    behaviour: str
    rate_a: float
    rate_b: float
    trials_a: int
    trials_b: int

    @property
    def diff(self) -> float:
        return self.rate_b - self.rate_a


@dataclass(frozen=True)
class SeriesComparison:
    """One kind of evidence (deterministic, or one agent and model) compared across the two runs.

    ``key`` is run A's series and ``key_b`` run B's: the same, except when each run has exactly one
    series of a kind and they differ (two models, say), which are then paired with each other.
    ``paired`` is None when no case ran in both (``reason`` says why).
    ``not_run_in_a`` / ``not_run_in_b``: cases both runs have, but none of whose trials ran in that run.
    ``only_in_a`` / ``only_in_b``: cases the other run does not have at all (with this evidence).
    ``assertion_rate_a`` / ``_b``: the per-assertion pass rate over the paired cases (diagnosis).
    """

    key: SeriesKey
    paired: PairedDifference | None
    cases: tuple[CaseDelta, ...]
    only_in_a: tuple[str, ...]
    only_in_b: tuple[str, ...]
    not_run_in_a: tuple[str, ...]
    not_run_in_b: tuple[str, ...]
    mean_a: float | None
    mean_b: float | None
    assertion_rate_a: float | None
    assertion_rate_b: float | None
    cost_a: CostSummary
    cost_b: CostSummary
    reason: str = ""
    key_b: SeriesKey | None = None

    @property
    def label(self) -> str:
        if self.key_b is None or self.key_b == self.key:
            return series_label(self.key)
        return f"{series_label(self.key)} (A) vs {series_label(self.key_b)} (B)"

    @property
    def flipped_up(self) -> tuple[CaseDelta, ...]:
        """Cases better in b (for one trial each: fail → pass)."""
        return tuple(c for c in self.cases if c.diff > 0)

    @property
    def flipped_down(self) -> tuple[CaseDelta, ...]:
        """Cases worse in b (for one trial each: pass → fail)."""
        return tuple(c for c in self.cases if c.diff < 0)

    @property
    def distinguishable(self) -> bool:
        return bool(self.paired and self.paired.distinguishable)

    @property
    def sentence(self) -> str:
        """The plain answer: is b different from a, beyond noise?"""
        if self.paired is None:
            return f"{self.label}: no case ran in both runs, so nothing can be compared ({self.reason})."
        p = self.paired
        if p.n < 2:
            return (
                f"{self.label}: only 1 case ran in both runs; with one pair the noise cannot be estimated, "
                f"so the difference ({signed(p.mean)}) is not distinguishable from noise."
            )
        interval = f"95% interval {signed(p.ci_low)} … {signed(p.ci_high)}"
        if p.distinguishable:
            way = "higher" if p.mean > 0 else "lower"
            return (
                f"{self.label}: run B's case pass rate is {abs(p.mean):.2f} {way} than run A's over {p.n} "
                f"paired cases ({interval}, which excludes 0): the difference is distinguishable from noise."
            )
        if p.mean == 0:
            return (
                f"{self.label}: no difference in case pass rate over {p.n} paired cases ({interval}): "
                f"not distinguishable from noise."
            )
        way = "higher" if p.mean > 0 else "lower"
        return (
            f"{self.label}: run B's case pass rate is {abs(p.mean):.2f} {way} than run A's over {p.n} "
            f"paired cases, but the {interval} includes 0: the difference is not distinguishable from noise."
        )


@dataclass(frozen=True)
class CompareResult:
    label_a: str
    label_b: str
    series: tuple[SeriesComparison, ...]
    completeness_a: str = ""
    completeness_b: str = ""

    @property
    def distinguishable(self) -> bool:
        """True when some kind of evidence differs beyond noise."""
        return any(s.distinguishable for s in self.series)

    @property
    def comparable(self) -> bool:
        """False when the runs share no kind of evidence: nothing may be paired (never deterministic with agent)."""
        return not self.series or any(s.key_b is not None for s in self.series)

    def get(self, key: SeriesKey | str) -> SeriesComparison | None:
        want = (key,) if isinstance(key, str) else key
        return next((s for s in self.series if want in (s.key, s.key_b)), None)

    def text(self) -> str:
        return render_compare(self)


def _run_label(results: Results, fallback: str) -> str:
    ids = sorted({t.run_id for t in results.traces})
    if not ids:
        return fallback
    return "run " + ", ".join(ids) if len(ids) <= 3 else f"{len(ids)} runs ({ids[0]} … {ids[-1]})"


def _compare_series(key: SeriesKey, sa: SeriesResult | None, sb: SeriesResult | None) -> SeriesComparison:
    ca = {c.case_id: c for c in sa.cases} if sa else {}
    cb = {c.case_id: c for c in sb.cases} if sb else {}
    rates_a = {cid: c.case_pass_rate for cid, c in ca.items() if c.case_pass_rate is not None}
    rates_b = {cid: c.case_pass_rate for cid, c in cb.items() if c.case_pass_rate is not None}
    common = sorted(set(rates_a) & set(rates_b))
    deltas = tuple(
        CaseDelta(cid, ca[cid].behaviour, rates_a[cid], rates_b[cid], ca[cid].counts.ran, cb[cid].counts.ran)
        for cid in common
    )
    paired = reason = None
    if common:
        paired = paired_difference({c: rates_a[c] for c in common}, {c: rates_b[c] for c in common})
    elif sa is None:
        reason = "run A has no trials of this kind"
    elif sb is None:
        reason = "run B has no trials of this kind"
    elif not set(ca) & set(cb):
        reason = "the runs share no case"
    else:
        reason = "every shared case was not_run in one of the runs"

    def assertion_rate(cases: dict[str, CaseResult]) -> float | None:
        rates = [r for cid in common if (r := cases[cid].assertion_pass_rate) is not None]
        return sum(rates) / len(rates) if rates else None

    return SeriesComparison(
        key=sa.key if sa else key,
        key_b=sb.key if sb and sa else None,
        paired=paired,
        cases=deltas,
        only_in_a=tuple(sorted(set(ca) - set(cb))),
        only_in_b=tuple(sorted(set(cb) - set(ca))),
        not_run_in_a=tuple(sorted(c for c in set(ca) & set(cb) if c not in rates_a)),
        not_run_in_b=tuple(sorted(c for c in set(ca) & set(cb) if c not in rates_b)),
        mean_a=sum(rates_a[c] for c in common) / len(common) if common else None,
        mean_b=sum(rates_b[c] for c in common) / len(common) if common else None,
        assertion_rate_a=assertion_rate(ca),
        assertion_rate_b=assertion_rate(cb),
        cost_a=sa.cost if sa else CostSummary.of([]),
        cost_b=sb.cost if sb else CostSummary.of([]),
        reason=reason or "",
    )


def _pairs(a: Results, b: Results) -> list[tuple[SeriesKey, SeriesResult | None, SeriesResult | None]]:
    """Series of the same kind only; one agent series each (two models, say) are paired with each other."""
    out = []
    kinds = sorted({s.kind for s in (*a.series, *b.series)}, key=lambda k: series_order((k,)))
    for kind in kinds:
        ka = [s.key for s in a.series if s.kind == kind]
        kb = [s.key for s in b.series if s.kind == kind]
        if len(ka) == 1 and len(kb) == 1 and ka != kb:
            out.append((ka[0], a.get(ka[0]), b.get(kb[0])))
            continue
        for key in sorted(set(ka) | set(kb)):
            out.append((key, a.get(key), b.get(key)))
    return out


def compare_runs(
    a: Results | Sequence[Trace],
    b: Results | Sequence[Trace],
    label_a: str | None = None,
    label_b: str | None = None,
) -> CompareResult:
    """Run B minus run A, per kind of evidence, paired over the cases both ran.

    Each case counts once: its case pass rate is passed / trials that ran (so
    with one trial per case it is 0 or 1 and the flipped cases are fail → pass
    and pass → fail). Cases only one run has, and cases all of whose trials were
    not_run in a run, are left out of the pairing and listed.
    """
    ra = a if isinstance(a, Results) else results_of(a)
    rb = b if isinstance(b, Results) else results_of(b)
    series = tuple(_compare_series(key, sa, sb) for key, sa, sb in _pairs(ra, rb))
    return CompareResult(
        label_a=label_a or _run_label(ra, "A"),
        label_b=label_b or _run_label(rb, "B"),
        series=series,
        completeness_a=ra.completeness.text() if ra.completeness.state == "incomplete" else "",
        completeness_b=rb.completeness.text() if rb.completeness.state == "incomplete" else "",
    )


def _case_list(cases: Sequence[CaseDelta]) -> str:
    if not cases:
        return "none"
    if all(c.trials_a == 1 and c.trials_b == 1 for c in cases):
        return ", ".join(c.case_id for c in cases)
    return ", ".join(f"{c.case_id} ({c.rate_a:.2f} → {c.rate_b:.2f})" for c in cases)


def render_compare(result: CompareResult) -> str:
    """The comparison as plain text for the console (no markup)."""
    lines = [f"A = {result.label_a}", f"B = {result.label_b}"]
    for name, text in (("A", result.completeness_a), ("B", result.completeness_b)):
        if text:
            lines.append(f"run {name} is {text}")
    lines.append(
        "Difference B − A in case pass rate (a trial passes only when every assertion passed), paired per case."
    )
    if not result.series:
        lines.append("Neither run has any trial: nothing to compare.")
    if not result.comparable:
        kinds_a = sorted({s.key[0] for s in result.series if s.cost_a.trials})
        kinds_b = sorted({s.key[0] for s in result.series if s.cost_b.trials})
        lines.append(
            f"The runs share no kind of evidence (A: {', '.join(kinds_a)}; B: {', '.join(kinds_b)}): "
            "deterministic, agent, model-grader and human-label evidence are never paired, so nothing is compared."
        )
    for s in result.series:
        lines.append("")
        lines.append(f"[{s.label}]")
        if s.paired is not None:
            p = s.paired
            lines.append(f"  case pass rate      A {pct(s.mean_a)}   B {pct(s.mean_b)}   over {p.n} paired cases")
            lines.append(
                f"  per-assertion rate  A {pct(s.assertion_rate_a)}   B {pct(s.assertion_rate_b)}"
                "   (diagnosis, not the gate)"
            )
            lines.append(
                f"  mean difference {signed(p.mean)}, 95% CI {signed(p.ci_low)} … {signed(p.ci_high)} (SE {p.se:.3f})"
            )
            one = all(c.trials_a == 1 and c.trials_b == 1 for c in s.cases)
            up_name, down_name = ("fail → pass", "pass → fail") if one else ("better in B", "worse in B")
            lines.append(f"  {up_name} ({len(s.flipped_up)}): {_case_list(s.flipped_up)}")
            lines.append(f"  {down_name} ({len(s.flipped_down)}): {_case_list(s.flipped_down)}")
        for name, cases in (
            ("only in A", s.only_in_a),
            ("only in B", s.only_in_b),
            ("not run in A", s.not_run_in_a),
            ("not run in B", s.not_run_in_b),
        ):
            if cases:
                lines.append(f"  {name} ({len(cases)}, left out): {', '.join(cases)}")
        lines.append(f"  cost A: {s.cost_a.text()}")
        lines.append(f"  cost B: {s.cost_b.text()}")
        lines.append("  " + s.sentence)
    return "\n".join(lines)


# --------------------------------------------------------------------------- power


@dataclass(frozen=True)
class PowerResult:
    """Cases needed for ``delta`` (per trial count), and the smallest detectable difference for ``n_cases``."""

    base_rate: float
    delta: float | None
    trials: int
    n_cases: int | None
    alpha: float
    power: float
    paired: bool
    correlation: float
    needed: dict[int, int]  # trials per case -> cases needed
    mdd: float | None  # smallest detectable improvement with n_cases; None: none up to 1
    mdd_by_trials: dict[int, float | None]


def power_analysis(
    base_rate: float,
    delta: float | None = None,
    trials: int = 1,
    n_cases: int | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    paired: bool = True,
    correlation: float = 0.5,
    trial_options: Iterable[int] = (1, 3, 5),
) -> PowerResult:
    """Both power questions at once. Raises ValueError on arguments out of range (from webmcp_eval.results.stats)."""
    if delta is None and n_cases is None:
        raise ValueError("give a difference to detect (delta), the suite's size (n_cases), or both")
    options = sorted({*trial_options, trials})
    needed: dict[int, int] = {}
    if delta is not None:
        for k in options:
            needed[k] = cases_needed(
                base_rate, delta, alpha=alpha, power=power, trials=k, paired=paired, correlation=correlation
            )
    mdd = None
    by_trials: dict[int, float | None] = {}
    if n_cases is not None:
        for k in options:
            by_trials[k] = min_detectable_difference(
                n_cases, base_rate, trials=k, alpha=alpha, power=power, paired=paired, correlation=correlation
            )
        mdd = by_trials[trials]
    return PowerResult(
        base_rate=base_rate,
        delta=delta,
        trials=trials,
        n_cases=n_cases,
        alpha=alpha,
        power=power,
        paired=paired,
        correlation=correlation,
        needed=needed,
        mdd=mdd,
        mdd_by_trials=by_trials,
    )


def power_text(r: PowerResult) -> str:
    """A power analysis (:func:`power_analysis`) as plain sentences for the console."""
    design = f"two-sided α = {r.alpha:g}, power {r.power:.0%}, " + (
        f"paired runs (same cases), assumed correlation {r.correlation:g} between the runs' per-case scores"
        if r.paired
        else "two independent runs"
    )
    lines = [
        f"Base rate (case pass rate) {r.base_rate:.2f}; {design}; normal approximation, cases alike "
        f"(binomial variance per case: the optimistic end)."
    ]
    if r.delta is not None:
        target = r.base_rate + r.delta
        lines.append(
            f"To detect a change of {signed(r.delta)} (from {r.base_rate:.2f} to {target:.2f}) you need "
            f"{r.needed[r.trials]} cases with {r.trials} trial{'s' if r.trials != 1 else ''} each."
        )
        lines.append(
            "  trials per case → cases needed: " + ", ".join(f"{k} → {n} ({n * k} trials)" for k, n in r.needed.items())
        )
    if r.n_cases is not None:
        if r.mdd is None:
            lines.append(
                f"With {r.n_cases} cases and {r.trials} trial(s) each, no improvement up to a pass rate "
                f"of 1.00 is detectable."
            )
        else:
            lines.append(
                f"With {r.n_cases} cases and {r.trials} trial(s) each, the smallest improvement this "
                f"suite can detect is {signed(r.mdd)} (from {r.base_rate:.2f} to "
                f"{r.base_rate + r.mdd:.2f}); smaller differences look like noise."
            )
        lines.append(
            "  trials per case → smallest detectable: "
            + ", ".join(f"{k} → {'none' if d is None else signed(d)}" for k, d in r.mdd_by_trials.items())
        )
    return "\n".join(lines)
