"""Time axes: lanes of events on one time axis (a trial's timeline, an audit's registration timeline), drawn as
inline SVG by the templates."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from webmcp_eval.results.run_results import seconds

# --------------------------------------------------------------------------- time axes


@dataclass
class TimeMark:
    kind: str  # its CSS class: register, unregister, present, step, call, call-error, write, late
    x: float
    width: float
    title: str  # the tooltip: what happened, when
    inset: float = 2.0  # px from the lane's edges (points are drawn thin and full height)


@dataclass
class TimeLane:
    label: str
    y: float
    marks: list[TimeMark]


@dataclass
class TimeFigure:
    """Lanes of events on one time axis, drawn as inline SVG by macros.html.j2 (no script)."""

    title: str
    caption: str
    lanes: list[TimeLane]
    ticks: list[tuple[float, str]]
    rules: list[tuple[float, str]]  # vertical markers: (x, label), e.g. the load event
    width: int
    height: int
    axis_y: float
    left: int = 190
    plot: int = 760
    top: int = 18
    lane_h: int = 16


# An event as a builder gives it: (css kind, start ms, end ms or None for a moment, tooltip).
TimeEvent = tuple[str, float, float | None, str]
LANE_GAP = 4


def _tick_step(span: float) -> float:
    """A round step (1, 2 or 5 × 10^k ms) that puts at most 8 ticks on the span."""
    steps = (m * 10.0**k for k in range(0, 9) for m in (1, 2, 5))
    return next((s for s in steps if span / s <= 8), span)


def time_figure(
    title: str,
    caption: str,
    lanes: Sequence[tuple[str, Sequence[TimeEvent]]],
    start: float,
    end: float,
    rules: Sequence[tuple[float, str]] = (),
    origin: float = 0.0,
) -> TimeFigure:
    """Place each lane's events on [start, end] ms; ticks are labelled in ms since ``origin``."""
    fig = TimeFigure(title, caption, [], [], [], 0, 0, 0.0)
    span = max(end - start, 1.0)

    def x_of(ms: float) -> float:
        return round(fig.left + fig.plot * (min(max(ms, start), end) - start) / span, 1)

    y = float(fig.top)
    for label, events in lanes:
        marks = []
        for kind, t0, t1, tip in events:
            x0 = x_of(t0)
            width = max(x_of(t1) - x0, 2.0) if t1 is not None else 2.0
            marks.append(TimeMark(kind, x0, round(width, 1), tip, 2.0 if t1 is not None else 0.0))
        fig.lanes.append(TimeLane(label, y, marks))
        y += fig.lane_h + LANE_GAP
    fig.axis_y = y
    step = _tick_step(span)
    first = origin + step * -(-(start - origin) // step)  # the first round tick at or after start
    n = 0
    while first + n * step <= end + 1e-9:
        ms = first + n * step
        fig.ticks.append((x_of(ms), seconds(ms - origin)))
        n += 1
    fig.rules = [(x_of(ms), label) for ms, label in rules if start <= ms <= end]
    fig.width, fig.height = fig.left + fig.plot + 20, int(y + 18)
    return fig
