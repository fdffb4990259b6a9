"""Reporters: the views of a run, as plug-ins behind one small protocol.

A reporter hears three things: ``begin(plan)`` before the first trial (the
plan, or None when it is not known), ``trial_done(trace)`` after each trial,
and ``end(results)`` once, with the :class:`webmcp_eval.results.run_results.Results` every view
renders. :class:`Reporters` fans them out; :func:`build_reporters` makes the
set from what the command line asked for, the same way for ``run``, ``report``,
``rejudge`` (which only call ``end``) and the pytest plugin's suite items.

Every file view is one :class:`Output` in :data:`OUTPUTS`: its flag, its file in the
run directory (when a run writes one there) and its reporter. The commands take their
flags from it, check each file can be written before any work, and write the run
directory's files from it, so adding a view is one new class here and one Output.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rich.console import Console
from rich.markup import escape

from webmcp_eval import as_user_knows
from webmcp_eval.proxies.files import NotRegularFile
from webmcp_eval.report.sanitise import markdown as markdown_text
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.rundir.plan import RunPlan
from webmcp_eval.trace import Trace, write_atomic

if TYPE_CHECKING:  # the writers and the figures are imported when a view renders: the command line starts quicker
    from webmcp_eval.results.run_results import Results, SeriesResult

__all__ = [
    "IN_RUN_DIR",
    "OUTPUTS",
    "ConsoleReporter",
    "HtmlReporter",
    "JUnitReporter",
    "JsonReporter",
    "MarkdownReporter",
    "Output",
    "ProgressReporter",
    "Reporter",
    "ReportTargets",
    "Reporters",
    "build_reporters",
    "output",
    "run_dir_files",
]


class Reporter(Protocol):
    def begin(self, plan: RunPlan | None) -> None: ...

    def trial_done(self, trace: Trace) -> None: ...

    def end(self, results: Results) -> None: ...


class _Quiet:
    """A reporter that hears everything and says nothing until told otherwise."""

    def begin(self, plan: RunPlan | None) -> None:
        return None

    def trial_done(self, trace: Trace) -> None:
        return None

    def end(self, results: Results) -> None:
        return None


class ProgressReporter(_Quiet):
    """One line per finished trial: [done/planned] verdict, trial, time, title."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.done = 0
        self.total: int | None = None

    def begin(self, plan: RunPlan | None) -> None:
        self.total = len(plan["trials"]) if plan else None

    def trial_done(self, trace: Trace) -> None:
        from webmcp_eval.llm.cassette import describe_rerecord
        from webmcp_eval.report.writers import VERDICT_STYLE

        self.done += 1
        style = VERDICT_STYLE[trace.verdict]
        again = f" [yellow](attempt {trace.attempt})[/]" if trace.attempt > 1 else ""
        self.console.print(
            f"[{self.done:>3}/{self.total if self.total is not None else '?'}] [{style}]{trace.verdict:<7}[/] "
            f"{escape(trace.trial_id):<16} {trace.duration_ms / 1000:5.1f}s  {escape(trace.title)}{again}",
            highlight=False,
        )
        rerecord = describe_rerecord((trace.agent_log.get("cassette") or {}).get("rerecorded"))
        if rerecord:
            self.console.print(f"      {rerecord}", markup=False, highlight=False)


class ConsoleReporter(_Quiet):
    """The table, why each trial failed, and the scores per series."""

    def __init__(self, console: Console, out_dir: Path | None) -> None:
        self.console, self.out_dir = console, out_dir

    def end(self, results: Results) -> None:
        from webmcp_eval.report.writers import print_console

        print_console(results, self.out_dir, self.console)


class JsonReporter(_Quiet):
    def __init__(
        self, path: Path, extra: Mapping[str, Any] | None = None, trace_dirs: Path | Mapping[str, Path] | None = None
    ) -> None:
        self.path, self.extra, self.trace_dirs = path, dict(extra or {}), trace_dirs

    def end(self, results: Results) -> None:
        from webmcp_eval.report.writers import write_json

        write_json(results, self.path, self.extra, self.trace_dirs)


class JUnitReporter(_Quiet):
    def __init__(self, path: Path) -> None:
        self.path = path

    def end(self, results: Results) -> None:
        from webmcp_eval.report.writers import write_junit

        write_junit(results, self.path)


