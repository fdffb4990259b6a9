"""webmcp-eval: can an agent use this site correctly, safely and repeatably?

Runs eval cases against a website that exposes WebMCP tools, in a real
Chromium through a counting proxy, and says passed, failed or not_run for
every trial, with a trace of the evidence.

Exit codes: 0 every trial passed; 1 some trial failed; 2 invalid input or
usage (a broken case file, an unknown option); 3 some trial could not run
(harness error, crashed browser, missing site hook) and none failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from rich.console import Console

EXIT_OK, EXIT_FAILED, EXIT_INVALID, EXIT_NOT_RUN = 0, 1, 2, 3
DEFAULT_CASES = "cases"
MARKDOWN_HELP = "also write a Markdown summary here (a pull-request comment, $GITHUB_STEP_SUMMARY)"
# Wide enough for the report when output is a file or a CI log (rich would use 80).
console = Console(stderr=False, width=None if sys.stdout.isatty() else 160)
errors = Console(stderr=True, width=None if sys.stderr.isatty() else 160)


def _suite_dir() -> Path:
    """./cases when run from a checkout, else the cases shipped beside the package."""
    here = Path(DEFAULT_CASES)
    return here if here.is_dir() else Path(__file__).resolve().parent.parent / DEFAULT_CASES


def _load(paths: list[str], catalog: str | None) -> tuple[list, list, str] | int:
    """Load and validate cases exactly as ``validate`` does: (cases, problems, which catalog), or an exit code.

    ``run``, ``record`` and ``validate`` all come through here, before any browser starts.
    """
    from runner.loader import case_files
    from runner.validate import CatalogError, find_catalog, load_suite

    paths = paths or [str(_suite_dir())]
    if not case_files(paths):
        _say(f"no case files in {' '.join(paths)} (cases are *.yaml / *.yml files)")
        return EXIT_INVALID
    try:
        suite_catalog, note = find_catalog(paths, catalog)
    except CatalogError as err:
        _say(str(err))
        return EXIT_INVALID
    whole_suite = any(Path(p).is_dir() for p in paths)
    loaded, problems = load_suite(paths, suite_catalog, whole_suite)
    return loaded, problems, note


def _say(line: str) -> None:
    """One plain line on stderr, never wrapped, never read as markup."""
    errors.print(line, markup=False, highlight=False, soft_wrap=True)


def _report_problems(problems: list) -> None:
    for p in problems:
        _say(str(p))
    errors.print(f"[bold red]{len(problems)} problem(s)[/]")


# ---- run ---------------------------------------------------------------------


def _cmd_run(args: argparse.Namespace) -> int:
    from runner.results import RunInput, RunPlan, build_results
    from runner.run import RunOptions, new_run_id, run_suite, select_cases
    from runner.site import load_site_config

    case_args = [a for a in args.cases if Path(a).exists()]
    patterns = [a for a in args.cases if not Path(a).exists()]
    suite = _load(case_args, args.catalog)
    if isinstance(suite, int):
        return suite
    loaded, problems, catalog_note = suite
    skipped: list[str] = []
    if problems:
        _report_problems(problems)
        if not args.skip_invalid:
            _say(f"nothing ran: fix the cases above, or pass --skip-invalid to run the rest ({catalog_note})")
            return EXIT_INVALID
        loaded, skipped = _skip_invalid(loaded, problems, patterns, args)
    elif catalog_note.startswith("no catalog"):
        _say(f"note: {catalog_note}")
    chosen = select_cases(loaded, patterns, args.grep, args.behaviour or [])
    if not chosen:
        errors.print(
            "No case matches the selection " + " ".join(args.cases + ([f"--grep {args.grep}"] if args.grep else []))
        )
        return EXIT_INVALID
    site_config = load_site_config(Path(args.site_config), args.base_url) if args.site_config else None
    mode = args.network
    if mode != "live" and args.no_proxy:
        errors.print(f"--network {mode} needs the proxy; drop --no-proxy")
        return EXIT_INVALID
    fixtures = None
    if mode != "live":
        from runner.fixtures import FixtureStore

        fixtures = FixtureStore(Path(args.fixtures), mode, max_age_days=args.max_fixture_age)
    try:
        agent_factory = _agent_factory(args)
    except ValueError as err:
        errors.print(f"invalid agent options: {err}", markup=False)
        return EXIT_INVALID
    options = RunOptions(
        agent_factory=agent_factory,
        out_root=Path(args.out),
        run_id=args.run_id or new_run_id(),
        trials=args.trials,
        workers=args.workers,
        headed=args.headed,
        slowmo=args.slowmo,
        hold_ms=args.hold_ms,
        base_url=args.base_url,
        site_config=site_config,
        proxy=not args.no_proxy,
        chromium=args.chromium,
        network_mode=mode,
        fixtures=fixtures,
        playwright_trace=args.trace,
    )
    from runner.trial import trial_id_for

    out_dir = options.out_root / options.run_id
    who = {
        "agent": args.agent,
        "model": args.model,
        "evidence_kind": "deterministic" if args.agent == "reference" else "agent",
    }
    plan = RunPlan.of(options.run_id, [(lc.case.id, lc.file) for lc in chosen], args.trials, trial_id_for, **who)
    run_info = {"run_id": options.run_id}  # summary.json's header; the site's version joins it after the run
    reporters = _reporters(args, out_dir, ("json", "junit", "html"), progress=True, json_extra=run_info)
    reporters.begin(plan)
    console.print(
        f"webmcp-eval: {len(chosen)} case(s) × {args.trials} trial(s), {args.workers} worker(s), "
        f"{'headed' if args.headed else 'headless'}, "
        f"site {args.base_url or 'embedded demo site (test mode)'}"
    )
    from runner.browser import ChromiumNotFound

    try:
        result = asyncio.run(run_suite(chosen, options, on_trial=reporters.trial_done))
    except ChromiumNotFound as err:
        errors.print(str(err), markup=False)
        return EXIT_NOT_RUN
    except KeyboardInterrupt:
        errors.print("interrupted: the traces written so far are complete and kept")
        return 130
    run_info["site"] = result.site_info
    try:
        plan = RunPlan.read(out_dir) or plan
    except ValueError as err:
        errors.print(f"warning: {err}; the plan of this invocation is used", markup=False, highlight=False)
    code = _end_reports(reporters, build_results([RunInput(result.traces, plan)]))
    if fixtures is not None:
        _print_fixture_news(fixtures)
    if skipped:
        console.print(f"{len(skipped)} invalid case file(s) skipped, not run (--skip-invalid)", highlight=False)
    return EXIT_NOT_RUN if skipped and code == EXIT_OK else code


def _skip_invalid(loaded: list, problems: list, patterns: list[str], args: argparse.Namespace) -> tuple[list, list]:
    """--skip-invalid: the valid cases, and the invalid files this selection would have run (its not-run ones)."""
    from runner.run import select_cases
    from runner.validate import split_valid

    valid, invalid_files = split_valid(loaded, problems)
    skipped = invalid_files
    if patterns or args.grep or args.behaviour:
        # A file that did not even load has no id: only a run of everything counts it.
        invalid = [lc for lc in loaded if lc.file in invalid_files]
        skipped = [lc.file for lc in select_cases(invalid, patterns, args.grep, args.behaviour or [])]
    for file in skipped:
        _say(f"skipped (invalid, not run): {file}")
    return valid, skipped


def _agent_factory(args: argparse.Namespace):  # noqa: ANN202 - Callable[[], Agent]
    """The reference agent, or a model agent (OpenAI-compatible or Anthropic) from the flags."""
    from runner.agents import ReferenceAgent

    if args.agent == "reference":
        return ReferenceAgent
    if not args.model:
        raise ValueError(f"--agent {args.agent} needs --model NAME")
    from runner.model_agent import make_agent_factory

    rerecord = f"webmcp-eval run {{case}} --agent {args.agent} --model {args.model}"
    if args.api_base:
        rerecord += f" --api-base {args.api_base}"
    rerecord += f" --model-cassette record --cassette-dir {args.cassette_dir}"
    return make_agent_factory(
        args.agent,
        args.model,
        api_base=args.api_base,
        api_key_env=args.api_key_env,
        cassette_mode=args.model_cassette,
        cassette_dir=Path(args.cassette_dir),
        max_steps=args.max_steps,
        max_seconds=args.max_seconds,
        max_tokens=args.max_tokens,
        prices=args.prices,
        rerecord_command=rerecord,
    )


def read_run_id(run_dir: Path) -> str:
    info = run_dir / "run.json"
    try:
        return json.loads(info.read_text(encoding="utf-8"))["run_id"]
    except (OSError, ValueError, KeyError):
        return run_dir.name


def _run_input(run_dir: str):  # noqa: ANN202 - runner.results.RunInput
    """A run directory's traces and plan; SystemExit with one line when it has neither or they are unreadable."""
    from runner.results import RunInput, RunPlan
    from runner.trace import read_traces

    path = Path(run_dir)
    if not path.is_dir():
        raise SystemExit(f"{run_dir}: not a run directory")
    try:
        plan = RunPlan.read(path)
        found = read_traces(path)
    except (OSError, ValueError) as err:
        raise SystemExit(f"{run_dir}: {str(err).splitlines()[0]}") from err
    if not found and plan is None:
        raise SystemExit(f"{run_dir}: no traces (expected {path / 'trials'}/*.json)")
    return RunInput(found, plan, run_id=read_run_id(path) if plan is None else plan.run_id)


