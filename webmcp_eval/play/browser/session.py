"""Browser session: one Chromium per run, one fresh browser context per trial.

A fresh context gives every trial clean cookies and storage; the shim goes in
as an init script, its events come back through an exposed binding, and the
DevTools WebMCP domain is recorded as a second witness. A renderer crash is
caught and reported, never left to hang the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import (
    Browser,
    BrowserContext,
    CDPSession,
    Page,
    Playwright,
    ProxySettings,
)

from webmcp_eval.play.browser.browser import ChromiumChoice, connect_cdp, connect_server, launch
from webmcp_eval.play.browser.browser import http_credentials as browser_credentials
from webmcp_eval.play.browser.driver import start_driver
from webmcp_eval.play.page.surface.bounds import bound_event
from webmcp_eval.play.page.toolhost import SHIM_JS, SettleMode, ShimLog, ToolHost
from webmcp_eval.suite.browser_context import BrowserContextSettings

TRIAL_HEADER = "X-WebMCP-Eval-Trial"


class BrowserSession:
    """The run's browser: launched here, or reached remotely (``connect``: a Playwright browser server;
    ``connect_over_cdp``: a running Chromium). A local browser serves every worker; remotely each
    worker keeps its own connection for the whole run (a browser server launches a browser per
    connection), made again only when it is lost."""

    def __init__(
        self,
        *,
        headless: bool = True,
        slow_mo: float | None = None,
        proxy_url: str | None = None,
        chromium: str | None = None,
        connect: str | None = None,
        connect_over_cdp: str | None = None,
    ):
        self.headless = headless
        self.slow_mo = slow_mo
        self.proxy_url = proxy_url
        self.chromium = chromium
        self.connect = connect
        self.connect_over_cdp = connect_over_cdp
        self._pw_cm: Any = None
        self.playwright: Playwright | None = None
        self.browsers: dict[int, Browser] = {}  # worker -> its browser (one, 0, when local)
        self.choice: ChromiumChoice | None = None
        self._relaunch = asyncio.Lock()

    @property
    def remote(self) -> bool:
        return bool(self.connect or self.connect_over_cdp)

    @property
    def browser(self) -> Browser | None:
        """The first browser (the one describe() reports)."""
        return next(iter(self.browsers.values()), None)

    async def __aenter__(self) -> BrowserSession:
        await self._start_driver()
        try:
            await self.ensure_browser(0)  # a wrong endpoint or a missing Chromium shows before any trial
        except BaseException:
            await self._pw_cm.__aexit__(None, None, None)
            raise
        return self

    async def _start_driver(self) -> None:
        # apart from the terminal's process group: Ctrl-C stops the trials, the runner closes the browser
        self._pw_cm, self.playwright = await start_driver(own_session=True)

    def driver_alive(self) -> bool:
        """Playwright's driver process still answers (killed, every call fails with 'Target ... closed')."""
        connection = getattr(getattr(self.playwright, "_impl_obj", None), "_connection", None)
        return getattr(connection, "_closed_error", None) is None

    def _take_driver_error(self) -> None:
        """Take the error Playwright's transport set when its driver died. Playwright reads that future only
        while it starts, so after a driver's death nobody does, and asyncio prints "Future exception was never
        retrieved ... Connection closed while reading from the driver" when the loop ends: the death is
        already the trial's reason (infrastructure), and the stray line after a run is noise."""
        client = getattr(getattr(self, "_pw_cm", None), "_client", None)
        future = getattr(getattr(client, "_transport", None), "on_error_future", None)
        if isinstance(future, asyncio.Future) and future.done() and not future.cancelled():
            future.exception()

    async def _launch(self) -> Browser:
        assert self.playwright
        chromium = self.playwright.chromium
        if self.connect:
            browser, self.choice = await connect_server(
                chromium, self.connect, explicit=self.chromium, headless=self.headless, slow_mo=self.slow_mo
            )
        elif self.connect_over_cdp:
            browser, self.choice = await connect_cdp(chromium, self.connect_over_cdp, slow_mo=self.slow_mo)
        else:
            browser, self.choice = await launch(
                chromium,
                explicit=self.chromium,
                headless=self.headless,
                slow_mo=self.slow_mo,
                proxy_server=self.proxy_url,
            )
        return browser

    async def ensure_browser(self, worker: int = 0) -> Browser:
        """The worker's browser, launched or connected again if a crash or a lost connection took it."""
        key = worker if self.remote else 0
        async with self._relaunch:
            if not self.driver_alive():  # the driver died: a new one, and new browsers through it
                self._take_driver_error()
                with contextlib.suppress(Exception):
                    await self._pw_cm.__aexit__(None, None, None)
                self.browsers.clear()
                await self._start_driver()
            browser = self.browsers.get(key)
            if browser is None or not browser.is_connected():
                self.browsers[key] = browser = await self._launch()
        return browser

    async def __aexit__(self, *exc: object) -> None:
        for browser in self.browsers.values():
            with contextlib.suppress(Exception):
                await browser.close()
        self._take_driver_error()
        if self._pw_cm:
            with contextlib.suppress(Exception):  # a driver that died has nothing left to stop
                await self._pw_cm.__aexit__(*exc)

    def describe(self) -> dict[str, str]:
        browser = self.browser
        if not browser or not self.choice:
            return {}
        with contextlib.suppress(Exception):  # a lost remote browser has no version to give
            return {"path": self.choice.path, "source": self.choice.source, "version": browser.version}
        return {"path": self.choice.path, "source": self.choice.source}

    async def open_trial(
        self,
        trial_id: str,
        base_url: str,
        *,
        world_cookie: tuple[str, str] | None,
        clock_start: float,
        settle_ms: int = 100,
        settle: SettleMode = "window",
        context_settings: BrowserContextSettings | None = None,
        init_script: str | None = None,
        worker: int = 0,
        http_credentials: tuple[str, str] | None = None,
    ) -> TrialPage:
        browser = await self.ensure_browser(worker)
        headers = {TRIAL_HEADER: trial_id} if self.proxy_url else {}
        # A remote browser was not launched with our proxy: each context goes through it (loopback too).
        proxy: ProxySettings | None = {"server": self.proxy_url} if self.remote and self.proxy_url else None
        pinned = context_settings or BrowserContextSettings()  # never the machine's own zone or language
        context = await browser.new_context(
            proxy=proxy,
            base_url=base_url,
            extra_http_headers=headers,
            ignore_https_errors=True,
            viewport={"width": 1280, "height": 900},
            timezone_id=pinned.timezone_id,
            locale=pinned.locale,
            # a protected site's HTTP authentication (credentials given in its URL, kept out of every file)
            http_credentials=browser_credentials(http_credentials),
        )
        trial = TrialPage(context=context, log=ShimLog(), clock_start=clock_start, settle_ms=settle_ms, settle=settle)
        await trial.setup(base_url, world_cookie, init_script)
        return trial


