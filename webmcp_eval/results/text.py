"""The text forms of the figures, one each: a rate, its standard error, a time, a count, money, an interval."""

from __future__ import annotations

from webmcp_eval.results.stats import Z_95


def pct(value: float | None, digits: int = 1) -> str:
    """A rate as a percentage, or a dash when there is none."""
    return "—" if value is None else f"{value * 100:.{digits}f}%"


def pts(value: float | None) -> str:
    """A standard error of a rate, in percentage points."""
    return "—" if value is None else f"{value * 100:.1f}"


def seconds(ms: float | None) -> str:
    return "—" if ms is None else f"{ms:.0f}ms" if ms < 1000 else f"{ms / 1000:.1f}s"


def num(value: float | None, digits: int = 1) -> str:
    """A count or a mean of counts: whole numbers without decimals."""
    if value is None:
        return "—"
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.{digits}f}"


def money(value: float | None) -> str:
    return "—" if value is None else f"${value:.4f}"


def interval(mean: float, se: float) -> tuple[float, float]:
    """The 95% interval of a rate, mean ± 1.96·SE (normal approximation), kept within [0, 1]."""
    return max(0.0, mean - Z_95 * se), min(1.0, mean + Z_95 * se)


def interval_text(mean: float, se: float) -> str:
    low, high = interval(mean, se)
    return f"{pct(low)} … {pct(high)}"
