"""Commands over run directories: report, replay, compare, analyze, rejudge, power, label, calibrate."""

from __future__ import annotations

import argparse
import asyncio
from datetime import datetime
from pathlib import Path
from typing import Any

from runner.cli.common import (
    LABELS_SERIES_HELP,
    MARKDOWN_HELP,
    NON_NEGATIVE,
    POSITIVE,
    SHARE,
    base_url_type,
)
from runner.evaluation.loading import (
    default_suite_dir,
    load_cases,
)
from runner.evaluation.output import (
    EXIT_FAILED,
    EXIT_INVALID,
    EXIT_OK,
    UsageError,
    check_writable_dir,
    console,
    errors,
    report_problems,
    say,
)
from runner.evaluation.players import grader_of
from runner.evaluation.reporting import end_reports, exit_for, labels_of, labels_path, reporters_for, run_input
from runner.rundir.reading import baseline_dirs
from runner.rundir.run_info import read_run_id


def _cmd_report(args: argparse.Namespace) -> int:
    """Rebuild the reports from traces alone; several run directories merge into one, each series apart."""
    from runner.results.run_results import build_results
    from runner.results.shards import merge
    from runner.rundir.plan import ShardError

    try:
        inputs = [run_input(d) for d in args.run_dirs]
    except SystemExit as err:
        say(str(err))
        return EXIT_INVALID
    runs = inputs
    sharded = len(inputs) > 1 and any(r.plan and "shard" in r.plan for r in inputs)
    if sharded:
        try:
            runs = [merge(list(zip(args.run_dirs, inputs, strict=True)))]
        except ShardError as err:
            errors.print(f"cannot merge: {err}", markup=False, highlight=False, soft_wrap=True)
            return EXIT_INVALID
    merged = len(args.run_dirs) > 1
    out = Path(args.out or "traces/merged") if merged else Path(args.run_dirs[0])
    if merged:
        check_writable_dir(out, "--out")  # a file there is one line and exit 2, before anything is written
    dirs = {read_run_id(Path(d)): Path(d) / "trials" for d in args.run_dirs}
    baselines = [b for d in args.run_dirs for b in baseline_dirs(Path(d))]  # run --baseline: a series of its own
    runs = [*runs, *(run_input(str(b)) for b in baselines)]
    dirs |= {read_run_id(b): b / "trials" for b in baselines}
    if sharded:  # shards may share one --run-id: each trial's own directory, never a guess by run id
        for d, run in zip(args.run_dirs, inputs, strict=True):
            dirs |= {f"{t.run_id}/{t.trial_id}": Path(d) / "trials" for t in run.traces}
    defaults = ("json", "junit", "html") if sharded else ("html",) if merged and not args.html else ()
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


def _cmd_replay(args: argparse.Namespace) -> int:
    """Re-run recorded traces against their fixtures (offline) or a live deployment, and compare."""
    from runner.play.fixture_store import FixtureStore
    from runner.play.replay_trace import ReplayOutcome, TraceAgent, case_of, result_diffs
    from runner.play.run import RunOptions, run_suite
    from runner.report.writers import VERDICT_STYLE
    from runner.trace import read_trace

    if args.live and not args.base_url:
        errors.print("--live needs --base-url URL (the deployment to compare with)")
        return EXIT_INVALID
    out = Path(args.out)
    worst = EXIT_OK
    for path in map(Path, args.traces):
        try:
            recorded = read_trace(path)
            loaded = case_of(recorded)
        except (OSError, ValueError) as err:
            why = str(err).removeprefix(f"{path}: ")  # read_trace names the file already
            errors.print(f"{path}: cannot replay: {why}", markup=False)
            return EXIT_INVALID
        fixtures_dir = Path(args.fixtures) if args.fixtures else path.resolve().parent.parent / "fixtures"
        options = RunOptions(
            out_root=out,
            run_id=recorded.trial_id,
            base_url=args.base_url if args.live else None,
            network_mode="live" if args.live else "replay",
            fixtures=None if args.live else FixtureStore(fixtures_dir, "replay", max_age_days=None),
            agent_factory=lambda recorded=recorded: TraceAgent(recorded),
            chromium=args.chromium,
            browser_context=_recorded_context(recorded),
        )
        if not args.live and not options.fixtures.path_for(recorded.case_id).is_file():
            errors.print(f"{path}: no fixture at {options.fixtures.path_for(recorded.case_id)} (use --fixtures DIR)")
            return EXIT_INVALID
        (replayed,) = asyncio.run(run_suite([loaded], options)).traces
        outcome = ReplayOutcome(recorded, replayed, result_diffs(recorded, replayed))
        written = outcome.write(out)
        style = VERDICT_STYLE[replayed.verdict]
        same = "same as recorded" if outcome.same_verdict else f"recorded: {recorded.verdict}"
        console.print(f"[{style}]{replayed.verdict}[/] {recorded.trial_id} ({same}) → {written}", highlight=False)
        if outcome.diffs:
            console.print("  tool results differ from the recording:")
            for line in outcome.diffs:
                console.print(f"  {line}", markup=False, highlight=False)
        else:
            console.print(f"  all {len(replayed.calls)} tool result(s) as recorded", highlight=False)
        if replayed.verdict != "passed":
            console.print(f"  why: {replayed.verdict_reason}", markup=False, highlight=False)
        worst = max(worst, exit_for([replayed]))
    return worst