@dataclass
class TrialPage:
    context: BrowserContext
    log: ShimLog
    clock_start: float
    settle_ms: int = 100  # the site's cap on a settle wait, or its quiet window (SiteConfig.settle_ms)
    settle: SettleMode = "window"  # how a step settles (SiteConfig.settle)
    page: Page = field(init=False)
    host: ToolHost = field(init=False)
    cdp: CDPSession | None = None
    cdp_events: list[dict[str, Any]] = field(default_factory=list)
    top_frame_id: str | None = None  # DevTools' id of the top page's frame
    frame_urls: dict[str, str] = field(default_factory=dict)  # DevTools' frame id -> its document's URL now
    crashed: str | None = None
    crash_event: asyncio.Event = field(default_factory=asyncio.Event)  # set when the renderer dies

    async def setup(self, base_url: str, world_cookie: tuple[str, str] | None, init_script: str | None = None) -> None:
        # independent of each other, all done before the page opens: sent together, not one round trip each
        ready: list[Awaitable[Any]] = [
            self.context.expose_binding("__webmcpEvalReport", self.log.take),
            self.context.add_init_script(SHIM_JS),
        ]
        if world_cookie:
            ready.append(
                self.context.add_cookies([{"name": world_cookie[0], "value": world_cookie[1], "url": base_url}])
            )
        await asyncio.gather(*ready)
        if init_script:  # after the shim: what it changes, the shim sees as the page's own doing
            await self.context.add_init_script(init_script)
        self.page = await self.context.new_page()
        self.page.set_default_timeout(10_000)  # a missing control fails the step fast, not after 30 s
        self.page.on("crash", lambda _page: self._crash("the page crashed (renderer process gone)"))
        self.host = ToolHost(self.page, self.log, self.clock_start, settle_ms=self.settle_ms, settle=self.settle)
        await self._start_witness()

    def _crash(self, why: str) -> None:
        self.crashed = why
        self.crash_event.set()  # operations on a crashed page can hang: the trial stops waiting at once

    async def _start_witness(self) -> None:
        """Record the DevTools WebMCP domain's events; absent on browsers without it."""
        try:
            self.cdp = await self.context.new_cdp_session(self.page)
            for name in ("toolsAdded", "toolsRemoved", "toolInvoked", "toolResponded"):
                self.cdp.on(f"WebMCP.{name}", lambda params, name=name: self._witness(name, params))
            self.host.frames.follow(self.cdp)
            # each frame's URL as it navigates, so an event's frame is named by its document, not only its id
            self.cdp.on("Page.frameNavigated", lambda e: self._frame_url(e["frame"]["id"], e["frame"].get("url")))
            self.cdp.on("Page.navigatedWithinDocument", lambda e: self._frame_url(e.get("frameId"), e.get("url")))
            # the top page's frame id: DevTools names each event's frame, and a frame's events are told apart by it.
            # The page has not navigated yet (no event can come): the three commands go together.
            answers = await asyncio.gather(
                self.cdp.send("WebMCP.enable"), self.cdp.send("Page.getFrameTree"), self.cdp.send("Page.enable")
            )
            self.top_frame_id = answers[1]["frameTree"]["frame"]["id"]
        except Exception:
            self.cdp = self.host.frames.cdp = None

    def _frame_url(self, frame_id: str | None, url: str | None) -> None:
        if frame_id and url:
            self.frame_urls[frame_id] = url

    def _witness(self, name: str, params: dict[str, Any]) -> None:
        params = bound_event(params)  # the site's answer and strings, as the reader bounds them (bounds.py)
        self.host.frames.tools.witness(name, params)
        slim = {k: v for k, v in params.items() if k not in ("stackTrace", "frameId")}
        frame_id = params.get("frameId") or next((t.get("frameId") for t in params.get("tools") or []), None)
        if frame_id is not None:  # which frame's document (toolResponded names only the invocation)
            slim["frame_id"], slim["top"] = frame_id, frame_id == self.top_frame_id
            if frame_id in self.frame_urls:
                slim["frame_url"] = self.frame_urls[frame_id]
        if "tools" in slim:
            slim["tools"] = [t.get("name") for t in slim["tools"]]
        if isinstance(slim.get("input"), str):
            with contextlib.suppress(ValueError):
                slim["input"] = json.loads(slim["input"])
        slim["event"] = name
        slim["t_ms"] = round((time.monotonic() - self.clock_start) * 1000, 1)
        self.cdp_events.append(slim)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.context.close(), timeout=10)

    async def stop_tracing(self, path: str | None) -> bool:
        """Stop Playwright's tracing (saving it to path); False when the page could not say."""
        try:
            await asyncio.wait_for(self.context.tracing.stop(path=path), timeout=15)
            return True
        except Exception:
            return False
