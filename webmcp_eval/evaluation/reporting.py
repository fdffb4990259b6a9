"""Run directories read back, and the reporters that render their results (console, JSON, JUnit, HTML)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from webmcp_eval.audit.catalog_lint import run_coverage_line
from webmcp_eval.errors import EXIT_FAILED, EXIT_NOT_RUN, EXIT_OK, CannotRun, InvalidInput, UsageError
from webmcp_eval.evaluation.loading import default_suite_dir
from webmcp_eval.evaluation.output import console, errors
from webmcp_eval.judge.labels import LabelsFile
from webmcp_eval.report.files import check_writable_file
from webmcp_eval.report.reporters import (
    OUTPUTS,
    Output,
    ProgressReporter,
    Reporters,
    ReportTargets,
    build_reporters,
    run_dir_files,
)
from webmcp_eval.results.health import health_lines, suite_health
from webmcp_eval.results.run_results import Labels, Results, RunInput
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.rundir.reading import read_run
from webmcp_eval.trace import Trace, write_atomic

if TYPE_CHECKING:
    from webmcp_eval.play.evidence.fixture_store import FixtureStore
    from webmcp_eval.rundir.plan import RunPlan
    from webmcp_eval.suite.case import Case
    from webmcp_eval.suite.folder import Suite


def run_input(run_dir: str, kept: bool = False) -> RunInput:
    """A run directory's traces and plan; RunDirError (one line) when it has neither or they are unreadable.
    ``kept``: the traces as the figures keep them, read one at a time (webmcp_eval/rundir/kept.py)."""
    traces, plan, run_id = read_run(run_dir, kept)
    return RunInput(traces, plan, run_id=run_id)


@dataclass(frozen=True)
class ReportFiles:
    """The file views a command is asked for besides its defaults (--json FILE, --junit FILE, ...), by the name of
    their registered output (webmcp_eval/report/reporters.py OUTPUTS)."""

    paths: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, given: object) -> ReportFiles:
        """The output files given as attributes of their output's name (parsed arguments, a request)."""
        return cls({o.name: str(value) for o in OUTPUTS if (value := getattr(given, o.name, None))})

    def flagged(self) -> list[tuple[Output, Path]]:
        """Each output asked for, with its file."""
        return [(o, Path(self.paths[o.name])) for o in OUTPUTS if o.name in self.paths]

    def check(self) -> None:
        """Every file asked for can be written: one line (exit 2) before any work otherwise."""
        for o, path in self.flagged():
            check_writable_file(path, o.flag)


def reporters_for(
    files: ReportFiles,
    out_dir: Path,
    defaults: tuple[str, ...],
    *,
    reads: list[Path] | None = None,
    progress: bool = False,
    json_extra: dict[str, Any] | None = None,
    trace_dirs: dict[str, Path] | None = None,
    quiet: bool = False,
    history: tuple[Path, Path | None] | None = None,
) -> Reporters:
    """The one way reporters are made: the ``defaults`` outputs (webmcp_eval/report/reporters.py IN_RUN_DIR: json,
    junit, html) write their files into out_dir, and every output asked for writes its file too.

    ``reads``: the run directories the command reads, whose own files no report may replace.
    ``quiet``: files only, nothing on the console (the partial report of an interrupted run).
    ``history``: the HTML report's trend (:func:`trend_of`); None: none."""
    targets = run_dir_files(out_dir, defaults)
    flagged = files.flagged()
    check_outputs_apart([path for _, path in flagged], [out_dir, *(reads or [])])
    for o, path in flagged:
        targets.setdefault(o.name, []).append(path)
    return build_reporters(
        ReportTargets(
            console=None if quiet else console,
            progress=progress,
            out_dir=out_dir,
            files=targets,
            json_extra=json_extra if json_extra is not None else {},
            trace_dirs=trace_dirs,
            history=history,
        )
    )


def check_outputs_apart(outputs: list[Path], run_dirs: list[Path]) -> None:
    """An output never replaces a run's own file (its plan, run.json, a trace, an attempt or an artifact)."""
    for out in outputs:
        for run_dir in run_dirs:
            if RunDir(run_dir).owns(out):
                raise UsageError(
                    f"{out}: a file of the run {run_dir} itself (its plan, run.json, traces or artifacts); "
                    "give another path for the report"
                )


class ReportsNotWritten(CannotRun):
    """A view of the results could not be written (a full disk, a folder made read-only): the input was fine and every
    file was checked before the work, so the command could not finish its work (exit 3, as a full disk during a run)."""