def _recorded_context(recorded):  # noqa: ANN001, ANN202 - Trace -> BrowserContextSettings
    """The time zone and locale a recorded trial was played with (the defaults for traces older than that)."""
    from runner.suite.browser_context import DEFAULT_LOCALE, DEFAULT_TIMEZONE, BrowserContextSettings

    return BrowserContextSettings(recorded.timezone_id or DEFAULT_TIMEZONE, recorded.locale or DEFAULT_LOCALE)


def _cmd_compare(args: argparse.Namespace) -> int:
    """Paired per-case differences between two runs (two revisions, two models)."""
    from runner.results.compare import compare_runs
    from runner.results.run_results import build_results

    try:
        a, b = run_input(args.run_a), run_input(args.run_b)
    except SystemExit as err:
        errors.print(str(err), markup=False, highlight=False)
        return EXIT_INVALID
    labels = labels_of(args.labels)
    result = compare_runs(
        build_results([a], labels), build_results([b], labels), label_a=args.run_a, label_b=args.run_b
    )
    console.print(result.text(), markup=False, highlight=False, soft_wrap=True)
    if not result.comparable:
        errors.print("compare: the runs share no kind of evidence; deterministic and agent runs are never paired")
        return EXIT_INVALID
    return EXIT_OK


def _cmd_analyze(args: argparse.Namespace) -> int:
    """Failing trials grouped by failing assertion and message across runs; with --model, a hypothesis per group."""
    from runner.report.analysis_report import console_lines, html, markdown
    from runner.results.analysis import analyse
    from runner.trace import write_atomic

    try:
        runs = [(Path(d).name or d, Path(d), run_input(d).traces) for d in args.runs]
    except SystemExit as err:
        raise UsageError(str(err)) from None
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
    page = Path(args.html) if args.html else Path(args.runs[-1]) / "analysis.html"
    for line in console_lines(analysis):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    write_atomic(page, html(analysis, page.parent))
    console.print(f"analysis: {page}", markup=False, highlight=False)
    if args.markdown:
        target = Path(args.markdown)
        write_atomic(target, markdown(analysis, target.parent))
        console.print(f"markdown: {target}", markup=False, highlight=False)
    return EXIT_OK


def _cmd_rejudge(args: argparse.Namespace) -> int:
    """Judge a run's stored traces again with the current case files and checks, into a new run directory."""
    from runner.judge.rejudge import change_of, judged_again, rejudge, unanswerable, write_run
    from runner.results.run_results import RunInput, build_results

    src = Path(args.run_dir)
    try:
        runs = [(src, run_input(args.run_dir)), *((b, run_input(str(b))) for b in baseline_dirs(src))]
    except SystemExit as err:
        say(f"webmcp-eval rejudge: {err}")
        return EXIT_INVALID
    loaded = load_cases([args.suite] if args.suite else [], None, args.suite)
    if isinstance(loaded, int):
        return loaded
    cases, problems, note, _ = loaded
    if problems:
        report_problems(problems)
        say(f"nothing re-judged: fix the cases above ({note})")
        return EXIT_INVALID
    out = _rejudged_dir(args, src)
    suite_name = args.suite or str(default_suite_dir())
    by_id = {lc.case.id: lc for lc in cases}
    refused: list[str] = []
    new_runs = []
    for run_dir, run in runs:
        where = out if run_dir == src else out / f"{out.name}-baseline"
        new = []
        for t in run.traces:
            lc = by_id.get(t.case_id)
            why = f"case {t.case_id} is not in the suite {suite_name}" if lc is None else ""
            if lc is not None and judged_again(t):
                why = unanswerable(lc.case, t)
            if why:
                refused.append(f"{run_dir / 'trials' / (t.trial_id + '.json')}: {why}")
            case, file = (lc.case, lc.file) if lc else (None, t.case_file)
            new.append(rejudge(t, case, file, where.name, why, live_rules="no catalog" in note))
        new_runs.append((run_dir, run, where, new))
    if refused and not args.keep_going:
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        say(f"webmcp-eval rejudge: {refused[0]}{more}; nothing written (--keep-going writes such trials as not_run)")
        return EXIT_INVALID
    for run_dir, run, where, new in new_runs:
        write_run(run_dir, where, new, run.plan)
    console.print(f"re-judged {sum(len(n) for *_, n in new_runs)} trial(s) of {src} against {note}", highlight=False)
    inputs = [
        RunInput(new, {**run.plan, "run_id": where.name} if run.plan else None, where.name)
        for _, run, where, new in new_runs
    ]
    dirs = {where.name: where / "trials" for _, _, where, _ in new_runs}
    code = end_reports(reporters_for(args, out, ("json", "junit", "html"), trace_dirs=dirs), build_results(inputs))
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


