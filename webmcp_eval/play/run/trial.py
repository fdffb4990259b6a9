"""One trial: a case played once, from clean state, in a fresh browser context.

The flow (docs/design.md, "The flow of one trial"): reset the world to the case's
seed; open a fresh context with the shim; go to the start route and wait for
its tools; snapshot server state; play the steps (the agent answers user
messages, the runner performs the scripted user actions); then collect the
visible UI, state after, the shim's log, the witness and the proxy's counters;
turn them into assertions and a verdict; write the trace atomically.

Anything that stops the trial from running (a crashed renderer, a site that is
down, a timeout) makes it ``not_run`` with the reason; the run goes on.

This module only puts the parts in order; each is a unit of play/ of its own:
start_route.py (the start route and its tools), actions.py (the user's steps),
observe.py (what the page shows), witness.py (the DevTools cross-check),
network_evidence.py (the proxy's account), artifacts.py (screenshot, trace.zip), press.py (the final control
pressed in a fork of the trial).

Over 500 lines on purpose: the phases of one trial, as methods of the one object that holds the trial's
state (its context, page, world, trace and timings), in the order they run; each phase's work is a module
of its own (above), and what is left here is the order and the hand-offs between them.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from playwright.async_api import ConsoleMessage, Page
from playwright.async_api import Error as PlaywrightError

from webmcp_eval.agents.protocol import Agent, AgentError, ToolInfo
from webmcp_eval.agents.simulated_user import SimulatedUser, SimulatorError
from webmcp_eval.judge import checks
from webmcp_eval.judge.instructions import instructions_in
from webmcp_eval.judge.probes import page_side, schemas_against_catalog
from webmcp_eval.kinds import CallWatch
from webmcp_eval.play.browser.artifacts import Artifacts, artifact_name
from webmcp_eval.play.browser.browser import BrowserUnavailable
from webmcp_eval.play.browser.session import BrowserSession, TrialPage
from webmcp_eval.play.evidence.fixture_store import FixtureMissing, HookTape
from webmcp_eval.play.evidence.network_evidence import (
    hung_on_the_trials_path,
    network_record,
    on_the_trials_path,
    server_error_warnings,
    site_failed,
    site_hung,
    site_server_errors,
    site_stopped_answering,
    unanswered_site_requests,
)
from webmcp_eval.play.page.actions import StepNotShown, UserActions
from webmcp_eval.play.page.human_windows import HumanWindows
from webmcp_eval.play.page.observe import PageObserver, warm
from webmcp_eval.play.page.start_route import first_line, open_start_route, require_tools
from webmcp_eval.play.page.watcher import Watcher
from webmcp_eval.play.page.witness import compare_witness
from webmcp_eval.play.run.abort import TrialAborted
from webmcp_eval.play.run.conversation import NO_PLAN, NO_SIMULATOR, Conversation, conversation_assertions
from webmcp_eval.play.run.press import Fork, press_in_fork
from webmcp_eval.play.run.settings import RunSettings, RunState, TrialHook
from webmcp_eval.proxies.fixture import Fixture
from webmcp_eval.proxies.redaction import credential_secrets, may_hold_secret, scrub
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.rundir.plan import trial_id_for
from webmcp_eval.suite.case import Action, Case, SetupCall, UserStep
from webmcp_eval.suite.live_rules import rules_that_never_fire
from webmcp_eval.suite.loader import LoadedCase
from webmcp_eval.suite.site import SiteClient, SiteUnavailable
from webmcp_eval.suite.synthesize import made_up_value_refused
from webmcp_eval.trace import (
    ConsistencyRecord,
    ConversationRecord,
    EarlierAttempt,
    EvidenceKind,
    NetworkRecord,
    NotRunKind,
    PageError,
    RegistrationEvent,
    SetupRecord,
    StaleRegistration,
    StepRecord,
    ToolCall,
    Trace,
    write_trace,
)

if TYPE_CHECKING:
    from webmcp_eval.proxies.controller import NetworkProxy
    from webmcp_eval.proxies.models import RequestRecord

TRIAL_TIMEOUT_S = 120
T = TypeVar("T")


@dataclass
class RunEnv:
    """What the trials of one open run share: where it writes, its browser, site and proxy, its settings and
    state (the fixture store, the grader), the plan it plays and the shard that plan is."""

    run_id: str
    out_dir: Path
    session: BrowserSession
    site: SiteClient
    proxy: NetworkProxy | None
    settings: RunSettings  # the run's settings as open_run holds them: never copied field by field
    state: RunState
    site_info: dict[str, Any] = field(default_factory=dict)
    plan_hash: str | None = None  # the plan this run plays: every trace carries it
    shard: tuple[int, int] | None = None  # the plan's shard: part of every world's name
    # a per-run random part of every world's name: two runs with one run id never share a world on one site
    world_key: str = field(default_factory=lambda: secrets.token_hex(3))


def world_id(run_id: str, shard: tuple[int, int] | None, trial_id: str, key: str = "") -> str:
    """The server-side world of one trial: run (with the run's random key), shard and trial, so shards sharing
    one site never meet, nor two runs given the same run id.

    At most 64 characters; a long run id is shortened to a digest rather than cut, so two runs stay apart.
    """
    part = f"-s{shard[0]}of{shard[1]}" if shard else ""
    run_id = f"{run_id}-{key}" if key else run_id
    world = f"{run_id}{part}-{trial_id}".replace(".", "-")
    if len(world) > 64:
        digest = hashlib.sha256(run_id.encode()).hexdigest()[:12]
        world = f"{digest}{part}-{trial_id}".replace(".", "-")[-64:]
    return world


async def alongside(side: Awaitable[Any], main: Awaitable[T]) -> T:
    """main's result, with side running beside it: side is awaited after main, or cancelled when main
    fails (or the trial stops), so no task is left behind; either one's failure is the caller's."""
    beside = asyncio.ensure_future(side)
    try:
        result = await main
    except BaseException:
        beside.cancel()
        with contextlib.suppress(BaseException):
            await beside
        raise
    await beside
    return result


def evidence_kind_of(case: Case, agent: Agent) -> EvidenceKind:
    """A goal case played by a model or harness is its own evidence: its user is a model too."""
    return "simulated_user" if case.user is not None and agent.evidence_kind == "agent" else agent.evidence_kind


@dataclass(frozen=True)
class _PageAfterCall:
    """The page as a kind's ``watch_calls`` reads it right after a tool call (webmcp_eval/kinds/ ``CallPageReader``)."""

    page: Page

    async def page_side(
        self, call: int, tool: str, selector: str, attribute: str | None, many: bool
    ) -> ConsistencyRecord:
        return await page_side(self.page, call, tool, selector, attribute, many)


class Trial:
    def __init__(
        self,
        loaded: LoadedCase,
        index: int,
        env: RunEnv,
        agent: Agent,
        hook: TrialHook | None = None,
        earlier_attempts: list[EarlierAttempt] | None = None,
        worker: int = 0,
    ):
        attempt = (
            len(earlier_attempts or []) + 1
        )  # --retries: the attempts before this one (webmcp_eval/play/run/retry.py)
        self.case: Case = loaded.case
        self.env = env
        self.agent = agent
        self.hook = hook or TrialHook()  # the trial hook (mutate's, a test's); the site hooks are self.site
        self.worker = worker  # a remote browser's connection is the worker's own
        self.trial_id = trial_id_for(self.case.id, index)
        settings = env.settings
        self.artifacts = Artifacts(
            env.out_dir,
            artifact_name(self.trial_id, attempt),
            settings.browser.screenshots,
            settings.browser.playwright_trace,
        )
        self.world = world_id(env.run_id, env.shard, self.trial_id, env.world_key)
        self.clock = time.monotonic()
        self.tp: TrialPage | None = None
        self.actions: UserActions | None = None  # the user's scripted actions, once the page is open
        self.humans: HumanWindows | None = None  # which of the page's events were the human's
        self.fixture: Fixture | None = None
        self.recorded: Fixture | None = None
        self._secrets: set[str] = set()  # secret values the trial's traffic carried (the proxy's account)
        self._crash_watch = asyncio.Event()
        self.site: HookTape = HookTape(env.site, "live", None)  # the site hooks: live, taped or played back
        self._page_errors: list[PageError] = []  # the page's own (setup failures name the first uncaught one)
        self._call_watches: list[CallWatch] = []  # what reads the page after each tool call, one per kind that does
        self._site_hung: list[RequestRecord] = []  # site requests a tool call made that hung (no answer)
        self._site_unanswered: list[RequestRecord] = []  # the proxy's records of site requests that got no answer
        self._site_errors: list[RequestRecord] = []  # the site's own 5xx answers (not a fault the case armed)
        self._site_errors_on_path: list[RequestRecord] = []  # those the trial depends on (a tool call's request)
        self._setup_network: Any = None  # the proxy's account once setup was done: its writes are not the agent's
        self.simulator: SimulatedUser | None = None
        self._collected = False  # the page and the state after were read
        self.trace = Trace(
            run_id=env.run_id,
            plan_hash=env.plan_hash,
            trial_id=self.trial_id,
            trial_index=index,
            world=self.world,
            attempt=attempt,
            earlier_attempts=list(earlier_attempts or []),
            case_id=self.case.id,
            case_file=loaded.file,
            case=loaded.case.model_dump(mode="json", exclude_defaults=True),
            behaviour=self.case.behaviour,
            title=self.case.title,
            evidence_kind=evidence_kind_of(loaded.case, agent),
            agent=agent.name,
            model=agent.model,
            site_name=env.site_info.get("name", ""),
            site_revision=env.site_info.get("revision"),
            base_url=env.site.config.base_url,
            network_mode=env.settings.network.network_mode,
            start_route=self.case.start_route,
            timezone_id=self.case.browser_context(settings.site.browser_context).timezone_id,
            locale=self.case.browser_context(settings.site.browser_context).locale,
            catalog_hints=settings.site.catalog_hints,
            catalog_schemas=settings.site.catalog_schemas,
            prompt=self.case.user_messages,
            started_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )

    # -- the whole trial ------------------------------------------------------

    async def run(self) -> Trace:
        error: str | None = None
        kind: NotRunKind = "runner"
        try:
            await self._play_watched()
        except TimeoutError:
            error, kind = f"the trial did not finish within {self._timeout_s():g} s", "timeout"
        except SimulatorError as err:
            error, kind = f"the simulated user could not answer: {err}", "agent"
            if self.trace.conversation is not None:
                self.trace.conversation.ended, self.trace.conversation.ended_detail = "simulator_error", str(err)
        except TrialAborted as err:
            error, kind = str(err), err.kind
        except SiteUnavailable as err:
            error, kind = str(err), err.kind
        except BrowserUnavailable as err:  # a remote browser lost and not reached again
            error, kind = str(err), "infrastructure"
        except (PlaywrightError, AgentError) as err:
            error = f"{type(err).__name__}: {first_line(err)}"
            kind = "agent" if isinstance(err, AgentError) else "step"
        except Exception as err:  # a bug of the runner must not take the run down; the trace says what
            error = f"runner error: {type(err).__name__}: {err}"
        died = self._what_died(error) if error else None
        if died:  # whatever the step said, the machinery under it died first: retried by --retries
            error, kind = (died if died in (error or "") else f"{died} (then: {error})"), "infrastructure"
        if error and not self._collected:
            self.trace.stopped = error
        if self.tp is not None:
            self.trace.page_errors = list(self._page_errors)
        self._agent_report()
        await self._finish_network()
        site_down = site_stopped_answering(self._site_unanswered, self.site.config.base_url)
        if site_down and not (error or "").startswith("setup:"):
            # whatever else went wrong followed from it: the site's failure, never the agent's
            error, kind = site_down + (f" (then: {error})" if error else ""), "infrastructure"
        await self._judge(error, kind)
        await self._judge_server_errors()
        if self.tp:
            self.trace.settles = self.tp.host.settles
            await self._close_page()
        self.trace.duration_ms = self._ms()
        self.trace.browser = self.env.session.describe()
        self._store_recording()
        self._scrub_secrets()
        write_trace(self.trace, RunDir(self.env.out_dir).trials)
        return self.trace

    def _scrub_secrets(self) -> None:
        """Every secret the run knows (the site's password and the Basic value made of it, cookies and tokens the
        trial's traffic carried) out of the trace, in every spelling a page may echo it in, before anything reads
        the trace: the file, the console line and the reports all come from it."""
        secrets = self._secrets | credential_secrets(self.site.config.credentials)
        secrets -= {self.trace.world, self.trace.trial_id}  # the runner's own names (the world cookie), not secrets
        # the trace's JSON text is looked at first: most traces hold none of the secrets, and scrubbing one means a
        # dump, a walk of every string and a validation of the whole trace before the file's own dump
        if secrets and may_hold_secret(self.trace.model_dump_json(), secrets):
            self.trace = Trace.model_validate(scrub(self.trace.model_dump(mode="json"), secrets))

    async def _judge_server_errors(self) -> None:
        """The site's own 5xx by cause: one on the trial's path (a tool call's request, a write the case
        expects) makes a failed trial not_run, the site's fault, never the agent's; any other (a beacon,
        a font) is a warning and the verdict stands on the evidence. A 5xx a fault of the case made is not
        among them at all: the case's checks judge it. A request a tool call made that the site never answered
        (a hang: still open, or given up by the page's own time-out) is the site's failure as a 5xx is."""
        on_path = self._site_errors_on_path
        broken_on_purpose = self.case.breaks or self.hook.proxy or self.hook.init_script  # a case's or mutate's
        base = self.site.config.base_url
        site_fault = site_failed(on_path, base) or site_hung(self._site_hung, base)  # a 5xx, else a hang
        if site_fault and self.trace.verdict == "failed" and not broken_on_purpose:
            await self._judge(site_fault, "infrastructure")
            return
        self.trace.warnings += server_error_warnings(self._site_errors, on_path)

    async def _judge(self, error: str | None, kind: NotRunKind = "runner") -> None:
        """Assertions and verdict; a check that raises makes the trial not_run, never the run's end."""
        if error is None:
            error, kind = made_up_value_refused(self.trace) or (None, kind)
        if error is None and self.env.settings.site.live_rules and self.trace.live_tools is not None:
            never, unseen = rules_that_never_fire(self.case, self.trace.live_tools)
            self.trace.warnings += unseen
            if never:
                error, kind = "can never fire: " + "; ".join(never), "case"
        try:
            # The agent adds its own (a model agent's budget that ran out, a cassette miss in replay).
            self.trace.assertions = (
                checks.evaluate(self.case, self.trace) + self.agent.assertions() + conversation_assertions(self.trace)
            )
            if self.env.state.grader is not None:
                code_failed = [a.id for a in self.trace.assertions if a.status == "failed"]
                if error is None and code_failed and self.case.user and self.case.user.rubric == "after_code_checks":
                    why = f"code checks failed first ({', '.join(code_failed)})"
                    rubric, self.trace.grader = self.env.state.grader.unjudged(self.case, why)
                elif error is None:
                    rubric, self.trace.grader = await self.env.state.grader.grade_trial(self.case, self.trace)
                else:  # its criteria stay in the grader's series, as not_run
                    rubric, self.trace.grader = self.env.state.grader.unjudged(self.case, error)
                self.trace.assertions += rubric
        except Exception as err:
            self.trace.assertions = []
            if error is None:
                error, kind = f"checker error: {type(err).__name__}: {err}", "checker"
        self.trace.verdict, self.trace.verdict_reason = checks.verdict(self.trace.assertions, error)
        if self.trace.verdict == "not_run":
            self.trace.not_run_kind = kind if error else "evidence"

    async def _play_watched(self) -> None:
        """Play the trial, but stop at once when the renderer crashes or time runs out."""
        play = asyncio.ensure_future(self._play())
        crash = asyncio.ensure_future(self._crash_watch.wait())
        try:
            done, _ = await asyncio.wait({play, crash}, timeout=self._timeout_s(), return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the run was interrupted: stop playing, leave no orphan task
            play.cancel()
            with contextlib.suppress(BaseException):
                await play
            raise
        finally:
            crash.cancel()
        if play in done:
            play.result()  # re-raise what the trial raised
            return
        play.cancel()
        with contextlib.suppress(BaseException):
            await play
        if self._crash_reason():
            raise TrialAborted(self._crash_reason() or "the page crashed", "infrastructure")
        raise TimeoutError

    async def _close_page(self) -> None:
        """Close the context; first the screenshot and Playwright's own trace.zip the verdict asks for."""
        assert self.tp
        shot = await self.artifacts.finish_screenshot(self.tp.page, self.trace.verdict)
        if shot:
            self.trace.ui.screenshot = shot
        kept = await self.artifacts.finish_tracing(self.tp, self.trace.verdict)
        if kept:
            self.trace.playwright_trace = kept
        await self.tp.close()

    def _agent_report(self) -> None:
        report = self.agent.report() or {}
        self.trace.tokens = dict(report.get("tokens") or {})
        self.trace.cost_usd = report.get("cost_usd")
        self.trace.agent_log = dict(report.get("log") or {})
        self.trace.harness = dict(report.get("harness") or {})

    def _phase_timer(self) -> Callable[[str], None]:
        """mark(name) stores the ms since the previous mark in the trace's timings."""
        last = time.monotonic()

        def mark(name: str) -> None:
            nonlocal last
            now = time.monotonic()
            self.trace.timings[name] = round((now - last) * 1000, 1)
            last = now

        return mark

    def _ms(self) -> float:
        return round((time.monotonic() - self.clock) * 1000, 1)

    def _crash_reason(self) -> str | None:
        return self.tp.crashed if self.tp else None

    def _what_died(self, error: str | None) -> str | None:
        """The renderer, the browser or Playwright's driver, when one of them died under the trial."""
        if self._crash_reason():
            return self._crash_reason()
        if not self.env.session.driver_alive():
            return "Playwright's driver process died (it is started again for the next trial)"
        browser = self.tp.context.browser if self.tp else self.env.session.browsers.get(self.worker)
        if browser is not None and not browser.is_connected():
            return "the connection to the browser was lost (the browser died, or its server went away)"
        if error and any(w in error for w in ("Target crashed", "Page crashed", "renderer process gone")):
            return "the page crashed (renderer process gone)"
        return None

    def _open_fixture(self) -> None:
        """record: a fresh fixture to fill; replay: the recorded one (its hooks answer too)."""
        mode = self.env.settings.network.network_mode
        store = self.env.state.fixtures
        if mode in ("record", "replay") and store is not None:
            try:
                self.fixture = store.for_trial(self.case.id, self.env.site_info, self.env.site.config.base_url)
            except FixtureMissing as err:
                raise TrialAborted(str(err), "fixture") from None
            if mode == "replay" and self.fixture.site_revision:
                self.trace.site_revision = self.fixture.site_revision
        self.site = HookTape(self.env.site, mode if store is not None else "live", self.fixture)

    def _timeout_s(self) -> float:
        """The trial's time; a goal case's conversation has its own budget on top."""
        return TRIAL_TIMEOUT_S + (self.case.user.max_seconds if self.case.user else 0)

    async def _play(self) -> None:
        """Open the trial's world and page, run setup, play the case's steps or its conversation, then read
        what they left (the state before is read after setup: setup's changes are not the agent's)."""
        self._check_goal_players()
        await self._open()
        await self._setup()
        before = await self._state()
        self.agent.start_trial(self.trial_id)
        if self.case.user is not None:
            await self._converse()
        for index, step in enumerate(self.case.steps):
            try:
                await self._step(index, step, last=index == len(self.case.steps) - 1 and self.case.user is None)
            except StepNotShown as err:  # the page's doing: failed at this step, the rest judged as it is
                self.trace.steps[-1].not_shown = str(err)
                break
        await self._collect(before)
        await self._press_in_fork()

    def _check_goal_players(self) -> None:
        """A goal case needs a simulated user (a model agent) or a plan (the reference agent)."""
        goal = self.case.user
        if goal is None:
            return
        if self.agent.evidence_kind == "deterministic":
            if goal.plan is None:
                raise TrialAborted(NO_PLAN, "case")
        elif self.agent.evidence_kind == "control":
            return  # the null agent does nothing whatever is said: the goal is its one message
        elif self.env.settings.simulator_factory is None:
            raise TrialAborted(NO_SIMULATOR, "case")
        else:
            self.simulator = self.env.settings.simulator_factory()

    async def _setup(self) -> None:
        """The case's setup: tool calls and user actions before the agent starts, kept apart in the trace."""
        if not self.case.setup:
            return
        tp, actions = self.tp, self.actions
        assert tp and actions
        record = SetupRecord()
        tp.host.step = -1
        for step in self.case.setup:
            if isinstance(step, SetupCall):
                call = await tp.host.call(step.call, step.args)
                result = call.result if isinstance(call.result, dict) else {}
                if call.error or call.refused or result.get("status") == "error":
                    why = call.error or f"it answered {result.get('code')}: {result.get('message')}"
                    raise TrialAborted(f"the case's setup call {step.call} did not succeed: {why}", "setup")
            else:
                await actions.perform(step)
                record.actions.append(step.model_dump(exclude_defaults=True))
            await tp.host.wait_for_tools()
        record.calls = list(tp.host.calls)
        del tp.host.calls[:]  # the agent's calls start at 0; setup's are never the agent's
        tp.host.step = 0
        if self.env.proxy:
            self._setup_network = self.env.proxy.snapshot(self.trial_id)
        self.trace.setup = record

    async def _converse(self) -> None:
        """A goal case: the simulated user and the agent take turns (webmcp_eval/play/run/conversation.py)."""
        goal = self.case.user
        assert goal is not None

        async def play_turn(n: int, text: str) -> str:
            await self._step(n, UserStep(user=text) if self.simulator else goal.as_reference_step())
            return self.trace.steps[-1].reply or ""

        record = ConversationRecord(simulator=self.simulator.id if self.simulator else "scripted")
        self.trace.conversation = record
        conversation = Conversation(goal, record, self._ms)
        try:
            if self.simulator is None:
                await conversation.play_scripted(play_turn)
            else:
                self.simulator.start(goal, self.trial_id)
                await conversation.play(self.simulator, play_turn, self._agent_stopped)
        finally:
            self.trace.prompt = [t.text for t in record.turns if t.who == "user"]

    def _agent_stopped(self) -> bool:
        """The agent stopped at its own limits (a model agent's log says so)."""
        return bool((self.agent.report() or {}).get("log", {}).get("stopped"))

    async def _open(self) -> None:
        """The world reset to the case's seed, a fresh context with the shim, the start route with its tools."""
        self._open_fixture()
        site, case = self.site, self.case
        mark = self._phase_timer()
        if case.breaks and not site.has("reset"):
            raise TrialAborted("the case switches on site breaks, but the site has no reset hook", "case")
        # The world's reset is the site's work, the context the browser's: they overlap (a remote site's
        # round trip costs no wall time), and both are done before anything loads.
        cookie = (site.config.world_cookie, self.world) if site.config.world_cookie else None

        async def open_page() -> None:  # kept on self at once: a reset that fails after it still closes the page
            self.tp = await self.env.session.open_trial(
                self.trial_id,
                site.config.base_url,
                world_cookie=cookie,
                clock_start=self.clock,
                settle_ms=site.config.settle_ms,
                settle=site.config.settle,
                context_settings=self.case.browser_context(self.env.settings.site.browser_context),
                init_script=self.hook.init_script,
                worker=self.worker,
                http_credentials=self.env.site.config.credentials,
            )

        await alongside(self._reset(), open_page())
        assert self.tp
        if self.env.proxy:  # after the reset: a trial the site could not set up has no network account
            self.env.proxy.begin_trial(self.trial_id, **self._proxy_mode(), rewrite=self.hook.proxy)
            self.tp.host.writes_seen = self._writes_so_far  # each call's own writes (calls.annotations)
            self.tp.host.requests_seen = self._requests_so_far  # each call's own requests (the 5xx rule)
            self._call_watches = [
                kind.watch_calls(value, self.trace) for kind, value in checks.blocks(case) if kind.watch_calls
            ]
            if self._call_watches:  # a kind that reads the page after each call (expect.consistency)
                self.tp.host.after_call = self._after_call
        self.tp.crash_event = self._crash_watch  # the watcher above hears the crash
        self.tp.page.on(
            "pageerror", lambda err: self._page_errors.append(PageError(source="exception", text=first_line(err)))
        )
        self.tp.page.on("console", self._console_error)
        await self.artifacts.start_tracing(self.tp.context, self.trial_id)
        self.humans = HumanWindows(self.tp.page, self.tp.log.events)
        self.actions = UserActions(
            self.tp.page, self.tp.host, site, self.world, self.trial_id, self.env.proxy, self.humans
        )
        if case.expect.confirmation:
            self.actions.confirmation = case.expect.confirmation.control
        self.actions.before_press = self._confirmation_point
        mark("context_ms")
        config = site.config
        proxied = self.env.proxy is not None
        await open_start_route(
            self.tp.page, config, case.start_route, case.id, proxied=proxied, crashed=self._crash_reason
        )
        mark("goto_ms")
        await self.tp.host.wait_for_tools()
        mark("tools_ms")
        uncaught = [e.text for e in self._page_errors if e.source == "exception"]
        await require_tools(self.tp.host, case.start_route, config.base_url, uncaught)
        self.trace.webmcp_path = self.tp.host.path
        self.trace.timings["setup_ms"] = self._ms()

    def _console_error(self, message: ConsoleMessage) -> None:
        """A console.error() of the page's scripts; the browser's own notes (a request that failed: no
        arguments) are the network's evidence."""
        if message.type == "error" and message.args:
            self._page_errors.append(PageError(source="console", text=message.text.strip().split("\n", 1)[0]))

    async def _confirmation_point(self, control: Any) -> None:
        """The confirmation point as the agent left it, read just before the human presses the control."""
        assert self.tp and self.humans
        if self.trace.confirmation is None and self.case.expect.confirmation:
            observer = PageObserver(self.tp.page, self.tp.log, self.humans, self.artifacts)
            self.trace.confirmation = await observer.confirmation(control, self.trial_id)

    async def _press_in_fork(self) -> None:
        """Where the case plays no press: its final control pressed in a fork of the trial (play/run/press.py)."""
        rec = self.trace.confirmation
        if rec is None or self.case.expect.confirmation is None:
            return
        settings = self.env.settings
        context = self.case.browser_context(settings.site.browser_context)
        live = HookTape(self.env.site, "live", None)  # a recording (--network record) keeps only the trial's calls
        fork = Fork(
            self.env.session, live, self.env.proxy, self.case, self.trace, self.world, settings.network.network_mode,
            context, self.hook, self.worker,
        )  # fmt: skip
        rec.press = await self._timed("press_ms", press_in_fork(fork))
        if rec.press.not_pressed and rec.visible:
            why = rec.press.not_pressed
            self.trace.warnings.append(f"confirmation.actionable: the control was read, not pressed: {why}")
        if rec.press.trial_world_unchanged is False:  # something else wrote it meanwhile: the fork never does
            self.trace.warnings.append("the trial's own world changed while its fork was played")

    async def _reset(self) -> None:
        """The case's world at its seed, with its breaks."""
        if self.site.has("reset"):
            await self._timed("reset_ms", self.site.reset(self.world, self.case.seed, self.case.breaks))

    async def _state_after(self) -> Any:
        return await self._timed("state_after_ms", self._state())

    async def _timed(self, phase: str, work: Awaitable[T]) -> T:
        """work, its ms kept under phase: for the parts that overlap another (the phase timer cannot)."""
        started = time.monotonic()
        result = await work
        self.trace.timings[phase] = round((time.monotonic() - started) * 1000, 1)
        return result

    async def _collect(self, before: object) -> None:
        """What the steps left: the page as it shows, the shim's log and witness, the state after."""
        assert self.tp and self.humans
        mark = self._phase_timer()
        watcher = Watcher(self.env.settings.browser.hold_ms) if self.env.settings.browser.headed else None
        observer = PageObserver(self.tp.page, self.tp.log, self.humans, self.artifacts, watcher)
        if watcher is None:  # both only read: the page as it shows and the site's state, side by side
            after = await alongside(observer.observe(self.case.expect, self.trace), self._state_after())
            mark("observe_ms")
        else:  # headed, the person may press the final control during the hold: the state after follows it
            await observer.observe(self.case.expect, self.trace)
            mark("observe_ms")
            after = await self._state_after()
        self._collect_log()
        if before is not None and after is not None:
            self.trace.state.available = True
            self.trace.state.before, self.trace.state.after = before, after
            self.trace.state.diff = checks.state_diff(before, after)
        self._collected = True

    async def _after_call(self, call: ToolCall) -> None:
        """The page as a call left it, read by each kind that reads it after the calls (its ``watch_calls``)."""
        if self.tp is None:
            return
        for watch in self._call_watches:
            await watch(call, _PageAfterCall(self.tp.page))

    def _requests_so_far(self) -> int:
        assert self.env.proxy
        return self.env.proxy.so_far(self.trial_id)[0]

    def _writes_so_far(self) -> list[str]:
        assert self.env.proxy
        return self.env.proxy.so_far(self.trial_id)[1]

    def _proxy_mode(self) -> dict[str, Any]:
        mode = self.env.settings.network.network_mode if self.fixture is not None else "live"
        return {"mode": mode, "fixture": self.fixture}

    async def _state(self) -> Any:
        """The site's state: its state hook over HTTP, or its state_js expression read in the page."""
        expression = self.site.config.hooks.state_js
        if expression:
            assert self.tp
            self.trace.state.source = "page"
            try:
                # a function, not a bare string: CDP runs it whatever the page's CSP says of eval
                return await self.tp.page.evaluate(f"async () => ({expression}\n)")
            except PlaywrightError as err:
                raise TrialAborted(f"the site's state_js could not be read: {first_line(err)}", "setup") from None
        if not self.site.has("state"):
            return None
        self.trace.state.source = "http"
        try:
            return await self.site.state(self.world)
        except FixtureMissing as err:
            raise TrialAborted(str(err), "fixture") from None

    # -- steps ------------------------------------------------------------------

    async def _step(self, index: int, step: UserStep | Action, last: bool = False) -> None:
        """One step, then the page settled; last: the page is read next (observe.py ``warm`` while it settles)."""
        tp = self.tp
        assert tp
        started = time.monotonic()
        record = StepRecord(
            index=index,
            kind="user" if isinstance(step, UserStep) else "action",
            input=step.user if isinstance(step, UserStep) else step.model_dump(exclude_defaults=True),
            route_before=tp.host.route(),
        )
        record.catalog = self._seen(await tp.host.catalog())
        self.trace.steps.append(record)
        first_call = len(tp.host.calls)
        tp.host.step = index  # its calls and its settle waits are this step's
        if isinstance(step, UserStep):
            record.reply = await self.agent.turn(step, tp.host)
            self.trace.ai_result = (
                record.reply if self.trace.ai_result is None else f"{self.trace.ai_result}\n{record.reply}"
            )
        else:
            assert self.actions
            await self.actions.perform(step)
        self._raise_if_crashed()
        if last:
            await alongside(warm(tp.page), tp.host.wait_for_tools())
        else:
            await tp.host.wait_for_tools()
        record.route_after = tp.host.route()
        record.catalog_after = self._seen(await tp.host.catalog())
        record.stale_registrations = [  # each frame's tools held against that frame's route
            StaleRegistration.model_validate(r.reported("instance", "name", "route", "frame"))
            for r in tp.log.stale_registrations(record.route_after)
            if r.name not in self.site.config.app_tools  # the site's tools for every route outlive none
        ]
        self.trace.calls = list(tp.host.calls)
        record.calls = list(range(first_call, len(tp.host.calls)))
        record.duration_ms = round((time.monotonic() - started) * 1000, 1)

    def _seen(self, tools: list[ToolInfo]) -> list[str]:
        """The names of these tools; their schemas join the trace's live tools (rules are checked against them)."""
        live = self.trace.live_tools if self.trace.live_tools is not None else {}
        for tool in tools:
            schemas = live.setdefault(tool.name, [])
            if tool.input_schema not in schemas:
                schemas.append(tool.input_schema)
        self.trace.live_tools = live
        return [t.name for t in tools]

    def _raise_if_crashed(self) -> None:
        if self.tp and self.tp.crashed:
            raise TrialAborted(self.tp.crashed, "infrastructure")

    # -- evidence after the steps ---------------------------------------------------

    def _collect_log(self) -> None:
        tp = self.tp
        assert tp
        self.trace.registrations = [RegistrationEvent.model_validate(e.reported()) for e in tp.log.registration_log()]
        self.trace.tool_instructions = self._instructions()
        self.trace.witness = compare_witness(tp.log.events, tp.cdp_events, tp.cdp is not None)
        # a disagreement is shown wherever the trial is, asserted only where the case asks (witness_agrees)
        self.trace.warnings += [f"shim and DevTools disagree: {d}" for d in self.trace.witness.disagreements]
        if self.case.expect.calls.schemas_hold:  # drift the server does not enforce is shown, never asserted
            _, drift, _ = schemas_against_catalog(self.trace.registrations, self.trace.catalog_schemas)
            self.trace.warnings += [f"a live tool's schema differs from the catalog: {d}" for d in drift]

    def _instructions(self) -> list[str] | None:
        """Each registered tool whose description speaks to the agent, by the audit's rule (None: not read)."""
        if not self.env.settings.site.read_instructions:
            return None
        regs = [r for r in self.trace.registrations if r.type == "register" and r.tool_name]
        names = {r.tool_name for r in regs if r.tool_name}
        found = []
        for reg in regs:
            # every name at once, its own left out by the rule: one pattern of the names per trial, not one per tool
            description = str((reg.model_extra or {}).get("description") or "")
            kinds = instructions_in(description, names, own=reg.tool_name or "")
            line = f"{reg.tool_name} (registered on {reg.route}): {', '.join(kinds)}"
            if kinds and line not in found:
                found.append(line)
        return found

    async def _finish_network(self) -> None:
        proxy = self.env.proxy
        expected = self.env.site.config.outbound
        net = None
        if proxy:
            # KeyError: the trial never began (it failed before the proxy was told)
            with contextlib.suppress(KeyError):
                net = proxy.end_trial(self.trial_id)
        if net is None:  # no proxy, or no account of this trial: no network evidence, never "0 requests"
            self.trace.network = NetworkRecord(available=False, outbound_expected=expected)
            return
        self.trace.network = network_record(net, expected)
        if self._setup_network is not None:
            self._move_setup_writes()
        self.recorded = net.fixture
        self._secrets = net.secrets
        self._site_unanswered = unanswered_site_requests(net, self.site.config.base_url)
        self._site_errors = site_server_errors(net, self.site.config.base_url)
        windows = self.tp.host.request_windows if self.tp else []
        wanted = [k for k, n in self.case.expect.network.writes.items() if k != "total" and n > 0]
        self._site_errors_on_path = on_the_trials_path(self._site_errors, net, windows, wanted)
        self._site_hung = hung_on_the_trials_path(net, self.site.config.base_url, windows)

    def _move_setup_writes(self) -> None:
        """The writes setup made (the first ones the proxy saw) move from the agent's account to setup's."""
        net, first = self.trace.network, len(self._setup_network.writes)
        assert self.trace.setup is not None
        self.trace.setup.writes, net.writes = net.writes[:first], net.writes[first:]
        counts = dict(net.write_counts)
        for key, n in self._setup_network.write_counts.items():
            counts[key] = counts.get(key, 0) - n
        net.write_counts = {k: v for k, v in counts.items() if v > 0}

    def _store_recording(self) -> None:
        """Keep a recording only of a trial that ran: a half-played trial is no fixture."""
        store = self.env.state.fixtures
        if store is None or self.env.settings.network.network_mode != "record" or self.recorded is None:
            return
        if self.trace.verdict == "not_run":
            store.warnings.append(
                f"{self.case.id}: not recorded, the trial could not run ({self.trace.verdict_reason})"
            )
            return
        store.store(self.case.id, self.recorded, self.site.tape)
