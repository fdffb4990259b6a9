"""The HTML report: one self-contained file, built from traces alone.

No network and no external files: CSS and the little JavaScript are inline,
the per-behaviour chart is inline SVG, screenshots are embedded as ``data:``
URIs. A Content-Security-Policy in the page forbids every fetch except
``data:`` images, and the only script is ours (pinned by its hash). Trace
content (page text, tool results, model replies) is hostile by assumption:
the Jinja2 environment autoescapes everything, so ``<img onerror=…>`` in a
page shows as text.

What a person looks for, in this order: the two pass rates per kind of
evidence (case pass rate: the gate; per-assertion pass rate: the diagnosis)
with error bars per behaviour, pass@k / pass^k, cost beside the score; the
failures and why; a table of cases with deterministic and agent results in
separate columns (a case without agent trials is ``not_run`` for agent); and
a drill-down into every trial, failures first: the prompt, the catalog per
step, the tool-call timeline with arguments and results, every assertion with
why, writes, the state diff, the ARIA snapshot, the screenshot and the
Playwright trace file when one was kept.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import json
import os
import re
import shlex
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup
from pydantic import BaseModel

from webmcp_eval import as_user_knows
from webmcp_eval.results.run_results import (
    MODEL_GRADER,
    CaseResult,
    CostSummary,
    Counts,
    Results,
    SeriesKey,
    SeriesResult,
    TrialFigures,
    as_results,
    interval,
    interval_text,
    money,
    num,
    pct,
    pts,
    seconds,
    series_key,
    series_label,
)
from webmcp_eval.results.stats import Z_95, SuiteScore
from webmcp_eval.rundir.kept import kept_trace, whole_trace
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.rundir.reading import trace_dir
from webmcp_eval.trace import Assertion, Trace, write_atomic

__all__ = ["render_html", "write_html"]

TEMPLATES = Path(__file__).resolve().parent / "templates"
TEMPLATE = "report.html.j2"
RANK = {"failed": 0, "not_run": 1, "passed": 2}
MAX_SCREENSHOT_BYTES = 15 * 1024 * 1024
MAX_DIFF_LINES = 600
IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"RIFF", "image/webp"),
    (b"GIF8", "image/gif"),
)

# The page's only script: open the <details> a link points into; expand/collapse all; failures only.
SCRIPT = """
(function () {
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (!el) return;
    for (var n = el; n; n = n.parentElement) { if (n.tagName === 'DETAILS') n.open = true; }
    el.scrollIntoView();
  }
  window.addEventListener('hashchange', reveal);
  reveal();
  document.querySelectorAll('button[data-toggle]').forEach(function (b) {
    b.addEventListener('click', function () {
      var open = b.getAttribute('data-toggle') === 'open';
      document.querySelectorAll('details.trial').forEach(function (d) { d.open = open; });
    });
  });
  // Filters by behaviour, outcome and text; without this script the bar stays hidden and everything shows.
  (function () {
    var bar = document.getElementById('filters');
    if (!bar) return;
    bar.hidden = false;
    var beh = document.getElementById('filter-behaviour'), verdict = document.getElementById('filter-outcome');
    var text = document.getElementById('filter-text'), count = document.getElementById('filter-count');
    function apply() {
      var q = text.value.trim().toLowerCase(), shown = 0, all = 0;
      document.querySelectorAll('[data-filter]').forEach(function (el) {
        var ok = (!beh.value || el.getAttribute('data-behaviour') === beh.value) &&
          (!verdict.value || el.getAttribute('data-verdicts').split(' ').indexOf(verdict.value) >= 0) &&
          (!q || el.textContent.toLowerCase().indexOf(q) >= 0);
        el.classList.toggle('filtered-out', !ok);
        if (el.tagName === 'DETAILS') { all += 1; if (ok) shown += 1; }
      });
      count.textContent = shown + ' of ' + all + ' trial(s)';
    }
    [beh, verdict, text].forEach(function (c) {
      c.addEventListener('input', apply);
      c.addEventListener('change', apply);
    });
    apply();
  })();
  var only = document.getElementById('only-failures');
  if (only) only.addEventListener('change', function () {
    document.body.classList.toggle('only-failures', only.checked);
  });
  // People's labels against the rubric: the marks chosen below each trial, as the file
  // `webmcp-eval label RUN_DIR --import FILE` merges (no server: a download, or copy the text).
  var out = document.getElementById('labels-json');
  if (!out) return;
  var who = document.getElementById('labeller');
  function collect() {
    var trials = [];
    document.querySelectorAll('fieldset.label-form').forEach(function (f) {
      var marks = {};
      f.querySelectorAll('input[type=radio]:checked').forEach(function (r) {
        if (r.value) marks[r.getAttribute('data-criterion')] = r.value;
      });
      if (Object.keys(marks).length) trials.push({run_id: f.getAttribute('data-run'),
        trial: f.getAttribute('data-trial'), case: f.getAttribute('data-case'), labels: marks,
        labeller: who.value, labelled_at: new Date().toISOString().slice(0, 19) + '+00:00'});
    });
    out.value = JSON.stringify({format: 'webmcp-eval labels import', version: 1, trials: trials}, null, 2);
    document.getElementById('labels-count').textContent = String(trials.length);
    return out.value;
  }
  document.querySelectorAll('fieldset.label-form input').forEach(function (r) {
    r.addEventListener('change', collect);
  });
  who.addEventListener('input', collect);
  document.getElementById('labels-download').addEventListener('click', function () {
    var a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([collect()], {type: 'application/json'}));
    a.download = 'labels-import.json';
    document.body.appendChild(a);
    a.click();
    a.remove();
  });
  collect();
})();
"""


# --------------------------------------------------------------------------- formatting


def _plain(value: object) -> Any:
    """A trace record as it is written in the trace; anything else JSON cannot say, as text."""
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else str(value)


def _json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=_plain)


def _short_json(value: object, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False, default=_plain)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def urlpath(path: str) -> str:
    """A relative path as a URL path: percent-encoded, so no part of it reads as a scheme (``javascript:``)."""
    return quote(path, safe="/")


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


# --------------------------------------------------------------------------- series, cases


@dataclass
class SeriesView:
    """A column of evidence: a series of the results, or an empty one the report still shows."""

    key: SeriesKey
    label: str
    kind: str
    traces: list[Trace]
    score: SuiteScore | None
    chart: Chart | None
    cost: CostSummary
    counts: Any  # webmcp_eval.results.Counts
    is_model: bool
    result: SeriesResult | None = None

    @property
    def priced(self) -> bool:
        """Does this evidence spend tokens and money: an agent's trials, or a model grader's judging."""
        return self.kind in ("agent", "simulated_user", MODEL_GRADER)

    @classmethod
    def of(cls, s: SeriesResult) -> SeriesView:
        return cls(
            key=s.key,
            label=s.label,
            kind=s.kind,
            traces=s.traces,
            score=s.score,
            chart=_chart(s.label, s.score) if s.score else None,
            cost=s.cost,
            counts=s.counts,
            is_model=s.is_model,
            result=s,
        )

    @classmethod
    def empty(cls, key: SeriesKey, label: str) -> SeriesView:
        return cls(key, label, key[0], [], None, None, CostSummary.of([]), Counts(), False)


@dataclass
class TrialLink:
    anchor: str
    trial_id: str
    verdict: str


@dataclass
class Cell:
    verdict: str
    absent: bool = False  # no trials of this kind for the case: not_run
    case: CaseResult | None = None
    trials: list[TrialLink] = field(default_factory=list)


@dataclass
class CaseRow:
    case_id: str
    behaviour: str
    title: str
    case_file: str
    cells: list[Cell]
    rank: tuple[int, int, str]


def _cell(case: CaseResult | None, anchors: dict[int, str]) -> Cell:
    if case is None:
        return Cell(verdict="not_run", absent=True)
    verdicts = {id(f.trace): f.verdict for f in case.trials}  # the trial's verdict on this column's evidence
    trials = [f.trace for f in case.trials]
    links = [TrialLink(anchors[id(t)], t.trial_id, verdicts[id(t)]) for t in _trial_order(trials)]
    return Cell(verdict=case.verdict, case=case, trials=links)


def _trial_order(traces: Sequence[Trace]) -> list[Trace]:
    """Failures first, then not_run, then passed; by case, evidence and trial within each."""
    return sorted(
        traces, key=lambda t: (RANK[t.verdict], t.case_id, series_key(t), t.run_id, t.trial_index, t.trial_id)
    )


# --------------------------------------------------------------------------- one trial


@dataclass
class DiffLine:
    kind: str  # add, del, hunk, ctx
    text: str


@dataclass
class CallView:
    index: int
    step: int
    tool: str
    args: str
    result: str
    result_summary: str
    error: str | None
    refused: bool
    in_catalog: bool
    route: str
    instance: int | None
    started_ms: float
    frame: str | None  # the URL of the frame whose tool it called; None: the top page's
    duration_ms: float
    left_pct: float
    width_pct: float


@dataclass
class StepView:
    index: int
    kind: str
    input: str
    route_before: str
    route_after: str
    catalog: list[str]
    added: list[str]
    removed: list[str]
    calls: list[int]
    reply: str | None
    error: str | None
    stale: str | None
    duration_ms: float


@dataclass
class TrialView:
    trace: Trace
    anchor: str
    series_label: str
    assertions: list[Assertion]
    failed: list[Assertion]
    counted: int
    steps: list[StepView]
    calls: list[CallView]
    state_diff: list[dict[str, str]]
    state_lines: list[DiffLine]
    state_lines_cut: int
    state_before: str | None
    state_after: str | None
    screenshot_uri: str | None
    screenshot_note: str
    playwright_trace: str | None
    tokens: int | None
    extras: dict[str, str]
    rubric: list[dict[str, str]] = field(default_factory=list)  # the case's criteria in words: labelling controls
    retry: str = ""  # "2 attempts; attempt 1: not_run (infrastructure): …" for a retried trial
    attempt_links: list[tuple[str, str]] = field(default_factory=list)  # (label, href) of earlier attempts' traces
    timeline: TimeFigure | None = None  # registrations, steps, calls and writes on one time axis


def _steps(t: Trace) -> list[StepView]:
    out = []
    for s in t.steps:
        before, after = list(s.catalog), list(s.catalog_after)
        out.append(
            StepView(
                index=s.index,
                kind=s.kind,
                input=s.input if isinstance(s.input, str) else _short_json(s.input, 2000),
                route_before=s.route_before,
                route_after=s.route_after,
                catalog=before,
                added=[n for n in after if n not in before] if s.catalog_after else [],
                removed=[n for n in before if n not in after] if s.catalog_after else [],
                calls=list(s.calls),
                reply=s.reply,
                error=s.error,
                stale=_json(s.stale_registrations) if s.stale_registrations else None,
                duration_ms=s.duration_ms,
            )
        )
    return out


def _result_summary(result: object) -> str:
    if isinstance(result, dict):
        parts = [f"{k}: {result[k]}" for k in ("status", "code") if isinstance(result.get(k), str | int | bool)]
        if isinstance(result.get("message"), str):
            parts.append(result["message"])
        if parts:
            return " · ".join(parts)
    return _short_json(result, 120)


def _calls(t: Trace) -> list[CallView]:
    end = max([t.duration_ms, *(c.started_ms + c.duration_ms for c in t.calls)], default=0.0) or 1.0
    out = []
    for c in t.calls:
        left = max(0.0, min(100.0, 100 * c.started_ms / end))
        width = max(0.6, min(100.0 - left, 100 * c.duration_ms / end))
        out.append(
            CallView(
                index=c.index,
                step=c.step,
                tool=c.tool,
                args=_json(c.args),
                result=_json(c.result),
                result_summary=_result_summary(c.result) if c.result is not None else "",
                error=c.error,
                refused=c.refused,
                in_catalog=c.in_catalog,
                route=c.route,
                instance=c.instance,
                started_ms=c.started_ms,
                frame=c.frame.url if c.frame else None,
                duration_ms=c.duration_ms,
                left_pct=round(left, 2),
                width_pct=round(width, 2),
            )
        )
    return out


def _page_clock(t: Trace) -> tuple[float | None, str]:
    """What to add to the page's clock (the shim's ``t``) to get ms since the trial started, and how it was found.

    The shim stamps its events with the page's clock; the trial's own times run from the trial's start.
    DevTools' first toolsAdded (trial time) and the shim's first register (page time) are the same moment;
    without the DevTools witness, the start page's first load is put at the start of navigation.
    """
    stamped = [(r, r.model_extra.get("t")) for r in t.registrations if r.model_extra]
    stamped = [(r, v) for r, v in stamped if isinstance(v, int | float)]
    first_reg = next((v for r, v in stamped if r.type == "register"), None)
    added = next((e.t_ms for e in t.witness.events if e.event == "toolsAdded" and e.t_ms is not None), None)
    if first_reg is not None and added is not None:
        return added - first_reg, "registrations placed by DevTools' first toolsAdded"
    loaded = next((v for r, v in stamped if r.type == "loaded" and r.route not in (None, "blank")), None)
    tm = t.timings
    if loaded is not None and all(k in tm for k in ("setup_ms", "tools_ms", "goto_ms")):
        goto = tm["setup_ms"] - tm["tools_ms"] - tm["goto_ms"]
        return (
            goto - loaded,
            f"registrations placed by the start page's load at the start of navigation (± {seconds(tm['goto_ms'])})",
        )
    return None, "registrations not placed: the trace has no times to place them by"


def _registration_events(t: Trace, offset: float | None) -> list[TimeEvent]:
    if offset is None:
        return []
    out: list[TimeEvent] = []
    for r in t.registrations:
        stamp = (r.model_extra or {}).get("t")
        if not isinstance(stamp, int | float):
            continue
        ms = stamp + offset
        name = r.tool_name or (r.route or "")
        kind = {"register": "register", "unregister": "unregister", "loaded": "loaded"}.get(r.type, "refused")
        if r.type == "loaded" and r.route == "blank":
            continue
        out.append((kind, ms, None, f"{seconds(ms)}: {r.type} {name}" + (f": {r.error}" if r.error else "")))
    return out


def _trial_timeline(t: Trace) -> TimeFigure | None:
    """Registrations, steps, tool calls and the writes they made on one time axis (ms since the trial started)."""
    if not (t.steps or t.calls or t.registrations):
        return None
    offset, how = _page_clock(t)
    regs = _registration_events(t, offset)
    begin = t.timings.get("setup_ms", 0.0)  # steps run one after another once the page and its tools are ready
    steps: list[TimeEvent] = []
    for s in t.steps:
        said = s.input if isinstance(s.input, str) else _short_json(s.input, 80)
        steps.append(
            ("step", begin, begin + s.duration_ms, f"step {s.index} ({s.kind}), {seconds(s.duration_ms)}: {said[:120]}")
        )
        begin += s.duration_ms
    calls: list[TimeEvent] = []
    writes: list[TimeEvent] = []
    for c in t.calls:
        end = c.started_ms + c.duration_ms
        bad = c.error or ("refused: not in the active catalog" if c.refused else "")
        tip = f"#{c.index} {c.tool} at {seconds(c.started_ms)}, {seconds(c.duration_ms)}" + (f": {bad}" if bad else "")
        calls.append(("call-error" if bad else "call", c.started_ms, end, tip))
        for w in c.writes or []:
            writes.append(("write", c.started_ms, end, f"{w} during call #{c.index} {c.tool}"))
    moments = [e[2] if e[2] is not None else e[1] for e in regs + steps + calls]
    end = max([t.duration_ms, *moments], default=0.0) or 1.0
    start = min([0.0, *(e[1] for e in regs)])
    untimed = len(t.network.writes) - len(writes) if t.network.available else 0
    caption = (
        f"ms since the trial started; {how}; steps follow the setup ({seconds(t.timings.get('setup_ms'))}); "
        f"writes shown during the call that made them"
        + (f"; {untimed} write(s) outside tool calls have no time" if untimed > 0 else "")
        + (f"; {t.network.requests} request(s) in all" if t.network.available else "")
        + ". Purple: a page loaded, green: a tool registered, red: withdrawn or refused (a red call failed); "
        "hover a mark for what it was."
    )
    lanes: list[tuple[str, Sequence[TimeEvent]]] = [
        ("registrations", regs),
        ("steps", steps),
        ("tool calls", calls),
        ("writes", writes),
    ]
    rules = [(t.timings["setup_ms"], "ready")] if "setup_ms" in t.timings else []
    return time_figure(f"Timeline of {t.trial_id}", caption, lanes, start, end, rules)


def _state(t: Trace) -> tuple[list[dict[str, str]], list[DiffLine], int, str | None, str | None]:
    st = t.state
    if not st.available:
        return [], [], 0, None, None
    rows = [
        {
            "path": d.path,
            "change": d.change,
            "before": _short_json(d.before, 400),
            "after": _short_json(d.after, 400),
        }
        for d in st.diff
    ]
    before = json.dumps(st.before, indent=2, ensure_ascii=False, sort_keys=True, default=str)
    after = json.dumps(st.after, indent=2, ensure_ascii=False, sort_keys=True, default=str)
    lines = []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), "before", "after", n=3, lineterm=""):
        if line.startswith(("---", "+++")):
            continue
        kind = "hunk" if line.startswith("@@") else "add" if line[:1] == "+" else "del" if line[:1] == "-" else "ctx"
        lines.append(DiffLine(kind, line))
    cut = max(0, len(lines) - MAX_DIFF_LINES)
    return rows, lines[:MAX_DIFF_LINES], cut, before, after


def _image_uri(path: Path) -> tuple[str | None, str]:
    try:
        if not path.is_file():
            return None, f"screenshot not found: {path}"
        if path.stat().st_size > MAX_SCREENSHOT_BYTES:
            return None, f"screenshot too large to embed: {path}"
        data = path.read_bytes()
    except OSError as err:
        return None, f"screenshot unreadable: {path}: {err}"
    mime = next((m for magic, m in IMAGE_MAGIC if data.startswith(magic)), None)
    if mime == "image/webp" and data[8:12] != b"WEBP":
        mime = None
    if mime is None:
        return None, f"not an image (PNG, JPEG, WebP or GIF): {path}"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}", str(path)


def _playwright_trace(t: Trace, trace_dir: Path, report_dir: Path) -> str | None:
    """The Playwright trace file kept for the trial, as a link relative to the report.

    Read from a ``playwright_trace`` field (a path relative to the trace file,
    like the screenshot) when the trace has one, else looked for beside the
    run: ``<run>/playwright/<trial>.zip`` or ``<run>/trials/<trial>.zip``.
    """
    candidates = []
    named = getattr(t, "playwright_trace", None)
    if isinstance(named, str) and named:
        candidates.append(trace_dir / named)
    candidates += [
        RunDir(trace_dir.parent).playwright_trace(t.trial_id),
        trace_dir / f"{t.trial_id}.zip",
        trace_dir / f"{t.trial_id}.trace.zip",
    ]
    for c in candidates:
        if c.is_file() and c.resolve().is_relative_to(trace_dir.resolve().parent):  # inside the run folder only
            return os.path.relpath(c.resolve(), report_dir.resolve()).replace(os.sep, "/")
    return None


def _relative(path: Path, report_dir: Path) -> str:
    return os.path.relpath(os.path.normpath(path.absolute()), report_dir.absolute()).replace(os.sep, "/")


def _trial_view(
    f: TrialFigures, anchor: str, report_dir: Path, trace_dirs: Path | Mapping[str, Path] | None
) -> TrialView:
    t = f.trace
    tdir = trace_dir(t, report_dir, trace_dirs)
    uri, note = (None, "no screenshot was taken")
    if t.ui.screenshot:
        shot = (tdir / t.ui.screenshot).resolve()
        if shot.is_relative_to(tdir.resolve().parent):  # the run's own folder: never another file on the disk
            uri, note = _image_uri(shot)
        else:
            note = f"screenshot outside the run folder, not embedded: {t.ui.screenshot}"
    rows, lines, cut, before, after = _state(t)
    order = {"failed": 0, "not_run": 1, "passed": 2}
    assertions = sorted(t.assertions, key=lambda a: order[a.status])  # stable: case order within each status
    extras = {}
    for name, value in (
        ("DevTools WebMCP witness", t.witness.model_dump() if t.witness.available else None),
        ("shim registration log", t.registrations or None),
        ("agent log", t.agent_log or None),
        ("timings", t.timings or None),
        (
            "browser",
            {**t.browser, "timezone_id": t.timezone_id, "locale": t.locale} if t.timezone_id else t.browser or None,
        ),
    ):
        if value:
            extras[name] = _json(value)
    return TrialView(
        trace=t,
        anchor=anchor,
        series_label=series_label(f.series),
        assertions=assertions,
        failed=[a for a in t.assertions if a.status == "failed"],
        counted=f.assertions_counted,
        steps=_steps(t),
        calls=_calls(t),
        state_diff=rows,
        state_lines=lines,
        state_lines_cut=cut,
        state_before=before,
        state_after=after,
        screenshot_uri=uri,
        screenshot_note=note,
        playwright_trace=_playwright_trace(t, tdir, report_dir),
        tokens=f.tokens,
        extras=extras,
        retry=f.retry_text(),
        rubric=_rubric(t) if t.verdict != "not_run" else [],  # a trial that did not run has nothing to judge
        attempt_links=[
            (f"attempt {a.attempt}", urlpath(_relative(tdir / a.trace, report_dir))) for a in t.earlier_attempts
        ],
        timeline=_trial_timeline(t),
    )


def _rubric(t: Trace) -> list[dict[str, str]]:
    criteria = ((t.case.get("expect") or {}).get("answer") or {}).get("rubric") or []
    return [{"id": str(c["id"]), "criterion": str(c.get("criterion") or "")} for c in criteria if c.get("id")]


def _anchors(traces: Sequence[Trace]) -> dict[int, str]:
    dup: defaultdict[str, int] = defaultdict(int)
    for t in traces:
        dup[t.trial_id] += 1
    out: dict[int, str] = {}
    used: set[str] = set()
    for t in traces:
        base = t.trial_id if dup[t.trial_id] == 1 else f"{t.run_id}-{t.trial_id}"
        base = "trial-" + re.sub(r"[^A-Za-z0-9_.:-]", "_", base)
        anchor, i = base, 1
        while anchor in used:
            i += 1
            anchor = f"{base}-{i}"
        used.add(anchor)
        out[id(t)] = anchor
    return out


# --------------------------------------------------------------------------- the page


def environment() -> Environment:
    """The reports' one Jinja2 environment: their templates, autoescaping on, the filters they share."""
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        pct=pct,
        pts=pts,
        secs=seconds,
        num=num,
        money=money,
        interval=lambda rate: interval_text(rate.mean, rate.clustered_se),
        short_json=_short_json,
        urlpath=urlpath,
        user_path=as_user_knows,  # a case file as its user knows it (<seed suite>/SEL-01.yaml)
        json=_json,
        shell=shlex.quote,
    )
    return env


