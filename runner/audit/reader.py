"""Reading one page's surface from a live browser: every frame's tools, forms, refusals and timeline.

The shim (``runner/play/page/shim.js``) runs in every frame as an init script and
reports through the exposed binding; Playwright tells which frame each report
came from, so every registration, withdrawal and refusal is kept per frame.
After the watch, each frame's tools are read from the browser itself
(``frame.webmcp.tools()``, the native listing, with its annotations), and the
shim's registrations fill in what that listing lacks (the page's own
annotation spelling, which tools are declarative forms). A ``<form
toolname>`` that is in the document but missing from the native listing is a
registration the browser refused.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit

from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame as PwFrame

from runner.audit.model import FormField, Frame, PageSurface, Refused, TimelineEvent, Tool
from runner.play.page.devtools_tools import HungFrames
from runner.play.page.toolhost import SHIM_JS

READ_TIMEOUT_MS = 10_000
GOTO_TIMEOUT_MS = 30_000

# The declarative forms of a frame, their fields (type, autocomplete) and the page's links.
FORMS_JS = """() => [...document.querySelectorAll('form[toolname]')].map(f => ({
  name: f.getAttribute('toolname') || '',
  description: f.getAttribute('tooldescription') || '',
  autosubmit: f.hasAttribute('toolautosubmit'),
  fields: [...f.elements].filter(e => e.name || e.type === 'password').map(e => ({
    name: e.name || '', type: (e.type || e.tagName).toLowerCase(), autocomplete: e.getAttribute('autocomplete') || ''
  })),
}))"""
_LINKS_JS = "() => [...document.querySelectorAll('a[href]')].map(a => a.href)"


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") else url


@dataclass
class FrameLog:
    """The shim's reports of one frame, with the host's clock."""

    frame: PwFrame
    events: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class OpenPage:
    """A page opened for the audit: its reports per frame, its errors, its load moment; smoke calls use it too."""

    page: Page
    frames: HungFrames | None = None  # a frame whose own listing never answers is read through DevTools
    logs: dict[int, FrameLog] = field(default_factory=dict)
    script_errors: list[str] = field(default_factory=list)
    nav_t: float = 0.0
    load_t: float | None = None
    load_epoch_ms: float | None = None  # the top page's load event by its own clock (epoch ms, as the shim's t)
    page_load_ms: float | None = None  # from its navigation start to its load event, by its own clock

    def report(self, source: dict[str, Any], event: dict[str, Any]) -> None:
        frame = source.get("frame")
        if frame is None:
            return
        event["host_t"] = time.monotonic()
        self.logs.setdefault(id(frame), FrameLog(frame)).events.append(event)

    def frame_log(self, frame: PwFrame) -> list[dict[str, Any]]:
        return self.logs.get(id(frame), FrameLog(frame)).events

    def document_key(self, frame: PwFrame) -> tuple[int, str | None]:
        """The frame and the document it shows now, as the shim named it."""
        loaded = [e for e in self.frame_log(frame) if e.get("type") == "loaded"]
        return id(frame), loaded[-1].get("document") if loaded else None


async def open_page(context: BrowserContext) -> OpenPage:
    """A new page of context with the shim in every frame, reporting per frame."""
    opened = OpenPage(page=None)  # type: ignore[arg-type]  # reports may come before new_page returns
    await context.expose_binding("__webmcpEvalReport", lambda source, event: opened.report(source, event))
    await context.add_init_script(SHIM_JS)
    opened.page = await context.new_page()
    opened.page.on("pageerror", lambda err: opened.script_errors.append(_first_line(err)))
    opened.frames = HungFrames(opened.page)
    await opened.frames.watch(context)  # before the page loads: DevTools announces a frame's tools as they come
    return opened


async def load(opened: OpenPage, url: str) -> str | None:
    """Navigate; None when loaded, else why it failed (unreachable, HTTP error, left the origin)."""
    opened.nav_t = time.monotonic()
    try:
        response = await opened.page.goto(url, wait_until="load", timeout=GOTO_TIMEOUT_MS)
    except PlaywrightError as err:
        return _first_line(err)
    opened.load_t = time.monotonic()
    if response is not None and response.status >= 400:
        return f"HTTP {response.status}"
    if origin_of(opened.page.url) != origin_of(url):
        return f"left for another origin ({origin_of(opened.page.url)}): not followed"
    return None


def _current_document(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    loaded = [e for e in events if e.get("type") == "loaded"]
    if not loaded:
        return events
    document = loaded[-1].get("document")
    return [e for e in events if e.get("document") == document]


def _active(events: list[dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """The live registrations by name, and the refused ones, of the frame's current document."""
    live: dict[int, dict[str, Any]] = {}
    refused: list[dict[str, Any]] = []
    for e in _current_document(events):
        if e.get("type") == "register":
            live[e["instance"]] = e
        elif e.get("type") == "unregister":
            live.pop(e.get("instance"), None)
        elif e.get("type") == "register_error":
            live.pop(e.get("instance"), None)
            refused.append(e)
    return {e.get("name"): e for e in live.values()}, refused


async def _allow_of(frame: PwFrame) -> str | None:
    try:
        element = await frame.frame_element()
        return await element.get_attribute("allow")
    except PlaywrightError:
        return None


