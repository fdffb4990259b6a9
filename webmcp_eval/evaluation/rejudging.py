"""rejudge: a run's stored traces judged again with today's cases, into a new run directory."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from webmcp_eval.errors import InvalidInput, Outcome, UsageError
from webmcp_eval.evaluation.loading import (
    default_suite_dir,
    load_cases,
)
from webmcp_eval.evaluation.output import check_writable_dir, console, report_problems, say
from webmcp_eval.evaluation.reporting import ReportFiles, end_reports, reporters_for, run_input
from webmcp_eval.judge.rejudge import Change, change_of, judged_again, rejudge, unanswerable, write_run
from webmcp_eval.report.reporters import IN_RUN_DIR
from webmcp_eval.results.run_results import RunInput, build_results
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.rundir.reading import control_dirs
from webmcp_eval.trace import Trace

if TYPE_CHECKING:
    from webmcp_eval.judge.rejudge import Change


@dataclass(frozen=True)
class RejudgeRequest:
    """rejudge: the run whose traces to judge again, the suite that judges them, and the new run directory."""

    run_dir: str
    suite: str | None = None  # default cases/ (else the shipped seed suite)
    output: str | None = None  # default RUN-rejudged-<time> beside RUN
    keep_going: bool = False  # write traces the current cases cannot judge as not_run, with why
    outputs: ReportFiles = field(default_factory=ReportFiles)  # --json, --junit, --html, --markdown ...


@dataclass(frozen=True)
class RejudgeOutcome(Outcome):
    """The exit code (as report's), the new run directory, and every trial's change of verdict or assertions."""

    out_dir: Path
    changes: list[Change]


def rejudge_command(request: RejudgeRequest) -> RejudgeOutcome:
    """Judge a run's stored traces again with the current case files and checks, into a new run directory."""
    request.outputs.check()
    src = Path(request.run_dir)
    # RunDirError (one line naming the directory) when a run cannot be read, as report says it
    runs = [(src, run_input(request.run_dir)), *((b, run_input(str(b))) for b in control_dirs(src))]
    loaded = load_cases([request.suite] if request.suite else [], None, request.suite)
    cases, problems, note = loaded.cases, loaded.problems, loaded.note
    if problems:
        report_problems(problems)
        raise InvalidInput(f"nothing re-judged: fix the cases above ({note})")
    out = _rejudged_dir(request.output, src)
    suite_name = request.suite or str(default_suite_dir())
    by_id = {lc.case.id: lc for lc in cases}
    refused: list[str] = []
    new_runs: list[tuple[Path, RunInput, Path, list[Trace]]] = []
    for run_dir, run in runs:
        where = out if run_dir == src else RunDir(out).control(out.name).path
        new: list[Trace] = []
        for t in run.traces:
            lc = by_id.get(t.case_id)
            why = f"case {t.case_id} is not in the suite {suite_name}" if lc is None else ""
            if lc is not None and judged_again(t):
                why = unanswerable(lc.case, t)
            if why:
                refused.append(f"{RunDir(run_dir).trace(t.trial_id)}: {why}")
            case, file = (lc.case, lc.file) if lc else (None, t.case_file)
            new.append(rejudge(t, case, file, where.name, why, live_rules="no catalog" in note))
        new_runs.append((run_dir, run, where, new))
    if refused and not request.keep_going:
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        raise UsageError(f"{refused[0]}{more}; nothing written (--keep-going writes such trials as not_run)")
    for run_dir, run, where, new in new_runs:
        write_run(run_dir, where, new, run.plan)
    console.print(f"re-judged {sum(len(n) for *_, n in new_runs)} trial(s) of {src} against {note}", highlight=False)
    inputs = [
        RunInput(new, {**run.plan, "run_id": where.name} if run.plan else None, where.name)
        for _, run, where, new in new_runs
    ]
    dirs = {where.name: RunDir(where).trials for _, _, where, _ in new_runs}
    reporters = reporters_for(request.outputs, out, IN_RUN_DIR, reads=[src], trace_dirs=dirs)
    code = end_reports(reporters, build_results(inputs))
    changes = [change_of(old, new) for _, run, _, news in new_runs for old, new in zip(run.traces, news, strict=True)]
    _print_changes([c for c in changes if c.changed], len(changes), out)
    for line in refused:
        say(f"not_run: {line}")
    return RejudgeOutcome(code, out, changes)


def _rejudged_dir(output: str | None, src: Path) -> Path:
    """-o NEWRUN, or RUN-rejudged-<time> beside RUN: a new directory, never the old run."""
    out = Path(output) if output else src.parent / f"{src.name}-rejudged-{datetime.now():%Y%m%d-%H%M%S}"
    if out.resolve() == src.resolve() or src.resolve() in out.resolve().parents:
        raise UsageError(f"-o {out}: the re-judged run goes into a new directory, never into {src}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"-o {out}: exists and is not empty; give a new directory")
    check_writable_dir(out.parent, "-o")
    return out


def _print_changes(changes: list[Change], total: int, out: Path) -> None:
    """The trials whose verdict or assertions changed: case, trial, old → new, which assertions."""
    verdicts = sum(c.old != c.new for c in changes)
    console.print(
        f"[bold]verdict changes[/]: {verdicts} of {total} trial(s); "
        f"{len(changes) - verdicts} more with changed assertions; the re-judged run: {out}",
        highlight=False,
    )
    if not changes:
        return
    table = Table(show_edge=False)
    for name in ("case", "trial", "old → new", "assertions changed"):
        table.add_column(name)
    for c in changes:
        verdict = f"{c.old} → {c.new}" if c.old != c.new else f"{c.new} (same)"
        table.add_row(c.case_id, c.trial_id, verdict, "\n".join(c.assertions) or "—")
    console.print(table)
