"""The HTML report's chart: the two pass rates per behaviour with their 95% intervals, as inline SVG."""

from __future__ import annotations

from dataclasses import dataclass

from webmcp_eval.results.run_results import interval, pct, pts
from webmcp_eval.results.stats import Z_95, SuiteScore

# --------------------------------------------------------------------------- the chart


@dataclass
class ChartBar:
    kind: str  # "case" (the gate) or "assertion" (the diagnosis)
    y: float
    mean: float | None
    lo: float | None
    hi: float | None
    x: float = 0.0
    width: float = 0.0
    lo_x: float = 0.0
    hi_x: float = 0.0
    text: str = ""
    tooltip: str = ""


@dataclass
class ChartRow:
    label: str
    y: float
    n: int
    bars: list[ChartBar]


@dataclass
class Chart:
    title: str
    width: int
    height: int
    left: int
    plot: int
    top: int
    rows: list[ChartRow]
    ticks: list[tuple[float, str]]


CHART_LEFT, CHART_PLOT, CHART_RIGHT, CHART_TOP = 230, 380, 190, 34
BAR_H, BAR_GAP, ROW_PAD = 11, 3, 12


def _bar(kind: str, y: float, mean: float | None, se: float | None, n: int, what: str) -> ChartBar:
    bar = ChartBar(kind=kind, y=y, mean=mean, lo=None, hi=None)
    name = "case pass rate" if kind == "case" else "per-assertion pass rate"
    if mean is None:
        bar.text = "no assertions" if kind == "assertion" else "—"
        bar.tooltip = f"{what}: {name}: no value"
        return bar
    bar.x = CHART_LEFT
    bar.width = CHART_PLOT * mean
    se = se or 0.0
    bar.lo, bar.hi = interval(mean, se)
    bar.lo_x, bar.hi_x = CHART_LEFT + CHART_PLOT * bar.lo, CHART_LEFT + CHART_PLOT * bar.hi
    ci = f"95% CI {pct(bar.lo, 0)}–{pct(bar.hi, 0)}" if se > 0 else ("SE unknown (1 case)" if n == 1 else "SE 0")
    bar.text = f"{pct(mean, 0)}  [{ci}]" if se > 0 else f"{pct(mean, 0)}  ({ci})"
    bar.tooltip = f"{what}: {name} {pct(mean)} ± {pts(Z_95 * se)} pts (1.96·SE), over {n} case(s)"
    return bar


def _chart(label: str, score: SuiteScore) -> Chart:
    rows: list[ChartRow] = []
    y = float(CHART_TOP)
    entries: list[tuple[str, int, float, float, float | None, float | None]] = []
    cp, ap = score.case_pass, score.assertion_pass
    entries.append(
        (
            "all cases (clustered SE)",
            score.n_cases,
            cp.mean,
            cp.clustered_se,
            ap.mean if ap else None,
            ap.clustered_se if ap else None,
        )
    )
    for beh, b in score.by_behaviour.items():
        a = b.assertion_pass
        entries.append(
            (beh, b.case_pass.n, b.case_pass.mean, b.case_pass.se, a.mean if a else None, a.se if a else None)
        )
    for name, n, c_mean, c_se, a_mean, a_se in entries:
        bars = [_bar("case", y, c_mean, c_se, n, name), _bar("assertion", y + BAR_H + BAR_GAP, a_mean, a_se, n, name)]
        rows.append(ChartRow(label=f"{name} (n={n})", y=y, n=n, bars=bars))
        y += 2 * BAR_H + BAR_GAP + ROW_PAD
    height = int(y + 22)
    ticks = [(CHART_LEFT + CHART_PLOT * f, f"{int(f * 100)}%") for f in (0, 0.25, 0.5, 0.75, 1)]
    return Chart(
        title=f"Pass rates per behaviour, {label}",
        width=CHART_LEFT + CHART_PLOT + CHART_RIGHT,
        height=height,
        left=CHART_LEFT,
        plot=CHART_PLOT,
        top=CHART_TOP,
        rows=rows,
        ticks=ticks,
    )
