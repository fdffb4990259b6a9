"""A run from its request to its exit code: cases, agent, play, reports, Ctrl-C."""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from webmcp_eval.agents.null import NullAgent
from webmcp_eval.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_NOT_RUN,
    EXIT_OK,
    CannotRun,
    InvalidInput,
    Outcome,
    UsageError,
)
from webmcp_eval.evaluation.demo_site import embedded_demo_site
from webmcp_eval.evaluation.loading import is_evals, load_cases, site_config_for, surface_checks_of
from webmcp_eval.evaluation.output import check_writable_dir, console, errors, report_problems, say
from webmcp_eval.evaluation.players import (
    AgentChoice,
    GraderChoice,
    UserChoice,
    agent_factory_for,
    grader_of,
    harness_choice,
    simulator_factory_for,
)
from webmcp_eval.evaluation.reporting import (
    ReportFiles,
    ResumeProgress,
    end_reports,
    print_coverage,
    print_fixture_news,
    print_graders_and_health,
    reporters_for,
    trend_of,
)
from webmcp_eval.evaluation.resume import check_same_agent, last_failed, resume_selection
from webmcp_eval.play.browser.browser import BrowserUnavailable
from webmcp_eval.play.evidence.fixture_store import FixtureStore
from webmcp_eval.play.run.run import new_run_id, plan_of, run_suite, select_cases
from webmcp_eval.play.run.settings import (
    BrowserSettings,
    NetworkSettings,
    OutputSettings,
    PlanSettings,
    RunSettings,
    RunState,
    SiteSettings,
)
from webmcp_eval.play.run.shard import read_durations
from webmcp_eval.report.reporters import IN_RUN_DIR
from webmcp_eval.results.run_results import RunInput, build_results
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.rundir.plan import RunPlan, ShardError, replanned
from webmcp_eval.rundir.reading import planned_traces
from webmcp_eval.suite.browser_context import BrowserContextSettings
from webmcp_eval.suite.folder import Suite
from webmcp_eval.suite.loader import LoadedCase, Problem
from webmcp_eval.suite.site import SiteConfig, split_credentials
from webmcp_eval.suite.validate import split_valid

if TYPE_CHECKING:
    from webmcp_eval.agents.protocol import Agent
    from webmcp_eval.agents.simulated_user import SimulatedUser
    from webmcp_eval.judge.grader import ModelGrader


