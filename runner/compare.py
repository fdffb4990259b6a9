"""Comparing two runs, and the power of a suite (seed 004, Miller 2024).

``compare_runs(traces_a, traces_b)`` pairs the cases both runs have and takes
the per-case difference of the **case pass rate** (b − a; a trial passes only
when every assertion passed), with :func:`runner.stats.paired_difference`:
mean difference, its 95% interval, the cases that flipped each way and a plain
sentence saying whether the difference is distinguishable from noise. Evidence
kinds are never mixed: deterministic trials are compared with deterministic
ones, each agent (and model) with itself. ``not_run`` trials are no evidence; a
case whose trials all were ``not_run`` in a run is reported as not run there,
and like a case only one run has, it is left out of the pairing and listed.

``power_text(baseline, delta, trials, n_cases)`` answers the two questions to
ask before a run: how many cases (and trials) detect a given difference, and
the smallest difference the suite's size can detect
(:func:`runner.stats.cases_needed`, :func:`runner.stats.min_detectable_difference`).

Pure functions on traces and numbers; no I/O. Text comes back as a string for
the console.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from runner.stats import PairedDifference, cases_needed, min_detectable_difference, paired_difference
from runner.trace import Trace

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
    "series_key",
    "series_label",
]

MINUS = "\u2212"


# --------------------------------------------------------------------------- series and cost


def series_key(trace: Trace) -> tuple[str, ...]:
    """Which evidence a trial is: ``("deterministic",)`` or ``("agent", agent, model)``; never mixed."""
    if trace.evidence_kind == "deterministic":
        return ("deterministic",)
    return ("agent", trace.agent, trace.model or "")


def series_label(key: tuple[str, ...]) -> str:
    if key[0] == "deterministic":
        return "deterministic"
    _, agent, model = key
    return f"agent {agent}" + (f" ({model})" if model else "")


def tokens_total(trace: Trace) -> int | None:
    """The trial's tokens (``total`` when the agent gave it, else input + output); None without any."""
    if not trace.tokens:
        return None
    if "total" in trace.tokens:
        return int(trace.tokens["total"])
    return int(sum(v for v in trace.tokens.values() if isinstance(v, int | float)))


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

    def _per(self, value: float | None, n: int) -> float | None:
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
            f"wall {_secs(self.wall_ms_per_trial)}/trial, {_secs(self.wall_ms_per_case)}/case",
            f"tool calls {_num(self.tool_calls_per_trial)}/trial, {_num(self.tool_calls_per_case)}/case",
        ]
        if self.tokens is not None:
            parts.append(f"tokens {_num(self.tokens_per_trial, 0)}/trial, {_num(self.tokens_per_case, 0)}/case")
        if self.cost_usd is not None:
            parts.append(f"${self.cost_per_trial:.4f}/trial, ${self.cost_per_case:.4f}/case")
        return " · ".join(parts)


def _secs(ms: float | None) -> str:
    return "—" if ms is None else f"{ms / 1000:.1f}s"