def shim_listing(shim_live: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The frame's tools as the shim saw them registered: the listing where the browser has no native one."""
    return [
        {
            "name": n,
            "description": e.get("description") or "",
            "inputSchema": e.get("inputSchema"),
            "annotations": e.get("annotations"),
        }
        for n, e in shim_live.items()
    ]


async def read_frame(opened: OpenPage, frame: PwFrame, top_origin: str) -> Frame:
    main = frame == opened.page.main_frame
    allow = None if main else await _allow_of(frame)
    forms_error = None
    try:
        forms = await frame.evaluate(FORMS_JS)
    except PlaywrightError as err:
        forms, forms_error = [], _first_line(err)
    try:
        assert opened.frames is not None
        key = opened.document_key(frame)
        listed: list[dict[str, Any]] | None = await opened.frames.listing(frame, key, READ_TIMEOUT_MS, READ_TIMEOUT_MS)
    except PlaywrightError:
        listed = None
    read = FrameReading(frame.url, main, allow, opened.frame_log(frame), forms, forms_error, listed)
    return frame_surface(read, top_origin, LoadClock(opened.load_epoch_ms, opened.load_t or opened.nav_t))


@dataclass
class FrameReading:
    """What was read of one frame, by the async reader here or by the pytest plugin's sync one."""

    url: str
    main: bool
    allow: str | None  # the <iframe allow> attribute (None for the top document)
    events: list[dict[str, Any]]  # the shim's reports of this frame, each with host_t
    forms: list[dict[str, Any]]  # FORMS_JS's answer
    forms_error: str | None
    listed: list[dict[str, Any]] | None  # the browser's native listing; None: it has none


@dataclass
class LoadClock:
    """The top page's load event: by its own clock (epoch ms, as the shim's ``t``), else the host's."""

    load_epoch_ms: float | None
    host_t: float

    def after_load(self, event: dict[str, Any]) -> float:
        """When an event happened, in ms after the load event: by the page's own clock (the shim stamps every
        event with it), so a busy runner that hears of it late does not make a tool look late."""
        if self.load_epoch_ms is not None and isinstance(event.get("t"), int | float):
            return round(event["t"] - self.load_epoch_ms, 1)
        return round((event["host_t"] - self.host_t) * 1000, 1)


def frame_surface(read: FrameReading, top_origin: str, clock: LoadClock) -> Frame:
    """One frame's surface from what was read of it."""
    origin = origin_of(read.url)
    out = Frame(
        url=read.url,
        origin=origin,
        main=read.main,
        same_origin=origin == top_origin,
        allow=read.allow,
        error=read.forms_error,
    )
    shim_live, shim_refused = _active(read.events)
    native = read.listed is not None
    listed = read.listed if read.listed is not None else shim_listing(shim_live)
    by_form = {f["name"]: f for f in read.forms}
    for raw in listed:
        name = raw.get("name") or ""
        shim = shim_live.get(name, {})
        form = by_form.get(name)
        annotations = {
            **(shim.get("annotations") or {}),
            **{k: v for k, v in (raw.get("annotations") or {}).items() if v is not None},
        }
        if form and form["autosubmit"]:
            annotations["autosubmit"] = True
        out.tools.append(
            Tool(
                name=name,
                description=raw.get("description") or "",
                input_schema=raw.get("inputSchema"),
                annotations=annotations,
                kind="declarative" if form or shim.get("declarative") else "imperative",
                fields=[FormField(**f) for f in form["fields"]] if form else [],
            )
        )
    out.refused = [Refused(e.get("name") or "", e.get("error") or "refused") for e in shim_refused]
    if native:
        names = {t.name for t in out.tools}
        for form in read.forms:
            if form["name"] not in names:
                why = "no tooldescription" if not form["description"].strip() else "the browser did not list it"
                out.refused.append(Refused(form["name"], f"form not registered by the browser ({why})", "declarative"))
    out.events = [
        TimelineEvent(clock.after_load(e), e["type"], e.get("name") or "")
        for e in _current_document(read.events)
        if e.get("type") in ("register", "unregister")
    ]
    return out


async def read_surface(opened: OpenPage, url: str, watch_ms: int) -> PageSurface:
    """Load url, watch it for watch_ms after the load event, then read every frame."""
    surface = PageSurface(url=url, watched_ms=watch_ms)
    surface.error = await load(opened, url)
    if surface.error:
        return surface
    await _page_clock(opened)
    host_ms = ((opened.load_t or opened.nav_t) - opened.nav_t) * 1000
    surface.load_ms = round(opened.page_load_ms if opened.page_load_ms is not None else host_ms, 1)
    await asyncio.sleep(watch_ms / 1000)
    top = origin_of(opened.page.url)
    for frame in opened.page.frames:
        if frame.is_detached() or frame.url in ("", "about:blank") and frame != opened.page.main_frame:
            continue
        surface.frames.append(await read_frame(opened, frame, top))
    surface.script_errors = list(opened.script_errors)
    try:
        links = await opened.page.main_frame.evaluate(_LINKS_JS)
    except PlaywrightError:
        links = []
    surface.links = sorted({urldefrag(urljoin(url, link))[0] for link in links if origin_of(link) == top})
    return surface


LOAD_JS = """() => { const n = performance.getEntriesByType('navigation')[0];
  return n && n.loadEventStart ? [performance.timeOrigin + n.loadEventStart, n.loadEventStart] : null; }"""


async def _page_clock(opened: OpenPage) -> None:
    try:
        found = await opened.page.evaluate(LOAD_JS)
    except PlaywrightError:
        found = None
    if found:
        opened.load_epoch_ms, opened.page_load_ms = float(found[0]), float(found[1])


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
