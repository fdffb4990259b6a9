"""One page opened with the engine, loaded, watched after its load event, then read whole (the audit's reading).

Beside every frame's surface (``reader.py``) it keeps what a page-wide reading needs: the
page's load moment by its own clock (the timeline counts from it), its uncaught script errors
and its same-origin links (the audit's crawl).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urljoin

from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError

from webmcp_eval.play.page.surface.activity import PageActivity
from webmcp_eval.play.page.surface.log import ShimLog
from webmcp_eval.play.page.surface.model import PageSurface, origin_of
from webmcp_eval.play.page.surface.reader import LoadClock, Surface, first_line

__all__ = ["LOAD_JS", "OpenPage", "load", "open_page", "origin_of", "read_surface"]

READ_TIMEOUT_MS = 10_000
GOTO_TIMEOUT_MS = 30_000
_LINKS_JS = "() => [...document.querySelectorAll('a[href]')].map(a => a.href)"
LOAD_JS = """() => { const n = performance.getEntriesByType('navigation')[0];
  return n && n.loadEventStart ? [performance.timeOrigin + n.loadEventStart, n.loadEventStart] : null; }"""


@dataclass
class OpenPage:
    """A page opened with the engine: its surface, its errors, its load moment; the audit's smoke calls use it too."""

    page: Page
    surface: Surface
    activity: PageActivity  # its requests in flight, and the wait until it is still (after a smoke call)
    script_errors: list[str] = field(default_factory=list)
    nav_t: float = 0.0
    load_t: float | None = None
    load_epoch_ms: float | None = None  # the top page's load event by its own clock (epoch ms, as the shim's t)
    page_load_ms: float | None = None  # from its navigation start to its load event, by its own clock

    @property
    def log(self) -> ShimLog:
        return self.surface.log


async def open_page(context: BrowserContext) -> OpenPage:
    """A new page of context with the shim in every frame, and DevTools watching its tools."""
    log = ShimLog()
    await Surface.install(context, log)
    page = await context.new_page()
    opened = OpenPage(page=page, surface=Surface(page, log), activity=PageActivity(page, log))
    page.on("pageerror", lambda err: opened.script_errors.append(first_line(err)))
    await opened.surface.hung.watch(context)  # before the page loads: DevTools announces a frame's tools as they come
    return opened


async def load(opened: OpenPage, url: str) -> str | None:
    """Navigate; None when loaded, else why it failed (unreachable, HTTP error, left the origin)."""
    opened.nav_t = time.monotonic()
    try:
        response = await opened.page.goto(url, wait_until="load", timeout=GOTO_TIMEOUT_MS)
    except PlaywrightError as err:
        return first_line(err)
    opened.load_t = time.monotonic()
    if response is not None and response.status >= 400:
        return f"HTTP {response.status}"
    if origin_of(opened.page.url) != origin_of(url):
        return f"left for another origin ({origin_of(opened.page.url)}): not followed"
    return None


async def _ms_after_load(opened: OpenPage) -> float:
    """Now, in ms after the load event: by the page's own clock, as its events are stamped, else the host's."""
    if opened.load_epoch_ms is not None:
        try:
            return round(float(await opened.page.evaluate("Date.now()")) - opened.load_epoch_ms, 1)
        except PlaywrightError:
            pass
    return round((time.monotonic() - (opened.load_t or opened.nav_t)) * 1000, 1)


async def read_surface(
    opened: OpenPage, url: str, watch_ms: int, before_read: Callable[[], Awaitable[str | None]] | None = None
) -> PageSurface:
    """Load url, watch it for watch_ms after the load event, then read every frame (before_read first: the
    setup steps that bring the page to the state its tools are read in; what it returns is the page's error)."""
    surface = PageSurface(url=url, watched_ms=watch_ms)
    surface.error = await load(opened, url)
    if surface.error:
        return surface
    await _page_clock(opened)
    host_ms = ((opened.load_t or opened.nav_t) - opened.nav_t) * 1000
    surface.load_ms = round(opened.page_load_ms if opened.page_load_ms is not None else host_ms, 1)
    await asyncio.sleep(watch_ms / 1000)
    if before_read is not None:
        surface.setup_ms = await _ms_after_load(opened)
        if error := await before_read():
            surface.error = error
            return surface
    clock = LoadClock(opened.load_epoch_ms, opened.load_t or opened.nav_t)
    surface.frames = await opened.surface.read_frames(clock, timeout_ms=READ_TIMEOUT_MS, top_timeout_ms=READ_TIMEOUT_MS)
    surface.script_errors = list(opened.script_errors)
    top = origin_of(opened.page.url)
    try:
        links = await opened.page.main_frame.evaluate(_LINKS_JS)
    except PlaywrightError:
        links = []
    surface.links = sorted({urldefrag(urljoin(url, link))[0] for link in links if origin_of(link) == top})
    return surface


async def _page_clock(opened: OpenPage) -> None:
    try:
        found = await opened.page.evaluate(LOAD_JS)
    except PlaywrightError:
        found = None
    if found:
        opened.load_epoch_ms, opened.page_load_ms = float(found[0]), float(found[1])
