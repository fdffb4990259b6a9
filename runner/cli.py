"""webmcp-eval: can an agent use this site correctly, safely and repeatably?

Runs eval cases against a website that exposes WebMCP tools, in a real
Chromium through a counting proxy, and says passed, failed or not_run for
every trial, with a trace of the evidence.

Exit codes: 0 every trial passed; 1 some trial failed; 2 invalid input or
usage (a broken case file, an unknown option); 3 some trial could not run
(harness error, crashed browser, missing site hook, an incomplete run) and
none failed; 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fnmatch
import json
import os
import re
import shutil
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rich.console import Console

EXIT_OK, EXIT_FAILED, EXIT_INVALID, EXIT_NOT_RUN, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
DEFAULT_CASES = "cases"
MARKDOWN_HELP = "also write a Markdown summary here (a pull-request comment, $GITHUB_STEP_SUMMARY)"
# Wide enough for the report when output is a file or a CI log (rich would use 80).
console = Console(stderr=False, width=None if sys.stdout.isatty() else 160)
errors = Console(stderr=True, width=None if sys.stderr.isatty() else 160)


def _suite_dir() -> Path:
    """./cases when run from a checkout, else the cases shipped beside the package."""
    here = Path(DEFAULT_CASES)
    return here if here.is_dir() else Path(__file__).resolve().parent.parent / DEFAULT_CASES


def _load(paths: list[str], catalog: str | None, suite_dir: str | None = None) -> tuple[list, list, str, Any] | int:
    """Load and validate cases exactly as ``validate`` does: (cases, problems, which config and catalog, suite).

    ``run``, ``record`` and ``validate`` all come through here, before any browser starts;
    the suite (runner/suite/folder.py) is the folder the cases come from, or ``--suite DIR``.
    """
    from runner.suite.folder import SuiteError, find_suite
    from runner.suite.validate import CatalogError, find_catalog, load_suite

    if suite_dir and not Path(suite_dir).is_dir():
        _say(f"--suite {suite_dir}: not a folder (a suite is a folder of case files and its suite.yaml)")
        return EXIT_INVALID
    missing = [p for p in paths if not Path(p).exists() and not Path(p).is_symlink()]
    if missing:
        _say(f"{missing[0]}: no such file or folder")
        return EXIT_INVALID
    paths = paths or [suite_dir or str(_suite_dir())]
    if any(_is_evals(p) for p in paths):
        return _load_evals(paths, catalog)
    try:
        suite = find_suite([Path(p) for p in paths], Path(suite_dir) if suite_dir else None)
        if not suite.case_files([Path(p) for p in paths]):
            _say(
                f"no case files in {' '.join(paths)} (cases are *.yaml / *.yml files; "
                "suite.yaml and the files it ignores are not cases)"
            )
            return EXIT_INVALID
        suite_catalog, note = find_catalog(paths, catalog, suite)
    except (SuiteError, CatalogError) as err:
        _say(str(err))
        return EXIT_INVALID
    whole_suite = any(Path(p).is_dir() for p in paths)
    loaded, problems = load_suite(paths, suite_catalog, whole_suite, suite)
    return loaded, problems, f"{suite.describe()}; {note}", suite


def _is_evals(path: str) -> bool:
    from runner.suite.evals_json import looks_like_evals

    return looks_like_evals(Path(path))


def _load_evals(paths: list[str], catalog: str | None) -> tuple[list, list, str, Any] | int:
    """A public webmcp-evals file, converted in memory into cases (runner/suite/evals_json.py) and validated."""
    from runner.suite.evals_json import BEHAVIOURS, load_evals
    from runner.suite.folder import Suite, SuiteConfig
    from runner.suite.validate import CatalogError, find_catalog

    if len(paths) > 1:
        _say(f"an evals.json is a suite of its own: give it alone ({' '.join(paths)})")
        return EXIT_INVALID
    path = Path(paths[0])
    suite = Suite(path.parent.resolve(), SuiteConfig(behaviours=BEHAVIOURS, min_cases_per_behaviour=0))
    try:
        suite_catalog, note = find_catalog(paths, catalog, suite)
    except CatalogError as err:
        _say(str(err))
        return EXIT_INVALID
    loaded, problems, converted = load_evals(path, suite_catalog)
    for line in converted.notes:
        _say(f"note: {line}")
    what = f"{path}: webmcp-evals format, {len(loaded)} eval(s) read as cases (calls in exact order, as there)"
    return loaded, problems, f"{what}; {note}", suite


def _say(line: str) -> None:
    """One plain line on stderr, never wrapped, never read as markup."""
    errors.print(line, markup=False, highlight=False, soft_wrap=True)


LABELS_SERIES_HELP = (
    "people's labels of rubric criteria, shown as a human-label series of their own "
    "(default: labels.json beside the cases, when there is one)"
)


class UsageError(Exception):
    """A mistake on the command line: one line on stderr that says what to do, exit 2."""


def _one_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


SHOWN_PROBLEMS = 20  # a file with a problem per element (a 50 MB array) must not flood the terminal


def _report_problems(problems: list) -> None:
    for p in problems[:SHOWN_PROBLEMS]:
        _say(str(p))
    if len(problems) > SHOWN_PROBLEMS:
        _say(f"… and {len(problems) - SHOWN_PROBLEMS} more")
    errors.print(f"[bold red]{len(problems)} problem(s)[/]")


# ---- run ---------------------------------------------------------------------


def _cmd_run(args: argparse.Namespace) -> int:
    from runner.play.run import RunOptions, new_run_id

    _check_run_args(args)
    skipped: list[str] = []
    live_rules = False  # no catalog file: each trial checks the rules against the tools it saw
    if args.resume:
        chosen, only_trials, run_dir, suite = _resume_selection(args)
        out_root, run_id = run_dir.parent, run_dir.name
    else:
        case_args = [a for a in args.cases if Path(a).exists()]
        patterns = [a for a in args.cases if not Path(a).exists()]
        if args.last_failed:
            case_args, patterns = _last_failed(args, patterns)
        loaded_suite = _load(case_args, args.catalog, args.suite)
        if isinstance(loaded_suite, int):
            return loaded_suite
        loaded, problems, catalog_note, suite = loaded_suite
        if problems:
            _report_problems(problems)
            if not args.skip_invalid:
                _say(f"nothing ran: fix the cases above, or pass --skip-invalid to run the rest ({catalog_note})")
                return EXIT_INVALID
            loaded, skipped = _skip_invalid(loaded, problems, patterns, args)
        elif "no catalog" in catalog_note:
            _say(f"note: {catalog_note}; each trial checks the rules against the tools its pages register")
        live_rules = "no catalog" in catalog_note
        chosen = _select(args, loaded, patterns)
        if any(_is_evals(a) for a in case_args) and not (args.base_url or args.site_config):
            raise UsageError("an evals.json names no site: give --base-url URL (the page the evals are for)")
        site_config = _site_config(args, suite)  # before anything is written
        only_trials, out_root, run_id = None, Path(args.out), args.run_id or new_run_id()
        _check_writable_dir(out_root, "--out")
        console.print(catalog_note, markup=False, highlight=False, soft_wrap=True)
    if args.resume:
        site_config = _site_config(args, suite)
    mode = args.network
    fixtures = None
    if mode != "live":
        from runner.play.fixture_store import FixtureStore

        fixtures = FixtureStore(Path(args.fixtures), mode, max_age_days=args.max_fixture_age)
    harness = _harness_choice(args, suite)
    try:
        agent_factory = _agent_factory(args, harness)
    except ValueError as err:
        raise UsageError(f"invalid agent options: {err}") from None
    try:
        grader = _grader(args)
    except ValueError as err:
        raise UsageError(f"invalid grader options: {err}") from None
    try:
        simulator_factory = _simulator_factory(args)
    except ValueError as err:
        raise UsageError(f"invalid user simulator options: {err}") from None
    if grader is not None:
        console.print(
            f"model grader {grader.id}: "
            + ("gates the verdict" if grader.gate.gates else "advisory only")
            + f" ({grader.gate.why})",
            markup=False,
            highlight=False,
        )
    options = RunOptions(
        agent_factory=agent_factory,
        out_root=out_root,
        run_id=run_id,
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
        screenshots=args.screenshot,
        only_trials=only_trials,
        grader=grader,
        simulator_factory=simulator_factory,
        shard=args.shard,
        durations=_durations(args),
        retries=args.retries,
        connect=args.connect,
        connect_over_cdp=args.connect_over_cdp,
        proxy_host=args.proxy_host,
        proxy_advertise=args.proxy_advertise,
        browser_context=suite.config.browser_context(),  # suite.yaml's time zone and locale
        harness=harness,
        live_rules=live_rules,
    )
    if args.resume:
        _check_same_agent(run_dir, agent_factory)
        options.shard = _planned_shard(run_dir)  # its worlds keep the shard's name, as in the first play
    code = _play(args, chosen, options, fixtures, skipped)
    if code in (EXIT_OK, EXIT_FAILED, EXIT_NOT_RUN):  # the trials ran: which tools did the cases touch
        _print_coverage([lc.case for lc in chosen], suite, args.catalog)
    return code


def _play(args: argparse.Namespace, chosen: list, options, fixtures, skipped: list[str]) -> int:  # noqa: ANN001
    """Play the trials with progress lines, then the reports; Ctrl-C keeps what ran and says how to go on."""
    from runner.play.browser import BrowserUnavailable, ChromiumNotFound
    from runner.play.plan import make_plan, read_plan
    from runner.play.run import run_suite
    from runner.results.run_results import RunInput, build_results

    out_dir = options.out_root / options.run_id
    resuming = options.only_trials is not None
    if resuming:
        plan = read_plan(out_dir)
    else:
        who = {
            "agent": args.agent,
            "model": args.model,
            "evidence_kind": {"reference": "deterministic", "none": "baseline"}.get(args.agent, "agent"),
        }
        if options.harness:  # the harness names itself (program and version): the plan's series must match its traces
            probe = options.agent_factory()
            who = {"agent": probe.name, "model": probe.model, "evidence_kind": probe.evidence_kind}
        cases = [(lc.case.id, lc.file) for lc in chosen]
        plan = make_plan(options.run_id, cases, options.trials, **who)
        if options.shard:
            from runner.play.shard import shard_of

            mine = set(shard_of([t["trial_id"] for t in plan["trials"]], *options.shard, options.durations))
            plan["trials"] = [t for t in plan["trials"] if t["trial_id"] in mine]
    run_info: dict = {"run_id": options.run_id}  # summary.json's header; the site's version joins it after the run
    reporters = _reporters(args, out_dir, ("json", "junit", "html"), progress=not resuming, json_extra=run_info)
    reporters.begin(plan)
    if resuming:
        reporters.reporters.insert(0, _ResumeProgress(len(options.only_trials)))
    what = (
        f"{len(options.only_trials)} planned trial(s) of {out_dir}"
        if resuming
        else f"{len(chosen)} case(s) × {options.trials} trial(s)"
    )
    if options.shard and not resuming:
        what += f", shard {options.shard[0]}/{options.shard[1]}: {len(plan['trials'])} trial(s)"
    if options.harness:
        what += f", agent: harness {options.harness['command']!r} (from {options.harness['source']})"
    console.print(
        f"webmcp-eval: {what}, {options.workers} worker(s), {'headed' if options.headed else 'headless'}, "
        f"site {_site_shown(options)}",
        markup=False,
        highlight=False,
    )
    try:
        result = asyncio.run(run_suite(chosen, options, on_trial=reporters.trial_done))
    except ChromiumNotFound as err:
        errors.print(str(err), markup=False)
        return EXIT_NOT_RUN
    except BrowserUnavailable as err:  # a wrong --connect endpoint: nothing ran, nothing is left behind
        if not resuming and {p.name for p in out_dir.iterdir()} <= {"plan.json"}:
            shutil.rmtree(out_dir, ignore_errors=True)
        _say(str(err))
        return EXIT_INVALID
    except KeyboardInterrupt:
        return _interrupted(args, out_dir)
    run_info["site"] = result.site_info
    try:
        plan = read_plan(out_dir) or plan
    except ValueError as err:
        errors.print(f"warning: {err}; the plan of this invocation is used", markup=False, highlight=False)
    traces = _planned_traces(out_dir) if resuming else result.traces
    runs = [RunInput(traces, plan), *_play_baseline(args, chosen, options)]
    code = _end_reports(reporters, build_results(runs))
    _print_graders_and_health([t for r in runs for t in r.traces], out_dir, args.health_min_trials)
    if fixtures is not None:
        _print_fixture_news(fixtures)
    if skipped:
        console.print(f"{len(skipped)} invalid case file(s) skipped, not run (--skip-invalid)", highlight=False)
    return EXIT_NOT_RUN if skipped and code == EXIT_OK else code


def _play_baseline(args: argparse.Namespace, chosen: list, options) -> list:  # noqa: ANN001 - RunOptions
    """run --baseline none: the null agent over the same cases, as a run of its own inside this one.

    One trial per case (it does the same nothing every time), into <run>/<run-id>-baseline/; its
    series is reported beside the agent's and never pooled with it, and its failures decide no exit code.
    """
    if not getattr(args, "baseline", None):
        return []
    import dataclasses

    from runner.agents.null import NullAgent
    from runner.play.plan import read_plan
    from runner.play.run import run_suite
    from runner.results.run_results import RunInput

    baseline = dataclasses.replace(
        options,
        agent_factory=NullAgent,
        out_root=options.out_root / options.run_id,
        run_id=f"{options.run_id}-baseline",
        trials=1,
        grader=None,
        harness=None,
    )
    console.print(f"baseline: the null agent over {len(chosen)} case(s) (reads the tools, calls none)", highlight=False)
    result = asyncio.run(run_suite(chosen, baseline))
    return [RunInput(result.traces, read_plan(result.out_dir), result.run_id)]


def _skip_invalid(loaded: list, problems: list, patterns: list[str], args: argparse.Namespace) -> tuple[list, list]:
    """--skip-invalid: the valid cases, and the invalid files this selection would have run (its not-run ones)."""
    from runner.play.run import select_cases
    from runner.suite.validate import split_valid

    valid, invalid_files = split_valid(loaded, problems)
    skipped = invalid_files
    if patterns or args.grep or args.behaviour:
        # A file that did not even load has no id: only a run of everything counts it.
        invalid = [lc for lc in loaded if lc.file in invalid_files]
        skipped = [lc.file for lc in select_cases(invalid, patterns, args.grep, args.behaviour or [])]
    for file in skipped:
        _say(f"skipped (invalid, not run): {file}")
    return valid, skipped


class _ResumeProgress:
    """Progress of a resumed run: [done/to play] over the trials this invocation plays."""

    def __init__(self, total: int) -> None:
        from runner.report.reporters import ProgressReporter

        self.inner = ProgressReporter(console)
        self.inner.total = total

    def begin(self, plan) -> None:  # noqa: ANN001
        return None

    def trial_done(self, trace) -> None:  # noqa: ANN001
        self.inner.trial_done(trace)

    def end(self, results) -> None:  # noqa: ANN001
        return None


def _interrupted(args: argparse.Namespace, out_dir: Path) -> int:
    """Ctrl-C: keep every trace written, write a partial report marked incomplete, say how to go on (one line)."""
    from runner.play.plan import read_plan
    from runner.results.run_results import RunInput, build_results

    try:
        plan = read_plan(out_dir)
        traces = _planned_traces(out_dir)
    except (OSError, ValueError):
        plan, traces = None, []
    results = build_results([RunInput(traces, plan)])
    reporters = _reporters(args, out_dir, ("json", "junit", "html"), json_extra={"run_id": out_dir.name}, quiet=True)
    reporters.end(results)  # files only: the one line below is all the console gets
    errors.print(
        f"interrupted: {results.completeness.text().split(' (')[0]}, their traces kept in {out_dir}; "
        f"go on with: webmcp-eval run --resume {out_dir}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    return EXIT_INTERRUPTED


def _planned_traces(run_dir: Path) -> list:
    """The run's traces, in plan order when it has a plan (a trace outside the plan is not this run's)."""
    from runner.play.plan import read_plan
    from runner.trace import read_traces

    traces = read_traces(run_dir) if (run_dir / "trials").is_dir() else []
    beside = {(t.run_id, t.trial_id) for d in _baseline_dirs(run_dir) for t in read_traces(d)}  # run --baseline
    traces = [t for t in traces if (t.run_id, t.trial_id) not in beside]
    plan = read_plan(run_dir)
    if plan is None:
        return traces
    by_id = {t.trial_id: t for t in traces}
    return [by_id[p["trial_id"]] for p in plan["trials"] if p["trial_id"] in by_id]


def _check_run_args(args: argparse.Namespace) -> None:
    """Everything about the command line that can be checked before any case loads or browser starts."""
    if args.resume:
        if args.cases or args.grep or args.behaviour or args.last_failed or args.run_id or args.trials is not None:
            raise UsageError(
                "--resume plays the plan of RUN_DIR as it is: "
                "drop case selections, --last-failed, --run-id and --trials"
            )
    elif args.rerun_not_run:
        raise UsageError("--rerun-not-run goes with --resume RUN_DIR")
    if args.resume and args.shard:
        raise UsageError("--resume plays the shard its RUN_DIR was planned for: drop --shard")
    if args.durations and not args.shard:
        raise UsageError("--durations balances --shard i/n: give both")
    if args.baseline and (args.resume or args.shard or args.agent == "none"):
        raise UsageError(
            "--baseline none plays beside a new, whole run of another agent: drop --resume/--shard, or "
            "play the baseline as a run of its own (--agent none)"
        )
    args.trials = args.trials if args.trials is not None else 1
    if args.network != "live" and args.no_proxy:
        raise UsageError(f"--network {args.network} needs the proxy; drop --no-proxy")
    if args.connect and args.connect_over_cdp:
        raise UsageError("--connect and --connect-over-cdp each name the browser: give one")
    if args.connect_over_cdp and args.chromium:
        raise UsageError("--chromium has no effect on a Chromium reached with --connect-over-cdp: drop it")
    if args.proxy_advertise and args.no_proxy:
        raise UsageError("--proxy-advertise goes with the proxy: drop --no-proxy")
    if args.chromium and not args.connect and not Path(args.chromium).is_file():  # remote: a path over there
        raise UsageError(f"--chromium {args.chromium}: no such file; give the path of a Chromium binary")
    for flag, value in (("--json", args.json), ("--junit", args.junit)):
        if value:
            _check_writable_file(Path(value), flag)


def _durations(args: argparse.Namespace) -> dict[str, float] | None:
    from runner.play.shard import ShardError, read_durations

    if not args.durations:
        return None
    try:
        return read_durations(args.durations)
    except ShardError as err:
        raise UsageError(str(err)) from None


def _shard(text: str) -> tuple[int, int]:
    from runner.play.shard import ShardError, parse_shard

    try:
        return parse_shard(text)
    except ShardError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _check_writable_dir(path: Path, flag: str) -> None:
    """The directory exists (made now if need be) and takes files."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {path}: is a file, not a directory; give a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UsageError(
            f"{flag} {path}: cannot create it ({err.strerror or err}); give a writable directory"
        ) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: not writable; give a writable directory")


