"""The user's scripted actions of a case, performed on the trial's page, site and proxy.

One handler per action type (webmcp_eval/suite/case.py ``Action``), looked up by the
step's type: a new action is one model there and one entry in ``ACTIONS`` here.
A click is the human's (its events fall in a human window of the shim's log);
everything the agent does goes through the tool host instead.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from playwright.async_api import Page
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from webmcp_eval.play.evidence.fixture_store import FixtureMissing, HookTape
from webmcp_eval.play.page.human_windows import HumanWindows
from webmcp_eval.play.page.locate import locate
from webmcp_eval.play.page.toolhost import ToolHost
from webmcp_eval.play.run.abort import TrialAborted
from webmcp_eval.suite.case import (
    Action,
    ChangeAction,
    ClickAction,
    ExpireSessionAction,
    FaultAction,
    Locator,
    NavigateAction,
    PressAction,
    ReloadAction,
    WaitForAction,
)
from webmcp_eval.suite.site import HookMissing

if TYPE_CHECKING:
    from webmcp_eval.proxies.controller import NetworkProxy


class StepNotShown(Exception):
    """A scripted human step could not happen: the page never showed what the case says it shows.

    That is the site's (or the agent's) doing, never the machine's: the trial is ``failed`` with the
    step named, and what the page shows then is still read and judged.
    """


@dataclass
class UserActions:
    """What the user's actions act on in one trial."""

    page: Page
    host: ToolHost
    site: HookTape
    world: str  # the trial's server-side world (site hooks)
    trial_id: str  # the proxy's name for the trial's traffic
    proxy: NetworkProxy | None
    humans: HumanWindows
    confirmation: Locator | None = None  # the case's confirmation control: what press presses by default
    # reads the confirmation point as the agent left it, just before the human presses (set by the trial)
    before_press: Callable[[Locator], Awaitable[None]] | None = None

    async def perform(self, step: Action) -> None:
        """Do one action; a fixture or site hook it needs and lacks stops the trial (not_run)."""
        handler = ACTIONS.get(type(step))
        if handler is None:
            raise TrialAborted(f"the runner has no handler for the action {type(step).__name__}", "runner")
        try:
            await handler(self, step)
        except FixtureMissing as err:
            raise TrialAborted(str(err), "fixture") from None
        except HookMissing as err:
            raise TrialAborted(
                f"step {step.action} needs the site's {err} hook, which this site does not have", "case"
            ) from None


async def navigate(user: UserActions, step: NavigateAction) -> None:
    """Go where the user goes: by the page's own link when it has one (same document)."""
    page = user.page
    url = user.site.config.url_for(step.to)
    index = await page.evaluate("u => [...document.querySelectorAll('a[href]')].findIndex(a => a.href === u)", url)
    if index >= 0:
        await page.locator("a[href]").nth(index).click()
        await page.wait_for_url(url)
    else:
        await page.goto(url, wait_until="load")


async def reload(user: UserActions, step: ReloadAction) -> None:
    await user.page.reload(wait_until="load")


async def human_click(user: UserActions, step: ClickAction) -> None:
    """The human clicks (``times`` times); a control that is not there fails the step (Playwright's timeout)."""
    async with user.humans.human():
        target = locate(user.page, step.target).first
        for n in range(step.times):
            try:
                await target.click()
            except PlaywrightTimeoutError:
                again = f" (press {n + 1} of {step.times})" if step.times > 1 else ""
                raise StepNotShown(f"the human could not press {step.target.describe()}{again}: not there") from None


async def human_press(user: UserActions, step: PressAction) -> None:
    """The human presses the control the agent stopped at, after the confirmation point is read."""
    control = step.target or user.confirmation
    if control is None:  # validate refuses such a case
        raise TrialAborted("press has no control: give it a target, or the case an expect.confirmation", "case")
    if user.before_press is not None:
        await user.before_press(control)
    await human_click(user, ClickAction(action="click", target=control, times=step.times))


async def expire_session(user: UserActions, step: ExpireSessionAction) -> None:
    await user.site.expire_session(user.world)


async def change(user: UserActions, step: ChangeAction) -> None:
    await user.site.change(user.world, step.op, step.params)


async def arm_fault(user: UserActions, step: FaultAction) -> None:
    if not user.proxy:
        raise TrialAborted("a fault step needs the proxy, which is off for this run", "case")
    from webmcp_eval.proxies.models import FaultSpec

    user.proxy.arm_fault(
        user.trial_id,
        FaultSpec(
            method=step.method,
            path=step.path,
            times=step.times,
            status=step.status,
            delay_ms=step.delay_ms,
            drop=step.drop,
            duplicate=step.duplicate,
            lose_answer=step.lose_answer,
        ),
    )


async def wait_for(user: UserActions, step: WaitForAction) -> None:
    if step.target:
        try:
            await locate(user.page, step.target).first.wait_for(state="visible", timeout=step.timeout_ms)
        except PlaywrightTimeoutError:
            raise StepNotShown(f"the page did not show {step.target.describe()} within {step.timeout_ms} ms") from None
    if step.tools:
        await user.host.wait_for_tools(step.tools, timeout_ms=step.timeout_ms)


ACTIONS: dict[type, Callable[[UserActions, Any], Awaitable[None]]] = {
    NavigateAction: navigate,
    ReloadAction: reload,
    ClickAction: human_click,
    PressAction: human_press,
    ExpireSessionAction: expire_session,
    ChangeAction: change,
    FaultAction: arm_fault,
    WaitForAction: wait_for,
}