@dataclass(frozen=True)
class RunRequest:
    """What ``run`` and ``record`` are asked to do (each field is the flag of its name; README.md lists them).

    The command line builds it from its arguments; the pytest plugin, the benchmarks and the tests can build
    one directly. ``check()`` refuses the combinations that cannot work, before any case loads."""

    cases: tuple[str, ...] = ()  # case ids or globs, case files or folders, or one evals.json
    grep: str | None = None
    behaviour: tuple[str, ...] = ()
    trials: int | None = None  # None: 1 for a new run, the plan's for --resume
    workers: int = 1
    base_url: str | None = None
    site_config: str | None = None
    timezone: str | None = None
    # --out, --run-id, --force, --break-lock (the run directory's lock is taken over: the user says no run plays there)
    output: OutputSettings = field(default_factory=OutputSettings)
    browser: BrowserSettings = field(default_factory=BrowserSettings)  # --chromium, --connect, --headed, --screenshot..
    network: NetworkSettings = field(default_factory=NetworkSettings)  # --no-proxy, --network, --proxy-host...
    resume: str | None = None
    rerun_not_run: bool = False
    force_replan: bool = False
    last_failed: bool = False
    retries: int = 0
    shard: tuple[int, int] | None = None
    durations: str | None = None
    outputs: ReportFiles = field(default_factory=ReportFiles)  # --json, --junit, --html, --markdown ...
    catalog: str | None = None
    suite: str | None = None
    skip_invalid: bool = False
    agent: AgentChoice = field(default_factory=AgentChoice)
    control: str | None = None  # none: also play the null agent beside the agent (the control)
    grader: GraderChoice = field(default_factory=GraderChoice)
    user: UserChoice = field(default_factory=UserChoice)
    health_min_trials: int = 5
    fixtures: str = "fixtures"
    max_fixture_age: float = 30.0
    history: str | None = None  # where the earlier runs of the HTML report's trend are (default: --out)
    no_history: bool = False

    def check(self) -> None:
        """Everything about the request that can be checked before any case loads or browser starts."""
        output, browser, network = self.output, self.browser, self.network
        trend_of(Path(), self.history, self.no_history)  # --history names a folder
        if self.resume:
            if any((self.cases, self.grep, self.behaviour, self.last_failed, output.run_id)) or self.trials is not None:
                raise UsageError(
                    "--resume plays the plan of RUN_DIR as it is: "
                    "drop case selections, --last-failed, --run-id and --trials"
                )
        elif self.rerun_not_run or self.force_replan:
            raise UsageError(
                f"{'--rerun-not-run' if self.rerun_not_run else '--force-replan'} goes with --resume RUN_DIR"
            )
        if self.resume and output.force:
            raise UsageError("--force replaces a run; --resume goes on with one: give one of them")
        if self.resume and self.shard:
            raise UsageError("--resume plays the shard its RUN_DIR was planned for: drop --shard")
        if self.durations and not self.shard:
            raise UsageError("--durations balances --shard i/n: give both")
        if self.control and (self.resume or self.shard or self.agent.agent.provider == "none"):
            raise UsageError(
                "--control none plays beside a new, whole run of another agent: drop --resume/--shard, or "
                "play the null agent as a run of its own (--agent none)"
            )
        if network.network_mode != "live" and not network.proxy:
            raise UsageError(f"--network {network.network_mode} needs the proxy; drop --no-proxy")
        if browser.connect and browser.connect_over_cdp:
            raise UsageError("--connect and --connect-over-cdp each name the browser: give one")
        if browser.connect_over_cdp and browser.chromium:
            raise UsageError("--chromium has no effect on a Chromium reached with --connect-over-cdp: drop it")
        if network.proxy_advertise and not network.proxy:
            raise UsageError("--proxy-advertise goes with the proxy: drop --no-proxy")
        if browser.chromium and not browser.connect and not Path(browser.chromium).is_file():  # remote: a path there
            raise UsageError(f"--chromium {browser.chromium}: no such file; give the path of a Chromium binary")
        self.outputs.check()  # every --json, --junit, --html, --markdown ... file, before anything plays


@dataclass
class Scope:
    """What a run plays: the chosen cases of its suite, where it writes, and (resuming) the selection of trials."""

    cases: list[LoadedCase]  # in suite order
    suite: Suite
    site_config: SiteConfig | None  # None: the embedded demo site or a bare --base-url
    out_root: Path
    run_id: str
    trials: int  # per case: --trials (default 1), or the plan's when resuming
    selection: frozenset[str] | None = None  # --resume: the planned trials still to play
    resumed: Path | None = None  # --resume: the run directory played into
    skipped: list[str] = field(default_factory=list)  # --skip-invalid: the invalid files not run
    live_rules: bool = False  # no catalog file: each trial checks the rules against the tools it saw
    plan: RunPlan | None = None  # --resume: the run plan of the run directory, read once


@dataclass(frozen=True)
class RunOutcome(Outcome):
    """How a run ended: its exit code and the run directory its traces and reports are in."""

    out_dir: Path


def run_context(suite: BrowserContextSettings, timezone: str | None) -> BrowserContextSettings:
    """The suite's time zone and locale, with --timezone's zone instead when it is given."""
    return BrowserContextSettings(timezone, suite.locale) if timezone else suite


def run_command(request: RunRequest) -> RunOutcome:
    """run and record: the cases (new, resumed or the last failed), the run's settings and state built once, play,
    report."""
    request.check()
    scope = resumed_scope(request) if request.resume else new_scope(request)
    settings, state = run_inputs(request, scope)
    code = play(request, scope, settings, state)
    if code in (EXIT_OK, EXIT_FAILED, EXIT_NOT_RUN):  # the trials ran: which tools did the cases touch
        print_coverage([lc.case for lc in scope.cases], scope.suite, request.catalog)
    return RunOutcome(code, scope.resumed or scope.out_root / scope.run_id)