def _print_changes(changes: list, total: int, out: Path) -> None:  # noqa: ANN001 - runner.judge.rejudge.Change
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


def _cmd_power(args: argparse.Namespace) -> int:
    """How many cases (and trials) a difference needs; the smallest difference a suite can see."""
    from runner.results.compare import power_analysis, power_text

    try:
        result = power_analysis(args.baseline, args.delta, args.trials, args.cases, alpha=args.alpha, power=args.power)
        text = power_text(result)
    except ValueError as err:
        say(f"invalid input: {err}")
        return EXIT_INVALID
    except (ZeroDivisionError, OverflowError):  # a difference so small that no number of cases shows it
        say(f"invalid input: --delta {args.delta:g} is too small for any finite number of cases; give a larger one")
        return EXIT_INVALID
    console.print(text, markup=False, highlight=False, soft_wrap=True)
    return EXIT_OK


def _cmd_label(args: argparse.Namespace) -> int:
    """Walk failing and sampled trials in the terminal; people's pass/fail per rubric criterion."""
    from runner.judge.labels import LabelsFile, label_trials, trials_to_label

    path = labels_path(args)
    try:
        labels = LabelsFile.load(path)
        traces = [t for d in args.run_dirs for t in run_input(d).traces]
    except (ValueError, SystemExit) as err:
        errors.print(str(err), markup=False)
        return EXIT_INVALID
    if args.import_file:
        return _import_labels(args, traces, labels, path)
    chosen = trials_to_label(traces, args.sample, args.seed)
    if not chosen:
        errors.print("no trial with rubric criteria to label in " + " ".join(args.run_dirs))
        return EXIT_INVALID
    console.print(f"{len(chosen)} trial(s) to label (failing ones first, then a sample); labels go to {path}")
    try:
        done = label_trials(chosen, labels, path, input, lambda text: console.print(text, markup=False), args.labeller)
    except (EOFError, KeyboardInterrupt):
        done = None
    console.print(f"labels saved in {path}" + (f" ({done} trial(s) labelled now)" if done is not None else ""))
    return EXIT_OK


def _import_labels(args: argparse.Namespace, traces: list, labels: Any, path: Path) -> int:
    """label RUN_DIR… --import FILE: merge labels made in the HTML report; with a problem, merge nothing."""
    from runner.judge.labels import LabelsImport, import_labels

    try:
        source = LabelsImport.read(Path(args.import_file))
    except ValueError as err:
        errors.print(str(err), markup=False, highlight=False)
        return EXIT_INVALID
    merged, problems = import_labels(source, traces, labels, args.import_file)
    for line in problems:
        errors.print(line, markup=False, highlight=False, soft_wrap=True)
    if problems:
        errors.print(f"nothing merged into {path}", markup=False, highlight=False)
        return EXIT_INVALID
    labels.save(path)
    console.print(f"{merged} labelled trial(s) merged into {path}", markup=False, highlight=False)
    return EXIT_OK


def _cmd_calibrate(args: argparse.Namespace) -> int:
    """Agreement of model graders with people's labels; re-grades the labelled trials with --grader."""
    from runner.judge.labels import LabelsFile, calibrate, calibration_text, graders_in

    path = labels_path(args)
    try:
        labels = LabelsFile.load(path)
        grader = grader_of(args)
    except ValueError as err:
        errors.print(str(err), markup=False)
        return EXIT_INVALID
    if not labels.trials:
        errors.print(f"no labels in {path}: label trials first (webmcp-eval label RUN_DIR)")
        return EXIT_INVALID
    if grader is not None:
        from runner.judge.grader import regrade

        asyncio.run(regrade(grader, labels))
        labels.save(path)
    ids = [grader.id] if grader is not None else graders_in(labels)
    if not ids:
        errors.print(f"{path}: no model grader has judged the labelled trials; calibrate with --grader")
        return EXIT_INVALID
    n = sum(len(t.labels) for t in labels.trials)
    console.print(
        f"{path}: {len(labels.trials)} labelled trial(s), {n} labelled criteria; suite threshold "
        f"kappa ≥ {labels.min_kappa:g} over ≥ {labels.min_labels} labels",
        highlight=False,
    )
    results = [calibrate(labels, g) for g in ids]
    for cal in results:
        console.print(calibration_text(cal), markup=False, highlight=False)
    return EXIT_OK if all(c.gates for c in results) else EXIT_FAILED


