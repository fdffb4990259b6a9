"""What a page registers: its tools per route and per frame, read from the live page.

``webmcp-eval tools URL`` lists, per route, every tool with its description,
input schema, annotations (``readOnlyHint``, ``untrustedContentHint``,
``autosubmit``, …), whether it is imperative (``registerTool``) or
declarative (``<form toolname>``), and whether the browser's native WebMCP or
the shim's polyfill answered; the tools of each frame (``<iframe>``) of the
page are listed apart, with the frame's origin and ``allow`` attribute, and so
are the registrations the browser refused, with its error. ``read_catalog``
builds ``cases/catalog.json`` from the same reading: ``validate`` checks case
files against that file without a browser, and a test compares it with what
the live demo site registers, so the two cannot drift.

The reading of one open page is ``read_frames(page, log, host)`` (a page whose
context has the shim, see ``open_with_shim``): every frame's tools, top page
first.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from playwright.async_api import Browser, BrowserContext, Frame, Page, async_playwright
from playwright.async_api import Error as PlaywrightError

from runner.play.browser.browser import launch
from runner.play.page.toolhost import SHIM_JS, ShimLog, ToolHost
from runner.suite.site import resolve_route

# Reading a site once (tools, init) waits longer for quiet than a trial's default: tools registered after a
# fetch or a timer are common, and a tool missed here is missing from the listing and from init's suite.
DISCOVERY_SETTLE_MS = 1000

# route pattern -> a concrete path of the demo site that shows it
DEMO_ROUTES = {
    "/events": "/events",
    "/events/{id}": "/events/evt-webmcp-intro",
    "/events/{id}/register": "/events/evt-webmcp-intro/register",
    "/registrations": "/registrations",
}

# The browser's names for the annotations (Playwright's listing) -> the names a page registers them with.
NATIVE_ANNOTATIONS = {
    "readOnly": "readOnlyHint",
    "untrustedContent": "untrustedContentHint",
    "consequential": "consequentialHint",
}


@dataclass
class PageTool:
    name: str
    description: str
    input_schema: Any
    annotations: dict[str, Any]  # as the page registered them, with the browser's (readOnly -> readOnlyHint)
    kind: str  # "imperative" (registerTool), "declarative" (<form toolname>), "unknown" (the shim did not see it)


@dataclass
class RefusedTool:
    """A registration the page tried and the browser refused (no description, a frame not allowed tools, …)."""

    name: Any  # as the page passed it
    error: str  # the browser's error
    kind: str


@dataclass
class FrameTools:
    """One frame's (or the top page's) tools."""

    url: str
    origin: str | None
    top: bool
    same_origin: bool | None  # same origin as the top page
    allow: str | None  # the frame element's allow attribute (None: none, or the top page)
    tools_allowed: bool | None  # its permissions policy allows "tools" (None: the browser does not say)
    tools: list[PageTool] = field(default_factory=list)
    refused: list[RefusedTool] = field(default_factory=list)
    error: str | None = None  # its tools could not be read


@dataclass
class RouteTools:
    route: str
    url: str
    path: str  # "native" (the browser's WebMCP) or "polyfill" (the shim's)
    tools: list[PageTool] = field(default_factory=list)  # the top page's
    error: str | None = None  # the page could not be opened
    refused: list[RefusedTool] = field(default_factory=list)  # the top page's refused registrations
    frames: list[FrameTools] = field(default_factory=list)  # each frame in the page, with its tools apart


def page_tool(raw: dict[str, Any], registered: dict[str, Any] | None) -> PageTool:
    """A tool as the browser lists it, with what the shim saw the page register (annotations, kind)."""
    native = raw.get("annotations") or {}
    annotations = {NATIVE_ANNOTATIONS.get(k, k): v for k, v in native.items() if v is not None}
    if registered is not None and isinstance(registered.get("annotations"), dict):
        annotations.update(registered["annotations"])  # the page's own spelling and autosubmit
    kind = "unknown" if registered is None else "declarative" if registered.get("declarative") else "imperative"
    return PageTool(
        name=raw.get("name", ""),
        description=raw.get("description") or "",
        input_schema=raw.get("inputSchema"),
        annotations=annotations,
        kind=kind,
    )


async def _frame_listing(frame: Frame, native: bool, host: ToolHost) -> list[dict[str, Any]]:
    if native:  # a frame still loading gets a short wait, a hung one is read from DevTools (ToolHost.native_listing)
        return await host.native_listing(frame)
    return await frame.evaluate("window.__webmcpEval ? window.__webmcpEval.tools() : []")


async def read_frame(frame: Frame, log: ShimLog, native: bool, host: ToolHost) -> FrameTools | None:
    """One frame's tools and refused registrations; None for a frame with neither (and no shim log)."""
    document = log.document_in(frame)
    events = [e for e in log.events if document is not None and e.get("document") == document]
    info = next((e["frame"] for e in reversed(events) if isinstance(e.get("frame"), dict)), {})
    registered = {r["name"]: r for r in log.active_registrations() if r.get("document") == document}
    refused = [
        RefusedTool(e.get("name"), e.get("error") or "", "declarative" if e.get("declarative") else "imperative")
        for e in events
        if e.get("type") == "register_error"
    ]
    error = None
    try:
        raw = await _frame_listing(frame, native, host)
    except PlaywrightError as err:  # a cross-origin frame without allow="tools" may not even list
        raw, error = [], str(err).strip().splitlines()[0]
    tools = [page_tool(t, registered.get(t.get("name"))) for t in raw]
    if not tools and not refused and frame.parent_frame is not None:
        return None  # a frame that registers nothing (an ad slot, about:blank): nothing to list
    return FrameTools(
        url=frame.url,
        origin=info.get("origin"),
        top=frame.parent_frame is None,
        same_origin=info.get("same_origin", frame.parent_frame is None),
        allow=info.get("allow"),
        tools_allowed=info.get("tools_allowed"),
        tools=tools,
        refused=refused,
        error=error,
    )


