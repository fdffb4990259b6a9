"""Reading a site's routes once, as ``tools``, ``init`` and ``validate --live`` do: each in a fresh context.

Each route opens in its own context with the shim and DevTools watching; its tools are read
once they settle (the tool host's quiet window), every frame through the page surface engine.
Setup steps (the cases' ``setup:`` steps: a person's click, a navigation, a wait, a tool call) run
after the page loads and before its tools are read, so tools that appear only after an action are
read too (``perform_setup``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from playwright.async_api import Browser, Page, Playwright
from playwright.async_api import Error as PlaywrightError

from webmcp_eval.play.browser.browser import http_credentials, launch
from webmcp_eval.play.browser.driver import playwright_driver
from webmcp_eval.play.page.locate import locate
from webmcp_eval.play.page.surface.controls import ControlsRead, explore_controls, open_start, refuse_writes
from webmcp_eval.play.page.surface.log import ShimLog
from webmcp_eval.play.page.surface.model import Frame, Refused, Tool, origin_of
from webmcp_eval.play.page.surface.reader import Surface, first_line
from webmcp_eval.play.page.toolhost import ToolHost
from webmcp_eval.suite.case import (
    ClickAction,
    NavigateAction,
    PressAction,
    ReloadAction,
    SetupCall,
    SetupStep,
    WaitForAction,
)
from webmcp_eval.suite.site import resolve_route, split_credentials

GOTO_TIMEOUT_MS = 30_000
STEP_TIMEOUT_MS = 5_000  # a setup step's control must show within this (a click, a wait without its own timeout)


class SetupFailed(Exception):
    """A setup step could not be performed on the page (its control never showed, its call failed)."""


class Settle(Protocol):
    """Wait until the page's tools settle (with names: until those are registered), at most timeout_ms; the tool
    host's ``wait_for_tools`` is one."""

    async def __call__(self, names: list[str] | None = None, timeout_ms: int = 5000) -> None: ...


async def perform_setup(
    page: Page, surface: Surface, settle: Settle, base_url: str, steps: Sequence[SetupStep]
) -> None:
    """Perform the setup steps on a loaded page, as a trial's setup does; SetupFailed says which step and why."""
    for i, step in enumerate(steps):
        try:
            await _perform(page, surface, settle, base_url, step)
        except (PlaywrightError, TimeoutError) as err:
            raise SetupFailed(f"setup step {i + 1} ({_said(step)}): {first_line(err)}") from None
        await settle()  # an action may register or withdraw tools: read them settled


async def _perform(page: Page, surface: Surface, settle: Settle, base_url: str, step: SetupStep) -> None:
    if isinstance(step, ClickAction | PressAction):
        if step.target is None:
            raise SetupFailed(f"{_said(step)}: give the control to press (target)")
        for _ in range(step.times):
            await locate(page, step.target).first.click(timeout=STEP_TIMEOUT_MS)
    elif isinstance(step, NavigateAction):
        await page.goto(resolve_route(base_url, step.to), wait_until="load", timeout=GOTO_TIMEOUT_MS)
    elif isinstance(step, ReloadAction):
        await page.reload(wait_until="load", timeout=GOTO_TIMEOUT_MS)
    elif isinstance(step, WaitForAction):
        if step.target:
            await locate(page, step.target).first.wait_for(state="visible", timeout=step.timeout_ms)
        if step.tools:
            await settle(step.tools, timeout_ms=step.timeout_ms)
    elif isinstance(step, SetupCall):
        await settle([step.call])
        answer = await surface.call(page.main_frame, step.call, step.args)
        if answer.error:
            raise SetupFailed(f"{_said(step)}: {answer.error}")
    else:
        raise SetupFailed(f"{_said(step)}: a reading performs only click, press, navigate, reload, wait_for and call")


async def shim_settle(
    log: ShimLog, names: list[str] | None = None, timeout_ms: int = 5000, quiet_s: float = 0.5
) -> None:
    """Settle by the shim's log alone (a page without a tool host, as the audit opens one): until the named tools
    are registered and no registration changed for quiet_s, at most timeout_ms."""
    deadline = time.monotonic() + timeout_ms / 1000
    seen, quiet_since = len(log.events), time.monotonic()
    while time.monotonic() < deadline:
        if len(log.events) != seen:
            seen, quiet_since = len(log.events), time.monotonic()
        active = {r.name for r in log.active_registrations()}
        if set(names or []) <= active and time.monotonic() - quiet_since >= quiet_s:
            return
        await asyncio.sleep(0.05)


def _said(step: SetupStep) -> str:
    if isinstance(step, SetupCall):
        return f"call {step.call}"
    target = getattr(step, "target", None)
    return step.action + (f" {target.describe()}" if target is not None else "")


@dataclass
class RouteTools:
    """What one route offered: every frame's surface, the top page first."""

    route: str
    url: str
    path: str  # "native" (the browser's WebMCP) or "polyfill" (the shim's)
    frames: list[Frame] = field(default_factory=list)
    error: str | None = None  # the page could not be opened
    # top-page tools registered after the page had settled on evidence (nothing under way): a bare timer's;
    # a suite of this site needs the fixed quiet window (settle: window) to see them
    late: list[str] = field(default_factory=list)
    controls: ControlsRead | None = None  # the controls that change the tools (init explores them)
    # the tools the setup steps call, as the page registered them before the steps ran (a call may withdraw its
    # own tool, as a start button's does): a suite's catalog needs them for its cases' setup
    setup_tools: list[Tool] = field(default_factory=list)

    @property
    def tools(self) -> list[Tool]:
        """The top page's tools."""
        return self.frames[0].tools if self.frames and self.frames[0].main else []

    @property
    def refused(self) -> list[Refused]:
        return self.frames[0].refused if self.frames and self.frames[0].main else []

    @property
    def child_frames(self) -> list[Frame]:
        """The frames in the page that list or refused something (an ad slot that registers nothing is left out)."""
        return [f for f in self.frames if not f.main and (f.tools or f.refused)]