def add_report(sub: argparse._SubParsersAction) -> None:
    rep = sub.add_parser("report", help="rebuild reports from the traces of one or more run directories")
    rep.add_argument(
        "run_dirs",
        nargs="+",
        help="run directories (e.g. traces/<run-id>), or all shards of one plan (run --shard i/n): merged into one run",
    )
    rep.add_argument("--out", help="where a merged report goes (default traces/merged)")
    rep.add_argument("--junit", help="write JUnit XML here")
    rep.add_argument("--json", help="write the JSON summary here")
    rep.add_argument("--html", help="write the HTML report here (default: <run dir>/report.html when merging)")
    rep.add_argument(
        "--no-html",
        action="store_true",
        help="no default report.html (a merge of very many trials: docs/running.md, Sizing)",
    )
    rep.add_argument("--markdown", metavar="FILE", help=MARKDOWN_HELP)
    rep.add_argument("--labels", metavar="FILE", help=LABELS_SERIES_HELP)
    rep.set_defaults(func=_cmd_report)


def add_replay(sub: argparse._SubParsersAction) -> None:
    rp = sub.add_parser("replay", help="re-run recorded traces offline against their fixtures, and compare")
    rp.add_argument("traces", nargs="+", help="trace files (…/trials/<CASE>.t1.json)")
    rp.add_argument("--fixtures", help="fixture directory (default: the fixtures/ beside the trace's trials/)")
    rp.add_argument("--live", action="store_true", help="against a live deployment instead (needs --base-url)")
    rp.add_argument("--base-url", type=base_url_type, help="the deployment for --live")
    rp.add_argument("--out", default="traces/replays", help="where replay results go (default traces/replays)")
    rp.add_argument("--chromium", help="the Chromium binary")
    rp.set_defaults(func=_cmd_replay)


def add_compare(sub: argparse._SubParsersAction) -> None:
    cmp_ = sub.add_parser("compare", help="paired per-case differences between two runs, with a 95%% interval")
    cmp_.add_argument("run_a", help="the baseline run directory")
    cmp_.add_argument("run_b", help="the run to compare with it")
    cmp_.add_argument("--labels", metavar="FILE", help=LABELS_SERIES_HELP)
    cmp_.set_defaults(func=_cmd_compare)


def add_analyze(sub: argparse._SubParsersAction) -> None:
    ana = sub.add_parser(
        "analyze",
        help="why runs failed: failing trials grouped by failing assertion and message, across runs",
        description="Group the failing trials of one or more runs (oldest first) by failing assertion and "
        "message; say which cases fail in every run, in some runs or newly, with links to the traces. With "
        "--model, a model reads each group's traces and says which hypothesis they support (the agent's "
        "logic, the tool or site, an assertion too strict), quoting the trace fields it used. Never changes "
        "a verdict. Writes analysis.html in the last run directory (or --html FILE).",
    )
    ana.add_argument("runs", nargs="+", metavar="RUN", help="run directories, oldest first")
    ana.add_argument("--model", help="explain each group with this model")
    ana.add_argument("--provider", choices=["openai", "anthropic"], default="openai", help="the model's API")
    ana.add_argument("--api-base", help="the model's endpoint (OpenAI-compatible or Anthropic)")
    ana.add_argument("--api-key-env", help="environment variable with the model's key")
    ana.add_argument(
        "--cassette", choices=["off", "record", "replay"], default="off", help="record the model's answers, or replay"
    )
    ana.add_argument("--cassette-dir", default="cassettes/analyze", help="where they live (cassettes/analyze)")
    ana.add_argument("--markdown", metavar="FILE", help="also write the analysis as Markdown")
    ana.add_argument("--html", metavar="FILE", help="the HTML page (default: analysis.html in the last run)")
    ana.set_defaults(func=_cmd_analyze)


