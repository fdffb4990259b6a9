"""A run from the command line's choices to its exit code: cases, agent, play, reports, Ctrl-C."""

from __future__ import annotations

import argparse
import asyncio
import errno
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_NOT_RUN, EXIT_OK, CannotRun, InvalidInput, UsageError
from runner.evaluation.loading import (
    is_evals,
    load_cases,
    select,
    skip_invalid,
    surface_checks_of,
)
from runner.evaluation.output import check_writable_dir, console, errors, report_problems, say
from runner.evaluation.players import agent_factory_for, grader_of, harness_choice, simulator_factory_for
from runner.evaluation.reporting import (
    ResumeProgress,
    end_reports,
    print_coverage,
    print_fixture_news,
    print_graders_and_health,
    reporters_for,
)
from runner.evaluation.resume import check_same_agent, last_failed, resume_selection
from runner.report.reporters import IN_RUN_DIR
from runner.rundir.layout import RunDir
from runner.rundir.reading import planned_traces
from runner.suite.browser_context import BrowserContextSettings
from runner.suite.site import split_credentials

if TYPE_CHECKING:
    from runner.agents.protocol import Agent
    from runner.agents.simulated_user import SimulatedUser
    from runner.judge.grader import ModelGrader
    from runner.play.run.settings import RunSettings, RunState
    from runner.results.run_results import RunInput
    from runner.rundir.plan import RunPlan
    from runner.suite.folder import Suite
    from runner.suite.loader import LoadedCase
    from runner.suite.site import SiteConfig


@dataclass
class Scope:
    """What a run plays: the chosen cases of its suite, where it writes, and (resuming) the selection of trials."""

    cases: list[LoadedCase]  # in suite order
    suite: Suite
    site_config: SiteConfig | None  # None: the embedded demo site or a bare --base-url
    out_root: Path
    run_id: str
    selection: frozenset[str] | None = None  # --resume: the planned trials still to play
    resumed: Path | None = None  # --resume: the run directory played into
    skipped: list[str] = field(default_factory=list)  # --skip-invalid: the invalid files not run
    live_rules: bool = False  # no catalog file: each trial checks the rules against the tools it saw
    plan: RunPlan | None = None  # --resume: the run plan of the run directory, read once


def run_context(suite: BrowserContextSettings, args: argparse.Namespace) -> BrowserContextSettings:
    """The suite's time zone and locale, with --timezone's zone instead when it is given."""
    zone = getattr(args, "timezone", None)
    return BrowserContextSettings(zone, suite.locale) if zone else suite


def run_command(args: argparse.Namespace) -> int:
    """run and record: the cases (new, resumed or the last failed), the run's settings and state built once, play,
    report."""
    scope = resumed_scope(args) if args.resume else new_scope(args)
    settings, state = run_inputs(args, scope)
    code = play(args, scope, settings, state)
    if code in (EXIT_OK, EXIT_FAILED, EXIT_NOT_RUN):  # the trials ran: which tools did the cases touch
        print_coverage([lc.case for lc in scope.cases], scope.suite, args.catalog)
    return code


def new_scope(args: argparse.Namespace) -> Scope:
    """The cases a new run plays: loaded and checked as validate does, then selected; InvalidInput when invalid."""
    from runner.play.run.run import new_run_id

    case_args = [a for a in args.cases if Path(a).exists()]
    patterns = [a for a in args.cases if not Path(a).exists()]
    if args.last_failed:
        case_args, patterns = last_failed(args, patterns)
    loaded_suite = load_cases(case_args, args.catalog, args.suite)
    loaded, problems, catalog_note, suite = (
        loaded_suite.cases,
        loaded_suite.problems,
        loaded_suite.note,
        loaded_suite.suite,
    )
    skipped: list[str] = []
    if problems:
        report_problems(problems)
        if not args.skip_invalid:
            raise InvalidInput(
                f"nothing ran: fix the cases above, or pass --skip-invalid to run the rest ({catalog_note})"
            )
        loaded, skipped = skip_invalid(loaded, problems, patterns, args)
    elif "no catalog" in catalog_note:
        say(f"note: {catalog_note}; each trial checks the rules against the tools its pages register")
    chosen = select(args, loaded, patterns)
    if any(is_evals(a) for a in case_args) and not (args.base_url or args.site_config):
        raise UsageError("an evals.json names no site: give --base-url URL (the page the evals are for)")
    site_config = site_config_for(args, suite)  # before anything is written
    out_root = Path(args.out)
    check_writable_dir(out_root, "--out")
    console.print(catalog_note, markup=False, highlight=False, soft_wrap=True)
    run_id = args.run_id or new_run_id()
    return Scope(chosen, suite, site_config, out_root, run_id, skipped=skipped, live_rules="no catalog" in catalog_note)


