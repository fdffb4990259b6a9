"""Reading a site's tool catalogue per route, for ``cases/catalog.json``.

``validate`` checks case files against this file without a browser; a test
compares it with what the live demo site registers, so the two cannot drift.
"""

from __future__ import annotations

import asyncio
from typing import Any

from playwright.async_api import async_playwright

from runner.browser import launch
from runner.toolhost import SHIM_JS, ShimLog, ToolHost

# route pattern -> a concrete path of the demo site that shows it
DEMO_ROUTES = {
    "/events": "/events",
    "/events/{id}": "/events/evt-webmcp-intro",
    "/events/{id}/register": "/events/evt-webmcp-intro/register",
    "/registrations": "/registrations",
}


async def read_catalog(base_url: str, routes: dict[str, str], chromium: str | None = None) -> dict[str, Any]:
    out: dict[str, dict[str, Any]] = {}
    async with async_playwright() as p:
        browser, _ = await launch(p.chromium, explicit=chromium)
        for pattern, path in routes.items():
            context = await browser.new_context(base_url=base_url)
            log = ShimLog()
            await context.expose_binding("__webmcpEvalReport", lambda _s, e, log=log: log.add(e))
            await context.add_init_script(SHIM_JS)
            page = await context.new_page()
            await page.goto(path)
            host = ToolHost(page, log, 0.0)
            await host.wait_for_tools()
            out[pattern] = {t.name: t.input_schema or {"type": "object"} for t in await host.catalog()}
            await context.close()
        await browser.close()
    return {"routes": out}


def read_catalog_sync(base_url: str, routes: dict[str, str] | None = None) -> dict[str, Any]:
    return asyncio.run(read_catalog(base_url, routes or DEMO_ROUTES))