def _num(x: float | None, digits: int = 1) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


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

    ``paired`` is None when no case ran in both (``reason`` says why).
    ``not_run_in_a`` / ``not_run_in_b``: cases both runs have, but whose trials all were not_run in that run.
    ``only_in_a`` / ``only_in_b``: cases the other run does not have at all (with this evidence).
    ``assertion_rate_a`` / ``_b``: the per-assertion pass rate over the paired cases (diagnosis).
    """

    key: tuple[str, ...]
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

    @property
    def label(self) -> str:
        return series_label(self.key)

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
                f"so the difference ({_signed(p.mean)}) is not distinguishable from noise."
            )
        interval = f"95% interval {_signed(p.ci_low)} … {_signed(p.ci_high)}"
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

    @property
    def distinguishable(self) -> bool:
        """True when some kind of evidence differs beyond noise."""
        return any(s.distinguishable for s in self.series)

    def get(self, key: tuple[str, ...] | str) -> SeriesComparison | None:
        want = (key,) if isinstance(key, str) else key
        return next((s for s in self.series if s.key == want), None)

    def text(self) -> str:
        return render_compare(self)


def _by_case(traces: Iterable[Trace]) -> dict[str, list[Trace]]:
    out: dict[str, list[Trace]] = defaultdict(list)
    for t in traces:
        out[t.case_id].append(t)
    return out


def _rates(by_case: dict[str, list[Trace]]) -> tuple[dict[str, float], dict[str, int], tuple[str, ...]]:
    rates, counts, not_run = {}, {}, []
    for cid, trials in by_case.items():
        ran = [t for t in trials if t.verdict != "not_run"]
        if not ran:
            not_run.append(cid)
            continue
        rates[cid] = sum(t.verdict == "passed" for t in ran) / len(ran)
        counts[cid] = len(ran)
    return rates, counts, tuple(sorted(not_run))


def _assertion_rate(by_case: dict[str, list[Trace]], cases: Iterable[str]) -> float | None:
    """Mean over the cases of passed / counted assertions (not_run assertions are not counted)."""
    per_case = []
    for cid in cases:
        ran = [t for t in by_case[cid] if t.verdict != "not_run"]
        total = sum(sum(a.status != "not_run" for a in t.assertions) for t in ran)
        if total:
            per_case.append(sum(t.assertions_passed for t in ran) / total)
    return sum(per_case) / len(per_case) if per_case else None


def _run_label(traces: Sequence[Trace], fallback: str) -> str:
    ids = sorted({t.run_id for t in traces})
    if not ids:
        return fallback
    return "run " + ", ".join(ids) if len(ids) <= 3 else f"{len(ids)} runs ({ids[0]} … {ids[-1]})"


def _compare_series(key: tuple[str, ...], a: list[Trace], b: list[Trace]) -> SeriesComparison:
    ca, cb = _by_case(a), _by_case(b)
    rates_a, n_a, nr_a = _rates(ca)
    rates_b, n_b, nr_b = _rates(cb)
    only_a = tuple(sorted(set(ca) - set(cb)))
    only_b = tuple(sorted(set(cb) - set(ca)))
    nr_a = tuple(c for c in nr_a if c in cb)  # a case only one run has is listed as such
    nr_b = tuple(c for c in nr_b if c in ca)
    common = sorted(set(rates_a) & set(rates_b))
    behaviour = {t.case_id: t.behaviour for t in [*a, *b]}
    deltas = tuple(CaseDelta(cid, behaviour[cid], rates_a[cid], rates_b[cid], n_a[cid], n_b[cid]) for cid in common)
    paired = reason = None
    if common:
        paired = paired_difference({c: rates_a[c] for c in common}, {c: rates_b[c] for c in common})
    elif not a:
        reason = "run A has no trials of this kind"
    elif not b:
        reason = "run B has no trials of this kind"
    elif not set(ca) & set(cb):
        reason = "the runs share no case"
    else:
        reason = "every shared case was not_run in one of the runs"
    return SeriesComparison(
        key=key,
        paired=paired,
        cases=deltas,
        only_in_a=only_a,
        only_in_b=only_b,
        not_run_in_a=nr_a,
        not_run_in_b=nr_b,
        mean_a=sum(rates_a[c] for c in common) / len(common) if common else None,
        mean_b=sum(rates_b[c] for c in common) / len(common) if common else None,
        assertion_rate_a=_assertion_rate(ca, common),
        assertion_rate_b=_assertion_rate(cb, common),
        cost_a=CostSummary.of(a),
        cost_b=CostSummary.of(b),
        reason=reason or "",
    )


def compare_runs(
    traces_a: Sequence[Trace], traces_b: Sequence[Trace], label_a: str | None = None, label_b: str | None = None
) -> CompareResult:
    """Run B minus run A, per kind of evidence, paired over the cases both ran.

    Each case counts once: its case pass rate is passed / trials that ran (so
    with one trial per case it is 0 or 1 and the flipped cases are fail → pass
    and pass → fail). Cases only one run has, and cases all of whose trials were
    not_run in a run, are left out of the pairing and listed.
    """
    groups_a: dict[tuple[str, ...], list[Trace]] = defaultdict(list)
    groups_b: dict[tuple[str, ...], list[Trace]] = defaultdict(list)
    for t in traces_a:
        groups_a[series_key(t)].append(t)
    for t in traces_b:
        groups_b[series_key(t)].append(t)
    keys = sorted(set(groups_a) | set(groups_b), key=lambda k: (k[0] != "deterministic", k))
    series = tuple(_compare_series(k, groups_a.get(k, []), groups_b.get(k, [])) for k in keys)
    return CompareResult(
        label_a=label_a or _run_label(traces_a, "A"), label_b=label_b or _run_label(traces_b, "B"), series=series
    )


def _signed(x: float) -> str:
    r = round(x, 2)
    if r == 0:
        r = 0.0
    return f"{r:+.2f}".replace("-", MINUS)


def _rate(x: float | None) -> str:
    return "—" if x is None else f"{x * 100:.1f}%"


def _case_list(cases: Sequence[CaseDelta]) -> str:
    if not cases:
        return "none"
    if all(c.trials_a == 1 and c.trials_b == 1 for c in cases):
        return ", ".join(c.case_id for c in cases)
    return ", ".join(f"{c.case_id} ({c.rate_a:.2f} → {c.rate_b:.2f})" for c in cases)


def render_compare(result: CompareResult) -> str:
    """The comparison as plain text for the console (no markup)."""
    lines = [
        f"A = {result.label_a}",
        f"B = {result.label_b}",
        "Difference B − A in case pass rate (a trial passes only when every assertion passed), paired per case.",
    ]
    if not result.series:
        lines.append("Neither run has any trial: nothing to compare.")
    for s in result.series:
        lines.append("")
        lines.append(f"[{s.label}]")
        if s.paired is not None:
            p = s.paired
            lines.append(f"  case pass rate      A {_rate(s.mean_a)}   B {_rate(s.mean_b)}   over {p.n} paired cases")
            lines.append(
                f"  per-assertion rate  A {_rate(s.assertion_rate_a)}   B {_rate(s.assertion_rate_b)}"
                "   (diagnosis, not the gate)"
            )
            lines.append(
                f"  mean difference {_signed(p.mean)}, 95% CI {_signed(p.ci_low)} … {_signed(p.ci_high)}"
                f" (SE {p.se:.3f})"
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

    baseline: float
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
    baseline: float,
    delta: float | None = None,
    trials: int = 1,
    n_cases: int | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    paired: bool = True,
    correlation: float = 0.5,
    trial_options: Iterable[int] = (1, 3, 5),
) -> PowerResult:
    """Both power questions at once. Raises ValueError on arguments out of range (from runner.stats)."""
    if delta is None and n_cases is None:
        raise ValueError("give a difference to detect (delta), the suite's size (n_cases), or both")
    options = sorted({*trial_options, trials})
    needed: dict[int, int] = {}
    if delta is not None:
        for k in options:
            needed[k] = cases_needed(
                baseline, delta, alpha=alpha, power=power, trials=k, paired=paired, correlation=correlation
            )
    mdd = None
    by_trials: dict[int, float | None] = {}
    if n_cases is not None:
        for k in options:
            by_trials[k] = min_detectable_difference(
                n_cases, baseline, trials=k, alpha=alpha, power=power, paired=paired, correlation=correlation
            )
        mdd = by_trials[trials]
    return PowerResult(
        baseline=baseline,
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


def power_text(
    baseline: float,
    delta: float | None = None,
    trials: int = 1,
    n_cases: int | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    paired: bool = True,
    correlation: float = 0.5,
    trial_options: Iterable[int] = (1, 3, 5),
) -> str:
    """The power analysis as plain sentences for the console (see :func:`power_analysis`)."""
    r = power_analysis(baseline, delta, trials, n_cases, alpha, power, paired, correlation, trial_options)
    design = f"two-sided α = {r.alpha:g}, power {r.power:.0%}, " + (
        f"paired runs (same cases), assumed correlation {r.correlation:g} between the runs' per-case scores"
        if r.paired
        else "two independent runs"
    )
    lines = [
        f"Baseline case pass rate {r.baseline:.2f}; {design}; normal approximation, cases alike "
        f"(binomial variance per case: the optimistic end)."
    ]
    if r.delta is not None:
        target = r.baseline + r.delta
        lines.append(
            f"To detect a change of {_signed(r.delta)} (from {r.baseline:.2f} to {target:.2f}) you need "
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
                f"suite can detect is {_signed(r.mdd)} (from {r.baseline:.2f} to "
                f"{r.baseline + r.mdd:.2f}); smaller differences look like noise."
            )
        lines.append(
            "  trials per case → smallest detectable: "
            + ", ".join(f"{k} → {'none' if d is None else _signed(d)}" for k, d in r.mdd_by_trials.items())
        )
    return "\n".join(lines)