def _reporters(
    args: argparse.Namespace,
    out_dir: Path,
    defaults: tuple[str, ...],
    *,
    progress: bool = False,
    json_extra: dict | None = None,
    trace_dirs: dict | None = None,
):  # noqa: ANN202 - runner.reporters.Reporters
    """The one way reporters are made: ``defaults`` (json, junit, html) go into out_dir, plus what the flags ask."""
    from runner.reporters import ReportTargets, build_reporters

    default_path = {"json": out_dir / "summary.json", "junit": out_dir / "junit.xml", "html": out_dir / "report.html"}

    def paths(name: str) -> list[Path]:
        flag = getattr(args, name, None)
        return ([default_path[name]] if name in defaults else []) + ([Path(flag)] if flag else [])

    return build_reporters(
        ReportTargets(
            console=console,
            progress=progress,
            out_dir=out_dir,
            json=paths("json"),
            junit=paths("junit"),
            html=paths("html"),
            markdown=[Path(args.markdown)] if getattr(args, "markdown", None) else [],
            json_extra=json_extra if json_extra is not None else {},
            trace_dirs=trace_dirs,
        )
    )


def _end_reports(reporters, results) -> int:  # noqa: ANN001 - runner.reporters.Reporters, runner.results.Results
    """Render every view of the results; the exit code says what the results (and the writing) came to."""
    problems = reporters.end(results)
    for line in problems:
        errors.print(line, markup=False, highlight=False)
    if problems:
        return EXIT_INVALID
    counts = results.counts
    return EXIT_FAILED if counts.failed else EXIT_NOT_RUN if counts.not_run or counts.missing else EXIT_OK


