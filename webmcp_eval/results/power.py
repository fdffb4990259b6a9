"""Power analysis (Miller 2024): the cases needed to detect a change in the case pass rate, and the smallest
change a number of cases detects. Two-sided z-test, normal approximation; standard library only, no I/O."""

from __future__ import annotations

import math
from statistics import NormalDist

from webmcp_eval.results.stats import _check_int, _check_probability


def _z_total(alpha: float, power: float) -> float:
    alpha = _check_probability("alpha", alpha, open_low=True, open_high=True)
    power = _check_probability("power", power, open_low=True, open_high=True)
    z = NormalDist()
    return z.inv_cdf(1 - alpha / 2) + z.inv_cdf(power)


def _diff_variance(p_a: float, p_b: float, trials: int, paired: bool, correlation: float) -> float:
    var_a = p_a * (1 - p_a) / trials
    var_b = p_b * (1 - p_b) / trials
    if not paired:
        return var_a + var_b
    return max(0.0, var_a + var_b - 2 * correlation * math.sqrt(var_a * var_b))


def _check_power_args(base_rate: float, trials: int, correlation: float) -> float:
    base_rate = _check_probability("base_rate", base_rate)
    _check_int("trials", trials, 1)
    if not (math.isfinite(correlation) and -1 <= correlation <= 1):
        raise ValueError(f"correlation must be in [-1, 1], got {correlation!r}")
    return base_rate


def cases_needed(
    base_rate: float,
    delta: float,
    alpha: float = 0.05,
    power: float = 0.8,
    trials: int = 1,
    paired: bool = True,
    correlation: float = 0.5,
) -> int:
    """Cases needed to detect a change ``delta`` in the mean case pass rate (Miller 2024, power analysis).

    Two-sided z-test, normal approximation (z from :class:`statistics.NormalDist`)::

        n = ceil( (z_{1−alpha/2} + z_{power})² · V / delta² ),   at least 2

    Variance assumption: each case's score is the mean of ``trials`` Bernoulli
    trials with the run's pass rate, so its variance is ``p(1−p)/trials``
    (binomial; cases alike, which is the optimistic end -- cases that differ in
    difficulty only add variance the extra trials cannot remove). With
    ``p_a = base_rate`` and ``p_b = base_rate + delta``, ``V`` is the variance of
    one case's difference b − a:

    * unpaired (``paired=False``, two independent runs): ``V = σ_a² + σ_b²``
    * paired (same cases in both runs): ``V = σ_a² + σ_b² − 2ρ·σ_a·σ_b``, with ρ
      = ``correlation`` of the two runs' per-case scores (an assumption; measure
      it on earlier paired runs, e.g. ``statistics.correlation``). ρ = 0 gives
      the unpaired number.

    ``delta`` may be negative (a regression); ``base_rate + delta`` must stay in
    [0, 1]. Raises ValueError on ``delta == 0`` or arguments out of range.
    """
    base_rate = _check_power_args(base_rate, trials, correlation)
    delta = float(delta)
    if not math.isfinite(delta) or delta == 0:
        raise ValueError(f"delta must be a non-zero difference in pass rate, got {delta!r}")
    if not 0 <= base_rate + delta <= 1:
        raise ValueError(f"base_rate + delta = {base_rate + delta!r} is not a pass rate in [0, 1]")
    z = _z_total(alpha, power)
    var = _diff_variance(base_rate, base_rate + delta, trials, paired, correlation)
    n = z * z * var / (delta * delta)
    return max(2, math.ceil(n - 1e-9))  # the tolerance keeps an exact integer from rounding up


def min_detectable_difference(
    n_cases: int,
    base_rate: float,
    trials: int = 1,
    alpha: float = 0.05,
    power: float = 0.8,
    paired: bool = True,
    correlation: float = 0.5,
) -> float | None:
    """Smallest improvement over ``base_rate`` that ``n_cases`` cases detect (inverse of :func:`cases_needed`).

    Same model and variance ``V(delta)`` as :func:`cases_needed`; the answer is
    the smallest ``delta > 0`` with::

        (z_{1−alpha/2} + z_{power}) · sqrt( V(delta) / n_cases ) <= delta

    found by a grid scan and bisection on ``0 < delta <= 1 − base_rate`` (V
    depends on delta through ``p_b = base_rate + delta``). When V is taken at
    the base_rate for both runs it reduces to the closed form
    ``(z_a + z_b) · sqrt(2(1−ρ)·p(1−p)/trials / n_cases)``.

    Returns None when no improvement up to a pass rate of 1 is detectable.
    Raises ValueError when ``base_rate`` is 1 (nothing to improve) or an
    argument is out of range.
    """
    _check_int("n_cases", n_cases, 1)
    base_rate = _check_power_args(base_rate, trials, correlation)
    if base_rate >= 1:
        raise ValueError("base_rate is 1: there is no improvement left to detect")
    z = _z_total(alpha, power)
    top = 1 - base_rate

    def shortfall(delta: float) -> float:  # <= 0 once delta is detectable
        return (
            z * math.sqrt(_diff_variance(base_rate, base_rate + delta, trials, paired, correlation) / n_cases) - delta
        )

    steps = 4000
    prev = 0.0
    for i in range(1, steps + 1):
        d = top * i / steps
        if shortfall(d) <= 0:
            lo, hi = prev, d
            for _ in range(200):
                mid = (lo + hi) / 2
                if shortfall(mid) <= 0:
                    hi = mid
                else:
                    lo = mid
                if hi - lo <= 1e-15:
                    break
            return hi
        prev = d
    return None