def resumed_scope(args: argparse.Namespace) -> Scope:
    """--resume RUN_DIR: its planned cases, and the selection: the planned trials that have no trace yet."""
    chosen, selection, run_dir, suite, plan = resume_selection(args)
    site_config = site_config_for(args, suite)
    return Scope(
        chosen, suite, site_config, run_dir.parent, run_dir.name, frozenset(selection), resumed=run_dir, plan=plan
    )


def run_inputs(args: argparse.Namespace, scope: Scope) -> tuple[RunSettings, RunState]:
    """The run's settings (from the flags and what they resolved to) and its state (the plan, built here once, the
    selection, the fixture store and the grader); neither changes after."""
    from runner.play.evidence.fixture_store import FixtureStore
    from runner.play.run.run import plan_of
    from runner.play.run.settings import RunSettings, RunState

    fixtures = None
    if args.network != "live":
        fixtures = FixtureStore(Path(args.fixtures), args.network, max_age_days=args.max_fixture_age)
    harness, agent_factory, grader, simulator_factory = players(args, scope.suite)
    settings = RunSettings(
        agent_factory=agent_factory,
        out_root=scope.out_root,
        run_id=scope.run_id,
        trials=args.trials,
        workers=args.workers,
        headed=args.headed,
        slowmo=args.slowmo,
        hold_ms=args.hold_ms,
        base_url=args.base_url,
        site_config=scope.site_config,
        proxy=not args.no_proxy,
        chromium=args.chromium,
        network_mode=args.network,
        playwright_trace=args.trace,
        screenshots=args.screenshot,
        simulator_factory=simulator_factory,
        shard=args.shard,
        durations=durations(args),
        retries=args.retries,
        connect=args.connect,
        connect_over_cdp=args.connect_over_cdp,
        proxy_host=args.proxy_host,
        proxy_advertise=args.proxy_advertise,
        browser_context=run_context(scope.suite.config.browser_context(), args),  # suite.yaml's, or --timezone
        harness=harness,
        live_rules=scope.live_rules,
        **surface_checks_of(args, scope.suite),  # the catalog's hints, the audit's rule for descriptions
        force=getattr(args, "force", False),
    )
    if scope.resumed is not None and scope.plan is not None:  # a resumed scope has both: the run directory's plan,
        check_same_agent(scope.resumed, scope.plan, agent_factory)  # its traces carry its hash, its worlds its shard
        plan: RunPlan = scope.plan
    else:  # built once, with its hash: open_run writes this very plan
        plan = plan_of(scope.cases, settings, agent_factory())
    state = RunState(
        plan=plan, selection=scope.selection, resuming=scope.resumed is not None, fixtures=fixtures, grader=grader
    )
    return settings, state


def players(
    args: argparse.Namespace, suite: Suite
) -> tuple[dict[str, Any] | None, Callable[[], Agent], ModelGrader | None, Callable[[], SimulatedUser] | None]:
    """(harness, agent factory, grader, simulator factory) from the flags; a wrong one is a usage error."""
    harness = harness_choice(args, suite)
    try:
        agent_factory = agent_factory_for(args, harness)
    except ValueError as err:
        raise UsageError(f"invalid agent options: {err}") from None
    try:
        grader = grader_of(args)
    except ValueError as err:
        raise UsageError(f"invalid grader options: {err}") from None
    try:
        simulator_factory = simulator_factory_for(args)
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
    return harness, agent_factory, grader, simulator_factory


def play(args: argparse.Namespace, scope: Scope, settings: RunSettings, state: RunState) -> int:
    """Play the trials with progress lines, then the reports; Ctrl-C keeps what ran and says how to go on."""
    from runner.play.browser.browser import BrowserUnavailable
    from runner.play.run.run import run_suite
    from runner.results.run_results import RunInput, build_results

    chosen = scope.cases
    out_dir = settings.out_root / scope.run_id  # the settings' run id
    resuming = state.resuming
    plan = state.plan
    # summary.json's header; the site's version joins it after the run
    run_info: dict[str, Any] = {"run_id": scope.run_id}
    reporters = reporters_for(args, out_dir, IN_RUN_DIR, progress=not resuming, json_extra=run_info)
    reporters.begin(plan)
    if resuming:
        reporters.reporters.insert(0, ResumeProgress(len(state.selection or ())))
    console.print(f"webmcp-eval: {playing(settings, state, out_dir, chosen)}", markup=False, highlight=False)
    # No Chromium (exit 3), or another run's directory (RunDirBusy, RunIdTaken: nothing was written into it, exit 2)
    # go to the command line as they are.
    try:
        result = asyncio.run(run_suite(chosen, settings, state, on_trial=reporters.trial_done))
    except BrowserUnavailable:  # a wrong --connect endpoint: nothing ran, nothing is left behind
        if not resuming and RunDir(out_dir).only_plan():
            shutil.rmtree(out_dir, ignore_errors=True)
        raise
    except OSError as err:
        if err.errno not in DISK_FULL:
            raise
        raise DiskFull(
            f"cannot write {err.filename or out_dir}: {err.strerror}; the traces "
            f"written so far are kept: make room, then go on with: webmcp-eval run --resume {out_dir}"
        ) from None
    except KeyboardInterrupt:
        return interrupted(args, out_dir, plan)
    run_info["site"] = result.site_info
    traces = planned_traces(out_dir, plan) if resuming else result.traces
    runs = [RunInput(traces, plan), *play_control(args, chosen, settings, state, out_dir)]
    code = end_reports(reporters, build_results(runs))
    print_graders_and_health([t for r in runs for t in r.traces], out_dir, args.health_min_trials)
    if state.fixtures is not None:
        print_fixture_news(state.fixtures)
    if scope.skipped:
        console.print(f"{len(scope.skipped)} invalid case file(s) skipped, not run (--skip-invalid)", highlight=False)
    return EXIT_NOT_RUN if scope.skipped and code == EXIT_OK else code