async def read_frames(page: Page, log: ShimLog, host: ToolHost | None = None) -> list[FrameTools]:
    """Every frame's tools, the top page first; frames with nothing to list are left out. A host that
    watches DevTools (``host.frames.watch``) reads a frame whose own listing hangs from there."""
    native = log.native() is not False
    host = host or ToolHost(page, log, 0.0)
    read = [await read_frame(frame, log, native, host) for frame in page.frames]
    return [f for f in read if f is not None]


async def open_with_shim(context: BrowserContext) -> ShimLog:
    """Install the shim in a fresh context (before any page): its log, which read_frames reads."""
    log = ShimLog()
    await context.expose_binding("__webmcpEvalReport", lambda source, e: log.add(e, source["frame"]))
    await context.add_init_script(SHIM_JS)
    return log


async def _read_route(browser: Browser, url: str, route: str, settle_ms: int) -> RouteTools:
    """Open one page in a fresh context with the shim; read its tools once they settle."""
    context = await browser.new_context()
    try:
        log = await open_with_shim(context)
        page = await context.new_page()
        host = ToolHost(page, log, 0.0, settle_ms=settle_ms)
        await host.frames.watch(context)  # before the page loads: DevTools announces a frame's tools as it registers
        try:
            response = await page.goto(url, wait_until="load", timeout=30_000)
        except Exception as err:  # unreachable, refused, a timeout: say so, per route
            return RouteTools(route, url, "unknown", error=str(err).strip().splitlines()[0])
        if response is not None and response.status >= 400:
            return RouteTools(route, url, "unknown", error=f"HTTP {response.status}")
        await host.wait_for_tools()
        frames = await read_frames(page, log, host)
        top = frames[0] if frames and frames[0].top else None
        return RouteTools(
            route,
            url,
            "polyfill" if host.path == "shim" else host.path,
            tools=top.tools if top else [],
            refused=top.refused if top else [],
            frames=[f for f in frames if not f.top],
        )
    finally:
        await context.close()