def _uniq(values: Sequence[Any]) -> list[str]:
    return sorted({str(v) for v in values if v not in (None, "")})


def _columns(results: Results) -> list[SeriesView]:
    """The results' series; deterministic and agent columns always show, empty when there is no such trial."""
    views = [SeriesView.of(s) for s in results.series]
    if results.get("deterministic") is None:
        views.insert(0, SeriesView.empty(("deterministic",), "deterministic"))
    if not any(v.kind == "agent" for v in views):
        views.append(SeriesView.empty(("agent", "", ""), "agent"))  # the agent column: not_run for every case
    return views


def _case_rows(results: Results, columns: list[SeriesView], anchors: dict[int, str]) -> list[CaseRow]:
    rows = []
    for cid in results.case_ids:
        found = [v.result.case(cid) if v.result else None for v in columns]
        cells = [_cell(c, anchors) for c in found]
        first = next(c for c in found if c is not None)
        any_failed = any(c.verdict == "failed" for c in cells)
        any_not_run = any(c.verdict == "not_run" and not c.absent for c in cells)
        rank = (0 if any_failed else 1 if any_not_run else 2, 0, cid)
        rows.append(CaseRow(cid, first.behaviour, first.title, first.case_file, cells, rank))
    return sorted(rows, key=lambda r: r.rank)


