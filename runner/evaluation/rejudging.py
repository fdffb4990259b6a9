"""rejudge: a run's stored traces judged again with today's cases, into a new run directory."""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from runner.errors import InvalidInput, UsageError
from runner.evaluation.loading import (
    default_suite_dir,
    load_cases,
)
from runner.evaluation.output import check_writable_dir, console, report_problems, say
from runner.evaluation.reporting import check_output_files, end_reports, reporters_for, run_input
from runner.report.reporters import IN_RUN_DIR
from runner.rundir.layout import RunDir
from runner.rundir.reading import RunDirError, control_dirs

if TYPE_CHECKING:
    from runner.judge.rejudge import Change


def rejudge_command(args: argparse.Namespace) -> int:
    """Judge a run's stored traces again with the current case files and checks, into a new run directory."""
    from runner.judge.rejudge import change_of, judged_again, rejudge, unanswerable, write_run
    from runner.results.run_results import RunInput, build_results

    check_output_files(args)
    src = Path(args.run_dir)
    try:
        runs = [(src, run_input(args.run_dir)), *((b, run_input(str(b))) for b in control_dirs(src))]
    except RunDirError as err:
        raise UsageError(str(err)) from None
    loaded = load_cases([args.suite] if args.suite else [], None, args.suite)
    cases, problems, note = loaded.cases, loaded.problems, loaded.note
    if problems:
        report_problems(problems)
        raise InvalidInput(f"nothing re-judged: fix the cases above ({note})")
    out = _rejudged_dir(args, src)
    suite_name = args.suite or str(default_suite_dir())
    by_id = {lc.case.id: lc for lc in cases}
    refused: list[str] = []
    new_runs = []
    for run_dir, run in runs:
        where = out if run_dir == src else RunDir(out).control(out.name).path
        new = []
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
    if refused and not args.keep_going:
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
    code = end_reports(reporters_for(args, out, IN_RUN_DIR, trace_dirs=dirs), build_results(inputs))
    changes = [change_of(old, new) for _, run, _, news in new_runs for old, new in zip(run.traces, news, strict=True)]
    _print_changes([c for c in changes if c.changed], len(changes), out)
    for line in refused:
        say(f"not_run: {line}")
    return code


def _rejudged_dir(args: argparse.Namespace, src: Path) -> Path:
    """-o NEWRUN, or RUN-rejudged-<time> beside RUN: a new directory, never the old run."""
    out = Path(args.output) if args.output else src.parent / f"{src.name}-rejudged-{datetime.now():%Y%m%d-%H%M%S}"
    if out.resolve() == src.resolve() or src.resolve() in out.resolve().parents:
        raise UsageError(f"-o {out}: the re-judged run goes into a new directory, never into {src}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"-o {out}: exists and is not empty; give a new directory")
    check_writable_dir(out.parent, "-o")
    return out


def _print_changes(changes: list[Change], total: int, out: Path) -> None:
    """The trials whose verdict or assertions changed: case, trial, old → new, which assertions."""
    from rich.table import Table

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
