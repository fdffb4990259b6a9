"""The final control pressed in a fork of the trial, where the case itself plays no press.

Reading the control (visible, enabled, named, its form's submit control) says a person *could* press it, not that
pressing it does anything: a submit listener that never fires, a handler bound to another form or a form whose
action goes nowhere all read well. So at the end of the trial the runner forks it and presses:

- a world of its own: the trial's world name with ``-p``, reset to the case's seed and breaks by the site's reset
  hook (the trial's own world is never written; its state is read before and after to show it);
- a new context of the same browser, through the same proxy under a trial name of its own (``<trial>~press``), so
  its traffic is counted apart from the trial's; the trial hook (``mutate``'s change) applies to it as well;
- the case's start route, its setup, then the trial's own steps again: the agent's recorded calls with the same
  arguments, the user's actions as the case has them. A replayed call that answers otherwise than in the trial
  (another status or code) means the fork is not the trial's confirmation point: nothing is pressed then.

Then the control is pressed and the fork's writes read. ``confirmation.actionable`` passes only when one of the
writes the case names for the press (``expect.network.writes`` with 0: the writes the agent must leave to the person;
``total: 0`` alone: any write of the site) was made and answered (webmcp_eval/trace.py ``PressRecord.made``).

A site is not forked (``not_pressed`` says which, the check then reads the control as before and says so) when the
run answers from fixtures (``--network replay``), when the site has no reset hook or no ``world_cookie``
(no test-mode worlds: the press would write the world the trial ran in), when there is no proxy (the press's writes
could not be counted), or when the case names no write for the press.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError

from webmcp_eval.play.page.actions import StepNotShown, UserActions
from webmcp_eval.play.page.human_windows import HumanWindows
from webmcp_eval.play.page.locate import locate
from webmcp_eval.play.page.start_route import first_line, open_start_route
from webmcp_eval.play.run.abort import TrialAborted
from webmcp_eval.suite.case import Case, PressAction, SetupCall, UserStep
from webmcp_eval.suite.site import SiteUnavailable
from webmcp_eval.trace import PressRecord, ToolCall, Trace, WriteRecord

if TYPE_CHECKING:
    from webmcp_eval.play.browser.session import BrowserSession, TrialPage
    from webmcp_eval.play.evidence.fixture_store import HookTape
    from webmcp_eval.play.run.settings import TrialHook
    from webmcp_eval.proxies.controller import NetworkProxy
    from webmcp_eval.suite.browser_context import BrowserContextSettings

PRESS_TIMEOUT_MS = 5000  # the press itself: a control that cannot be clicked in this time was not pressed
WRITE_WAIT_S = 5.0  # after a page that did not settle (its cap), how long a named write may still take to show
WRITE_GRACE_S = 0.5  # after a page that settled, for a write a short timer of the page sends
WRITE_FIELDS = {"method", "path", "query", "status", "outbound"}  # what a write is, without its timing or trial
NO_WORLDS = (
    "the site has no test-mode worlds (a reset hook and a world_cookie in its site config): "
    "a press would write the world the trial ran in"
)


class NotReached(Exception):
    """The fork did not come to the trial's confirmation point: nothing is pressed."""


@dataclass
class Fork:
    """What the fork of one trial needs: the trial's browser session, site, proxy, case and trace."""

    session: BrowserSession
    site: HookTape  # live, never the trial's tape: a recording keeps only the trial's own hook calls
    proxy: NetworkProxy | None
    case: Case
    trace: Trace
    world: str  # the trial's own world
    network_mode: str
    context_settings: BrowserContextSettings
    hook: TrialHook
    worker: int = 0

    @property
    def trial_id(self) -> str:
        return f"{self.trace.trial_id}~press"

    @property
    def fork_world(self) -> str:
        return f"{self.world}-p"[-64:]  # a world name is at most 64 characters; its end is the trial's


def expected_writes(case: Case) -> list[str]:
    """The writes the case names for the press: the ones it forbids the agent (0), else any (``total: 0``)."""
    writes = case.expect.network.writes
    named = [key for key, n in writes.items() if key != "total" and n == 0]
    return named or (["total"] if writes.get("total") == 0 else [])