async def read_route(
    browser: Browser,
    url: str,
    route: str,
    settle_ms: int,
    credentials: tuple[str, str] | None = None,
    setup: list[SetupStep] | None = None,
    explore: bool = False,
) -> RouteTools:
    """Open one page in a fresh context with the shim; perform the setup steps; read its tools once they settle
    (credentials: the site's HTTP authentication, taken out of its URL); explore: then find the controls that
    change them (webmcp_eval/play/page/surface/controls.py)."""
    context = await browser.new_context(http_credentials=http_credentials(credentials))
    try:
        log = ShimLog()
        await Surface.install(context, log)
        page = await context.new_page()
        host = ToolHost(page, log, 0.0, settle_ms=settle_ms, settle="evidence")
        await host.frames.watch(context)  # before the page loads: DevTools announces a frame's tools as it registers
        try:
            response = await page.goto(url, wait_until="load", timeout=GOTO_TIMEOUT_MS)
        except Exception as err:  # unreachable, refused, a timeout: say so, per route
            return RouteTools(route, url, "unknown", error=first_line(err))
        if response is not None and response.status >= 400:
            return RouteTools(route, url, "unknown", error=f"HTTP {response.status}")
        # what a trial settling on evidence would see, then the whole quiet window (measured from the last
        # change: no longer than the window alone): a tool only the window sees came after a bare timer
        await host.wait_for_tools()
        early = _registered(log)
        first = host.settles[-1]
        if not (first.reason == "cap" and "registration" in first.waited_for):
            # (a page whose registrations never stopped was waited for to the cap: its window would not close
            # either, and a second cap only doubles the time)
            host.settle = "window"
            await host.wait_for_tools()
        late = sorted(_registered(log) - early)
        called = {s.call for s in setup or [] if isinstance(s, SetupCall)}
        setup_tools = [t for f in await host.surface.read_frames() if f.main for t in f.tools if t.name in called]
        try:
            await perform_setup(page, host.surface, host.wait_for_tools, url, setup or [])
        except SetupFailed as err:
            return RouteTools(route, url, "unknown", error=str(err))
        frames = await host.surface.read_frames()
        read = RouteTools(route, url, "polyfill" if host.path == "shim" else host.path, frames, late=late)
        read.setup_tools = setup_tools
        if explore:
            await refuse_writes(context, origin_of(url))

            async def perform(fresh: Page, fresh_host: ToolHost) -> None:
                await perform_setup(fresh, fresh_host.surface, fresh_host.wait_for_tools, url, setup or [])

            def opener() -> Any:
                return open_start(browser, url, settle_ms, credentials, setup or [], perform)

            read.controls = await explore_controls(page, host, opener, set(late))
        return read
    finally:
        await context.close()


def _registered(log: ShimLog) -> set[str]:
    """The names the shown documents have registered, by the shim's log: what a catalog read would list, without
    reading every tool's schema from the page (twice per route: 1.3 s on a page of schemas near their cap)."""
    return {r.name for r in log.active_registrations()}


async def list_tools(
    url: str,
    routes: list[str] | None = None,
    *,
    chromium: str | None = None,
    settle_ms: int = 100,
    setup: list[SetupStep] | None = None,
    explore: bool = False,
    playwright: Playwright | None = None,
) -> list[RouteTools]:
    """The tools of each route (resolved under url, see webmcp_eval.suite.site); without routes, of url itself;
    each read after the setup steps. Credentials in url (user:password@) are the browser's HTTP authentication,
    never part of a listed URL. playwright: a driver already running (else one is started for the reading)."""
    url, credentials = split_credentials(url)
    targets = [(r, resolve_route(url, r)) for r in routes] if routes else [("", url)]
    async with playwright_driver(playwright) as p:
        browser, _ = await launch(p.chromium, explicit=chromium)
        try:
            return [
                await read_route(browser, target, route, settle_ms, credentials, setup, explore)
                for route, target in targets
            ]
        finally:
            await browser.close()


async def read_catalog(base_url: str, routes: dict[str, str], chromium: str | None = None) -> dict[str, Any]:
    """{routes: {pattern: {tool: input schema}}, annotations: {pattern: {tool: {hint: true}}}}, the shape of
    cases/catalog.json: the hints each tool is registered with (true ones only), so a run can tell one lost."""
    out: dict[str, dict[str, Any]] = {}
    hints: dict[str, dict[str, Any]] = {}
    async with playwright_driver() as p:
        browser, _ = await launch(p.chromium, explicit=chromium)
        try:
            for pattern, path in routes.items():
                read = await read_route(browser, resolve_route(base_url, path), pattern, 100)
                if read.error:
                    raise RuntimeError(f"{read.url}: {read.error}")
                out[pattern] = {t.name: t.input_schema or {"type": "object"} for t in read.tools}
                hints[pattern] = {t.name: {k: True for k, v in sorted(t.annotations.items()) if v is True}
                                  for t in read.tools}  # fmt: skip
        finally:
            await browser.close()
    return {"routes": out, "annotations": hints}
