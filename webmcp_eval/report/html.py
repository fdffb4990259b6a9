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
import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from markupsafe import Markup

from webmcp_eval.report.chart import Chart, _chart
from webmcp_eval.report.rendering import environment
from webmcp_eval.report.trend import Trend
from webmcp_eval.report.trial_view import _anchors, _rubric, _trial_view
from webmcp_eval.results.run_results import (
    MODEL_GRADER,
    CaseResult,
    CostSummary,
    Counts,
    Results,
    SeriesKey,
    SeriesResult,
    as_results,
    series_key,
)
from webmcp_eval.results.stats import Z_95, SuiteScore
from webmcp_eval.rundir.kept import kept_trace, whole_trace
from webmcp_eval.trace import Trace, write_atomic

__all__ = ["render_html", "write_html"]

TEMPLATE = "report.html.j2"
RANK = {"failed": 0, "not_run": 1, "passed": 2}

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


# --------------------------------------------------------------------------- the page


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
    trend: Trend | None = None,
) -> str:
    """The report as one HTML string (see :func:`write_html`)."""
    return "".join(_render_parts(results, title, report_dir, trace_dirs, generated_at, trend))


def _render_parts(
    results: Results | Sequence[Trace],
    title: str,
    report_dir: Path | None,
    trace_dirs: Path | Mapping[str, Path] | None,
    generated_at: str | None = None,
    trend: Trend | None = None,
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
            trend=trend,
        )
    )


def write_html(
    results: Results | Sequence[Trace],
    path: Path,
    title: str = "webmcp-eval report",
    *,
    trace_dirs: Path | Mapping[str, Path] | None = None,
    trend: Trend | None = None,
) -> Path:
    """Write the self-contained HTML report of the results (or traces) to ``path`` (atomically) and return the path.

    Screenshots are embedded when their file exists relative to the trial's
    trace directory: ``trace_dirs`` (one directory, or one per run id), else
    ``<report dir>/trials``, ``<report dir>/<run id>/trials`` or
    ``<report dir>/../<run id>/trials`` -- so a report written into a run
    directory, or into ``traces/merged``, finds them. Links to kept Playwright
    trace files are relative to the report. ``trend``: this run beside its earlier runs
    (webmcp_eval/report/trend.py).
    """
    path = Path(path)
    write_atomic(path, _render_parts(results, title, path.parent, trace_dirs, trend=trend))
    return path