def pressed_in_trial(case: Case, trace: Trace) -> bool:
    """The case's own steps press the control (or a person did, headed): what followed is the trial's evidence."""
    rec = trace.confirmation
    by_someone = rec is not None and (rec.pressed_by_human or rec.pressed_by_agent)
    return by_someone or any(isinstance(s, PressAction) for s in case.steps)


def why_not_forkable(fork: Fork) -> str | None:
    """Why this trial cannot be forked and pressed; None when it can."""
    config = fork.site.config
    if fork.network_mode == "replay":
        return "the run answers from fixtures (--network replay): no live site for the fork to write"
    if not fork.site.has("reset") or not config.world_cookie:
        return NO_WORLDS
    if fork.proxy is None:
        return "the run has no proxy (--no-proxy): the press's writes could not be counted"
    if not expected_writes(fork.case):
        return (
            "the case names no write for the press: expect.network.writes gives none with 0 "
            "(the final action's write, left to the person)"
        )
    return None


async def press_in_fork(fork: Fork) -> PressRecord:
    """Fork the trial, bring the fork to the confirmation point, press the control: what followed."""
    rec = fork.trace.confirmation
    if pressed_in_trial(fork.case, fork.trace):
        return PressRecord(context="trial")
    if rec is None or rec.error or not rec.visible:
        return PressRecord(not_pressed="the control was not there to press at the end of the trial")
    why = why_not_forkable(fork)
    if why:
        return PressRecord(not_pressed=why)
    record = PressRecord(context="fork", expected=expected_writes(fork.case))
    # the trial's world is read while the fork's world is reset and its context opened: nothing of the fork has
    # loaded before _press awaits it
    state_before = asyncio.ensure_future(_trial_state(fork))
    try:
        await _press(fork, record, state_before)
    except (NotReached, PlaywrightError, SiteUnavailable, TrialAborted, StepNotShown) as err:
        why = f"the fork failed: {first_line(err)}" if isinstance(err, PlaywrightError) else str(err)
        record = PressRecord(not_pressed=why, replayed=record.replayed, expected=record.expected)
    except BaseException:  # a stopped trial: no read left behind
        state_before.cancel()
        raise
    before = await state_before
    after = await _trial_state(fork)
    if before is not None and after is not None:
        record.trial_world_unchanged = before == after
    return record


async def _trial_state(fork: Fork) -> Any:
    """The trial's own world, by the site's state hook (None: it has none, or it could not be read)."""
    if not fork.site.has("state"):
        return None
    try:
        return await fork.site.state(fork.world)
    except SiteUnavailable:
        return None


async def _press(fork: Fork, record: PressRecord, state_before: asyncio.Future[Any]) -> None:
    assert fork.proxy is not None
    tp = await _open_fork(fork)
    await state_before  # the trial's world as it was before the fork loads anything
    fork.proxy.begin_trial(fork.trial_id, mode="live", fixture=None, rewrite=fork.hook.proxy)
    try:
        await _reach(fork, tp, record)
        await _press_control(fork, tp, record)
    finally:
        with contextlib.suppress(KeyError):
            fork.proxy.end_trial(fork.trial_id)
        await tp.close()


async def _open_fork(fork: Fork) -> TrialPage:
    """The fork's world reset to the case's seed and its context opened, side by side (the site's work and the
    browser's, as the trial's own open); a context opened beside a reset that failed is closed."""
    opening = asyncio.ensure_future(_open_context(fork))
    try:
        await fork.site.reset(fork.fork_world, fork.case.seed, fork.case.breaks)
    except BaseException:
        with contextlib.suppress(BaseException):
            await (await opening).close()
        raise
    return await opening


async def _open_context(fork: Fork) -> TrialPage:
    return await fork.session.open_trial(
        fork.trial_id,
        fork.site.config.base_url,
        world_cookie=(str(fork.site.config.world_cookie), fork.fork_world),
        clock_start=time.monotonic(),
        settle_ms=fork.site.config.settle_ms,
        settle=fork.site.config.settle,
        context_settings=fork.context_settings,
        init_script=fork.hook.init_script,
        worker=fork.worker,
        http_credentials=fork.site.config.credentials,
    )


