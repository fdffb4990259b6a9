"""The paired difference of two runs over the cases both have (Miller 2024): mean, standard error, 95% interval,
the cases that flipped, and whether it is distinguishable from noise. Standard library only, no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from webmcp_eval.results.stats import Z_95, _finite_floats, mean_se, signed


@dataclass(frozen=True)
class PairedDifference:
    """Run b minus run a over the cases both runs have (see :func:`paired_difference`)."""

    mean: float
    se: float
    ci_low: float
    ci_high: float
    n: int
    flipped_up: tuple[str, ...]
    flipped_down: tuple[str, ...]
    only_in_a: tuple[str, ...]
    only_in_b: tuple[str, ...]
    distinguishable: bool
    verdict: str

    @property
    def dropped(self) -> tuple[str, ...]:
        """Cases left out because only one run has them."""
        return self.only_in_a + self.only_in_b


def paired_difference(a: Mapping[str, float], b: Mapping[str, float]) -> PairedDifference:
    """Paired difference b − a over the common cases (Miller 2024, paired differences).

    With ``d_i = b_i − a_i`` over the ``n`` cases in both runs::

        mean = sum(d) / n
        SE   = sqrt( sum((d - mean)²) / (n - 1) / n )       # mean_se of the d_i
        95% CI = mean ± 1.96 · SE                           # normal approximation

    Pairing removes the case-to-case variance that both runs share, so the SE
    is usually much smaller than for two independent means. The difference is
    *distinguishable from noise* when the interval excludes 0. With one common
    case the noise cannot be estimated and it never is.

    ``flipped_up`` / ``flipped_down``: cases with ``b > a`` / ``b < a`` (for
    0/1 outcomes, the cases that went fail → pass / pass → fail), sorted.
    ``only_in_a`` / ``only_in_b``: the dropped cases. Raises ValueError when no
    case is in both runs or a value is not finite.
    """
    common = sorted(set(a) & set(b))
    only_a = tuple(sorted(set(a) - set(b)))
    only_b = tuple(sorted(set(b) - set(a)))
    if not common:
        raise ValueError(
            f"paired_difference needs cases present in both runs; none in common ({len(a)} cases in a, {len(b)} in b)"
        )
    diffs = _finite_floats("b - a", (float(b[cid]) - float(a[cid]) for cid in common))
    mean, se = mean_se(diffs)
    low, high = mean - Z_95 * se, mean + Z_95 * se
    n = len(common)
    up = tuple(cid for cid, d in zip(common, diffs, strict=True) if d > 0)
    down = tuple(cid for cid, d in zip(common, diffs, strict=True) if d < 0)
    if n < 2:
        distinguishable = False
        verdict = f"{signed(mean)} over 1 paired case: too few cases to tell a difference from noise."
    else:
        distinguishable = low > 0 or high < 0
        if distinguishable:
            tail = "distinguishable from noise (b is " + ("higher" if mean > 0 else "lower") + ")"
        else:
            tail = "not distinguishable from noise"
        verdict = f"{signed(mean)} (95% CI {signed(low)} \u2026 {signed(high)}) over {n} paired cases: {tail}."
    dropped = len(only_a) + len(only_b)
    if dropped:
        verdict += f" {dropped} case{'s' if dropped != 1 else ''} not in both runs dropped."
    return PairedDifference(
        mean=mean,
        se=se,
        ci_low=low,
        ci_high=high,
        n=n,
        flipped_up=up,
        flipped_down=down,
        only_in_a=only_a,
        only_in_b=only_b,
        distinguishable=distinguishable,
        verdict=verdict,
    )
