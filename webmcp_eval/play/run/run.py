"""A run: select cases, start what they need, play every trial, keep every trace.

``run_suite`` plays on the site the settings name, else on the embedded demo site the
front end hands it to start (``RunState.demo_site``), starts the proxy unless told not to,
opens one browser, and plays the trials with N workers. Each trial has its own browser context and its own
server-side world, so results do not depend on the worker count.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fnmatch
import logging
import re
import secrets
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from webmcp_eval import __version__
from webmcp_eval.agents.protocol import Agent
from webmcp_eval.errors import UsageError
from webmcp_eval.play.browser.session import BrowserSession
from webmcp_eval.play.run.retry import retryable
from webmcp_eval.play.run.settings import RunSettings, RunState, TrialHook
from webmcp_eval.play.run.shard import planned_shard, shard_of
from webmcp_eval.play.run.trial import RunEnv, Trial
from webmcp_eval.rundir.attempts import resumed_attempts, set_aside
from webmcp_eval.rundir.kept import KeptTrace, read_traces_kept
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.rundir.lock import RunLock
from webmcp_eval.rundir.plan import RunPlan, make_plan, plan_hash, planned_files, trial_id_for, write_plan
from webmcp_eval.rundir.run_info import write_run_info
from webmcp_eval.suite.loader import LoadedCase
from webmcp_eval.suite.site import SiteClient, SiteConfig
from webmcp_eval.trace import Trace, read_trace

if TYPE_CHECKING:
    from webmcp_eval.proxies.controller import NetworkProxy


@dataclass
class RunResult:
    """A run played. It keeps of each trial only where its trace is (``files``): a run of many trials holds
    one path per trial while it plays; the traces are read back from their files when asked for, ``kept``
    (what the figures read, webmcp_eval/rundir/kept.py) one at a time, or ``traces`` whole."""

    run_id: str
    out_dir: Path
    files: list[Path]  # each trial's trace, in suite order
    site_info: dict[str, Any]
    plan: RunPlan | None = None  # as written into out_dir (None when resuming: the plan there stays)

    @property
    def kept(self) -> list[KeptTrace]:
        """The traces as the figures keep them, in suite order, read one at a time from their files."""
        return list(read_traces_kept(self.files))

    @property
    def traces(self) -> list[Trace]:
        """The whole traces, in suite order, read from their files."""
        return [read_trace(p) for p in self.files]


def select_cases(
    cases: list[LoadedCase], patterns: list[str], grep: str | None, behaviours: list[str]
) -> list[LoadedCase]:
    """Case IDs or globs (SEL-*), a regex over id and title, and behaviours; all optional."""
    chosen = cases
    if patterns:
        chosen = [
            c
            for c in chosen
            if any(_id_matches(c.case.id, p) or c.file == p or Path(c.file).name == p for p in patterns)
        ]
    if grep:
        rx = re.compile(grep, re.IGNORECASE)
        chosen = [c for c in chosen if rx.search(c.case.id) or rx.search(c.case.title)]
    if behaviours:
        chosen = [c for c in chosen if c.case.behaviour in behaviours]
    return chosen


def _id_matches(case_id: str, pattern: str) -> bool:
    """An id or glob, in any case: 'sel-01' finds SEL-01, and a free lower-case id ('own-set') is found as typed."""
    return fnmatch.fnmatchcase(case_id.upper(), pattern.upper())


def new_run_id() -> str:
    """A timestamp to the millisecond and a short random part: two runs started together never share one."""
    now = datetime.now(UTC)
    return f"{now:%Y%m%d-%H%M%S}-{now.microsecond // 1000:03d}-{secrets.token_hex(4)}"


class RunIdTaken(UsageError, ValueError):
    """The run directory already holds a run (a reused --run-id): refused unless --force replaces it."""


def _claim(out_dir: Path, run_id: str, force: bool) -> None:
    """A new run's directory must hold no other run's plan or traces; --force removes them first."""
    run_dir = RunDir(out_dir)
    if not run_dir.holds_run():
        return
    if not force:
        raise RunIdTaken(
            f"{out_dir}: run id {run_id} is taken (a plan or traces are there); give another --run-id, "
            f"resume it with --resume {out_dir}, or replace it with --force"
        )
    run_dir.clear(run_id)  # what a run leaves there, exactly: the new run plays into an empty directory


def _replay_base_url(cases: list[LoadedCase], settings: RunSettings, state: RunState) -> str | None:
    """Replay needs no site: the origin the fixtures were recorded from stands in for it."""
    if settings.network.network_mode != "replay" or settings.site.base_url or state.fixtures is None:
        return None
    for lc in cases:
        path = state.fixtures.path_for(lc.case.id)
        if path.is_file():
            from webmcp_eval.proxies.fixture import load_fixture

            return load_fixture(path).base_url
    return "http://127.0.0.1:9"  # nothing recorded: every trial says so (not_run), nothing is contacted


@contextlib.contextmanager
def _site(settings: RunSettings, state: RunState) -> Iterator[SiteConfig]:
    """The site config the run plays on: the settings' (the run's own copy), else the demo site's, started."""
    if settings.site.base_url or settings.site.site_config:
        # the run's own copy: the settings' site config stays as the front end built it
        config = (
            settings.site.site_config.model_copy()
            if settings.site.site_config
            else SiteConfig(base_url=settings.site.base_url or "")
        )
        if settings.site.base_url:
            config.base_url = settings.site.base_url
        config.take_credentials()  # never in run.json, a trace, a report or a fixture
        yield config
        return
    if state.demo_site is None:
        raise UsageError("the run names no site (no base URL, no site config) and was handed no demo site to start")
    with state.demo_site() as config:
        yield config


