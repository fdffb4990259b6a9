"""A trial's start: the case's start route opens and registers tools, or the trial is not_run with what to check.

A site that is down or errs at the start route, or a page that registers no
WebMCP tools there, leaves the agent nothing to do: that is a setup failure,
said with the route, the answer and where to look, never the agent's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from webmcp_eval.play.page.toolhost import ToolHost
from webmcp_eval.play.run.abort import TrialAborted
from webmcp_eval.suite.site import SiteConfig
from webmcp_eval.trace import NotRunKind


def first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


async def open_start_route(
    page: Page, config: SiteConfig, route: str, case_id: str, *, proxied: bool, crashed: Callable[[], Any]
) -> None:
    """Open the case's start route; a site that is down or errs there is a setup failure.

    A crashed page re-raises as it is (``crashed()`` says so): the crash is the reason, not the route.
    """
    check = f"check that the site is running at {config.base_url} and that --base-url is right"
    try:
        response = await page.goto(config.url_for(route), wait_until="load")
    except PlaywrightError as err:
        if crashed():
            raise
        message = f"setup: could not open the start route {route}: {first_line(err)}; {check}"
        raise TrialAborted(message, "infrastructure") from None
    if response is None or response.status < 400:
        return
    from webmcp_eval.proxies.addon import REPLAY_MISS_STATUS  # mitmproxy is heavy: only here, when it is needed

    status = f"HTTP {response.status} {response.status_text}".strip()
    kind: NotRunKind = "infrastructure" if response.status >= 500 else "setup"  # a 5xx may pass; a 4xx stays
    if response.status == REPLAY_MISS_STATUS:
        why = f"no recorded answer for it in the fixture; re-record it with: webmcp-eval record {case_id}"
        kind = "fixture"
    elif response.status in (502, 503, 504) and proxied:
        why = f"the proxy could not get an answer from the site; {check}"
    else:
        why = check
    raise TrialAborted(f"setup: the start route {route} answered {status}: {why}", kind)


async def require_tools(host: ToolHost, route: str, base_url: str, page_errors: list[str]) -> None:
    """No tools at the start route after the wait: nothing an agent could use, so not_run."""
    try:
        tools = await host.catalog()
    except PlaywrightError as err:
        raise TrialAborted(f"setup: could not read the page's tools: {first_line(err)}", "setup") from None
    if tools:
        return
    if page_errors:
        raise TrialAborted(
            f"setup: the page at {route} threw an error before the first step ({page_errors[0]}) "
            "and registered no WebMCP tools; check the page's scripts in a browser console",
            "setup",
        )
    raise TrialAborted(
        f"setup: no WebMCP tools were registered at the start route {route} within the wait; check that "
        f"the route exists at {base_url}, that it registers its tools "
        "(document.modelContext.registerTool) and that --base-url is right",
        "setup",
    )
