"""Reading a site's routes once, as ``tools``, ``init`` and ``validate --live`` do: each in a fresh context.

Each route opens in its own context with the shim and DevTools watching; its tools are read
once they settle (the tool host's quiet window), every frame through the page surface engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Browser, async_playwright

from webmcp_eval.play.browser.browser import http_credentials, launch
from webmcp_eval.play.page.surface.log import ShimLog
from webmcp_eval.play.page.surface.model import Frame, Refused, Tool
from webmcp_eval.play.page.surface.reader import Surface, first_line
from webmcp_eval.play.page.toolhost import ToolHost
from webmcp_eval.suite.site import resolve_route, split_credentials

GOTO_TIMEOUT_MS = 30_000


@dataclass
class RouteTools:
    """What one route offered: every frame's surface, the top page first."""

    route: str
    url: str
    path: str  # "native" (the browser's WebMCP) or "polyfill" (the shim's)
    frames: list[Frame] = field(default_factory=list)
    error: str | None = None  # the page could not be opened

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
    browser: Browser, url: str, route: str, settle_ms: int, credentials: tuple[str, str] | None = None
) -> RouteTools:
    """Open one page in a fresh context with the shim; read its tools once they settle (credentials: the
    site's HTTP authentication, taken out of its URL)."""
    context = await browser.new_context(http_credentials=http_credentials(credentials))
    try:
        log = ShimLog()
        await Surface.install(context, log)
        page = await context.new_page()
        host = ToolHost(page, log, 0.0, settle_ms=settle_ms)
        await host.frames.watch(context)  # before the page loads: DevTools announces a frame's tools as it registers
        try:
            response = await page.goto(url, wait_until="load", timeout=GOTO_TIMEOUT_MS)
        except Exception as err:  # unreachable, refused, a timeout: say so, per route
            return RouteTools(route, url, "unknown", error=first_line(err))
        if response is not None and response.status >= 400:
            return RouteTools(route, url, "unknown", error=f"HTTP {response.status}")
        await host.wait_for_tools()
        frames = await host.surface.read_frames()
        return RouteTools(route, url, "polyfill" if host.path == "shim" else host.path, frames)
    finally:
        await context.close()


async def list_tools(
    url: str, routes: list[str] | None = None, *, chromium: str | None = None, settle_ms: int = 100
) -> list[RouteTools]:
    """The tools of each route (resolved under url, see webmcp_eval.suite.site); without routes, of url itself.
    Credentials in url (user:password@) are the browser's HTTP authentication, never part of a listed URL."""
    url, credentials = split_credentials(url)
    targets = [(r, resolve_route(url, r)) for r in routes] if routes else [("", url)]
    async with async_playwright() as p:
        browser, _ = await launch(p.chromium, explicit=chromium)
        try:
            return [await read_route(browser, target, route, settle_ms, credentials) for route, target in targets]
        finally:
            await browser.close()


async def read_catalog(base_url: str, routes: dict[str, str], chromium: str | None = None) -> dict[str, Any]:
    """{routes: {pattern: {tool: input schema}}, annotations: {pattern: {tool: {hint: true}}}}, the shape of
    cases/catalog.json: the hints each tool is registered with (true ones only), so a run can tell one lost."""
    out: dict[str, dict[str, Any]] = {}
    hints: dict[str, dict[str, Any]] = {}
    async with async_playwright() as p:
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