class HtmlReporter(_Quiet):
    def __init__(
        self,
        path: Path,
        console: Console | None = None,
        trace_dirs: Path | Mapping[str, Path] | None = None,
        history: tuple[Path, Path | None] | None = None,
    ) -> None:
        self.path, self.console, self.trace_dirs = path, console, trace_dirs
        self.history = history  # (the run directory, where its earlier runs are: None for its own folder)

    def end(self, results: Results) -> None:
        from webmcp_eval.report.html import write_html
        from webmcp_eval.report.trend import read_trend

        trend = read_trend(self.history[0], results, self.history[1]) if self.history else None
        written = write_html(results, self.path, trace_dirs=self.trace_dirs, trend=trend)
        if self.console:
            self.console.print(f"HTML report: {written}", markup=False, highlight=False)


class MarkdownReporter(_Quiet):
    """A Markdown summary for a pull-request comment or a CI job summary ($GITHUB_STEP_SUMMARY)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def end(self, results: Results) -> None:
        write_atomic(self.path, markdown(results))


def _md(text: str) -> str:
    """Table-safe text: no pipes, line breaks or markup from trace content."""
    return markdown_text(text)


def _series_row(s: SeriesResult) -> str:
    from webmcp_eval.report.writers import counts_text
    from webmcp_eval.results.run_results import money, num, pct, seconds

    sc = s.score
    case = f"{pct(sc.case_pass.mean)} ± {sc.case_pass.clustered_se * 100:.1f}" if sc else "—"
    ap = sc.assertion_pass if sc else None
    assertion = f"{pct(ap.mean)} ± {ap.clustered_se * 100:.1f}" if ap else "—"
    ks = " ".join(
        f"pass@{k} {sc.pass_at[k].mean:.2f} pass^{k} {sc.pass_hat[k].mean:.2f}"
        for k in s.ks
        if sc and sc.pass_at[k].mean is not None and sc.pass_hat[k].mean is not None
    )
    cost = f"{seconds(s.cost.wall_ms_per_trial)}/trial, {num(s.cost.tool_calls_per_trial)} calls/trial"
    if s.cost.tokens is not None:
        cost += f", {num(s.cost.tokens_per_trial, 0)} tokens/trial"
    if s.cost.cost_usd is not None:
        cost += f", {money(s.cost.cost_per_trial)}/trial"
    return (
        f"| {_md(s.label)} | {counts_text(s)} | {case} | {assertion} | {sc.n_cases if sc else 0} "
        f"| {ks or '—'} | {cost} |"
    )


def markdown(results: Results) -> str:
    """The results as Markdown: completeness, one row per series, then why each trial failed."""
    from webmcp_eval.report.writers import counts_text
    from webmcp_eval.results.run_results import pct

    c = results.counts
    icon = "❌" if c.failed else "⚠️" if c.not_run or c.missing else "✅"
    lines = [
        f"## {icon} webmcp-eval: {counts_text(results)}",
        "",
        f"_{_md(results.completeness.text())}_",
        "",
        "Case pass rate (every assertion passed: the gate) and per-assertion pass rate (the diagnosis), "
        "means over cases ± SE clustered by behaviour; each kind of evidence on its own row.",
        "",
        "| series | trials | case pass rate | per-assertion | cases | pass@k / pass^k | cost |",
        "|---|---|---|---|---|---|---|",
        *(_series_row(s) for s in results.series),
    ]
    purposes = [s for s in results.series if s.by_purpose]
    if purposes:  # capability and regression cases apart (a case's purpose: in its file)
        lines += ["", "| series | purpose | cases | case pass rate |", "|---|---|---|---|"]
        for s in purposes:
            lines += [f"| {_md(s.label)} | {p} | {n} | {pct(rate)} |" for p, (n, rate) in s.by_purpose.items()]
    if results.problems:
        lines += ["", "### Why", ""]
        for f in results.problems:
            t = f.trace
            why = [f"{a.description}: {a.why}" for a in t.assertions if a.status == "failed"]
            if t.verdict != "failed" or not why:
                why = [t.verdict_reason]
            file = _md(as_user_knows(t.case_file))
            lines.append(f"- **{_md(t.trial_id)}** {t.verdict} ({file}): {_md('; '.join(why))}")
    if results.retried:
        lines += ["", "### Retried (an infrastructure failure; the last attempt is the verdict)", ""]
        lines += [
            f"- **{_md(f.trace.trial_id)}** {f.trace.verdict} after {_md(f.retry_text())}" for f in results.retried
        ]
    if results.flaky:
        lines += ["", "### Flaky (the same plan passed and failed: the site behaved differently)", ""]
        lines += [f"- {_md(c.flaky_text())}" for c in results.flaky]
    if results.passes_with_no_agent:
        lines += ["", "### Passes with no agent (a case a do-nothing agent passes measures no agent)", ""]
        lines += [f"- {_md(n.text())}" for n in results.passes_with_no_agent]
    return "\n".join(lines) + "\n"


@dataclass
class Reporters:
    """The multiplexer: every reporter hears every event; a reporter that cannot write does not stop the rest."""

    reporters: list[Reporter] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    misdirected: bool = False  # a view was pointed at a device, a pipe or a folder: the user's to change

    def begin(self, plan: RunPlan | None) -> None:
        for r in self.reporters:
            r.begin(plan)

    def trial_done(self, trace: Trace) -> None:
        for r in self.reporters:
            r.trial_done(trace)

    def end(self, results: Results) -> list[str]:
        """Render every view; returns what could not be written (one line each)."""
        for r in self.reporters:
            try:
                r.end(results)
            except OSError as err:
                where = getattr(r, "path", "")
                self.problems.append(f"cannot write {where}: {err.strerror or err}")
                self.misdirected |= isinstance(err, NotRegularFile)
        return self.problems


@dataclass
class ReportTargets:
    """What to render and where, from the command line."""

    console: Console | None = None
    progress: bool = False
    out_dir: Path | None = None  # where the console says the traces and reports are
    files: Mapping[str, Sequence[Path]] = field(default_factory=dict)  # Output.name -> the files it writes
    json_extra: Mapping[str, Any] = field(default_factory=dict)
    trace_dirs: Path | Mapping[str, Path] | None = None
    # the HTML report's trend: the run directory and the folder of its earlier runs (None: the run's own folder);
    # None: no trend (a merged report, --no-history)
    history: tuple[Path, Path | None] | None = None


@dataclass(frozen=True)
class Output:
    """One file view of the results: its flag on run, report and rejudge, its file in the run directory, its writer."""

    name: str  # the flag's argparse dest and its key in ReportTargets.files
    flag: str
    help: str  # the flag's --help text
    writer: Callable[[Path, ReportTargets], Reporter]  # the reporter that writes the view to a path
    in_run_dir: Callable[[RunDir], Path] | None = None  # the file run and rejudge write into the run directory


OUTPUTS: tuple[Output, ...] = (
    Output(
        "json",
        "--json",
        "also write the JSON summary here",
        lambda path, t: JsonReporter(path, t.json_extra, t.trace_dirs),
        lambda run: run.summary,
    ),
    Output("junit", "--junit", "also write JUnit XML here", lambda path, t: JUnitReporter(path), lambda run: run.junit),
    Output(
        "html",
        "--html",
        "also write the HTML report here",
        lambda path, t: HtmlReporter(path, t.console, t.trace_dirs, t.history),
        lambda run: run.report_html,
    ),
    Output(
        "markdown",
        "--markdown",
        "also write a Markdown summary here (a pull-request comment, $GITHUB_STEP_SUMMARY)",
        lambda path, t: MarkdownReporter(path),
    ),
)
IN_RUN_DIR = tuple(o.name for o in OUTPUTS if o.in_run_dir is not None)  # what run writes into its run directory


def output(name: str) -> Output:
    """The registered output of that name; KeyError naming the known ones otherwise."""
    for o in OUTPUTS:
        if o.name == name:
            return o
    raise KeyError(f"no output {name!r}; the outputs are {', '.join(o.name for o in OUTPUTS)}")


def run_dir_files(out_dir: Path, names: Sequence[str] = IN_RUN_DIR) -> dict[str, list[Path]]:
    """The files the named outputs write into a run directory (all of them by default), by output name."""
    run = RunDir(out_dir)
    found: dict[str, list[Path]] = {}
    for name in names:
        default = output(name).in_run_dir
        if default is None:
            raise KeyError(f"output {name!r} has no file in the run directory")
        found[name] = [default(run)]
    return found


def build_reporters(targets: ReportTargets) -> Reporters:
    """The one place reporters are made, for ``run``, ``report``, ``rejudge`` and the pytest plugin alike."""
    for name in targets.files:
        output(name)  # a name no output has is a mistake of the caller's, never silently nothing written
    out: list[Reporter] = []
    if targets.console is not None:
        if targets.progress:
            out.append(ProgressReporter(targets.console))
        out.append(ConsoleReporter(targets.console, targets.out_dir))
    for o in OUTPUTS:
        out += [o.writer(path, targets) for path in targets.files.get(o.name, ())]
    return Reporters(out)
