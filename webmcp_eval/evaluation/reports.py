"""report, compare, analyze, power: the results of run directories, rebuilt, paired or explained."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from webmcp_eval.errors import EXIT_OK, InvalidInput, Outcome, UsageError
from webmcp_eval.evaluation.output import check_writable_dir, console, errors
from webmcp_eval.evaluation.reporting import (
    ReportFiles,
    check_outputs_apart,
    end_reports,
    labels_of,
    reporters_for,
    run_input,
    trend_of,
)
from webmcp_eval.judge.analyst import explain_all, make_analyst
from webmcp_eval.llm.config import ANALYST_FLAGS, ModelConfig, from_flags
from webmcp_eval.report.analysis_report import console_lines, html, markdown
from webmcp_eval.report.files import check_outputs
from webmcp_eval.report.reporters import IN_RUN_DIR
from webmcp_eval.results.analysis import analyse
from webmcp_eval.results.compare import compare_runs, power_analysis, power_text
from webmcp_eval.results.run_results import build_results
from webmcp_eval.results.shards import merge
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.rundir.plan import ShardError
from webmcp_eval.rundir.reading import control_dirs
from webmcp_eval.rundir.run_info import read_run_id
from webmcp_eval.trace import write_atomic


@dataclass(frozen=True)
class ReportRequest:
    """report: the run directories to rebuild the reports of (several: merged into one, each series apart)."""

    run_dirs: tuple[str, ...]
    out: str | None = None  # where a merged report goes (default traces/merged)
    outputs: ReportFiles = field(default_factory=ReportFiles)
    no_html: bool = False
    labels: str | None = None
    history: str | None = None  # where the earlier runs of the HTML report's trend are (default: beside the run)
    no_history: bool = False


@dataclass(frozen=True)
class CompareRequest:
    """compare: two run directories, run A and run B."""

    run_a: str
    run_b: str
    labels: str | None = None


@dataclass(frozen=True)
class AnalyzeRequest:
    """analyze: run directories oldest first, and the model that explains each group of failures (none: no model)."""

    runs: tuple[str, ...]
    provider: ModelConfig = from_flags(ANALYST_FLAGS, ModelConfig("openai", cassette_dir="cassettes/analyze"))
    markdown: str | None = None
    html: str | None = None


@dataclass(frozen=True)
class PowerRequest:
    """power: the starting case pass rate, and the difference to detect or the suite's size."""

    base_rate: float
    delta: float | None = None
    cases: int | None = None
    trials: int = 1
    alpha: float = 0.05
    power: float = 0.8


def report_command(request: ReportRequest) -> Outcome:
    """Rebuild the reports from traces alone; several run directories merge into one, each series apart."""
    request.outputs.check()
    run_dirs = list(request.run_dirs)
    trend = trend_of(Path(run_dirs[0]), request.history, request.no_history)
    inputs = [run_input(d, kept=True) for d in run_dirs]
    runs = inputs
    sharded = len(inputs) > 1 and any(r.plan and "shard" in r.plan for r in inputs)
    if sharded:
        try:
            runs = [merge(list(zip(run_dirs, inputs, strict=True)))]
        except ShardError as err:
            raise InvalidInput(f"cannot merge: {err}") from None
    merged = len(run_dirs) > 1
    out = Path(request.out or "traces/merged") if merged else Path(run_dirs[0])
    if merged:
        check_writable_dir(out, "--out")  # a file there is one line and exit 2, before anything is written
    dirs = {read_run_id(Path(d)): RunDir(d).trials for d in run_dirs}
    controls = [c for d in run_dirs for c in control_dirs(Path(d))]  # run --control: a series of its own
    runs = [*runs, *(run_input(str(c), kept=True) for c in controls)]
    dirs |= {read_run_id(c): RunDir(c).trials for c in controls}
    if sharded:  # shards may share one --run-id: each trial's own directory, never a guess by run id
        for d, run in zip(run_dirs, inputs, strict=True):
            dirs |= {f"{t.run_id}/{t.trial_id}": RunDir(d).trials for t in run.traces}
    defaults: tuple[str, ...] = (
        IN_RUN_DIR if sharded else ("html",) if merged and "html" not in request.outputs.paths else ()
    )
    if request.no_html:  # a merge of very many trials: the HTML would be ~40 KB per trial, screenshots aside
        defaults = tuple(d for d in defaults if d != "html")
    reads = [Path(d) for d in run_dirs]
    trend = None if merged else trend  # a merged report is no one run of a folder: no trend
    reporters = reporters_for(request.outputs, out, defaults, reads=reads, trace_dirs=dirs, history=trend)
    code = end_reports(reporters, build_results(runs, labels_of(request.labels)))
    if len(inputs) == 1 and inputs[0].plan and "shard" in inputs[0].plan:
        shard = inputs[0].plan["shard"]
        index, count, whole = shard["index"], shard["count"], shard["planned_trials"]
        note = f"{run_dirs[0]} is shard {index}/{count} of a {whole}-trial plan: merge all {count} with report"
        errors.print(note, markup=False, highlight=False, soft_wrap=True)
    for d, run in zip(run_dirs, inputs, strict=True):
        traced = {t.trial_id for t in run.traces}
        if run.plan and any(t["trial_id"] not in traced for t in run.plan["trials"]):
            hint = f"{d} is incomplete; run the rest: webmcp-eval run --resume {d}"
            errors.print(hint, markup=False, highlight=False, soft_wrap=True)
    return Outcome(code)