def _cmd_compare(args: argparse.Namespace) -> int:
    """Paired per-case differences between two runs (two revisions, two models)."""
    from runner.compare import compare_runs
    from runner.results import build_results

    try:
        a, b = _run_input(args.run_a), _run_input(args.run_b)
    except SystemExit as err:
        errors.print(str(err), markup=False, highlight=False)
        return EXIT_INVALID
    result = compare_runs(build_results([a]), build_results([b]), label_a=args.run_a, label_b=args.run_b)
    console.print(result.text(), markup=False, highlight=False, soft_wrap=True)
    if not result.comparable:
        errors.print("compare: the runs share no kind of evidence; deterministic and agent runs are never paired")
        return EXIT_INVALID
    return EXIT_OK


def _cmd_power(args: argparse.Namespace) -> int:
    """How many cases (and trials) a difference needs; the smallest difference a suite can see."""
    from runner.compare import power_text

    try:
        text = power_text(args.baseline, args.delta, args.trials, args.cases, alpha=args.alpha, power=args.power)
    except ValueError as err:
        errors.print(f"invalid input: {err}")
        return EXIT_INVALID
    console.print(text, markup=False, highlight=False, soft_wrap=True)
    return EXIT_OK


def _cmd_replay(args: argparse.Namespace) -> int:
    """Re-run recorded traces against their fixtures (offline) or a live deployment, and compare."""
    from runner.fixtures import FixtureStore
    from runner.replay import ReplayOutcome, TraceAgent, case_of, result_diffs
    from runner.report import VERDICT_STYLE
    from runner.run import RunOptions, run_suite
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
            errors.print(f"{path}: cannot replay: {err}", markup=False)
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
        worst = max(worst, _exit_for([replayed]))
    return worst