async def list_tools(
    url: str, routes: list[str] | None = None, *, chromium: str | None = None, settle_ms: int = 100
) -> list[RouteTools]:
    """The tools of each route (resolved under url, see runner.suite.site); without routes, of url itself."""
    targets = [(r, resolve_route(url, r)) for r in routes] if routes else [("", url)]
    async with async_playwright() as p:
        browser, _ = await launch(p.chromium, explicit=chromium)
        try:
            return [await _read_route(browser, target, route, settle_ms) for route, target in targets]
        finally:
            await browser.close()


def tools_json(listing: list[RouteTools]) -> str:
    return json.dumps({"routes": [asdict(r) for r in listing]}, indent=2, ensure_ascii=False) + "\n"


def tools_text(listing: list[RouteTools]) -> str:
    """For people: per route each tool, its kind, hints, description and input; then each frame's."""
    lines: list[str] = []
    for r in listing:
        if r.error:
            lines.append(f"{r.url}: could not open the page: {r.error}")
            continue
        in_frames = sum(len(f.tools) for f in r.frames)
        more = f"; {in_frames} more in {len(r.frames)} frame(s), listed apart below" if r.frames else ""
        lines.append(f"{r.url} ({r.path} WebMCP): {len(r.tools)} tool(s){more}")
        if not r.tools:
            lines.append("  no tools registered within the wait (try --settle-ms for tools that come late)")
        lines += _tool_lines(r.tools, r.refused, "  ")
        for f in r.frames:
            lines.append(f"  frame {f.url} ({_frame_terms(f)}): {len(f.tools)} tool(s)")
            if f.error and not f.refused:
                lines.append(f"      could not list its tools: {f.error}")
            lines += _tool_lines(f.tools, f.refused, "    ")
    return "\n".join(lines) + "\n"


def _frame_terms(frame: FrameTools) -> str:
    origin = "same origin" if frame.same_origin else f"cross-origin: {frame.origin}" if frame.origin else "cross-origin"
    allow = f'allow="{frame.allow}"' if frame.allow is not None else "no allow attribute"
    policy = "; its permissions policy does not allow tools" if frame.tools_allowed is False else ""
    return f"{origin}, {allow}{policy}"


def _tool_lines(tools: list[PageTool], refused: list[RefusedTool], indent: str) -> list[str]:
    lines = []
    for t in tools:
        hints = [k for k, v in sorted(t.annotations.items()) if v is True]
        lines.append(f"{indent}{t.name}  [{t.kind}{', ' + ', '.join(hints) if hints else ''}]")
        if t.description:
            lines.append(f"{indent}    {t.description}")
        lines.append(f"{indent}    input: {json.dumps(t.input_schema, ensure_ascii=False, sort_keys=True)}")
    for x in refused:
        name = x.name if isinstance(x.name, str) else json.dumps(x.name)
        lines.append(f"{indent}REFUSED {name}  [{x.kind}]: the browser refused its registration: {x.error}")
    return lines


async def read_catalog(base_url: str, routes: dict[str, str], chromium: str | None = None) -> dict[str, Any]:
    """{routes: {pattern: {tool: input schema}}, annotations: {pattern: {tool: {hint: true}}}}, the shape of
    cases/catalog.json: the hints each tool is registered with (true ones only), so a run can tell one lost."""
    out: dict[str, dict[str, Any]] = {}
    hints: dict[str, dict[str, Any]] = {}
    async with async_playwright() as p:
        browser, _ = await launch(p.chromium, explicit=chromium)
        try:
            for pattern, path in routes.items():
                read = await _read_route(browser, resolve_route(base_url, path), pattern, 100)
                if read.error:
                    raise RuntimeError(f"{read.url}: {read.error}")
                out[pattern] = {t.name: t.input_schema or {"type": "object"} for t in read.tools}
                hints[pattern] = {t.name: {k: True for k, v in sorted(t.annotations.items()) if v is True}
                                  for t in read.tools}  # fmt: skip
        finally:
            await browser.close()
    return {"routes": out, "annotations": hints}


def read_catalog_sync(base_url: str, routes: dict[str, str] | None = None) -> dict[str, Any]:
    return asyncio.run(read_catalog(base_url, routes or DEMO_ROUTES))