def _check_writable_file(path: Path, flag: str) -> None:
    if path.is_dir():
        raise UsageError(f"{flag} {path}: is a directory; give a file path")
    parent = path.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: its directory {parent} does not exist or is not writable")


def _site_config(args: argparse.Namespace, suite: Any):  # noqa: ANN202 - SiteConfig | None
    """--site-config, else the suite's own site (suite/folder.py); None: the embedded demo or a bare --base-url."""
    from runner.suite.folder import SuiteError, site_for_run

    try:
        return site_for_run(suite, args.base_url, args.site_config)
    except SuiteError as err:
        raise UsageError(str(err)) from None


def _site_shown(options: Any) -> str:
    config = options.site_config
    return options.base_url or (config.base_url if config else "") or "embedded demo site (test mode)"


def _select(args: argparse.Namespace, loaded: list, patterns: list[str]) -> list:
    from runner.play.run import select_cases

    chosen = select_cases(loaded, patterns, args.grep, args.behaviour or [])
    if not chosen:
        asked = " ".join(args.cases + ([f"--grep {args.grep}"] if args.grep else []))
        raise UsageError(f"No case matches the selection {asked}; `webmcp-eval validate` lists the suite's cases")
    return chosen


def _resume_selection(args: argparse.Namespace) -> tuple[list, set[str], Path, Any]:
    """The planned cases, and the planned trials that have no trace (or, when asked, say not_run)."""
    from runner.play.plan import PlanError, missing_trials, read_plan

    run_dir = Path(args.resume)
    if not run_dir.is_dir():
        raise UsageError(f"--resume {run_dir}: not a run directory")
    try:
        plan = read_plan(run_dir)
    except PlanError as err:
        raise UsageError(str(err)) from None
    if plan is None:
        raise UsageError(f"--resume {run_dir}: no plan.json there (not a run directory, or a run made before plans)")
    try:
        traces = _planned_traces(run_dir)
    except (OSError, ValueError) as err:
        raise UsageError(f"--resume {run_dir}: a trace cannot be read: {_one_line(err)}") from None
    todo = missing_trials(plan, traces, rerun_not_run=args.rerun_not_run)
    files = list(dict.fromkeys(c["file"] for c in plan["cases"]))
    loaded_suite = _load(files, getattr(args, "catalog", None))
    if isinstance(loaded_suite, int):
        raise UsageError(f"--resume {run_dir}: the planned case files {', '.join(files)} cannot be loaded")
    loaded, problems, _note, suite = loaded_suite
    if problems:
        _report_problems(problems)
        raise UsageError(f"--resume {run_dir}: the planned case files no longer load; fix them and resume again")
    by_id = {lc.case.id: lc for lc in loaded}
    gone = [c["id"] for c in plan["cases"] if c["id"] not in by_id]
    if gone:
        raise UsageError(f"--resume {run_dir}: planned case(s) {', '.join(gone)} no longer in {', '.join(files)}")
    args.trials = plan["trials_per_case"]
    return [by_id[c["id"]] for c in plan["cases"]], {t["trial_id"] for t in todo}, run_dir, suite


