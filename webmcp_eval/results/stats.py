"""Statistics for eval results: pass rates, pass@k / pass^k, error bars (paired
differences are paired.py's, power power.py's). Pure functions on numbers, standard library only, no I/O.

Two pass rates (docs/statistics.md), always side by side:

* **case pass rate** -- a trial passes only when *every* assertion passed; the
  share of trials that pass. This is the **gate**.
* **per-assertion pass rate** -- passed assertions / all assertions. This is the
  **diagnosis** (how far from passing), never the gate: it moves with how many
  assertions someone happened to write for a case.

Repeated trials of one case (docs/statistics.md):

* ``pass@k`` -- at least one of k trials passes; Chen et al. 2021, "Evaluating
  Large Language Models Trained on Code", unbiased estimator
  ``1 - C(n-c, k) / C(n, k)``.
* ``pass^k`` -- all k trials pass; Yao et al. 2024, "tau-bench", estimator
  ``C(c, k) / C(n, k)``.

Error bars (Miller 2024, "Adding Error Bars to Evals: A Statistical Approach
to Language Model Evaluations", arXiv:2411.00640): a standard error on every
score, paired differences when two runs share the cases, clustered standard
errors when cases come in groups (here: cases of the same behaviour), and a
power analysis before running.

Conventions: the unit of analysis is the **case** (each case weighs the same,
whatever its number of trials or assertions); 95% intervals use the normal
approximation with ``z = 1.96`` (:data:`Z_95`). With few cases (10, say) the
normal approximation is rough -- the numbers are an honest first look, not a
significance test to hide behind.

``not_run`` trials are not trials for these statistics: the caller leaves them
out before building a :class:`CaseScore`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "Z_95",
    "BehaviourScore",
    "CaseScore",
    "Estimate",
    "KSummary",
    "RateSummary",
    "SuiteScore",
    "clustered_se",
    "mean_se",
    "pass_at_k",
    "pass_hat_k",
    "signed",
]

Z_95 = 1.96
"""The z of a two-sided 95% normal interval, as docs/statistics.md prints it (``m ± 1.96·se``)."""


# --------------------------------------------------------------------------- checks


def _check_int(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def _check_nck(n: int, c: int, k: int) -> None:
    _check_int("n (trials)", n, 1)
    _check_int("c (passing trials)", c, 0)
    _check_int("k", k, 1)
    if c > n:
        raise ValueError(f"c (passing trials) = {c} cannot exceed n (trials) = {n}")
    if k > n:
        raise ValueError(
            f"k = {k} is larger than the number of trials n = {n}: "
            f"pass@{k} / pass^{k} need at least {k} trials of the case"
        )


def _finite_floats(name: str, xs: Iterable[float]) -> list[float]:
    out = [float(x) for x in xs]
    for i, x in enumerate(out):
        if not math.isfinite(x):
            raise ValueError(f"{name}[{i}] is not a finite number: {x!r}")
    return out


def _check_probability(name: str, p: float, *, open_low: bool = False, open_high: bool = False) -> float:
    p = float(p)
    low_ok = p > 0 if open_low else p >= 0
    high_ok = p < 1 if open_high else p <= 1
    if not (math.isfinite(p) and low_ok and high_ok):
        lo = "(0" if open_low else "[0"
        hi = "1)" if open_high else "1]"
        raise ValueError(f"{name} must be in {lo}, {hi}, got {p!r}")
    return p


# --------------------------------------------------------------------------- pass@k, pass^k


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k trials passes, from n trials with c passes.

    Chen et al. 2021 (Codex paper), unbiased estimator over the k-subsets of the
    n trials::

        pass@k = 1 - C(n - c, k) / C(n, k)

    When ``n - c < k`` every k-subset holds a pass, so pass@k = 1. Exact integer
    binomials, one correctly rounded division.

    Raises ValueError when ``k > n`` (the estimator needs at least k trials),
    ``k < 1``, ``n < 1`` or ``c`` outside ``[0, n]``.
    """
    _check_nck(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that all k trials pass (reliability), from n trials with c passes.

    Yao et al. 2024 (tau-bench), unbiased estimator over the k-subsets::

        pass^k = C(c, k) / C(n, k)

    0 when ``c < k``. Same argument checks as :func:`pass_at_k` (``k > n`` raises).
    """
    _check_nck(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


# --------------------------------------------------------------------------- standard errors


def mean_se(xs: Iterable[float]) -> tuple[float, float]:
    """Mean and its standard error (Miller 2024, eq. 1, the CLT standard error).

    ::

        mean = sum(x) / n
        s²   = sum((x - mean)²) / (n - 1)      # sample variance, n - 1
        SE   = sqrt(s² / n)

    For ``n = 1`` the variance is not estimable; the SE is reported as ``0.0``
    (read it as "unknown", not "exact"). Raises ValueError on empty input or a
    non-finite value.
    """
    values = _finite_floats("xs", xs)
    n = len(values)
    if n == 0:
        raise ValueError("mean_se needs at least one value, got none")
    mean = math.fsum(values) / n
    if n == 1:
        return mean, 0.0
    var = math.fsum((x - mean) ** 2 for x in values) / (n - 1)
    return mean, math.sqrt(var / n)


def clustered_se(
    values: Sequence[float], clusters: Sequence[Hashable], *, small_sample: bool = True
) -> tuple[float, float]:
    """Mean and its cluster-robust standard error (Miller 2024, section on clustered SEs).

    Cases in the same cluster (here: the same behaviour) are not independent;
    the SE sums residuals within each cluster before squaring. With ``n``
    values, ``G`` clusters and ``S_g = sum_{i in g} (x_i - mean)``::

        SE = sqrt( f · sum_g S_g² ) / n

    ``sum_g S_g²`` is Miller's eq. (SE_CLT² plus the within-cluster cross terms
    ``sum_c sum_i sum_{j≠i} (x_i - mean)(x_j - mean)``, all over n²).

    Small-sample factor ``f`` -- one convention, chosen here:

    * ``small_sample=True`` (default): ``f = G / (G - 1)``, the CR1 correction
      (Stata's ``vce(cluster)`` for a mean, where ``(n-1)/(n-k)`` is 1). With
      every value in its own cluster this equals :func:`mean_se`'s SE exactly.
    * ``small_sample=False``: ``f = 1``, the plain sandwich (CR0), Miller's
      formula with population variance.

    With a single cluster ``S_1 = 0`` and the SE is not estimable; ``0.0`` is
    returned, as for :func:`mean_se` with one value. Raises ValueError on empty
    input, a length mismatch or a non-finite value.
    """
    xs = _finite_floats("values", values)
    labels = list(clusters)
    if not xs:
        raise ValueError("clustered_se needs at least one value, got none")
    if len(xs) != len(labels):
        raise ValueError(f"values and clusters differ in length: {len(xs)} values, {len(labels)} cluster labels")
    n = len(xs)
    mean = math.fsum(xs) / n
    sums: dict[Hashable, list[float]] = {}
    for x, g in zip(xs, labels, strict=True):
        sums.setdefault(g, []).append(x - mean)
    n_clusters = len(sums)
    if n_clusters < 2:
        return mean, 0.0
    meat = math.fsum(math.fsum(r) ** 2 for r in sums.values())
    factor = n_clusters / (n_clusters - 1) if small_sample else 1.0
    return mean, math.sqrt(factor * meat) / n


# --------------------------------------------------------------------------- one case


@dataclass(frozen=True)
class CaseScore:
    """The trials of one case: ``n`` trials, ``c`` of them case passes.

    ``assertions`` holds one ``(passed, total)`` pair per trial (or is empty when
    assertion counts are unknown). A case pass means every assertion passed, so
    ``c`` cannot exceed the number of trials with ``passed == total``.

    * ``case_pass_rate`` = c / n -- the gate.
    * ``assertion_pass_rate`` = sum(passed) / sum(total) over the trials -- the
      diagnosis; ``None`` when there are no assertions.
    * ``pass_at(k)`` / ``pass_hat(k)`` -- :func:`pass_at_k` / :func:`pass_hat_k`.
    """

    n: int
    c: int
    assertions: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        _check_int("n (trials)", self.n, 1)
        _check_int("c (passing trials)", self.c, 0)
        if self.c > self.n:
            raise ValueError(f"c (passing trials) = {self.c} cannot exceed n (trials) = {self.n}")
        pairs = tuple((int(p), int(t)) for p, t in self.assertions)
        object.__setattr__(self, "assertions", pairs)
        if pairs:
            if len(pairs) != self.n:
                raise ValueError(
                    f"assertions must hold one (passed, total) pair per trial: "
                    f"{len(pairs)} pairs for n = {self.n} trials"
                )
            for i, (p, t) in enumerate(pairs):
                if not 0 <= p <= t:
                    raise ValueError(f"trial {i}: assertions passed = {p} must be in [0, total = {t}]")
            complete = sum(p == t for p, t in pairs)
            if self.c > complete:
                raise ValueError(
                    f"c = {self.c} case passes, but only {complete} trials passed every "
                    f"assertion (a case pass needs every assertion passed)"
                )

    @classmethod
    def from_trials(cls, trials: Iterable[tuple[bool, int, int]]) -> CaseScore:
        """Build from ``(case_passed, assertions_passed, assertions_total)`` per trial."""
        rows = list(trials)
        if not rows:
            raise ValueError("a CaseScore needs at least one trial, got none")
        return cls(n=len(rows), c=sum(bool(ok) for ok, _, _ in rows), assertions=tuple((p, t) for _, p, t in rows))

    @property
    def case_pass_rate(self) -> float:
        """c / n: the share of trials in which every assertion passed (the gate)."""
        return self.c / self.n

    @property
    def assertions_passed(self) -> int:
        return sum(p for p, _ in self.assertions)

    @property
    def assertions_total(self) -> int:
        return sum(t for _, t in self.assertions)

    @property
    def assertion_pass_rate(self) -> float | None:
        """sum(passed) / sum(total) over the trials (the diagnosis); None without assertions."""
        total = self.assertions_total
        return None if total == 0 else self.assertions_passed / total

    def pass_at(self, k: int) -> float:
        """pass@k of this case (Chen et al. 2021); raises ValueError when k > n."""
        return pass_at_k(self.n, self.c, k)

    def pass_hat(self, k: int) -> float:
        """pass^k of this case (Yao et al. 2024); raises ValueError when k > n."""
        return pass_hat_k(self.n, self.c, k)


# --------------------------------------------------------------------------- a suite


@dataclass(frozen=True)
class Estimate:
    """A mean over ``n`` cases with its standard error (:func:`mean_se`)."""

    mean: float
    se: float
    n: int


@dataclass(frozen=True)
class RateSummary:
    """A suite-level rate: mean over cases, its SE, and its SE clustered by behaviour.

    ``excluded`` lists the cases that had no value (no assertions, for the
    per-assertion rate).
    """

    mean: float
    se: float
    clustered_se: float
    n_cases: int
    n_clusters: int
    excluded: tuple[str, ...] = ()


@dataclass(frozen=True)
class BehaviourScore:
    """The cases of one behaviour: case pass rate and per-assertion rate with SEs."""

    behaviour: str
    cases: tuple[str, ...]
    case_pass: Estimate
    assertion_pass: Estimate | None


@dataclass(frozen=True)
class KSummary:
    """Mean pass@k or pass^k over the cases with at least k trials.

    ``excluded`` lists the cases with fewer than k trials; ``mean`` and ``se``
    are None when every case was excluded.
    """

    k: int
    mean: float | None
    se: float | None
    n_cases: int
    excluded: tuple[str, ...]


def _rate_summary(rows: list[tuple[str, str, float | None]]) -> RateSummary | None:
    kept = [(cid, beh, v) for cid, beh, v in rows if v is not None]
    excluded = tuple(cid for cid, _, v in rows if v is None)
    if not kept:
        return None
    values = [v for _, _, v in kept]
    labels = [beh for _, beh, _ in kept]
    mean, se = mean_se(values)
    _, cse = clustered_se(values, labels)
    return RateSummary(
        mean=mean, se=se, clustered_se=cse, n_cases=len(kept), n_clusters=len(set(labels)), excluded=excluded
    )


def _k_summary(k: int, cases: list[tuple[str, str, CaseScore]], hat: bool) -> KSummary:
    _check_int("k", k, 1)
    kept = [s for _, _, s in cases if s.n >= k]
    excluded = tuple(cid for cid, _, s in cases if s.n < k)
    if not kept:
        return KSummary(k=k, mean=None, se=None, n_cases=0, excluded=excluded)
    mean, se = mean_se([s.pass_hat(k) if hat else s.pass_at(k) for s in kept])
    return KSummary(k=k, mean=mean, se=se, n_cases=len(kept), excluded=excluded)


@dataclass(frozen=True)
class SuiteScore:
    """A suite's scores from ``(case_id, behaviour, CaseScore)`` rows (:meth:`from_cases`).

    Every case weighs the same. ``case_pass`` and ``assertion_pass`` are means of
    the per-case rates with :func:`mean_se` and :func:`clustered_se` (cases
    clustered by behaviour, CR1). ``assertion_pass`` leaves out cases without
    assertions (listed in its ``excluded``) and is None when no case has any.
    ``pass_at[k]`` / ``pass_hat[k]`` average over the cases with ``n >= k``.
    """

    n_cases: int
    case_pass: RateSummary
    assertion_pass: RateSummary | None
    by_behaviour: dict[str, BehaviourScore]
    pass_at: dict[int, KSummary]
    pass_hat: dict[int, KSummary]

    @classmethod
    def from_cases(cls, cases: Iterable[tuple[str, str, CaseScore]], ks: Iterable[int] = ()) -> SuiteScore:
        """Score a suite; ``ks`` are the k for pass@k / pass^k. Raises ValueError on
        no cases or a repeated case id."""
        rows = list(cases)
        if not rows:
            raise ValueError("a SuiteScore needs at least one case, got none")
        seen: set[str] = set()
        for cid, _, score in rows:
            if cid in seen:
                raise ValueError(f"case id {cid!r} appears more than once")
            if not isinstance(score, CaseScore):
                raise ValueError(f"case {cid!r}: expected a CaseScore, got {type(score).__name__}")
            seen.add(cid)
        case_pass = _rate_summary([(cid, beh, s.case_pass_rate) for cid, beh, s in rows])
        assert case_pass is not None  # every case has a case pass rate
        assertion_pass = _rate_summary([(cid, beh, s.assertion_pass_rate) for cid, beh, s in rows])

        by_behaviour: dict[str, BehaviourScore] = {}
        for beh in sorted({beh for _, beh, _ in rows}):
            mine = [(cid, s) for cid, b, s in rows if b == beh]
            cm, cse = mean_se([s.case_pass_rate for _, s in mine])
            rates = [r for _, s in mine if (r := s.assertion_pass_rate) is not None]
            assertion = Estimate(*mean_se(rates), n=len(rates)) if rates else None
            by_behaviour[beh] = BehaviourScore(
                behaviour=beh,
                cases=tuple(cid for cid, _ in mine),
                case_pass=Estimate(cm, cse, len(mine)),
                assertion_pass=assertion,
            )

        k_list = sorted(set(ks))
        return cls(
            n_cases=len(rows),
            case_pass=case_pass,
            assertion_pass=assertion_pass,
            by_behaviour=by_behaviour,
            pass_at={k: _k_summary(k, rows, hat=False) for k in k_list},
            pass_hat={k: _k_summary(k, rows, hat=True) for k in k_list},
        )


def signed(x: float) -> str:
    """A difference with its sign and two decimals (a real minus sign, never "-0.00")."""
    r = round(x, 2)
    if r == 0:
        r = 0.0  # no "-0.00"
    return f"{r:+.2f}".replace("-", "\u2212")
