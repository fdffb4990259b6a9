"""Each frame's tools as the DevTools WebMCP domain reports them, and calls through that domain.

Chromium 156 now and then never answers ``getTools()`` in a child frame (docs/browser.md,
"A frame whose tool listing never answers"): the frame's tools are registered, DevTools
lists and invokes them, but the page-side listing, and with it Playwright's
``frame.webmcp``, waits for good. The tool host and the pytest plugin then list and call
that frame's tools here: still the browser's own registry and its own invocation, never
the shim's copy.

``DevToolsTools`` is the bookkeeping, plain data fed with the domain's events;
``HungFrames`` does the reading and calling for one page with the async API (the
trial's tool host, ``tools``/``init``, ``audit``); the pytest plugin does the same
with the sync API.
"""

from __future__ import annotations

import time
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import BrowserContext, CDPSession, Frame, Page
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError


class DevToolsCallError(Exception):
    """The tool's invocation through DevTools ended in an error, or was cancelled."""


@dataclass
class DevToolsTools:
    """Each frame's live tools by DevTools frame id, and the answers of invocations, from the domain's events."""

    by_frame: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    responses: dict[str, dict[str, Any]] = field(default_factory=dict)
    heard: int = 0  # events fed so far: a listing read before the last of them may be out of date

    def witness(self, event: str, params: dict[str, Any]) -> None:
        """Feed one WebMCP domain event (``toolsAdded``, ``toolsRemoved``, ``toolResponded``, ...)."""
        self.heard += 1
        if event == "toolsAdded":
            for tool in params.get("tools") or []:
                self.by_frame.setdefault(tool.get("frameId", ""), {})[tool.get("name", "")] = tool
        elif event == "toolsRemoved":
            for tool in params.get("tools") or []:
                frame = self.by_frame.get(tool.get("frameId", ""), {})
                if frame.get(tool.get("name", ""), {}).get("toolId") == tool.get("toolId"):
                    frame.pop(tool.get("name", ""))
        elif event == "toolResponded" and params.get("invocationId"):
            self.responses[params["invocationId"]] = params

    def listing(self, frame_id: str) -> list[dict[str, Any]]:
        """The frame's tools in the shape of Playwright's ``frame.webmcp.tools()``."""
        return [_as_listed(tool) for tool in self.by_frame.get(frame_id, {}).values()]

    def invoke_params(self, frame_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """``WebMCP.invokeTool``'s parameters: the registration DevTools listed, else the name."""
        tool_id = self.by_frame.get(frame_id, {}).get(name, {}).get("toolId")
        return {"frameId": frame_id, "input": args, **({"toolId": tool_id} if tool_id else {"toolName": name})}


def _as_listed(tool: dict[str, Any]) -> dict[str, Any]:
    annotations = {k: v for k, v in (tool.get("annotations") or {}).items() if v}
    return {
        "name": tool.get("name", ""),
        "description": tool.get("description") or "",
        **({"inputSchema": tool["inputSchema"]} if tool.get("inputSchema") is not None else {}),
        **({"annotations": annotations} if annotations else {}),
    }


def answer(response: dict[str, Any]) -> Any:
    """What the invocation returned, or DevToolsCallError with the browser's words."""
    if response.get("status") == "Completed":
        return response.get("output")
    why = response.get("errorText") or (response.get("exception") or {}).get("description") or response.get("status")
    raise DevToolsCallError(str(why).splitlines()[0] if why else "the invocation failed")


def frame_path(frame: Any) -> list[tuple[str, str]]:
    """(name, URL without fragment) of each frame from the top page down to ``frame`` (a Playwright Frame)."""
    path = []
    while frame is not None:
        path.append((frame.name or "", frame.url.split("#", 1)[0]))
        frame = frame.parent_frame
    return path[::-1]


def find_frame_id(tree: dict[str, Any], path: list[tuple[str, str]]) -> str | None:
    """The DevTools id of the frame at ``path`` in ``Page.getFrameTree``'s tree; None when it is not
    there or two frames fit (same name and URL under one parent): never a guess."""
    nodes = [tree]
    found: dict[str, Any] | None = None
    for name, url in path:
        fits = [n for n in nodes if n["frame"].get("name", "") == name and n["frame"].get("url", "") == url]
        if len(fits) != 1:
            return None
        found = fits[0]
        nodes = found.get("childFrames") or []
    return found["frame"]["id"] if found else None


class HungFrames:
    """One page's frames read and called through Playwright, and a child frame whose own listing does not
    answer through DevTools, from then on, for as long as its document lives (``key`` names the document)."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.cdp: CDPSession | None = None
        self.tools = DevToolsTools()
        self._frame_ids: dict[Hashable, str] = {}  # a hung frame's document -> its DevTools frame id

    def follow(self, cdp: CDPSession) -> None:
        """Use a session whose WebMCP events the caller feeds to ``self.tools`` (the trial's witness)."""
        self.cdp = cdp

    async def watch(self, context: BrowserContext) -> None:
        """A DevTools session of its own. Call it before the page navigates: enabled later, the domain
        re-announces the top page's tools only."""
        try:
            cdp = await context.new_cdp_session(self.page)
            for name in ("toolsAdded", "toolsRemoved", "toolResponded"):
                cdp.on(f"WebMCP.{name}", lambda params, name=name: self.tools.witness(name, params))
            await cdp.send("WebMCP.enable")
        except PlaywrightError:
            return  # a browser without the domain: no way around a hung frame
        self.cdp = cdp

    def frame_id(self, key: Hashable) -> str | None:
        """The DevTools id of the frame showing this document, if its listing hung."""
        return self._frame_ids.get(key)

    async def listing(
        self, frame: Frame, key: Hashable, timeout_ms: float, top_timeout_ms: float | None = None
    ) -> list[dict[str, Any]]:
        """The frame's own tools as the browser lists them: Playwright's listing, a child frame's bounded
        by timeout_ms (the top page's by top_timeout_ms, else as long as Playwright waits)."""
        if key in self._frame_ids:
            return self.tools.listing(self._frame_ids[key])
        top = frame.parent_frame is None
        try:
            listed = await frame.webmcp.tools(timeout=top_timeout_ms if top else timeout_ms)
            return [{**tool} for tool in listed]  # Playwright's typed dicts as the plain ones DevTools' listing gives
        except PlaywrightTimeoutError:
            if top or self.cdp is None:
                raise
            tree = await self.cdp.send("Page.getFrameTree")
            frame_id = find_frame_id(tree["frameTree"], frame_path(frame))
            if frame_id is None:
                raise
            self._frame_ids[key] = frame_id
            return self.tools.listing(frame_id)

    async def devtools_frame_id(self, frame: Frame) -> str | None:
        """The DevTools id of a frame, to call its tools through the domain (None: no session, or not one frame)."""
        if self.cdp is None:
            return None
        try:
            tree = await self.cdp.send("Page.getFrameTree")
        except PlaywrightError:
            return None
        return find_frame_id(tree["frameTree"], frame_path(frame))

    async def call(self, frame_id: str, name: str, args: dict[str, Any], timeout_ms: float) -> Any:
        """Invoke through DevTools and wait for its toolResponded (a rare path: a short poll is enough)."""
        assert self.cdp is not None
        sent = await self.cdp.send("WebMCP.invokeTool", self.tools.invoke_params(frame_id, name, args))
        invocation = sent["invocationId"]
        deadline = time.monotonic() + timeout_ms / 1000
        while invocation not in self.tools.responses:
            if time.monotonic() >= deadline:  # worded as Playwright words its timeouts, which the smoke reads
                raise DevToolsCallError(f"WebMCP.invokeTool: Timeout {timeout_ms:.0f}ms exceeded.")
            await self.page.wait_for_timeout(20)  # a blocking page (the fixture's) delivers its events meanwhile
        return answer(self.tools.responses.pop(invocation))