def _planned_shard(run_dir: Path) -> tuple[int, int] | None:
    """The (i, n) a resumed run directory was planned as, None for a whole run."""
    from runner.play.plan import read_plan

    shard = (read_plan(run_dir) or {}).get("shard")
    return (shard["index"], shard["count"]) if shard else None


def _check_same_agent(run_dir: Path, agent_factory) -> None:  # noqa: ANN001 - Callable[[], Agent]
    """A resumed run must be played by the agent its plan names: evidence kinds never mix."""
    from runner.play.plan import read_plan

    plan = read_plan(run_dir)
    assert plan is not None
    agent = agent_factory()
    if (agent.name, agent.model) != (plan["agent"], plan["model"]):
        model = f" --model {plan['model']}" if plan["model"] else ""
        raise UsageError(f"--resume {run_dir}: planned for --agent {plan['agent']}{model}; resume with the same agent")


def _last_failed(args: argparse.Namespace, patterns: list[str]) -> tuple[list[str], list[str]]:
    """The case files and ids of the failed cases of the latest run under --out."""
    from runner.play.plan import PlanError, read_plan

    latest = _latest_run(Path(args.out))
    try:
        traces = _planned_traces(latest)
        plan = read_plan(latest)
    except (OSError, ValueError, PlanError) as err:
        raise UsageError(f"--last-failed: the latest run {latest} cannot be read: {_one_line(err)}") from None
    failed = list(dict.fromkeys(t.case_id for t in traces if t.verdict == "failed"))
    if not failed:
        raise UsageError(f"--last-failed: the latest run {latest} has no failed case; nothing to rerun")
    files = {c["id"]: c["file"] for c in plan["cases"]} if plan else {t.case_id: t.case_file for t in traces}
    console.print(f"--last-failed: {len(failed)} failed case(s) of {latest}: {', '.join(failed)}", markup=False)
    ids = [f for f in failed if not patterns or any(fnmatch.fnmatchcase(f, p.upper()) for p in patterns)]
    if not ids:
        raise UsageError(f"--last-failed: none of the failed cases of {latest} matches {' '.join(patterns)}")
    return list(dict.fromkeys(files[i] for i in ids if i in files)), ids


def _latest_run(out: Path) -> Path:
    """The run under out planned last (a run without a plan counts by its files' time)."""
    from runner.play.plan import PlanError, read_plan

    runs = [d for d in out.iterdir() if (d / "trials").is_dir()] if out.is_dir() else []
    if not runs:
        raise UsageError(f"--last-failed: no run under {out}; give the --out the runs went to")

    def when(run: Path) -> float:
        with contextlib.suppress(PlanError, ValueError):
            plan = read_plan(run)
            if plan:
                return datetime.fromisoformat(plan["created_at"]).timestamp()
        return (run / "trials").stat().st_mtime

    return max(runs, key=when)


def _simulator_factory(args: argparse.Namespace):  # noqa: ANN202 - Callable[[], SimulatedUser] | None
    """The simulated user of goal cases from the flags (runner/agents/simulated_user.py)."""
    if not getattr(args, "user_simulator", None):
        return None
    from runner.agents.simulated_user import make_simulator_factory

    return make_simulator_factory(
        args.user_simulator,
        args.user_model or "",
        api_base=args.user_api_base,
        api_key_env=args.user_api_key_env,
        cassette_mode=args.user_cassette,
        cassette_dir=Path(args.user_cassette_dir),
        prices=args.prices,
    )


def _grader(args: argparse.Namespace):  # noqa: ANN202 - runner.judge.grader.ModelGrader | None
    """The model grader from the flags, gated by the suite's labels (runner/judge/labels.py)."""
    if not args.grader:
        return None
    from runner.judge.grader import Gate, make_grader
    from runner.judge.labels import gate_for

    grader = make_grader(
        args.grader,
        args.grader_model or "",
        api_base=args.grader_api_base,
        api_key_env=args.grader_api_key_env,
        cassette_mode=args.grader_cassette,
        cassette_dir=Path(args.grader_cassette_dir),
        prices=args.prices,
    )
    grader.gate = Gate(*gate_for(Path(args.labels) if args.labels else _suite_dir() / "labels.json", grader.id))
    return grader


def _labels_of(path_arg: str | None) -> dict | None:
    """People's labels per trial for the human-label series: --labels FILE, else the suite's labels.json if any."""
    from runner.judge.labels import LabelsFile

    path = Path(path_arg) if path_arg else _suite_dir() / "labels.json"
    if not path.is_file():
        if path_arg:
            raise UsageError(f"--labels {path_arg}: no such file")
        return None
    try:
        labels = LabelsFile.load(path)
    except ValueError as err:
        raise UsageError(str(err)) from None
    return {(t.run_id, t.trial): dict(t.labels) for t in labels.trials}


def _print_coverage(cases: list, suite: Any, catalog: str | None) -> None:
    """Suite health: which catalog tools the cases played call or assert, and which none touches."""
    from runner.audit.catalog_lint import run_coverage_line

    line = run_coverage_line(cases, suite, catalog)
    if line:
        console.print(f"suite health: {line}", markup=False, highlight=False, soft_wrap=True)


def _print_graders_and_health(traces: list, out_dir: Path, min_trials: int) -> None:
    """Model-grader evidence apart from the code checks, then suite health (written to health.json too)."""
    from runner.results.health import health_lines, suite_health
    from runner.trace import write_atomic

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
    write_atomic(out_dir / "health.json", json.dumps(health.to_json(), indent=2, ensure_ascii=False) + "\n")


def _harness_choice(args: argparse.Namespace, suite: Any) -> dict[str, Any] | None:
    """The external harness of this run: ``--harness`` wins over suite.yaml's ``harness``; None: no harness.

    ``source`` says which (the run's header and plan.json show it). A model agent asked on the command
    line wins over the suite's harness too: the command line is the more specific ask.
    """
    if args.harness:
        return {"command": args.harness, "source": "--harness", "max_seconds": args.max_seconds}
    entry = getattr(getattr(suite, "config", None), "harness", None)
    if entry is None or args.agent != "reference":
        return None
    return {
        "command": entry.command,
        "source": suite.where("harness", "command"),
        "max_seconds": entry.max_seconds or args.max_seconds,
    }


def _agent_factory(args: argparse.Namespace, harness: dict[str, Any] | None = None):  # noqa: ANN202
    """The reference agent, a model agent (OpenAI-compatible or Anthropic) or an external harness."""
    from runner.agents.reference import ReferenceAgent

    if harness:
        if args.agent != "reference":
            raise ValueError("--harness is the agent: drop --agent")
        from runner.agents.harness import make_harness_factory

        try:
            return make_harness_factory(harness["command"], timeout_s=harness["max_seconds"])
        except ValueError as err:
            if harness["source"] == "--harness":
                raise
            why = str(err).removeprefix("--harness: ").removeprefix("--harness ")
            raise ValueError(f"{harness['source']}: harness.command: {why}") from None
    if args.agent == "reference":
        return ReferenceAgent
    if args.agent == "none":
        from runner.agents.null import NullAgent

        return NullAgent
    if not args.model:
        raise ValueError(f"--agent {args.agent} needs --model NAME")
    from runner.agents.model import make_agent_factory

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