@contextlib.contextmanager
def _proxy(settings: RunSettings, config: SiteConfig) -> Iterator[NetworkProxy | None]:
    if not settings.network.proxy:
        yield None
        return
    from webmcp_eval.proxies.controller import NetworkProxy

    parts = urlsplit(config.base_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    proxy = NetworkProxy(
        site_origins=[origin],
        allow_hosts=config.allow_hosts,
        write_methods=tuple(config.write_methods),
        ignore_paths=config.ignore_paths,
        block_other_hosts=config.block_other_hosts,
        listen_host=settings.network.proxy_host,
        advertise_host=settings.network.proxy_advertise,
    )
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()


@dataclass
class OpenRun:
    """A run that is open: its site, proxy and browser are up, its plan is written; trials play one by one.

    ``run_suite`` plays the whole plan on it with N workers; the pytest plugin plays one (case, trial) per
    test item on it. Either way a trial goes through the same code and leaves the same trace.
    """

    run_id: str
    out_dir: Path
    settings: RunSettings  # as the front end built them (with a replay's recorded origin as its base URL)
    state: RunState
    env: RunEnv
    site_info: dict[str, Any]
    plan: RunPlan | None
    agents: list[Agent]  # the agent the plan was written for, until the first trial takes it
    # the planned trials run_suite plays: the state's selection, else the plan's trials; None: no plan (mutate)
    selection: frozenset[str] | None = None

    async def play(self, lc: LoadedCase, index: int, worker: int = 0, hook: TrialHook | None = None) -> Trace:
        """One trial of a case; ``hook``, a trial hook, changes its world (mutate), else the case's trial hook."""
        breaks = self.state.trial_hooks.breaks
        if breaks:
            broken = lc.case.model_copy(update={"breaks": [*lc.case.breaks, *breaks]})
            lc = LoadedCase(broken, lc.file, lc.lines)
        if hook is None:
            hook = self.state.trial_hooks.by_case.get(lc.case.id)
        return await _attempts(lc, index, self.env, self.settings, self.agents, worker, hook)


@contextlib.asynccontextmanager
async def open_run(
    cases: list[LoadedCase], settings: RunSettings, state: RunState | None = None, planned: bool = True
) -> AsyncIterator[OpenRun]:
    """Write the plan (unless resuming), start the site (the state's demo site unless the settings name one),
    the proxy and the browser; close them all on the way out.

    ``planned=False``: no plan is written; the caller decides each trial as it goes (``mutate`` plays a
    mutant's next case only while no case has killed it)."""
    state = state or RunState()
    run_id = settings.output.run_id or new_run_id()
    # a resumed run plays into its folder, whatever its name
    out_dir = state.run_dir or settings.output.out_root / run_id
    replay_url = _replay_base_url(cases, settings, state)
    if replay_url:
        settings = dataclasses.replace(settings, site=dataclasses.replace(settings.site, base_url=replay_url))
    out_dir.mkdir(parents=True, exist_ok=True)
    with RunLock(out_dir, break_lock=settings.output.break_lock):
        async with _opened(cases, settings, state, planned, run_id, out_dir) as run:
            yield run


@contextlib.asynccontextmanager
async def _opened(
    cases: list[LoadedCase], settings: RunSettings, state: RunState, planned: bool, run_id: str, out_dir: Path
) -> AsyncIterator[OpenRun]:
    """open_run's work, inside the run directory's lock."""
    # The first trial's agent, made now: its name, model and evidence kind go into the plan.
    first_agent = settings.agent_factory()
    plan = None
    if state.resuming:  # the plan (replanned or not) is the run directory's, written again as it is
        plan = state.plan
        if plan is not None:
            write_plan(out_dir, plan)
    elif planned:
        _claim(out_dir, run_id, settings.output.force)
        plan = state.plan or plan_of(
            cases, settings, first_agent, run_id, selection=state.selection, breaks=state.trial_hooks.breaks
        )
        write_plan(out_dir, plan)
    selection = state.selection
    if selection is None and plan is not None:
        selection = frozenset(t["trial_id"] for t in plan["trials"])
    with _site(settings, state) as config, _proxy(settings, config) as proxy:
        site = SiteClient(config)
        try:
            site_info = await site.version() if settings.network.network_mode != "replay" else {}
            session = BrowserSession(
                headless=not settings.browser.headed,
                slow_mo=settings.browser.slowmo,
                proxy_url=proxy.url if proxy else None,
                chromium=settings.browser.chromium,
                connect=settings.browser.connect,
                connect_over_cdp=settings.browser.connect_over_cdp,
            )
            async with session:
                env = RunEnv(run_id, out_dir, session, site, proxy, settings, state, site_info)
                env.plan_hash = plan.get("plan_hash") if plan else None
                env.shard = planned_shard(plan)  # a resumed shard plays in the worlds its first play named
                # a resume plays in its run's worlds
                env.world_key = (plan.get("world_key") if plan else None) or env.world_key
                _write_run_info(out_dir, run_id, settings, config, site_info, session.describe(), proxy)
                try:
                    yield OpenRun(run_id, out_dir, settings, state, env, site_info, plan, [first_agent], selection)
                except BaseException:
                    # Interrupted (Ctrl-C) or broken: the browser closes under requests the embedded
                    # site is still answering; their errors are noise now, not news about the site.
                    logging.getLogger("uvicorn.error").disabled = True
                    raise
        finally:
            await site.aclose()


async def run_suite(
    cases: list[LoadedCase],
    settings: RunSettings,
    state: RunState | None = None,
    on_trial: Callable[[Trace], None] | None = None,
) -> RunResult:
    async with open_run(cases, settings, state) as run:
        files = await _play_all(cases, run, on_trial)
    return RunResult(run.run_id, run.out_dir, files, run.site_info, run.plan)


def plan_of(
    cases: list[LoadedCase],
    settings: RunSettings,
    probe: Agent,
    run_id: str | None = None,
    selection: frozenset[str] | None = None,
    breaks: tuple[str, ...] = (),
    suite_files: Sequence[Path] = (),
) -> RunPlan:
    """The run plan, with its hash, narrowed to its shard and its selection: built once, by the command or by
    open_run, never again. ``suite_files`` (suite.yaml, the catalog) and the browser context are planned and
    hashed with the cases: a resume that would judge by other files or play in another clock is refused."""
    run_id = run_id or settings.output.run_id or new_run_id()
    plan = make_plan(
        run_id,
        [(lc.case.id, lc.file) for lc in cases],
        settings.plan.trials,
        agent=probe.name,
        model=probe.model,
        evidence_kind=probe.evidence_kind if probe.evidence_kind in ("deterministic", "control") else "agent",
    )
    context = settings.site.browser_context
    plan["browser_context"] = {"timezone_id": context.timezone_id, "locale": context.locale}
    plan["suite_files"] = planned_files(suite_files)
    plan["plan_hash"] = plan_hash(
        [Path(lc.file) for lc in cases] + [Path(f["file"]) for f in plan["suite_files"]],
        [lc.case.id for lc in cases],
        settings.plan.trials,
        agent=probe.name,
        model=probe.model,
        base_url=settings.site.base_url,
        network_mode=settings.network.network_mode,
        proxy=settings.network.proxy,
        breaks=list(breaks),
        harness=settings.harness["command"] if settings.harness else None,  # shards of two harnesses never merge
        browser_context=plan["browser_context"],
    )
    if settings.harness:
        plan["harness"] = {"command": settings.harness["command"], "source": settings.harness["source"]}
    if settings.plan.shard:
        index, count = settings.plan.shard
        mine = set(shard_of([t["trial_id"] for t in plan["trials"]], index, count, settings.plan.durations))
        whole = len(plan["trials"])
        plan["trials"] = [t for t in plan["trials"] if t["trial_id"] in mine]
        plan["shard"] = {"index": index, "count": count, "planned_trials": whole}
    if selection is not None:
        plan["trials"] = [t for t in plan["trials"] if t["trial_id"] in selection]
    return plan


async def _play_all(cases: list[LoadedCase], run: OpenRun, on_trial: Callable[[Trace], None] | None) -> list[Path]:
    """Play the planned trials with N workers; of each, once its trace is written, keep where it is."""
    settings = run.settings
    jobs = [(lc, i) for lc in cases for i in range(settings.plan.trials)]
    if run.selection is not None:
        jobs = [(lc, i) for lc, i in jobs if trial_id_for(lc.case.id, i) in run.selection]
    queue: asyncio.Queue[tuple[LoadedCase, int]] = asyncio.Queue()
    for job in jobs:
        queue.put_nowait(job)
    results: dict[tuple[str, int], Path] = {}
    trials = RunDir(run.out_dir)

    def finished(trace: Trace, index: int) -> None:
        if on_trial:
            on_trial(trace)
        results[(trace.case_id, index)] = trials.trace(trace.trial_id)

    async def worker(number: int) -> None:
        while True:
            try:
                lc, index = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            # no name holds the whole trace while the worker plays its next trial
            finished(await run.play(lc, index, number), index)

    await asyncio.gather(*(worker(n) for n in range(max(1, settings.plan.workers))))
    # Report in suite order, whatever order the workers finished in.
    return [results[(lc.case.id, i)] for lc, i in jobs]


async def _attempts(
    lc: LoadedCase,
    index: int,
    env: RunEnv,
    settings: RunSettings,
    agents: list[Agent],
    worker: int,
    hook: TrialHook | None,
) -> Trace:
    """Play one trial, and again (up to --retries times) while the machinery kept it from running."""
    earlier = resumed_attempts(trial_id_for(lc.case.id, index), env.out_dir)
    retried = 0
    while True:
        agent = agents.pop() if agents else settings.agent_factory()
        trial = Trial(lc, index, env, agent, hook, earlier, worker=worker)
        trace = await trial.run()
        if retried >= settings.plan.retries or not retryable(trace):
            return trace
        earlier.append(set_aside(trace, env.out_dir))
        retried += 1


def _write_run_info(
    out_dir: Path,
    run_id: str,
    settings: RunSettings,
    config: SiteConfig,
    site_info: dict[str, Any],
    browser: dict[str, str],
    proxy: NetworkProxy | None = None,
) -> None:
    info = {
        "run_id": run_id,
        "webmcp_eval_version": __version__,
        "playwright_version": metadata.version("playwright"),
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "base_url": config.base_url,
        "embedded_site": not (settings.site.base_url or settings.site.site_config),
        "site": site_info,
        "browser": browser,
        "timezone_id": settings.site.browser_context.timezone_id,
        "locale": settings.site.browser_context.locale,
        "trials_per_case": settings.plan.trials,
        "workers": settings.plan.workers,
        "retries": settings.plan.retries,
        "network_mode": settings.network.network_mode if settings.network.proxy else "off",
        "proxy": proxy.url if proxy else None,  # as the browser dials it (--proxy-advertise)
        "hooks": config.hooks.model_dump(),
    }
    write_run_info(out_dir, info)