def compare_command(request: CompareRequest) -> Outcome:
    """Paired per-case differences between two runs (two revisions, two models)."""
    a, b = run_input(request.run_a, kept=True), run_input(request.run_b, kept=True)
    labels = labels_of(request.labels)
    result = compare_runs(
        build_results([a], labels), build_results([b], labels), label_a=request.run_a, label_b=request.run_b
    )
    console.print(result.text(), markup=False, highlight=False, soft_wrap=True)
    if not result.comparable:
        raise InvalidInput("compare: the runs share no kind of evidence; deterministic and agent runs are never paired")
    return Outcome(EXIT_OK)


def analyze_command(request: AnalyzeRequest) -> Outcome:
    """Failing trials grouped by failing assertion and message across runs; with --model, a hypothesis per group."""
    runs = [(Path(d).name or d, Path(d), run_input(d).traces) for d in request.runs]  # RunDirError, as report's
    page = Path(request.html) if request.html else RunDir(request.runs[-1]).analysis_html
    # before the work: never a folder, a pipe, a file of a run it reads (a trace, run.json) or one file for both
    outputs = [("--html", page), ("--markdown", Path(request.markdown) if request.markdown else None)]
    check_outputs(outputs)
    check_outputs_apart([p for _, p in outputs if p is not None], [Path(d) for d in request.runs])
    analysis = analyse(runs)
    if request.provider.model:
        try:
            analyst = make_analyst(request.provider)
        except ValueError as err:
            raise UsageError(f"invalid model options: {err}") from None
        asyncio.run(explain_all(analyst, analysis.groups))
    for line in console_lines(analysis):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    write_atomic(page, html(analysis, page.parent))
    console.print(f"analysis: {page}", markup=False, highlight=False)
    if request.markdown:
        target = Path(request.markdown)
        write_atomic(target, markdown(analysis, target.parent))
        console.print(f"markdown: {target}", markup=False, highlight=False)
    return Outcome(EXIT_OK)


def power_command(request: PowerRequest) -> Outcome:
    """How many cases (and trials) a difference needs; the smallest difference a suite can see."""
    r = request
    try:
        result = power_analysis(r.base_rate, r.delta, r.trials, r.cases, alpha=r.alpha, power=r.power)
        text = power_text(result)
    except ValueError as err:
        raise InvalidInput(f"invalid input: {err}") from None
    except (ZeroDivisionError, OverflowError):  # a difference so small that no number of cases shows it
        raise InvalidInput(
            f"invalid input: --delta {r.delta:g} is too small for any finite number of cases; give a larger one"
        ) from None
    console.print(text, markup=False, highlight=False, soft_wrap=True)
    return Outcome(EXIT_OK)