def _run_input(run_dir: str):  # noqa: ANN202 - runner.results.run_results.RunInput
    """A run directory's traces and plan; SystemExit with one line when it has neither or they are unreadable."""
    from runner.play.plan import read_plan
    from runner.results.run_results import RunInput
    from runner.trace import read_traces

    path = Path(run_dir)
    if not path.is_dir():
        raise SystemExit(f"{run_dir}: not a run directory")
    try:
        plan = read_plan(path)
        found = read_traces(path)
        # the baseline played beside it (run --baseline) is a run of its own in a sub-directory
        beside = {(t.run_id, t.trial_id) for d in _baseline_dirs(path) for t in read_traces(d)}
    except (OSError, ValueError) as err:
        raise SystemExit(f"{run_dir}: {str(err).splitlines()[0]}") from err
    found = [t for t in found if (t.run_id, t.trial_id) not in beside]
    if not found and plan is None:
        raise SystemExit(f"{run_dir}: no traces (expected {path / 'trials'}/*.json)")
    return RunInput(found, plan, run_id=read_run_id(path) if plan is None else plan["run_id"])


def _baseline_dirs(run_dir: Path) -> list[Path]:
    """The null agent's runs played beside this run (``run --baseline none``): sub-directories with a baseline plan."""
    from runner.play.plan import read_plan

    found = []
    for sub in sorted(p for p in run_dir.iterdir() if (p / "plan.json").is_file()) if run_dir.is_dir() else []:
        plan = read_plan(sub)
        if plan and plan["evidence_kind"] == "baseline":
            found.append(sub)
    return found