def add_rejudge(sub: argparse._SubParsersAction) -> None:
    rj = sub.add_parser(
        "rejudge",
        help="judge a run's stored traces again with the current case files and checks, into a new run",
        description="Judge every trace of RUN again with the cases as they are now (--suite DIR, default "
        "cases/) and the current checks; the evidence is unchanged. Writes a new run directory (-o, default "
        "RUN-rejudged-<time> beside RUN; RUN is never written) with summary.json, junit.xml and report.html, "
        "and prints the verdict changes. A trace whose case is not in the suite, or whose case now plays "
        "differently or asks for what the trial never observed, stops it (exit 2, nothing written) unless "
        "--keep-going writes such trials as not_run with the reason. Exit codes as report.",
    )
    rj.add_argument("run_dir", help="the run directory whose traces to judge again (traces/<run-id>)")
    rj.add_argument("--suite", metavar="DIR", help="the suite folder whose cases judge them (default cases/)")
    rj.add_argument("-o", "--output", metavar="NEWRUN", help="the new run directory (default RUN-rejudged-<time>)")
    rj.add_argument(
        "--keep-going", action="store_true", help="write traces the current cases cannot judge as not_run, with why"
    )
    rj.add_argument("--junit", help="also write JUnit XML here")
    rj.add_argument("--json", help="also write the JSON summary here")
    rj.add_argument("--markdown", metavar="FILE", help=MARKDOWN_HELP)
    rj.set_defaults(func=_cmd_rejudge)


def add_power(sub: argparse._SubParsersAction) -> None:
    pw = sub.add_parser("power", help="cases and trials needed to detect a difference; the smallest detectable one")
    pw.add_argument("--baseline", type=SHARE, required=True, help="the baseline case pass rate, e.g. 0.7")
    pw.add_argument("--delta", type=SHARE, help="the difference to detect, e.g. 0.1")
    pw.add_argument("--cases", type=POSITIVE, help="the suite's size: report the smallest detectable difference")
    pw.add_argument("--trials", type=POSITIVE, default=1, help="trials per case (default 1)")
    pw.add_argument("--alpha", type=SHARE, default=0.05, help="significance level (default 0.05)")
    pw.add_argument("--power", type=SHARE, default=0.8, help="wanted power (default 0.8)")
    pw.set_defaults(func=_cmd_power)


def add_label(sub: argparse._SubParsersAction) -> None:
    lab = sub.add_parser(
        "label",
        help="label trials against their rubric in the terminal (failing ones, then a sample)",
        description="Walk the failing trials with rubric criteria, then a seeded sample of the others, "
        "and ask pass/fail per criterion; labels are saved after every trial into the labels file beside "
        "the suite. Trials already labelled are skipped.",
    )
    lab.add_argument("run_dirs", nargs="+", help="run directories (traces/<run-id>)")
    lab.add_argument("--labels", help="the labels file (default: labels.json beside the cases)")
    lab.add_argument(
        "--sample", type=NON_NEGATIVE, default=5, help="passing trials to sample besides the failing ones (5)"
    )
    lab.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    lab.add_argument("--labeller", default="", help="who labels (kept with each label)")
    lab.add_argument(
        "--import",
        dest="import_file",
        metavar="FILE",
        help="merge labels made in the HTML report (its download, or its text box saved to a file) instead of asking",
    )
    lab.set_defaults(func=_cmd_label)


def add_calibrate(sub: argparse._SubParsersAction) -> None:
    cal = sub.add_parser(
        "calibrate",
        help="agreement of a model grader with people's labels: Cohen's kappa, confusion matrix, per criterion",
        description="Without --grader: the agreement of every model grader whose verdicts the labels file "
        "holds. With --grader: re-grade the labelled trials with it (cassettes work as in run) and keep its "
        "verdicts in the labels file. Exit 0 when every grader shown may gate a run (kappa at or above the "
        "suite's min_kappa over enough labels), 1 when one may not, 2 without labels.",
    )
    cal.add_argument("--labels", help="the labels file (default: labels.json beside the cases)")
    cal.add_argument("--grader", choices=["openai", "anthropic"], help="re-grade the labelled trials with it")
    cal.add_argument("--grader-model", help="the grader's model name")
    cal.add_argument("--grader-api-base", help="the grader's endpoint")
    cal.add_argument("--grader-api-key-env", help="environment variable with the grader's key")
    cal.add_argument("--grader-cassette", choices=["off", "record", "replay"], default="off", help="grader cassettes")
    cal.add_argument("--grader-cassette-dir", default="cassettes/grader", help="where grader cassettes live")
    cal.add_argument("--prices", help="YAML/JSON price table for the grader's cost")
    cal.set_defaults(func=_cmd_calibrate)