DISK_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS)  # the disk, not the run: resumable


class DiskFull(CannotRun):
    """The disk filled up (or went read-only) during the run: the traces written so far are kept, exit 3."""

    named = True


def playing(settings: RunSettings, state: RunState, out_dir: Path, chosen: list[LoadedCase]) -> str:
    """The run's header line: what is played, by whom, how, against which site."""
    what = (
        f"{len(state.selection or ())} planned trial(s) of {out_dir}"
        if state.resuming
        else f"{len(chosen)} case(s) × {settings.trials} trial(s)"
    )
    if settings.shard and not state.resuming and state.plan is not None:
        what += f", shard {settings.shard[0]}/{settings.shard[1]}: {len(state.plan['trials'])} trial(s)"
    if settings.harness:
        what += f", agent: harness {settings.harness['command']!r} (from {settings.harness['source']})"
    headed = "headed" if settings.headed else "headless"
    return f"{what}, {settings.workers} worker(s), {headed}, site {site_shown(settings)}"


def play_control(
    args: argparse.Namespace, chosen: list[LoadedCase], settings: RunSettings, state: RunState, out_dir: Path
) -> list[RunInput]:
    """run --control none: the null agent over the same cases, as a run of its own inside this one.

    One trial per case (it does the same nothing every time), into <run>/<run-id>-control/; its
    series is reported beside the agent's and never pooled with it, and its failures decide no exit code.
    """
    if not getattr(args, "control", None):
        return []
    import dataclasses

    from runner.agents.null import NullAgent
    from runner.play.run.run import run_suite
    from runner.results.run_results import RunInput

    control = dataclasses.replace(
        settings,
        agent_factory=NullAgent,
        out_root=out_dir,
        run_id=RunDir.control_id(out_dir.name),
        trials=1,
        harness=None,
    )
    # its own plan (the null agent's, one trial per case), and no grader
    control_state = dataclasses.replace(state, plan=None, grader=None)
    console.print(f"control: the null agent over {len(chosen)} case(s) (reads the tools, calls none)", highlight=False)
    result = asyncio.run(run_suite(chosen, control, control_state))
    return [RunInput(result.traces, result.plan, result.run_id)]


def interrupted(args: argparse.Namespace, out_dir: Path, plan: RunPlan | None) -> int:
    """Ctrl-C: keep every trace written, write a partial report marked incomplete, say how to go on (one line)."""
    from runner.results.run_results import RunInput, build_results

    try:
        traces = planned_traces(out_dir, plan)
    except (OSError, ValueError):
        plan, traces = None, []
    results = build_results([RunInput(traces, plan)])
    reporters = reporters_for(args, out_dir, IN_RUN_DIR, json_extra={"run_id": out_dir.name}, quiet=True)
    reporters.end(results)  # files only: the one line below is all the console gets
    errors.print(
        f"interrupted: {results.completeness.text().split(' (')[0]}, their traces kept in {out_dir}; "
        f"go on with: webmcp-eval run --resume {out_dir}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    return EXIT_INTERRUPTED


def durations(args: argparse.Namespace) -> dict[str, float] | None:
    from runner.play.run.shard import read_durations
    from runner.rundir.plan import ShardError

    if not args.durations:
        return None
    try:
        return read_durations(args.durations)
    except ShardError as err:
        raise UsageError(str(err)) from None


def site_config_for(args: argparse.Namespace, suite: Suite) -> SiteConfig | None:
    """--site-config, else the suite's own site (suite/folder.py); None: the embedded demo or a bare --base-url."""
    from runner.suite.folder import SuiteError, site_for_run

    try:
        return site_for_run(suite, args.base_url, args.site_config)
    except SuiteError as err:
        raise UsageError(str(err)) from None


def site_shown(settings: RunSettings) -> str:
    config = settings.site_config
    shown = settings.base_url or (config.base_url if config else "") or "embedded demo site (test mode)"
    return split_credentials(shown)[0]  # a password in the URL is never printed