def _reporters(
    args: argparse.Namespace,
    out_dir: Path,
    defaults: tuple[str, ...],
    *,
    progress: bool = False,
    json_extra: dict | None = None,
    trace_dirs: dict | None = None,
    quiet: bool = False,
):  # noqa: ANN202 - runner.report.reporters.Reporters
    """The one way reporters are made: ``defaults`` (json, junit, html) go into out_dir, plus what the flags ask.

    ``quiet``: files only, nothing on the console (the partial report of an interrupted run)."""
    from runner.report.reporters import ReportTargets, build_reporters

    default_path = {"json": out_dir / "summary.json", "junit": out_dir / "junit.xml", "html": out_dir / "report.html"}

    def paths(name: str) -> list[Path]:
        flag = getattr(args, name, None)
        return ([default_path[name]] if name in defaults else []) + ([Path(flag)] if flag else [])

    return build_reporters(
        ReportTargets(
            console=None if quiet else console,
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


def _end_reports(reporters, results) -> int:  # noqa: ANN001 - runner.report.reporters.Reporters, runner.results.run_results.Results
    """Render every view of the results; the exit code says what the results (and the writing) came to."""
    problems = reporters.end(results)
    for line in problems:
        errors.print(line, markup=False, highlight=False)
    if problems:
        return EXIT_INVALID
    counts = results.gate_counts  # run --baseline: the null agent beside the agent decides nothing
    return EXIT_FAILED if counts.failed else EXIT_NOT_RUN if counts.not_run or counts.missing else EXIT_OK


def _cmd_compare(args: argparse.Namespace) -> int:
    """Paired per-case differences between two runs (two revisions, two models)."""
    from runner.results.compare import compare_runs
    from runner.results.run_results import build_results

    try:
        a, b = _run_input(args.run_a), _run_input(args.run_b)
    except SystemExit as err:
        errors.print(str(err), markup=False, highlight=False)
        return EXIT_INVALID
    labels = _labels_of(args.labels)
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
        runs = [(Path(d).name or d, Path(d), _run_input(d).traces) for d in args.runs]
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


def _cmd_power(args: argparse.Namespace) -> int:
    """How many cases (and trials) a difference needs; the smallest difference a suite can see."""
    from runner.results.compare import power_analysis, power_text

    try:
        result = power_analysis(args.baseline, args.delta, args.trials, args.cases, alpha=args.alpha, power=args.power)
        text = power_text(result)
    except ValueError as err:
        _say(f"invalid input: {err}")
        return EXIT_INVALID
    except (ZeroDivisionError, OverflowError):  # a difference so small that no number of cases shows it
        _say(f"invalid input: --delta {args.delta:g} is too small for any finite number of cases; give a larger one")
        return EXIT_INVALID
    console.print(text, markup=False, highlight=False, soft_wrap=True)
    return EXIT_OK


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
        worst = max(worst, _exit_for([replayed]))
    return worst


def _recorded_context(recorded):  # noqa: ANN001, ANN202 - Trace -> BrowserContextSettings
    """The time zone and locale a recorded trial was played with (the defaults for traces older than that)."""
    from runner.suite.browser_context import DEFAULT_LOCALE, DEFAULT_TIMEZONE, BrowserContextSettings

    return BrowserContextSettings(recorded.timezone_id or DEFAULT_TIMEZONE, recorded.locale or DEFAULT_LOCALE)


def _print_fixture_news(fixtures) -> None:  # noqa: ANN001 - runner.play.fixture_store.FixtureStore
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
    from runner.play.shard import ShardError
    from runner.results.run_results import build_results
    from runner.results.shards import merge

    try:
        inputs = [_run_input(d) for d in args.run_dirs]
    except SystemExit as err:
        _say(str(err))
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
        _check_writable_dir(out, "--out")  # a file there is one line and exit 2, before anything is written
    dirs = {read_run_id(Path(d)): Path(d) / "trials" for d in args.run_dirs}
    baselines = [b for d in args.run_dirs for b in _baseline_dirs(Path(d))]  # run --baseline: a series of its own
    runs = [*runs, *(_run_input(str(b)) for b in baselines)]
    dirs |= {read_run_id(b): b / "trials" for b in baselines}
    if sharded:  # shards may share one --run-id: each trial's own directory, never a guess by run id
        for d, run in zip(args.run_dirs, inputs, strict=True):
            dirs |= {f"{t.run_id}/{t.trial_id}": Path(d) / "trials" for t in run.traces}
    defaults = ("json", "junit", "html") if sharded else ("html",) if merged and not args.html else ()
    if args.no_html:  # a merge of very many trials: the HTML would be ~40 KB per trial, screenshots aside
        defaults = tuple(d for d in defaults if d != "html")
    reporters = _reporters(args, out, defaults, trace_dirs=dirs)
    code = _end_reports(reporters, build_results(runs, _labels_of(args.labels)))
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


# ---- rejudge -----------------------------------------------------------------


def _cmd_rejudge(args: argparse.Namespace) -> int:
    """Judge a run's stored traces again with the current case files and checks, into a new run directory."""
    from runner.judge.rejudge import change_of, judged_again, rejudge, unanswerable, write_run
    from runner.results.run_results import RunInput, build_results

    src = Path(args.run_dir)
    try:
        runs = [(src, _run_input(args.run_dir)), *((b, _run_input(str(b))) for b in _baseline_dirs(src))]
    except SystemExit as err:
        _say(f"webmcp-eval rejudge: {err}")
        return EXIT_INVALID
    loaded = _load([args.suite] if args.suite else [], None, args.suite)
    if isinstance(loaded, int):
        return loaded
    cases, problems, note, _ = loaded
    if problems:
        _report_problems(problems)
        _say(f"nothing re-judged: fix the cases above ({note})")
        return EXIT_INVALID
    out = _rejudged_dir(args, src)
    suite_name = args.suite or str(_suite_dir())
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
        _say(f"webmcp-eval rejudge: {refused[0]}{more}; nothing written (--keep-going writes such trials as not_run)")
        return EXIT_INVALID
    for run_dir, run, where, new in new_runs:
        write_run(run_dir, where, new, run.plan)
    console.print(f"re-judged {sum(len(n) for *_, n in new_runs)} trial(s) of {src} against {note}", highlight=False)
    inputs = [
        RunInput(new, {**run.plan, "run_id": where.name} if run.plan else None, where.name)
        for _, run, where, new in new_runs
    ]
    dirs = {where.name: where / "trials" for _, _, where, _ in new_runs}
    code = _end_reports(_reporters(args, out, ("json", "junit", "html"), trace_dirs=dirs), build_results(inputs))
    changes = [change_of(old, new) for _, run, _, news in new_runs for old, new in zip(run.traces, news, strict=True)]
    _print_changes([c for c in changes if c.changed], len(changes), out)
    for line in refused:
        _say(f"not_run: {line}")
    return code


def _rejudged_dir(args: argparse.Namespace, src: Path) -> Path:
    """-o NEWRUN, or RUN-rejudged-<time> beside RUN: a new directory, never the old run."""
    out = Path(args.output) if args.output else src.parent / f"{src.name}-rejudged-{datetime.now():%Y%m%d-%H%M%S}"
    if out.resolve() == src.resolve() or src.resolve() in out.resolve().parents:
        raise UsageError(f"-o {out}: the re-judged run goes into a new directory, never into {src}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"-o {out}: exists and is not empty; give a new directory")
    _check_writable_dir(out.parent, "-o")
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


def _cmd_mutate(args: argparse.Namespace) -> int:
    """Mutation testing of the suite against the site: does it notice a broken site?"""
    from runner.mutation.mutate import OPERATORS, MutateOptions, mutate, print_report
    from runner.play.run import new_run_id, select_cases
    from runner.suite.site import SiteConfigError, load_site_config
    from runner.suite.validate import SuiteCatalog

    operators = [o.strip() for o in (args.operators or "").split(",") if o.strip()] or None
    unknown = sorted(set(operators or []) - set(OPERATORS))
    if unknown:
        _say(f"--operators: unknown operator(s) {', '.join(unknown)}; one of: {', '.join(OPERATORS)}")
        return EXIT_INVALID
    try:
        site_config = load_site_config(Path(args.site_config), args.base_url) if args.site_config else None
    except SiteConfigError as err:
        _say(f"--site-config {err}")
        return EXIT_INVALID
    suite = _load([a for a in args.cases if Path(a).exists()], None)
    if isinstance(suite, int):
        return suite
    loaded, problems, _note, the_suite = suite
    if problems:
        _report_problems(problems)
        return EXIT_INVALID
    chosen = select_cases(loaded, [a for a in args.cases if not Path(a).exists()], None, [])
    if not chosen:
        errors.print("No case matches the selection " + " ".join(args.cases))
        return EXIT_INVALID
    catalog_path = _suite_dir() / "catalog.json"
    options = MutateOptions(
        out_root=Path(args.out),
        run_id=args.run_id or f"mutate-{new_run_id()}",
        workers=args.workers,
        operators=operators,
        base_url=args.base_url,
        site_config=site_config,
        chromium=args.chromium,
        catalog_tools=SuiteCatalog.load(catalog_path).tools() if catalog_path.is_file() else set(),
        baseline_runs=args.baseline_runs,
        confirm_kills=not args.no_confirm,
        browser_context=the_suite.config.browser_context(),
    )
    try:
        result = asyncio.run(mutate(chosen, options, lambda line: console.print(line, highlight=False)))
    except KeyboardInterrupt:
        errors.print("interrupted")
        return 130
    print_report(result, console)
    if result.score is None:
        return EXIT_NOT_RUN
    return EXIT_FAILED if result.score * 100 < args.min_score else EXIT_OK


# ---- label, calibrate, mcp ----------------------------------------------------


def _labels_path(args: argparse.Namespace) -> Path:
    return Path(args.labels) if args.labels else _suite_dir() / "labels.json"


def _cmd_label(args: argparse.Namespace) -> int:
    """Walk failing and sampled trials in the terminal; people's pass/fail per rubric criterion."""
    from runner.judge.labels import LabelsFile, label_trials, trials_to_label

    path = _labels_path(args)
    try:
        labels = LabelsFile.load(path)
        traces = [t for d in args.run_dirs for t in _run_input(d).traces]
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

    path = _labels_path(args)
    try:
        labels = LabelsFile.load(path)
        grader = _grader(args)
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


def _cmd_mcp(args: argparse.Namespace) -> int:
    """Serve the live page's active catalog as an MCP server (stdio or streamable HTTP)."""
    from playwright.async_api import Error as PlaywrightError

    from runner.agents.mcp_bridge import BridgeConfigError
    from runner.play.mcp_serve import serve_page

    try:
        return asyncio.run(
            serve_page(
                args.base_url,
                args.route,
                args.transport,
                args.host,
                args.port,
                chromium=args.chromium,
                log_path=args.log,
            )
        )
    except BridgeConfigError as err:
        errors.print(str(err), markup=False)
        return EXIT_INVALID
    except PlaywrightError as err:  # the site is down or the page does not open: not the user's typing
        _say(f"{args.base_url}: the page could not be opened: {str(err).splitlines()[0]}")
        return EXIT_NOT_RUN
    except KeyboardInterrupt:
        return 130


# ---- validate, schema, site --------------------------------------------------


def _cmd_validate(args: argparse.Namespace) -> int:
    from runner.suite.plan_contradictions import plan_warnings
    from runner.suite.validate import scope_warnings

    if args.route and not args.live:
        raise UsageError("--route names a route whose tools --live reads: give --live URL too")
    suite = _validate_live(args) if args.live else _load(args.paths, args.catalog, args.suite)
    if isinstance(suite, int):
        return suite
    loaded, problems, catalog_note, _ = suite
    for warning in scope_warnings(loaded) + plan_warnings(loaded):
        _say(f"warning: {warning}")
    problems = problems + _audit_catalog(args.paths, args.catalog, args.suite)
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
    return _validate_baselines(args, loaded, suite[3]) if args.baselines else EXIT_OK


def _validate_baselines(args: argparse.Namespace, loaded: list, suite: Any) -> int:
    """validate --baselines: the null agent over the suite; a case it passes must say why (null_agent).

    Exit 1 names each unexplained pass; 3 when some case could not be judged (the site or browser failed).
    """
    from runner.agents.null import NullAgent
    from runner.play.browser import ChromiumNotFound
    from runner.play.run import RunOptions, new_run_id, run_suite
    from runner.results.health import baseline_health

    _check_writable_dir(Path(args.out), "--out")
    options = RunOptions(
        agent_factory=NullAgent,
        out_root=Path(args.out),
        run_id=f"baselines-{new_run_id()}",
        workers=args.workers,
        base_url=args.base_url,
        site_config=_site_config(args, suite),
        screenshots="off",
        browser_context=suite.config.browser_context(),  # the suite's time zone and locale, as every run of it
    )
    console.print(f"baseline: the null agent over {len(loaded)} case(s) (reads the tools, calls none)")
    try:
        result = asyncio.run(run_suite(loaded, options))
    except ChromiumNotFound as err:
        _say(str(err))
        return EXIT_NOT_RUN
    health = baseline_health(result.traces)
    for line in health.lines():
        console.print(f"  {line}", markup=False, highlight=False)
    console.print(f"traces: {result.out_dir}", markup=False, highlight=False)
    said = {lc.case.id for lc in loaded if lc.case.null_agent}
    for cid in sorted(said - set(health.passed) - set(health.not_judged)):
        _say(f"warning: {cid}: says null_agent passes, but the null agent did not pass it: drop null_agent")
    for cid in health.unexplained:
        file = next(lc.file for lc in loaded if lc.case.id == cid)
        _say(
            f"{file}: {cid} passes with no agent, and the case does not say why: strengthen its answer or UI "
            "checks so a silent agent fails, or add null_agent: {passes: true, reason: ...}"
        )
    if health.unexplained:
        return EXIT_FAILED
    return EXIT_NOT_RUN if health.not_judged else EXIT_OK


def _validate_live(args: argparse.Namespace) -> tuple[list, list, str, Any] | int:
    """``validate --live URL``: every rule checked against the tools the cases' routes register now."""
    import tempfile

    from runner.play.browser import ChromiumNotFound
    from runner.play.catalog import DISCOVERY_SETTLE_MS, list_tools
    from runner.suite.case import NavigateAction
    from runner.suite.init import route_key

    if args.catalog:
        raise UsageError("--live reads the tools from the site; give --live URL or --catalog FILE, not both")
    if "://" not in args.live:
        raise UsageError(f"--live {args.live}: not a URL (e.g. http://127.0.0.1:8000/demo/)")
    first = _load(args.paths, None, args.suite)
    if isinstance(first, int) or first[1]:
        return first  # a case that does not load is reported as it is, before any browser starts
    loaded = first[0]
    routes = {lc.case.start_route for lc in loaded} | set(args.route or [])
    routes |= {s.to for lc in loaded for s in lc.case.steps if isinstance(s, NavigateAction)}
    try:
        listing = asyncio.run(list_tools(args.live, sorted(routes), settle_ms=DISCOVERY_SETTLE_MS))
    except ChromiumNotFound as err:
        _say(str(err))
        return EXIT_NOT_RUN
    broken = [r for r in listing if r.error]
    if broken:
        _say(f"--live: {broken[0].url}: {broken[0].error} (the tools could not be read; nothing was checked)")
        return EXIT_NOT_RUN
    catalog = {"routes": {k: v for r in listing for k, v in _route_tools(r, route_key).items()}}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "live-catalog.json"
        path.write_text(json.dumps(catalog), encoding="utf-8")
        checked = _load(args.paths, str(path), args.suite)
    if isinstance(checked, int):
        return checked
    shown = ", ".join(sorted(catalog["routes"]))
    return checked[0], checked[1], f"tools checked against {args.live} as it is now (routes {shown})", checked[3]


def _route_tools(reading: Any, route_key: Callable[[str], str]) -> dict[str, dict[str, Any]]:
    from runner.suite.init import offered  # the top page's tools, then its frames': what an agent is offered

    return {route_key(reading.route): {t.name: t.input_schema or {"type": "object"} for t in offered(reading)}}


def _audit_catalog(paths: list[str], catalog: str | None, suite_dir: str | None) -> list:
    """The audit's static rules on the suite's catalog: each finding a line; a bad audit setting is a problem."""
    from runner.audit.catalog_lint import catalog_audit

    lines, problems = catalog_audit(paths, catalog, suite_dir)
    for line in lines:
        _say(line)
    return problems


def _cmd_import(args: argparse.Namespace) -> int:
    """An evals.json as a suite folder of YAML cases, for editing (runner/suite/evals_json.py converts)."""
    from runner.suite.evals_json import WEAKER, write_suite

    source, out = Path(args.evals), Path(args.output)
    if not source.is_file():
        raise UsageError(f"{source}: no such file (give a webmcp-evals evals.json)")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"-o {out}: exists and is not an empty folder; give a new one")
    catalog_note = _import_schema(source, out, args.schema)
    written, problems, notes = write_suite(source, out, args.base_url)
    if catalog_note and not problems:
        from runner.suite.peer_files import check_against_catalog

        problems = check_against_catalog(out)
    if problems and catalog_note:  # nothing written: the folder is as empty as it was
        for placed in [*written, out / "suite.yaml", out / "catalog.json", out / "schema.json"]:
            placed.unlink(missing_ok=True)
    if catalog_note and not problems:
        notes = [catalog_note, *notes]
    if problems:
        _report_problems(problems)
        _say(f"nothing written: fix {source} (an unknown $ operator or key is never ignored)")
        return EXIT_INVALID
    console.print(f"{len(written)} case(s) and suite.yaml written to {out}", markup=False, highlight=False)
    made_up = [line.split(": made up ", 1)[0] for line in notes if ": made up " in line]
    if made_up:  # the reference plan plays them: a site that checks the value refuses the call (then not_run)
        console.print(
            f"made up {len(made_up)} plan value(s), marked synthesized in the cases: {'; '.join(made_up)}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    for line in notes:
        console.print(f"note: {line}", markup=False, highlight=False, soft_wrap=True)
    console.print("where the webmcp-evals format is weaker, a run here is stricter:", markup=False, highlight=False)
    for line in WEAKER:
        console.print(f"  - {line}", markup=False, highlight=False, soft_wrap=True)
    run = f"webmcp-eval run {out}" + ("" if args.base_url else " --base-url URL")
    console.print(f"next: webmcp-eval validate {out}; {run}", markup=False, highlight=False, soft_wrap=True)
    return EXIT_OK


def _import_schema(source: Path, out: Path, schema: str | None) -> str | None:
    """The peer's schema.json (given, or beside the evals) as the suite's catalog, before the cases are checked."""
    from runner.suite.peer_files import SCHEMA_FILE, PeerFileError, place_catalog

    path = Path(schema) if schema else source.with_name(SCHEMA_FILE)
    if not schema and not path.is_file():
        return None
    try:
        return place_catalog(path, out)
    except PeerFileError as err:
        raise UsageError(str(err)) from None


def _cmd_export(args: argparse.Namespace) -> int:
    """A suite as the public webmcp-evals files (runner/suite/peer_files.py writes them)."""
    from runner.suite.folder import SuiteError, find_suite
    from runner.suite.loader import load_cases
    from runner.suite.peer_files import SCHEMA_FILE, PeerFileError, export_suite, read_schema_tools

    folder = Path(args.suite)
    if not folder.is_dir():
        raise UsageError(f"{folder}: not a suite folder")
    try:
        suite = find_suite([folder])
        loaded, problems = load_cases(suite.case_files([folder]), suite.config.ignore)
        catalog_file, _ = suite.catalog_path()
        catalog = (
            json.loads(catalog_file.read_text(encoding="utf-8")) if catalog_file and catalog_file.is_file() else {}
        )
        described = read_schema_tools(folder / SCHEMA_FILE) if (folder / SCHEMA_FILE).is_file() else None
    except (SuiteError, PeerFileError, ValueError) as err:
        raise UsageError(str(err)) from None
    if problems:
        _report_problems(problems)
        _say(f"nothing written: fix the cases of {folder} first (webmcp-eval validate {folder})")
        return EXIT_INVALID
    count, skipped = export_suite([c.case for c in loaded], catalog, described, Path(args.output))
    console.print(
        f"{count} eval(s) written to {Path(args.output) / 'evals.json'}, the tool list to "
        f"{Path(args.output) / SCHEMA_FILE}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    for line in skipped:
        console.print(f"left out: {line}", markup=False, highlight=False, soft_wrap=True)
    return EXIT_OK


def _cmd_tools(args: argparse.Namespace) -> int:
    """What a page registers, per route (runner/play/catalog.py does the reading)."""
    from runner.play.browser import ChromiumNotFound
    from runner.play.catalog import DISCOVERY_SETTLE_MS, list_tools, tools_json, tools_text

    if "://" not in args.url:
        errors.print(f"{args.url}: not a URL (e.g. http://127.0.0.1:8000/demo/)", markup=False)
        return EXIT_INVALID
    settle_ms = DISCOVERY_SETTLE_MS if args.settle_ms is None else args.settle_ms
    if not 0 <= settle_ms <= 10_000:
        errors.print(f"--settle-ms {settle_ms}: give 0 to 10000 ms", markup=False)
        return EXIT_INVALID
    try:
        listing = asyncio.run(list_tools(args.url, args.route, chromium=args.chromium, settle_ms=settle_ms))
    except ChromiumNotFound as err:
        errors.print(str(err), markup=False)
        return EXIT_NOT_RUN
    sys.stdout.write(tools_json(listing) if args.json else tools_text(listing))
    return EXIT_NOT_RUN if any(r.error for r in listing) else EXIT_OK


def _cmd_init(args: argparse.Namespace) -> int:
    """A suite folder from a live site's tools (runner/play/catalog.py reads them, runner/suite/init.py writes it)."""
    from runner.play.browser import ChromiumNotFound
    from runner.play.catalog import DISCOVERY_SETTLE_MS, list_tools
    from runner.suite.init import InitError, check_folder, init_suite

    if "://" not in args.base_url:
        raise UsageError(f"--base-url {args.base_url}: not a URL (e.g. http://127.0.0.1:8000/demo/)")
    settle_ms = DISCOVERY_SETTLE_MS if args.settle_ms is None else args.settle_ms
    if not 0 <= settle_ms <= 10_000:
        raise UsageError(f"--settle-ms {settle_ms}: give 0 to 10000 ms")
    folder = Path(args.output)
    try:
        check_folder(folder)  # before any browser starts
        listing = asyncio.run(
            list_tools(args.base_url, args.route or ["/"], chromium=args.chromium, settle_ms=settle_ms)
        )
        result = init_suite(args.base_url, listing, folder, settle_ms)
    except InitError as err:
        errors.print(f"webmcp-eval init: {err}", markup=False, highlight=False, soft_wrap=True)
        return err.exit_code
    except ChromiumNotFound as err:
        errors.print(str(err), markup=False)
        return EXIT_NOT_RUN
    console.print(result.summary(), markup=False, highlight=False, soft_wrap=True)
    from runner.audit.catalog_lint import finding_line, lint_listing

    for finding in lint_listing(listing):  # the audit's static rules on what was read (webmcp-eval audit: all)
        console.print(finding_line(finding), markup=False, highlight=False, soft_wrap=True)
    return EXIT_OK


def _cmd_schema(args: argparse.Namespace) -> int:
    from runner.suite.case import case_json_schema

    text = json.dumps(case_json_schema(), indent=2, ensure_ascii=False) + "\n"
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as err:
            raise UsageError(
                f"-o {args.output}: cannot write it ({err.strerror or err}); give a writable path"
            ) from None
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _cmd_site(args: argparse.Namespace) -> int:
    from site_under_test.server import SiteStartError, run_site

    if args.data_dir and Path(args.data_dir).exists() and not Path(args.data_dir).is_dir():
        raise UsageError(f"--data-dir {args.data_dir}: is a file; give a directory (it is made if missing)")
    try:
        run_site(host=args.host, port=args.port, test_mode=args.test_mode, data_dir=args.data_dir)
    except SiteStartError as err:
        raise UsageError(str(err)) from None
    return EXIT_OK


# ---- parser --------------------------------------------------------------------


class Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line that says what to do (exit 2), not the whole usage."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_INVALID, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _number(kind: Callable[[str], float], low: float, high: float | None = None, *, above: bool = False):  # noqa: ANN202
    """An argparse type: a number from low (exclusive when above) to high, with a one-line reason when not."""
    bound = f"greater than {low:g}" if above else f"at least {low:g}"
    if high is not None:
        bound = f"from {low:g} to {high:g}"
    word = "a whole number" if kind is int else "a number"

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {word}") from None
        if value != value or value < low or (above and value == low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{text} is out of range: give {word} {bound}")
        return value

    return parse


POSITIVE = _number(int, 1)
PERCENT = _number(float, 0, 100)
SHARE = _number(float, 0, 1)  # a rate or probability, 0 to 1
NON_NEGATIVE = _number(int, 0)
RETRIES = _number(int, 0, 10)
PORT = _number(int, 0, 65535)
MILLISECONDS = _number(float, 0)
DAYS = _number(float, 0)
SECONDS = _number(float, 0, above=True)


def _regex(text: str) -> str:
    try:
        re.compile(text)
    except re.error as err:
        raise argparse.ArgumentTypeError(f"{text!r} is not a valid regular expression ({err})") from None
    return text


def _run_id(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", text) or text in (".", ".."):
        raise argparse.ArgumentTypeError(f"{text!r}: use up to 100 letters, digits, '.', '_' or '-'")
    return text


def _base_url(text: str) -> str:
    """http(s)://host[:port][/path]: the site to run against."""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError when the port is out of range
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"{text!r} is not a usable URL ({err})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"{text!r} is not a URL like http://127.0.0.1:8000")
    return text


def _ws_endpoint(text: str) -> str:
    """ws(s)://host:port/path of a Playwright browser server."""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError when the port is out of range
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"{text!r} is not a usable endpoint ({err})") from None
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"{text!r} is not a browser server endpoint like ws://127.0.0.1:3000/")
    return text


def _cdp_endpoint(text: str) -> str:
    """http(s)://host:port of a Chromium's DevTools (or its ws:// browser endpoint)."""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"{text!r} is not a usable URL ({err})") from None
    if parts.scheme not in ("http", "https", "ws", "wss") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"{text!r} is not a DevTools endpoint like http://127.0.0.1:9222")
    return text


def _add_run_arguments(run: argparse.ArgumentParser) -> None:
    run.add_argument(
        "cases",
        nargs="*",
        help="case IDs or globs (SEL-01, 'CONF-*'), or case files/directories, or one webmcp-evals evals.json "
        "(with --base-url)",
    )
    run.add_argument("-g", "--grep", type=_regex, help="only cases whose id or title matches this regex")
    run.add_argument("-b", "--behaviour", action="append", help="only cases of this behaviour (repeatable)")
    run.add_argument("--trials", type=POSITIVE, default=None, help="trials per case, each from clean state (default 1)")
    run.add_argument("-j", "--workers", type=POSITIVE, default=1, help="trials in parallel (default 1)")
    run.add_argument("--headed", action="store_true", help="show the browser; hold at confirmation points")
    run.add_argument("--slowmo", type=MILLISECONDS, default=None, metavar="MS", help="slow every browser action by MS")
    run.add_argument(
        "--hold-ms",
        type=NON_NEGATIVE,
        default=None,
        metavar="MS",
        help="headed: hold MS at a confirmation point (default: until Enter)",
    )
    run.add_argument(
        "--base-url", type=_base_url, help="an already running or deployed site instead of the embedded one"
    )
    run.add_argument("--site-config", help="YAML naming the site's hooks (reset, state, ...) and mutation rules")
    run.add_argument("--no-proxy", action="store_true", help="no proxy: network checks become not_run")
    run.add_argument("--chromium", help="the Chromium binary (else $WEBMCP_EVAL_CHROMIUM, Playwright's, system)")
    run.add_argument("--out", default="traces", help="where run directories go (default traces/)")
    run.add_argument("--run-id", type=_run_id, help="name of the run directory (default: a timestamp)")
    again = run.add_argument_group("running again")
    again.add_argument(
        "--resume",
        metavar="RUN_DIR",
        help="play only the planned trials of RUN_DIR that have no trace, into RUN_DIR; its report covers the plan",
    )
    again.add_argument(
        "--rerun-not-run", action="store_true", help="with --resume: also play again the trials that were not_run"
    )
    again.add_argument(
        "--last-failed",
        action="store_true",
        help="run again only the cases that failed in the latest run under --out (a new run)",
    )
    again.add_argument(
        "--retries",
        type=RETRIES,
        default=0,
        metavar="N",
        help="play a trial again, up to N times, when it could not run for an infrastructure reason "
        "(browser crash, lost connection, site unreachable or 5xx); a failed trial is never retried",
    )
    remote = run.add_argument_group("remote browsers")
    remote.add_argument(
        "--connect",
        type=_ws_endpoint,
        metavar="WS_ENDPOINT",
        help="play in browsers of a Playwright browser server (`playwright run-server --unsafe`): one per worker",
    )
    remote.add_argument(
        "--connect-over-cdp",
        type=_cdp_endpoint,
        metavar="URL",
        help="play in a running Chromium (started with --remote-debugging-port and --enable-features=WebMCP)",
    )
    remote.add_argument(
        "--proxy-host",
        default="127.0.0.1",
        metavar="HOST",
        help="where the proxy listens (default 127.0.0.1; 0.0.0.0 when the browser is on another machine)",
    )
    remote.add_argument(
        "--proxy-advertise",
        metavar="HOST",
        help="the proxy's host as the browser reaches it (default: --proxy-host; e.g. this machine's name)",
    )
    scale = run.add_argument_group("sharding")
    scale.add_argument(
        "--shard",
        type=_shard,
        metavar="i/n",
        help="play only shard i of n of the planned (case, trial) pairs; the same split on every machine",
    )
    scale.add_argument(
        "--durations",
        metavar="RUN_DIR_OR_FILE",
        help="balance --shard by trial durations from an earlier run directory (or a JSON id -> ms file)",
    )
    run.add_argument("--junit", help="also write JUnit XML here")
    run.add_argument("--markdown", metavar="FILE", help=MARKDOWN_HELP)
    run.add_argument("--json", help="also write the JSON summary here")
    run.add_argument(
        "--catalog", help="the site's tools per route, to check cases against (default: catalog.json beside the cases)"
    )
    run.add_argument(
        "--suite",
        metavar="DIR",
        help="the suite folder (its suite.yaml, catalog and cases) to take the cases from; "
        "default: the folder of the cases given, else cases/",
    )
    run.add_argument(
        "--skip-invalid",
        action="store_true",
        help="run the valid cases and list the invalid ones as not run (default: an invalid case stops the run)",
    )
    agent = run.add_argument_group("agents (default: the reference agent, deterministic evidence)")
    agent.add_argument(
        "--agent",
        choices=["reference", "openai", "anthropic", "none"],
        default="reference",
        help="openai: any OpenAI-compatible chat-completions endpoint (hosted, vLLM, Ollama, "
        "llama.cpp, LM Studio); anthropic: the Messages API; none: the null agent (reads the tools, "
        "calls none, answers nothing: the do-nothing baseline, a series of its own)",
    )
    agent.add_argument(
        "--baseline",
        choices=["none"],
        help="also play the null agent (none) over the same cases, one trial each, as a series of its own "
        "beside the agent's (never pooled; its failures decide no exit code); cases it passes are flagged "
        "'passes with no agent'",
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
    agent.add_argument("--max-steps", type=POSITIVE, default=16, help="model requests per trial (default 16)")
    agent.add_argument("--max-seconds", type=SECONDS, default=90.0, help="agent time per trial (default 90)")
    agent.add_argument("--max-tokens", type=POSITIVE, default=200_000, help="tokens per trial (default 200000)")
    agent.add_argument("--prices", help="YAML/JSON price table: model-prefix: {input, output} USD per 1M tokens")
    agent.add_argument(
        "--harness",
        metavar="COMMAND",
        help="an external agent harness as the trial's agent, through the MCP bridge: a command line with "
        "{prompt} and {mcp_config} placeholders, run once per user message; its final answer is its output",
    )
    graders = run.add_argument_group("model grader (rubric criteria; default: not judged)")
    graders.add_argument("--grader", choices=["openai", "anthropic"], help="judge rubric criteria with this provider")
    graders.add_argument("--grader-model", help="the grader's model name")
    graders.add_argument("--grader-api-base", help="the grader's endpoint (OpenAI-compatible or Anthropic)")
    graders.add_argument("--grader-api-key-env", help="environment variable with the grader's key")
    graders.add_argument(
        "--grader-cassette",
        choices=["off", "record", "replay"],
        default="off",
        help="record the grader's exchanges per trial, or replay them strictly (offline)",
    )
    graders.add_argument(
        "--grader-cassette-dir", default="cassettes/grader", help="grader cassettes' directory (cassettes/grader)"
    )
    graders.add_argument(
        "--labels", help="people's labels that calibrate the grader (default: labels.json beside the cases)"
    )
    users = run.add_argument_group("simulated user (goal cases, user: in the case; default: none)")
    users.add_argument("--user-simulator", choices=["openai", "anthropic"], help="a model plays the user of goal cases")
    users.add_argument("--user-model", help="the simulated user's model name")
    users.add_argument("--user-api-base", help="the simulated user's endpoint (OpenAI-compatible or Anthropic)")
    users.add_argument("--user-api-key-env", help="environment variable with the simulated user's key")
    users.add_argument(
        "--user-cassette",
        choices=["off", "record", "replay"],
        default="off",
        help="record the simulated user's answers per trial, or replay them strictly (offline)",
    )
    users.add_argument(
        "--user-cassette-dir", default="cassettes/user", help="simulated user cassettes' directory (cassettes/user)"
    )
    run.add_argument(
        "--health-min-trials",
        type=POSITIVE,
        default=5,
        metavar="N",
        help="flag cases with 0%% (broken task?) or 100%% (saturated) only over at least N trials (default 5)",
    )
    run.add_argument(
        "--trace",
        choices=["off", "on", "retain-on-failure"],
        default="off",
        help="keep Playwright's own trace.zip per trial (open with: playwright show-trace FILE)",
    )
    run.add_argument(
        "--screenshot",
        choices=["on", "off", "only-on-failure"],
        default="only-on-failure",
        help="the screenshot at each trial's end: only of trials that did not pass (only-on-failure, the "
        "default: taken once the verdict is known), every trial's (on), or none (off)",
    )
    run.add_argument("--fixtures", default="fixtures", help="record/replay fixture directory (default fixtures/)")
    run.add_argument(
        "--max-fixture-age",
        type=DAYS,
        default=30.0,
        metavar="DAYS",
        help="warn when a replayed fixture is older than this (default 30)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="webmcp-eval", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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

    rp = sub.add_parser("replay", help="re-run recorded traces offline against their fixtures, and compare")
    rp.add_argument("traces", nargs="+", help="trace files (…/trials/<CASE>.t1.json)")
    rp.add_argument("--fixtures", help="fixture directory (default: the fixtures/ beside the trace's trials/)")
    rp.add_argument("--live", action="store_true", help="against a live deployment instead (needs --base-url)")
    rp.add_argument("--base-url", type=_base_url, help="the deployment for --live")
    rp.add_argument("--out", default="traces/replays", help="where replay results go (default traces/replays)")
    rp.add_argument("--chromium", help="the Chromium binary")
    rp.set_defaults(func=_cmd_replay)

    cmp_ = sub.add_parser("compare", help="paired per-case differences between two runs, with a 95%% interval")
    cmp_.add_argument("run_a", help="the baseline run directory")
    cmp_.add_argument("run_b", help="the run to compare with it")
    cmp_.add_argument("--labels", metavar="FILE", help=LABELS_SERIES_HELP)
    cmp_.set_defaults(func=_cmd_compare)

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

    pw = sub.add_parser("power", help="cases and trials needed to detect a difference; the smallest detectable one")
    pw.add_argument("--baseline", type=SHARE, required=True, help="the baseline case pass rate, e.g. 0.7")
    pw.add_argument("--delta", type=SHARE, help="the difference to detect, e.g. 0.1")
    pw.add_argument("--cases", type=POSITIVE, help="the suite's size: report the smallest detectable difference")
    pw.add_argument("--trials", type=POSITIVE, default=1, help="trials per case (default 1)")
    pw.add_argument("--alpha", type=SHARE, default=0.05, help="significance level (default 0.05)")
    pw.add_argument("--power", type=SHARE, default=0.8, help="wanted power (default 0.8)")
    pw.set_defaults(func=_cmd_power)

    mut = sub.add_parser(
        "mutate",
        help="mutation testing of the suite: site bugs made in the page and the proxy; does a case fail?",
        description="Play the cases against mutants of the site (bugs applied in the browser and the proxy, "
        "the site untouched) and report the mutation score (killed / run), the survivors with the cases "
        "that passed although they saw the bug, equivalent mutants and mutants no case touches. "
        "Writes --out/<run-id>/mutation.json. Exit 1 when the score is below --min-score.",
    )
    mut.add_argument("cases", nargs="*", help="case IDs or globs, or case files/directories (default cases/)")
    mut.add_argument("--base-url", help="an already running or deployed site instead of the embedded one")
    mut.add_argument("--site-config", help="YAML naming the site's hooks (reset, state, ...)")
    mut.add_argument("--operators", help="comma-separated operators (default: all); see docs/suite-validity.md")
    mut.add_argument("-j", "--workers", type=POSITIVE, default=2, help="trials in parallel (default 2)")
    mut.add_argument(
        "--min-score", type=PERCENT, default=0.0, metavar="PCT", help="exit 1 below this score in %% (0-100)"
    )
    mut.add_argument(
        "--baseline-runs",
        type=POSITIVE,
        default=2,
        help="unmutated runs; what differs between them is noise (default 2)",
    )
    mut.add_argument(
        "--no-confirm", action="store_true", help="count a failing case as a kill at once (default: play it again)"
    )
    mut.add_argument("--out", default="traces", help="where the run directory goes (default traces/)")
    mut.add_argument("--run-id", help="name of the run directory (default mutate-<timestamp>)")
    mut.add_argument("--chromium", help="the Chromium binary")
    mut.set_defaults(func=_cmd_mutate)
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

    mcp = sub.add_parser(
        "mcp",
        help="serve a live page's WebMCP tools as an MCP server (stdio or streamable HTTP)",
        description="Open the page at --base-url + --route in Chromium with the shim and the DevTools "
        "witness, and serve its active catalog over MCP; the tool list is re-announced when the page's "
        "catalog changes, and every call goes through the page.",
    )
    mcp.add_argument("--base-url", type=_base_url, required=True, help="the site, e.g. http://127.0.0.1:8000")
    mcp.add_argument("--route", default="/", help="the page to open (default /)")
    mcp.add_argument("--transport", choices=["stdio", "http"], default="stdio", help="stdio or streamable HTTP")
    mcp.add_argument("--host", default="127.0.0.1", help="HTTP: bind address (default loopback)")
    mcp.add_argument("--port", type=PORT, default=8765, help="HTTP: port; 0 picks a free one (default 8765)")
    mcp.add_argument("--chromium", help="the Chromium binary")
    mcp.add_argument("--log", help="on exit, write the shim's log of registrations and calls here (JSON)")
    mcp.set_defaults(func=_cmd_mcp)

    val = sub.add_parser("validate", help="check the case suite itself (file:line for every problem)")
    val.add_argument(
        "paths", nargs="*", help="case files or directories (default cases/), or one webmcp-evals evals.json"
    )
    val.add_argument("--catalog", help="the site's tools per route (default: catalog.json beside the cases)")
    val.add_argument("--suite", metavar="DIR", help="the suite folder (default: the folder of the paths given)")
    val.add_argument(
        "--live",
        metavar="URL",
        help="check every rule against the tools the site at URL registers now, on each case's start route "
        "and the routes it navigates to (instead of a catalog file; nothing is played)",
    )
    val.add_argument(
        "--route", action="append", metavar="R", help="with --live: also read the tools of this route (repeatable)"
    )
    base = val.add_argument_group("the do-nothing baseline")
    base.add_argument(
        "--baselines",
        action="store_true",
        help="also play the null agent (reads the tools, calls none, answers nothing) over the suite: exit 1 "
        "naming each case it passes that does not say why (null_agent: {passes: true, reason: ...})",
    )
    base.add_argument("--base-url", type=_base_url, help="with --baselines: the site (default: the suite's own)")
    base.add_argument("--site-config", help="with --baselines: YAML naming the site's hooks")
    base.add_argument("--out", default="traces", help="with --baselines: where its run directory goes (traces/)")
    base.add_argument("-j", "--workers", type=POSITIVE, default=1, help="with --baselines: trials in parallel (1)")
    val.set_defaults(func=_cmd_validate)

    imp = sub.add_parser(
        "import",
        help="convert a webmcp-evals evals.json into a suite folder of YAML cases",
        description="Write one YAML case per eval of a public webmcp-evals evals.json, and suite.yaml, into "
        "-o DIR: messages become the step (earlier turns its history), expectedCall both the expectation and "
        "the reference plan, null 'no tool calls'; groups, optional calls and matchers map one to one. "
        "An unknown $ operator or a misspelled key is an error (exit 2, nothing written). "
        "run and validate also take an evals.json directly.",
    )
    imp.add_argument("evals", help="the evals.json (a JSON array of {name, messages, expectedCall})")
    imp.add_argument("-o", "--output", required=True, metavar="DIR", help="a new or empty folder for the suite")
    imp.add_argument("--base-url", help="the site the evals are for, written into suite.yaml")
    imp.add_argument(
        "--schema",
        help="the webmcp-evals tool list (schema.json) as the suite's catalog "
        "(default: schema.json beside the evals, when there is one)",
    )
    imp.set_defaults(func=_cmd_import)

    exp = sub.add_parser(
        "export",
        help="write a suite as a webmcp-evals evals.json and its tool list (schema.json)",
        description="Write SUITE's cases as one eval each into -o DIR/evals.json, and the tools of its catalog "
        "(with the descriptions of an imported schema.json) as DIR/schema.json. A case the public format cannot "
        "say (scripted steps, forbidden calls, an operator it lacks) is left out and named.",
    )
    exp.add_argument("suite", help="the suite folder")
    exp.add_argument("-o", "--output", required=True, metavar="DIR", help="where evals.json and schema.json go")
    exp.set_defaults(func=_cmd_export)

    tools = sub.add_parser(
        "tools",
        help="list the WebMCP tools a page registers, per route",
        description="Open URL (and each --route under it) in Chromium and list every tool the page registers: "
        "name, description, input schema, annotations (readOnlyHint, untrustedContentHint, ...), imperative "
        "(registerTool) or declarative (<form toolname>), and the native or polyfill WebMCP path. "
        "Exit 3 when a page cannot be opened.",
    )
    tools.add_argument("url", help="the page, or the base URL the routes resolve under (e.g. http://host/demo/)")
    tools.add_argument("--route", action="append", help="a route under URL, e.g. / or cart.html (repeatable)")
    tools.add_argument("--json", action="store_true", help="print JSON instead of text")
    tools.add_argument(
        "--settle-ms",
        type=int,
        help="quiet time that counts as settled (default 1000; raise it for tools that register later)",
    )
    tools.add_argument("--chromium", help="the Chromium binary")
    tools.set_defaults(func=_cmd_tools)

    ini = sub.add_parser(
        "init",
        help="write a suite folder for a live site: suite.yaml, its catalog, one starter case per tool",
        description="Open --base-url (and each --route under it) in Chromium, read the WebMCP tools each page "
        "registers, and write into -o DIR (new or empty): suite.yaml (the site's base URL, settle time and "
        "network policy, the catalog, the behaviours), catalog.json (the tools per route, as read), and one "
        "starter case per tool that validates and runs green with the reference agent. A tool marked "
        "readOnlyHint is called with schema-valid example arguments; any other tool may write, so its starter "
        "asks about it and expects it not to be called. Exit 2 for a non-empty DIR, 3 when the site cannot "
        "be opened or registers no tools.",
    )
    ini.add_argument("--base-url", required=True, help="the site, with its path (e.g. http://host/demo/)")
    ini.add_argument("--route", action="append", help="a route under the base URL to read (default /; repeatable)")
    ini.add_argument("-o", "--output", default="suite", metavar="DIR", help="the new suite folder (default suite)")
    ini.add_argument(
        "--settle-ms",
        type=int,
        help="quiet time that counts as settled, also written to suite.yaml (default 1000)",
    )
    ini.add_argument("--chromium", help="the Chromium binary")
    ini.set_defaults(func=_cmd_init)

    schema = sub.add_parser("schema", help="print the JSON Schema of the case format")
    schema.add_argument("-o", "--output", help="write it to this file")
    schema.set_defaults(func=_cmd_schema)

    from runner.audit.command import add_audit_parser  # webmcp-eval audit: its own module

    add_audit_parser(sub)

    site = sub.add_parser("site", help="serve the demo events site")
    site.add_argument("--host", default="127.0.0.1", help="bind address (default: loopback only)")
    site.add_argument("--port", type=PORT, default=8000, help="port; 0 picks a free one")
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
    try:
        return args.func(args)
    except UsageError as err:
        errors.print(f"webmcp-eval {args.command}: {err}", markup=False, highlight=False, soft_wrap=True)
        return EXIT_INVALID
    except KeyboardInterrupt:
        errors.print("interrupted", markup=False, highlight=False)
        return EXIT_INTERRUPTED
    except Exception as err:  # a bug of ours: one line for the user, the traceback only when asked
        if os.environ.get("WEBMCP_EVAL_DEBUG"):
            raise
        errors.print(
            f"webmcp-eval {args.command}: internal error: {type(err).__name__}: {_one_line(err)} "
            "(WEBMCP_EVAL_DEBUG=1 shows the traceback)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        return EXIT_NOT_RUN


if __name__ == "__main__":
    sys.exit(main())