def _print_fixture_news(fixtures) -> None:  # noqa: ANN001 - runner.fixtures.FixtureStore
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


def _exit_for(traces: list) -> int:
    verdicts = {t.verdict for t in traces}
    return EXIT_FAILED if "failed" in verdicts else EXIT_NOT_RUN if "not_run" in verdicts else EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    """Rebuild the reports from traces alone; several run directories merge into one, each series apart."""
    from runner.results import build_results

    try:
        runs = [_run_input(d) for d in args.run_dirs]
    except SystemExit as err:
        errors.print(str(err), markup=False, highlight=False)
        return EXIT_INVALID
    merged = len(args.run_dirs) > 1
    out = Path(args.out or "traces/merged") if merged else Path(args.run_dirs[0])
    dirs = {read_run_id(Path(d)): Path(d) / "trials" for d in args.run_dirs}
    reporters = _reporters(args, out, ("html",) if merged and not args.html else (), trace_dirs=dirs)
    return _end_reports(reporters, build_results(runs))


# ---- validate, schema, site --------------------------------------------------


def _cmd_validate(args: argparse.Namespace) -> int:
    suite = _load(args.paths, args.catalog)
    if isinstance(suite, int):
        return suite
    loaded, problems, catalog_note = suite
    if problems:
        _report_problems(problems)
        _say(catalog_note)
        return EXIT_INVALID
    console.print(
        f"{len(loaded)} case(s) valid; {catalog_note}. (This says nothing about any agent.)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    return EXIT_OK


def _cmd_schema(args: argparse.Namespace) -> int:
    from runner.case import case_json_schema

    text = json.dumps(case_json_schema(), indent=2, ensure_ascii=False) + "\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _cmd_site(args: argparse.Namespace) -> int:
    from site_under_test.server import run_site

    run_site(host=args.host, port=args.port, test_mode=args.test_mode, data_dir=args.data_dir)
    return EXIT_OK


# ---- parser --------------------------------------------------------------------


def _add_run_arguments(run: argparse.ArgumentParser) -> None:
    run.add_argument("cases", nargs="*", help="case IDs or globs (SEL-01, 'CONF-*'), or case files/directories")
    run.add_argument("-g", "--grep", help="only cases whose id or title matches this regex")
    run.add_argument("-b", "--behaviour", action="append", help="only cases of this behaviour (repeatable)")
    run.add_argument("--trials", type=int, default=1, help="trials per case, each from clean state (default 1)")
    run.add_argument("-j", "--workers", type=int, default=1, help="trials in parallel (default 1)")
    run.add_argument("--headed", action="store_true", help="show the browser; hold at confirmation points")
    run.add_argument("--slowmo", type=float, default=None, metavar="MS", help="slow every browser action by MS")
    run.add_argument(
        "--hold-ms",
        type=int,
        default=None,
        metavar="MS",
        help="headed: hold MS at a confirmation point (default: until Enter)",
    )
    run.add_argument("--base-url", help="an already running or deployed site instead of the embedded one")
    run.add_argument("--site-config", help="YAML naming the site's hooks (reset, state, ...) and mutation rules")
    run.add_argument("--no-proxy", action="store_true", help="no proxy: network checks become not_run")
    run.add_argument("--chromium", help="the Chromium binary (else $WEBMCP_EVAL_CHROMIUM, Playwright's, system)")
    run.add_argument("--out", default="traces", help="where run directories go (default traces/)")
    run.add_argument("--run-id", help="name of the run directory (default: a timestamp)")
    run.add_argument("--junit", help="also write JUnit XML here")
    run.add_argument("--markdown", metavar="FILE", help=MARKDOWN_HELP)
    run.add_argument("--json", help="also write the JSON summary here")
    run.add_argument(
        "--catalog", help="the site's tools per route, to check cases against (default: catalog.json beside the cases)"
    )
    run.add_argument(
        "--skip-invalid",
        action="store_true",
        help="run the valid cases and list the invalid ones as not run (default: an invalid case stops the run)",
    )
    agent = run.add_argument_group("agents (default: the reference agent, deterministic evidence)")
    agent.add_argument(
        "--agent",
        choices=["reference", "openai", "anthropic"],
        default="reference",
        help="openai: any OpenAI-compatible chat-completions endpoint (hosted, vLLM, Ollama, "
        "llama.cpp, LM Studio); anthropic: the Messages API",
    )
    agent.add_argument("--model", help="the model name, e.g. gpt-4.1-mini or claude-sonnet-4-5")
    agent.add_argument("--api-base", help="the endpoint, e.g. http://127.0.0.1:11434/v1 for Ollama")
    agent.add_argument(
        "--api-key-env",
        help="environment variable with the key (default OPENAI_API_KEY / "
        "ANTHROPIC_API_KEY); the key never reaches a trace or cassette",
    )
    agent.add_argument(
        "--model-cassette",
        choices=["off", "record", "replay"],
        default="off",
        help="record every model exchange per trial, or replay them strictly (offline)",
    )
    agent.add_argument("--cassette-dir", default="cassettes", help="where cassettes live (default cassettes/)")
    agent.add_argument("--max-steps", type=int, default=16, help="model requests per trial (default 16)")
    agent.add_argument("--max-seconds", type=float, default=90.0, help="agent time per trial (default 90)")
    agent.add_argument("--max-tokens", type=int, default=200_000, help="tokens per trial (default 200000)")
    agent.add_argument("--prices", help="YAML/JSON price table: model-prefix: {input, output} USD per 1M tokens")
    run.add_argument(
        "--trace",
        choices=["off", "on", "retain-on-failure"],
        default="off",
        help="keep Playwright's own trace.zip per trial (open with: playwright show-trace FILE)",
    )
    run.add_argument("--fixtures", default="fixtures", help="record/replay fixture directory (default fixtures/)")
    run.add_argument(
        "--max-fixture-age",
        type=float,
        default=30.0,
        metavar="DAYS",
        help="warn when a replayed fixture is older than this (default 30)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="webmcp-eval", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser(
        "run",
        help="run cases as trials and report verdicts",
        description="Run cases (default: all of cases/) against the embedded demo site or "
        "--base-url, headless unless --headed, and write traces and reports under "
        "--out/<run-id>/.",
    )
    _add_run_arguments(run)
    run.add_argument(
        "--network",
        choices=["live", "record", "replay"],
        default="live",
        help="live: pass through and count (default); record: also save every response into --fixtures; "
        "replay: answer only from --fixtures, never contacting the site",
    )
    run.set_defaults(func=_cmd_run)

    rec = sub.add_parser(
        "record",
        help="(re)record the fixtures of cases; shows what changed since the last recording",
        description="Run cases in record mode: every response the browser receives, and the site's hook "
        "answers, go into --fixtures/<CASE>.yaml. An existing fixture is compared request by request.",
    )
    _add_run_arguments(rec)
    rec.set_defaults(func=_cmd_run, network="record")

    rep = sub.add_parser("report", help="rebuild reports from the traces of one or more run directories")
    rep.add_argument("run_dirs", nargs="+", help="run directories (e.g. traces/<run-id>, or CI shards to merge)")
    rep.add_argument("--out", help="where a merged report goes (default traces/merged)")
    rep.add_argument("--junit", help="write JUnit XML here")
    rep.add_argument("--json", help="write the JSON summary here")
    rep.add_argument("--html", help="write the HTML report here (default: <run dir>/report.html when merging)")
    rep.add_argument("--markdown", metavar="FILE", help=MARKDOWN_HELP)
    rep.set_defaults(func=_cmd_report)

    rp = sub.add_parser("replay", help="re-run recorded traces offline against their fixtures, and compare")
    rp.add_argument("traces", nargs="+", help="trace files (…/trials/<CASE>.t1.json)")
    rp.add_argument("--fixtures", help="fixture directory (default: the fixtures/ beside the trace's trials/)")
    rp.add_argument("--live", action="store_true", help="against a live deployment instead (needs --base-url)")
    rp.add_argument("--base-url", help="the deployment for --live")
    rp.add_argument("--out", default="traces/replays", help="where replay results go (default traces/replays)")
    rp.add_argument("--chromium", help="the Chromium binary")
    rp.set_defaults(func=_cmd_replay)

    cmp_ = sub.add_parser("compare", help="paired per-case differences between two runs, with a 95%% interval")
    cmp_.add_argument("run_a", help="the baseline run directory")
    cmp_.add_argument("run_b", help="the run to compare with it")
    cmp_.set_defaults(func=_cmd_compare)

    pw = sub.add_parser("power", help="cases and trials needed to detect a difference; the smallest detectable one")
    pw.add_argument("--baseline", type=float, required=True, help="the baseline case pass rate, e.g. 0.7")
    pw.add_argument("--delta", type=float, help="the difference to detect, e.g. 0.1")
    pw.add_argument("--cases", type=int, help="the suite's size: report the smallest detectable difference")
    pw.add_argument("--trials", type=int, default=1, help="trials per case (default 1)")
    pw.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    pw.add_argument("--power", type=float, default=0.8, help="wanted power (default 0.8)")
    pw.set_defaults(func=_cmd_power)

    val = sub.add_parser("validate", help="check the case suite itself (file:line for every problem)")
    val.add_argument("paths", nargs="*", help="case files or directories (default cases/)")
    val.add_argument("--catalog", help="the site's tools per route (default: catalog.json beside the cases)")
    val.set_defaults(func=_cmd_validate)

    schema = sub.add_parser("schema", help="print the JSON Schema of the case format")
    schema.add_argument("-o", "--output", help="write it to this file")
    schema.set_defaults(func=_cmd_schema)

    site = sub.add_parser("site", help="serve the demo events site")
    site.add_argument("--host", default="127.0.0.1", help="bind address (default: loopback only)")
    site.add_argument("--port", type=int, default=8000, help="port; 0 picks a free one")
    site.add_argument("--test-mode", action="store_true", help="enable worlds and the /__test__ control API")
    site.add_argument("--data-dir", default=None, help="where the SQLite files live (default: a temp dir)")
    site.set_defaults(func=_cmd_site)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return EXIT_INVALID if exit_.code not in (0, None) else EXIT_OK
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
