"""report, compare, analyze, power: the results of run directories, rebuilt, paired or explained."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from runner.errors import EXIT_OK, InvalidInput, UsageError
from runner.evaluation.output import check_writable_dir, console, errors
from runner.evaluation.reporting import check_output_files, end_reports, labels_of, reporters_for, run_input
from runner.report.reporters import IN_RUN_DIR
from runner.rundir.layout import RunDir
from runner.rundir.reading import RunDirError, control_dirs
from runner.rundir.run_info import read_run_id


def report_command(args: argparse.Namespace) -> int:
    """Rebuild the reports from traces alone; several run directories merge into one, each series apart."""
    from runner.results.run_results import build_results
    from runner.results.shards import merge
    from runner.rundir.plan import ShardError

    check_output_files(args)
    inputs = [run_input(d) for d in args.run_dirs]
    runs = inputs
    sharded = len(inputs) > 1 and any(r.plan and "shard" in r.plan for r in inputs)
    if sharded:
        try:
            runs = [merge(list(zip(args.run_dirs, inputs, strict=True)))]
        except ShardError as err:
            raise InvalidInput(f"cannot merge: {err}") from None
    merged = len(args.run_dirs) > 1
    out = Path(args.out or "traces/merged") if merged else Path(args.run_dirs[0])
    if merged:
        check_writable_dir(out, "--out")  # a file there is one line and exit 2, before anything is written
    dirs = {read_run_id(Path(d)): RunDir(d).trials for d in args.run_dirs}
    controls = [c for d in args.run_dirs for c in control_dirs(Path(d))]  # run --control: a series of its own
    runs = [*runs, *(run_input(str(c)) for c in controls)]
    dirs |= {read_run_id(c): RunDir(c).trials for c in controls}
    if sharded:  # shards may share one --run-id: each trial's own directory, never a guess by run id
        for d, run in zip(args.run_dirs, inputs, strict=True):
            dirs |= {f"{t.run_id}/{t.trial_id}": RunDir(d).trials for t in run.traces}
    defaults: tuple[str, ...] = IN_RUN_DIR if sharded else ("html",) if merged and not args.html else ()
    if args.no_html:  # a merge of very many trials: the HTML would be ~40 KB per trial, screenshots aside
        defaults = tuple(d for d in defaults if d != "html")
    reporters = reporters_for(args, out, defaults, trace_dirs=dirs)
    code = end_reports(reporters, build_results(runs, labels_of(args.labels)))
    if len(inputs) == 1 and inputs[0].plan and "shard" in inputs[0].plan:
        shard = inputs[0].plan["shard"]
        index, count, whole = shard["index"], shard["count"], shard["planned_trials"]
        note = f"{args.run_dirs[0]} is shard {index}/{count} of a {whole}-trial plan: merge all {count} with report"
        errors.print(note, markup=False, highlight=False, soft_wrap=True)
    for d, run in zip(args.run_dirs, inputs, strict=True):
        traced = {t.trial_id for t in run.traces}
        if run.plan and any(t["trial_id"] not in traced for t in run.plan["trials"]):
            hint = f"{d} is incomplete; run the rest: webmcp-eval run --resume {d}"
            errors.print(hint, markup=False, highlight=False, soft_wrap=True)
    return code


def compare_command(args: argparse.Namespace) -> int:
    """Paired per-case differences between two runs (two revisions, two models)."""
    from runner.results.compare import compare_runs
    from runner.results.run_results import build_results

    a, b = run_input(args.run_a), run_input(args.run_b)
    labels = labels_of(args.labels)
    result = compare_runs(
        build_results([a], labels), build_results([b], labels), label_a=args.run_a, label_b=args.run_b
    )
    console.print(result.text(), markup=False, highlight=False, soft_wrap=True)
    if not result.comparable:
        raise InvalidInput("compare: the runs share no kind of evidence; deterministic and agent runs are never paired")
    return EXIT_OK


def analyze_command(args: argparse.Namespace) -> int:
    """Failing trials grouped by failing assertion and message across runs; with --model, a hypothesis per group."""
    from runner.report.analysis_report import console_lines, html, markdown
    from runner.results.analysis import analyse
    from runner.trace import write_atomic

    try:
        runs = [(Path(d).name or d, Path(d), run_input(d).traces) for d in args.runs]
    except RunDirError as err:
        raise UsageError(str(err)) from None
    page = Path(args.html) if args.html else RunDir(args.runs[-1]).analysis_html
    for flag, target in (("--html", page), ("--markdown", Path(args.markdown) if args.markdown else None)):
        if target is not None and target.is_dir():  # before the work: a folder is never written over
            raise UsageError(f"{flag} {target}: is a directory; give a file path")
    analysis = analyse(runs)
    if args.model:
        from runner.judge.analyst import explain_all, make_analyst

        try:
            analyst = make_analyst(
                args.provider, args.model, args.api_base, args.api_key_env, args.cassette, args.cassette_dir
            )
        except ValueError as err:
            raise UsageError(f"invalid model options: {err}") from None
        asyncio.run(explain_all(analyst, analysis.groups))
    for line in console_lines(analysis):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    write_atomic(page, html(analysis, page.parent))
    console.print(f"analysis: {page}", markup=False, highlight=False)
    if args.markdown:
        target = Path(args.markdown)
        write_atomic(target, markdown(analysis, target.parent))
        console.print(f"markdown: {target}", markup=False, highlight=False)
    return EXIT_OK


def power_command(args: argparse.Namespace) -> int:
    """How many cases (and trials) a difference needs; the smallest difference a suite can see."""
    from runner.results.compare import power_analysis, power_text

    try:
        result = power_analysis(args.base_rate, args.delta, args.trials, args.cases, alpha=args.alpha, power=args.power)
        text = power_text(result)
    except ValueError as err:
        raise InvalidInput(f"invalid input: {err}") from None
    except (ZeroDivisionError, OverflowError):  # a difference so small that no number of cases shows it
        raise InvalidInput(
            f"invalid input: --delta {args.delta:g} is too small for any finite number of cases; give a larger one"
        ) from None
    console.print(text, markup=False, highlight=False, soft_wrap=True)
    return EXIT_OK