def new_scope(request: RunRequest) -> Scope:
    """The cases a new run plays: loaded and checked as validate does, then selected; InvalidInput when invalid."""
    case_args = [a for a in request.cases if Path(a).exists()]
    patterns = [a for a in request.cases if not Path(a).exists()]
    if request.last_failed:
        case_args, patterns = last_failed(Path(request.output.out_root), patterns)
    loaded_suite = load_cases(case_args, request.catalog, request.suite)
    loaded, problems, catalog_note, suite = (
        loaded_suite.cases,
        loaded_suite.problems,
        loaded_suite.note,
        loaded_suite.suite,
    )
    skipped: list[str] = []
    if problems:
        report_problems(problems)
        if not request.skip_invalid:
            raise InvalidInput(
                f"nothing ran: fix the cases above, or pass --skip-invalid to run the rest ({catalog_note})"
            )
        loaded, skipped = skip_invalid(loaded, problems, patterns, request)
    elif "no catalog" in catalog_note:
        say(f"note: {catalog_note}; each trial checks the rules against the tools its pages register")
    chosen = select(request, loaded, patterns)
    if any(is_evals(a) for a in case_args) and not (request.base_url or request.site_config):
        raise UsageError("an evals.json names no site: give --base-url URL (the page the evals are for)")
    site_config = site_config_for(suite, request.base_url, request.site_config)  # before anything is written
    out_root = Path(request.output.out_root)
    check_writable_dir(out_root, "--out")
    console.print(catalog_note, markup=False, highlight=False, soft_wrap=True)
    run_id = request.output.run_id or new_run_id()
    trials = request.trials if request.trials is not None else 1
    live_rules = "no catalog" in catalog_note
    return Scope(chosen, suite, site_config, out_root, run_id, trials, skipped=skipped, live_rules=live_rules)


def select(request: RunRequest, loaded: list[LoadedCase], patterns: list[str]) -> list[LoadedCase]:
    chosen = select_cases(loaded, patterns, request.grep, list(request.behaviour))
    if not chosen:
        asked = " ".join([*request.cases, *([f"--grep {request.grep}"] if request.grep else [])])
        raise UsageError(f"No case matches the selection {asked}; `webmcp-eval validate` lists the suite's cases")
    return chosen


def skip_invalid(
    loaded: list[LoadedCase], problems: list[Problem], patterns: list[str], request: RunRequest
) -> tuple[list[LoadedCase], list[str]]:
    """--skip-invalid: the valid cases, and the invalid files this selection would have run (its not-run ones)."""
    valid, invalid_files = split_valid(loaded, problems)
    skipped = invalid_files
    if patterns or request.grep or request.behaviour:
        # A file that did not even load has no id: only a run of everything counts it.
        invalid = [lc for lc in loaded if lc.file in invalid_files]
        skipped = [lc.file for lc in select_cases(invalid, patterns, request.grep, list(request.behaviour))]
    for file in skipped:
        say(f"skipped (invalid, not run): {file}")
    return valid, skipped


def resumed_scope(request: RunRequest) -> Scope:
    """--resume RUN_DIR: its planned cases, and the selection: the planned trials that have no trace yet."""
    assert request.resume is not None
    resumed = resume_selection(
        request.resume,
        rerun_not_run=request.rerun_not_run,
        force_replan=request.force_replan,
        catalog=request.catalog,
    )
    site_config = site_config_for(resumed.suite, request.base_url, request.site_config)
    run_dir = resumed.run_dir
    return Scope(
        resumed.cases,
        resumed.suite,
        site_config,
        run_dir.parent,
        resumed.plan["run_id"],  # the plan's: a copied or renamed run directory keeps its run's id
        resumed.trials,
        frozenset(resumed.only_trials),
        resumed=run_dir,
        plan=resumed.plan,
    )