def _meta(traces: Sequence[Trace]) -> dict[str, list[str]]:
    browsers = [
        " ".join(filter(None, [t.browser.get("name"), t.browser.get("version")])) or t.browser.get("path", "")
        for t in traces
    ]
    return {
        "runs": _uniq([t.run_id for t in traces]),
        "sites": _uniq([f"{t.site_name} @ {t.site_revision}" if t.site_revision else t.site_name for t in traces]),
        "base URLs": _uniq([t.base_url for t in traces]),
        "network modes": _uniq([t.network_mode for t in traces]),
        "WebMCP paths": _uniq([t.webmcp_path for t in traces]),
        "browsers": _uniq(browsers),
        "agents": _uniq([f"{t.agent} ({t.model})" if t.model else t.agent for t in traces]),
    }


def render_html(
    results: Results | Sequence[Trace],
    title: str = "webmcp-eval report",
    *,
    report_dir: Path | None = None,
    trace_dirs: Path | Mapping[str, Path] | None = None,
    generated_at: str | None = None,
) -> str:
    """The report as one HTML string (see :func:`write_html`)."""
    return "".join(_render_parts(results, title, report_dir, trace_dirs, generated_at))


def _render_parts(
    results: Results | Sequence[Trace],
    title: str,
    report_dir: Path | None,
    trace_dirs: Path | Mapping[str, Path] | None,
    generated_at: str | None = None,
) -> Iterator[str]:
    """The report, part by part as it is rendered.

    Each trial's own section is made from its whole trace, read again from its file when the results keep
    only what the figures read (webmcp_eval/rundir/kept.py), one trial at a time: a report of many trials
    holds the whole traces of the last section or two at once, never all of them. The lists of failures and
    retries need no more than the kept trace (nor its screenshot read), and only their trials'."""
    report_dir = report_dir or Path.cwd()
    results = as_results(results)
    anchors = _anchors(results.traces)
    columns = _columns(results)
    figures = {id(f.trace): f for f in results.trials}
    ordered = _trial_order(results.traces)
    views = [(replace(figures[id(t)], trace=kept_trace(t)), anchors[id(t)]) for t in ordered]
    listed = [
        _trial_view(f, anchor, report_dir, trace_dirs)
        for f, anchor in views
        if f.trace.verdict != "passed" or f.retried
    ]
    trials = (
        _trial_view(replace(f, trace=whole_trace(figures[id(t)].trace)), anchor, report_dir, trace_dirs)
        for t, (f, anchor) in zip(ordered, views, strict=True)
    )
    script_hash = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
    return (
        environment()
        .get_template(TEMPLATE)
        .generate(
            title=title,
            generated_at=generated_at or datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
            traces=results.traces,
            series=columns,
            rows=_case_rows(results, columns, anchors),
            trials=trials,
            problems=[tv for tv in listed if tv.trace.verdict != "passed"],
            labelling=any(_rubric(t) for t in ordered if t.verdict != "not_run"),
            behaviours=_uniq([t.behaviour for t in results.traces]),
            retried=[tv for tv in listed if tv.retry],
            flaky=results.flaky,
            no_agent=results.passes_with_no_agent,
            no_agent_ids={n.case_id for n in results.passes_with_no_agent},
            meta=_meta(results.traces),
            counts=results.counts,
            completeness=results.completeness,
            n_cases=len(results.case_ids),
            script=Markup(SCRIPT),
            script_hash=script_hash,
            z=Z_95,
        )
    )


def write_html(
    results: Results | Sequence[Trace],
    path: Path,
    title: str = "webmcp-eval report",
    *,
    trace_dirs: Path | Mapping[str, Path] | None = None,
) -> Path:
    """Write the self-contained HTML report of the results (or traces) to ``path`` (atomically) and return the path.

    Screenshots are embedded when their file exists relative to the trial's
    trace directory: ``trace_dirs`` (one directory, or one per run id), else
    ``<report dir>/trials``, ``<report dir>/<run id>/trials`` or
    ``<report dir>/../<run id>/trials`` -- so a report written into a run
    directory, or into ``traces/merged``, finds them. Links to kept Playwright
    trace files are relative to the report.
    """
    path = Path(path)
    write_atomic(path, _render_parts(results, title, path.parent, trace_dirs))
    return path