async def _reach(fork: Fork, tp: TrialPage, record: PressRecord) -> None:
    """The start route, the case's setup and the trial's steps again, in the fork's context."""
    case, config = fork.case, fork.site.config
    await open_start_route(tp.page, config, case.start_route, case.id, proxied=True, crashed=lambda: tp.crashed)
    await tp.host.wait_for_tools()
    actions = UserActions(
        tp.page, tp.host, fork.site, fork.fork_world, fork.trial_id, fork.proxy, HumanWindows(tp.page, tp.log.events)
    )
    for setup in case.setup:
        if isinstance(setup, SetupCall):
            await _call(tp, ToolCall(index=-1, step=-1, tool=setup.call, args=setup.args), record, "setup call")
        else:
            await actions.perform(setup)
            record.replayed.append(f"setup action {setup.action}")
        await tp.host.wait_for_tools()
    for done in fork.trace.steps:
        if done.kind == "action":
            action = case.steps[done.index]  # an action step's record is the case's own action
            if isinstance(action, UserStep):
                raise NotReached(f"step {done.index} of the trial was an action, the case's is a user message")
            record.replayed.append(f"action {action.action}")
            try:
                await actions.perform(action)
            except StepNotShown as err:
                if done.not_shown:  # the trial stopped at this step too: the rest of it was never played
                    break
                raise NotReached(f"the fork did not reach the trial's confirmation point: {err}") from None
        else:
            for index in done.calls:
                await _call(tp, fork.trace.calls[index], record, "call")
        await tp.host.wait_for_tools()


async def _call(tp: TrialPage, was: ToolCall, record: PressRecord, what: str) -> None:
    """One recorded call made again; it must answer as it did in the trial (or as setup needs: not an error)."""
    got = _outcome(await tp.host.call(was.tool, was.args))
    record.replayed.append(f"{what} {was.tool}")
    if what == "setup call":
        if got[0] != "ok":
            raise NotReached(f"the case's setup call {was.tool} did not succeed in the fork: {got}")
        return
    if got != _outcome(was):
        raise NotReached(
            f"the fork did not reach the trial's confirmation point: call #{was.index} {was.tool} answered "
            f"{got} there, {_outcome(was)} in the trial"
        )


def _outcome(call: ToolCall) -> tuple[str, str]:
    """What a call's answer says, as far as the fork must agree with the trial: error or not, status and code."""
    if call.refused or call.error:
        return ("refused" if call.refused else "error", "")
    result = call.result if isinstance(call.result, dict) else {}
    status = str(result.get("status") or "ok")
    return ("ok" if status == "ok" else status, str(result.get("code") or ""))


async def _press_control(fork: Fork, tp: TrialPage, record: PressRecord) -> None:
    """Press the control as a person does, then the writes that followed, up to the first one the case names."""
    assert fork.proxy is not None and fork.case.expect.confirmation is not None
    control = fork.case.expect.confirmation.control
    first = len(fork.proxy.snapshot(fork.trial_id).writes)  # the replayed steps' writes are not the press's
    record.url_before, record.pressed = tp.page.url, control.describe()
    try:
        await locate(tp.page, control).first.click(timeout=PRESS_TIMEOUT_MS)
    except PlaywrightError as err:
        record.press_error = f"could not press {control.describe()}: {first_line(err)}"
        return
    settles = len(tp.host.settles)
    with contextlib.suppress(PlaywrightError):  # a page that navigated away settles as the new one
        await tp.host.wait_for_tools()
    # A page that settled has no request open, and the proxy counted each of them before the page had its
    # answer: only a write a timer sends later can still come. A page still busy at the cap (or whose wait
    # broke off) gets longer.
    settled = len(tp.host.settles) > settles and tp.host.settles[-1].reason != "cap"
    deadline = time.monotonic() + (WRITE_GRACE_S if settled else WRITE_WAIT_S)
    while True:
        writes = fork.proxy.snapshot(fork.trial_id).writes[first:]
        record.writes = [WriteRecord.model_validate(w.model_dump(include=WRITE_FIELDS)) for w in writes]
        if record.made() or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    record.url_after = tp.page.url