def run_inputs(request: RunRequest, scope: Scope) -> tuple[RunSettings, RunState]:
    """The run's settings (from the request and what it resolved to) and its state (the plan, built here once, the
    selection, the fixture store and the grader); neither changes after."""
    mode, fixtures = request.network.network_mode, None
    if mode != "live":
        fixtures = FixtureStore(Path(request.fixtures), mode, max_age_days=request.max_fixture_age)
    harness, agent_factory, grader, simulator_factory = players(request, scope.suite)
    site = SiteSettings(
        request.base_url,
        scope.site_config,
        # suite.yaml's time zone and locale, or --timezone's zone
        run_context(scope.suite.config.browser_context(), request.timezone),
        scope.live_rules,
        **surface_checks_of(request.catalog, scope.suite),  # the catalog's hints, the audit's rule
    )
    settings = RunSettings(
        agent_factory,
        # where the run resolved to go (a resumed one: its directory's)
        output=dataclasses.replace(request.output, out_root=scope.out_root, run_id=scope.run_id),
        plan=PlanSettings(scope.trials, request.workers, request.shard, durations(request.durations), request.retries),
        browser=request.browser,
        network=request.network,
        site=site,
        harness=harness,
        simulator_factory=simulator_factory,
    )
    if scope.resumed is not None and scope.plan is not None:  # a resumed scope has both: the run directory's plan,
        check_same_agent(scope.resumed, scope.plan, agent_factory)  # its traces carry its hash, its worlds its shard
        plan: RunPlan = scope.plan
        plan = same_context(scope.resumed, plan, settings, request.force_replan)
    else:  # built once, with its hash: open_run writes this very plan
        plan = plan_of(scope.cases, settings, agent_factory(), suite_files=suite_files(scope.suite, request.catalog))
    state = RunState(
        plan=plan,
        selection=scope.selection,
        resuming=scope.resumed is not None,
        run_dir=scope.resumed,
        fixtures=fixtures,
        grader=grader,
        demo_site=embedded_demo_site,  # where the settings name no site (the control run's state is a copy)
    )
    return settings, state


def suite_files(suite: Suite, catalog: str | None) -> list[Path]:
    """The files besides the cases that a verdict depends on: suite.yaml and the catalog the cases are held to."""
    files = [suite.config_file] if suite.config_file is not None else []
    found, _named = suite.catalog_path()
    chosen = Path(catalog) if catalog else found
    return files + ([chosen] if chosen is not None and chosen.is_file() else [])


def same_context(run_dir: Path, plan: RunPlan, settings: RunSettings, force_replan: bool) -> RunPlan:
    """A resumed run plays in the time zone and locale its plan names: one run, one clock. Another one (a
    --timezone, an edited suite.yaml) is refused, or with --force-replan planned anew under a new plan hash."""
    planned = plan.get("browser_context")
    now = {"timezone_id": settings.site.browser_context.timezone_id, "locale": settings.site.browser_context.locale}
    if planned is None or planned == now:
        return plan
    if not force_replan:
        raise UsageError(
            f"--resume {run_dir}: planned in time zone {planned['timezone_id']}, locale {planned['locale']}; "
            f"this resume would play in {now['timezone_id']}, {now['locale']}: one run would have two clocks. "
            "Resume without --timezone, start a new run, or --resume --force-replan to play the rest in the new one"
        )
    return replanned(plan, {"timezone_id": now["timezone_id"], "locale": now["locale"]})


def players(
    request: RunRequest, suite: Suite
) -> tuple[dict[str, Any] | None, Callable[[], Agent], ModelGrader | None, Callable[[], SimulatedUser] | None]:
    """(harness, agent factory, grader, simulator factory) from the request; a wrong one is a usage error."""
    harness = harness_choice(request.agent, suite)
    try:
        agent_factory = agent_factory_for(request.agent, harness)
    except ValueError as err:
        raise UsageError(f"invalid agent options: {err}") from None
    try:
        grader = grader_of(request.grader)
    except ValueError as err:
        raise UsageError(f"invalid grader options: {err}") from None
    try:
        simulator_factory = simulator_factory_for(request.user)
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


