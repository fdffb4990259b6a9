"""What a page registers: its tools per route, read from the live page.

``webmcp-eval tools URL`` lists, per route, every tool with its description,
input schema, annotations (``readOnlyHint``, ``untrustedContentHint``, …),
whether it is imperative (``registerTool``) or declarative (``<form
toolname>``), and whether the browser's native WebMCP or the shim's polyfill
answered. ``read_catalog`` builds ``cases/catalog.json`` from the same reading:
``validate`` checks case files against that file without a browser, and a test
compares it with what the live demo site registers, so the two cannot drift.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from playwright.async_api import Browser, async_playwright

from runner.play.browser import launch
from runner.play.toolhost import SHIM_JS, ShimLog, ToolHost
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


@dataclass
class PageTool:
    name: str
    description: str
    input_schema: Any
    annotations: dict[str, Any]
    kind: str  # "imperative" (registerTool) or "declarative" (<form toolname>)


@dataclass
class RouteTools:
    route: str
    url: str
    path: str  # "native" (the browser's WebMCP) or "polyfill" (the shim's)
    tools: list[PageTool] = field(default_factory=list)
    error: str | None = None  # the page could not be opened


async def _read_route(browser: Browser, url: str, route: str, settle_ms: int) -> RouteTools:
    """Open one page in a fresh context with the shim; read its tools once they settle."""
    context = await browser.new_context()
    try:
        log = ShimLog()
        await context.expose_binding("__webmcpEvalReport", lambda source, e: log.add(e, source["frame"]))
        await context.add_init_script(SHIM_JS)
        page = await context.new_page()
        try:
            response = await page.goto(url, wait_until="load", timeout=30_000)
        except Exception as err:  # unreachable, refused, a timeout: say so, per route
            return RouteTools(route, url, "unknown", error=str(err).strip().splitlines()[0])
        if response is not None and response.status >= 400:
            return RouteTools(route, url, "unknown", error=f"HTTP {response.status}")
        host = ToolHost(page, log, 0.0, settle_ms=settle_ms)
        await host.wait_for_tools()
        registered = {r["name"]: r for r in log.active_registrations()}
        tools = []
        for info in await host.catalog():
            reg = registered.get(info.name, {})
            tools.append(
                PageTool(
                    name=info.name,
                    description=info.description,
                    input_schema=info.input_schema,
                    annotations=dict(reg.get("annotations") or {}),
                    kind="declarative" if reg.get("declarative") else "imperative",
                )
            )
        return RouteTools(route, url, "polyfill" if host.path == "shim" else host.path, tools)
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
    """The listing for people: per route, each tool, its kind and hints, its description and input."""
    lines: list[str] = []
    for r in listing:
        if r.error:
            lines.append(f"{r.url}: could not open the page: {r.error}")
            continue
        lines.append(f"{r.url} ({r.path} WebMCP): {len(r.tools)} tool(s)")
        if not r.tools:
            lines.append("  no tools registered within the wait (try --settle-ms for tools that come late)")
        for t in r.tools:
            hints = [k for k, v in sorted(t.annotations.items()) if v is True]
            lines.append(f"  {t.name}  [{t.kind}{', ' + ', '.join(hints) if hints else ''}]")
            if t.description:
                lines.append(f"      {t.description}")
            lines.append(f"      input: {json.dumps(t.input_schema, ensure_ascii=False, sort_keys=True)}")
    return "\n".join(lines) + "\n"


async def read_catalog(base_url: str, routes: dict[str, str], chromium: str | None = None) -> dict[str, Any]:
    """{routes: {pattern: {tool: input schema}}}, the shape of cases/catalog.json."""
    out: dict[str, dict[str, Any]] = {}
    async with async_playwright() as p:
        browser, _ = await launch(p.chromium, explicit=chromium)
        try:
            for pattern, path in routes.items():
                read = await _read_route(browser, resolve_route(base_url, path), pattern, 100)
                if read.error:
                    raise RuntimeError(f"{read.url}: {read.error}")
                out[pattern] = {t.name: t.input_schema or {"type": "object"} for t in read.tools}
        finally:
            await browser.close()
    return {"routes": out}


def read_catalog_sync(base_url: str, routes: dict[str, str] | None = None) -> dict[str, Any]:
    return asyncio.run(read_catalog(base_url, routes or DEMO_ROUTES))