class ReportMisdirected(InvalidInput):
    """A view of the results was pointed at a device, a pipe or a folder: the command line's to change (exit 2)."""


def end_reports(reporters: Reporters, results: Results, rebuild: str | None = None) -> int:
    """Render every view of the results; the exit code says what the results came to. ReportsNotWritten when a
    view could not be written: ``rebuild``, the command that writes the reports again from the traces (a full
    disk: the traces are kept), is its line."""
    problems = reporters.end(results)
    if problems and rebuild:
        problems = [*problems, f"the traces are kept: make room, then write the reports with: {rebuild}"]
    for line in problems[:-1]:
        errors.print(line, markup=False, highlight=False)
    if problems:
        raise (ReportMisdirected if reporters.misdirected else ReportsNotWritten)(problems[-1])
    counts = results.gate_counts  # run --control: the null agent beside the agent decides nothing
    return EXIT_FAILED if counts.failed else EXIT_NOT_RUN if counts.not_run or counts.missing else EXIT_OK


class ResumeProgress:
    """Progress of a resumed run: [done/to play] over the trials this invocation plays."""

    def __init__(self, total: int) -> None:
        self.inner = ProgressReporter(console)
        self.inner.total = total

    def begin(self, plan: RunPlan | None) -> None:
        return None

    def trial_done(self, trace: Trace) -> None:
        self.inner.trial_done(trace)

    def end(self, results: Results) -> None:
        return None


def exit_for(traces: list[Trace]) -> int:
    verdicts = {t.verdict for t in traces}
    return EXIT_FAILED if "failed" in verdicts else EXIT_NOT_RUN if "not_run" in verdicts else EXIT_OK


def labels_of(path_arg: str | None) -> Labels | None:
    """People's labels per trial for the human-label series: --labels FILE, else the suite's labels.json if any."""
    path = Path(path_arg) if path_arg else default_suite_dir() / "labels.json"
    if path_arg and not path.exists():
        raise UsageError(f"--labels {path_arg}: no such file")
    if not path_arg and not path.is_file():
        return None
    labels = LabelsFile.load(path)  # LabelsError when it cannot be read: as label and calibrate say it
    return {(t.run_id, t.trial): dict(t.labels) for t in labels.trials}


def print_coverage(cases: list[Case], suite: Suite, catalog: str | None) -> None:
    """Suite health: which catalog tools the cases played call or assert, and which none touches."""
    line = run_coverage_line(cases, suite, catalog)
    if line:
        console.print(f"suite health: {line}", markup=False, highlight=False, soft_wrap=True)


def print_graders_and_health(traces: list[Trace], out_dir: Path, min_trials: int) -> None:
    """Model-grader evidence apart from the code checks, then suite health (written to health.json too)."""
    judged = [(t, a) for t in traces for a in t.assertions if a.grader == "model"]
    if judged:
        console.print("[bold]model grader[/] (rubric criteria; kept apart from code-checked assertions)")
        for t, a in judged:
            mark = a.status + ("" if a.gates else ", advisory")
            console.print(f"  {t.trial_id:<16} {a.id:<36} {mark:<18} {a.why}", markup=False, highlight=False)
    health = suite_health(traces, min_trials)
    lines = health_lines(health)
    if lines:
        console.print(f"[bold]suite health[/] (flags need ≥ {min_trials} trials that ran)")
        for line in lines:
            console.print(f"  {line}", markup=False, highlight=False)
    write_atomic(RunDir(out_dir).health, json.dumps(health.to_json(), indent=2, ensure_ascii=False) + "\n")


def print_fixture_news(fixtures: FixtureStore) -> None:
    for warning in fixtures.warnings:
        errors.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    for path in fixtures.recorded:
        console.print(f"recorded {path}", highlight=False)
    for case_id, lines in fixtures.diffs.items():
        if not lines:
            console.print(f"{case_id}: the new recording answers exactly as the old one", highlight=False)
            continue
        console.print(f"[bold]{case_id}: what changed since the last recording (review it like code)[/]")
        for line in lines:
            console.print(f"  {line}", markup=False, highlight=False)


def trend_of(run_dir: Path, history: str | None, no_history: bool) -> tuple[Path, Path | None] | None:
    """What the HTML report's trend reads (the run directory, and --history DIR or None for the folder it is in);
    None with --no-history. A --history that is not a folder is one line (exit 2), before any work."""
    if no_history:
        return None
    if history is not None and not Path(history).is_dir():
        raise UsageError(f"--history {history}: not a folder (the folder of the earlier run directories)")
    return run_dir, Path(history) if history is not None else None