def play(request: RunRequest, scope: Scope, settings: RunSettings, state: RunState) -> int:
    """Play the trials with progress lines, then the reports; Ctrl-C keeps what ran and says how to go on."""
    chosen = scope.cases
    out_dir = scope.resumed or settings.output.out_root / scope.run_id  # the run's folder
    resuming = state.resuming
    plan = state.plan
    # summary.json's header; the site's version joins it after the run
    run_info: dict[str, Any] = {"run_id": scope.run_id}
    reporters = reporters_for(
        request.outputs,
        out_dir,
        IN_RUN_DIR,
        reads=[Path(request.resume)] if request.resume else [],
        progress=not resuming,
        json_extra=run_info,
        history=trend_of(out_dir, request.history, request.no_history),
    )
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
        return interrupted(request, out_dir, plan)
    run_info["site"] = result.site_info
    traces = planned_traces(out_dir, plan) if resuming else result.kept
    runs = [RunInput(traces, plan), *play_control(request, chosen, settings, state, out_dir)]
    code = end_reports(reporters, build_results(runs), rebuild=f"webmcp-eval report {out_dir}")
    print_graders_and_health([t for r in runs for t in r.traces], out_dir, request.health_min_trials)
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
        else f"{len(chosen)} case(s) × {settings.plan.trials} trial(s)"
    )
    if settings.plan.shard and not state.resuming and state.plan is not None:
        what += f", shard {settings.plan.shard[0]}/{settings.plan.shard[1]}: {len(state.plan['trials'])} trial(s)"
    if settings.harness:
        what += f", agent: harness {settings.harness['command']!r} (from {settings.harness['source']})"
    headed = "headed" if settings.browser.headed else "headless"
    return f"{what}, {settings.plan.workers} worker(s), {headed}, site {site_shown(settings)}"


def play_control(
    request: RunRequest, chosen: list[LoadedCase], settings: RunSettings, state: RunState, out_dir: Path
) -> list[RunInput]:
    """run --control none: the null agent over the same cases, as a run of its own inside this one.

    One trial per case (it does the same nothing every time), into <run>/<run-id>-control/; its
    series is reported beside the agent's and never pooled with it, and its failures decide no exit code.
    """
    if not request.control:
        return []
    control = dataclasses.replace(
        settings,
        agent_factory=NullAgent,
        output=dataclasses.replace(settings.output, out_root=out_dir, run_id=RunDir.control_id(out_dir.name)),
        plan=dataclasses.replace(settings.plan, trials=1),
        harness=None,
    )
    # its own plan (the null agent's, one trial per case), and no grader
    control_state = dataclasses.replace(state, plan=None, grader=None)
    console.print(f"control: the null agent over {len(chosen)} case(s) (reads the tools, calls none)", highlight=False)
    result = asyncio.run(run_suite(chosen, control, control_state))
    return [RunInput(result.kept, result.plan, result.run_id)]


def interrupted(request: RunRequest, out_dir: Path, plan: RunPlan | None) -> int:
    """Ctrl-C: keep every trace written, write a partial report marked incomplete, say how to go on (one line)."""
    try:
        traces = planned_traces(out_dir, plan)
    except (OSError, ValueError):
        plan, traces = None, []
    results = build_results([RunInput(traces, plan)])
    reporters = reporters_for(request.outputs, out_dir, IN_RUN_DIR, json_extra={"run_id": out_dir.name}, quiet=True)
    reporters.end(results)  # files only: the one line below is all the console gets
    errors.print(
        f"interrupted: {results.completeness.text().split(' (')[0]}, their traces kept in {out_dir}; "
        f"go on with: webmcp-eval run --resume {out_dir}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    return EXIT_INTERRUPTED


def durations(source: str | None) -> dict[str, float] | None:
    """--durations RUN_DIR_OR_FILE: trial durations that balance the shards."""
    if not source:
        return None
    try:
        return read_durations(source)
    except ShardError as err:
        raise UsageError(str(err)) from None


def site_shown(settings: RunSettings) -> str:
    config = settings.site.site_config
    shown = settings.site.base_url or (config.base_url if config else "") or "embedded demo site (test mode)"
    return split_credentials(shown)[0]  # a password in the URL is never printed
