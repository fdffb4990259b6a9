"""The tool host: lists the active catalog and calls tools as an agent host does.

It prefers the browser's native WebMCP (Playwright's ``page.webmcp``) and falls
back to the shim's polyfill when the page has no native API; every call says
which path it took. A call to a tool that is not in the active catalog (made
up, or stale after a route change) is refused here, logged, and left for the
checks to judge: the agent is never silently corrected.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Page

from webmcp_eval.play.page.devtools_tools import HungFrames
from webmcp_eval.play.page.surface.log import ShimLog, is_top
from webmcp_eval.play.page.surface.model import Tool
from webmcp_eval.play.page.surface.reader import CALL_TIMEOUT_MS, FRAME_LIST_TIMEOUT_MS, SHIM_JS, Surface
from webmcp_eval.trace import FrameRecord, ToolCall, ToolInfo, WebMCPPath

__all__ = ["CALL_TIMEOUT_MS", "FRAME_LIST_TIMEOUT_MS", "SHIM_JS", "ShimLog", "ToolHost", "is_top"]
# A page without tools (none registered yet, or all just withdrawn by a route
# change) may still be loading its scripts or the new route's data, slow under
# load; only after this long without a registration is "no tools" the answer.
NO_TOOLS_GRACE_S = 3.0
# A request older than this is a long poll or a stream, not the route loading.
LOADING_REQUEST_S = 5.0


def _tool_info(tool: Tool) -> ToolInfo:
    """What the trace records of a tool an agent is offered."""
    return ToolInfo(
        name=tool.name,
        description=tool.description,
        input_schema=tool.input_schema,
        read_only=tool.read_only,
        untrusted_content=tool.untrusted_content,
    )


class ToolHost:
    def __init__(self, page: Page, log: ShimLog, clock_start: float, settle_ms: int = 100):
        self.page = page
        self.settle_ms = settle_ms
        self.log = log
        self.clock_start = clock_start
        self.calls: list[ToolCall] = []
        self.step = 0
        # the writes the network has seen so far ("POST /api/saved", the trial's proxy account), read
        # before and after each call so that a call's own writes are known; None: no proxy, not counted
        self.writes_seen: Callable[[], list[str]] | None = None
        # a frame whose own listing never answers is listed and called through DevTools (devtools_tools.py)
        self.frames = HungFrames(page)
        self.surface = Surface(page, log, self.frames)
        # The page's requests in flight: a route change commonly withdraws its
        # tools, fetches the new route's data, then registers the new tools, so
        # a quiet registration log means nothing while that fetch is open.
        self._in_flight: dict[int, float] = {}
        self._network_t = time.monotonic()
        self.wakeups = 0  # how often wait_for_tools looked at the log (events and deadlines, never a poll)
        page.on("request", self._request_started)
        page.on("requestfinished", self._request_ended)
        page.on("requestfailed", self._request_ended)

    def _request_started(self, request: Any) -> None:
        self._in_flight[id(request)] = self._network_t = time.monotonic()
        self.log.changed.set()  # a waiting wait_for_tools looks again

    def _request_ended(self, request: Any) -> None:
        self._in_flight.pop(id(request), None)
        self._network_t = time.monotonic()
        self.log.changed.set()

    @property
    def path(self) -> WebMCPPath:
        return self.surface.path

    def route(self) -> str:
        url = self.page.url
        # the path alone, as the shim records a registration's route (location.pathname): a hash route or a query
        # changes no document, so a tool registered under it is held against the same path
        return (
            "/" + url.split("://", 1)[-1].split("/", 1)[-1].split("#", 1)[0].split("?", 1)[0] if "://" in url else url
        )

    async def catalog(self) -> list[ToolInfo]:
        """The tools the page offers right now (re-read every time: they change with the route).

        The top page's first, then each frame's: an agent of the browser sees a
        frame's tools too. A name an earlier frame already offers stays that frame's.
        """
        return self._tools(await self._listings())

    def _tools(self, listings: list[tuple[Frame, list[dict[str, Any]]]]) -> list[ToolInfo]:
        tools: dict[str, ToolInfo] = {}
        for frame, raw in listings:
            for tool in self.surface.tools_of(frame, raw, []):
                tools.setdefault(tool.name, _tool_info(tool))
        return list(tools.values())

    async def _listings(self) -> list[tuple[Frame, list[dict[str, Any]]]]:
        """Each frame's own tools, the top page first.

        A frame that may not list tools (its permissions policy) or that went away lists none.
        """
        out: list[tuple[Frame, list[dict[str, Any]]]] = []
        for frame in self.page.frames:
            try:
                raw = await self.surface.listing(frame)
            except PlaywrightError:
                if frame is self.page.main_frame:
                    raise
                continue
            out.append((frame, raw))
        return out

    async def wait_for_tools(
        self, names: list[str] | None = None, timeout_ms: int = 5000, settle_ms: int | None = None
    ) -> None:
        """Wait until the current document has registered its tools and they settle.

        After a (re)load the shim reports ``loaded`` first; registrations that
        follow belong to the new document, so an old document's quiet log does
        not count as settled. Settled means: no registration change and no
        request of the page for ``settle_ms``, and, while the catalog is empty,
        no change for ``NO_TOOLS_GRACE_S``. At the deadline it returns anyway;
        the catalog then is whatever the page offers.

        Nothing polls: the wait sleeps until the moment the quiet window would
        close, and wakes early only when the shim reports an event or a request
        of the page starts or ends (``wakeups`` counts the times it looked).
        """
        settle_s = (self.settle_ms if settle_ms is None else settle_ms) / 1000
        deadline = time.monotonic() + max(timeout_ms / 1000, 2 * settle_s)
        changed = self.log.changed
        while True:
            changed.clear()
            self.wakeups += 1
            now = time.monotonic()
            settles_at = self._settles_at(now, settle_s, names)
            if settles_at is not None and settles_at <= now:
                return
            until = deadline if settles_at is None else min(settles_at, deadline)
            if now >= deadline:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), until - now)

    def _settles_at(self, now: float, settle_s: float, names: list[str] | None) -> float | None:
        """When the tools count as settled if nothing else happens (<= now: settled); None: only an event can tell."""
        loaded = self.log.top_loaded()
        if loaded is None:
            return None
        documents = set(self.log.current_documents())  # the top page's and its frames'
        changes = [
            e for e in self.log.of_type("register", "unregister", "register_error") if e.get("document") in documents
        ]
        last: float = changes[-1]["host_t"] if changes else loaded["host_t"]
        moments = [last + settle_s, self._network_t + settle_s]
        # a request still open keeps the route loading until it is old enough to be a long poll
        moments += [started + LOADING_REQUEST_S for started in self._in_flight.values()]
        active = {r["name"] for r in self.log.active_registrations()}
        if not active:
            moments.append(last + NO_TOOLS_GRACE_S)  # nothing registered (yet, or since the route changed)
        if names and not set(names) <= active:
            return None  # a wanted tool is missing: only a registration can change that
        return max(moments)

    def _ms(self) -> float:
        return round((time.monotonic() - self.clock_start) * 1000, 1)

    async def call(self, name: str, args: dict[str, Any] | None = None) -> ToolCall:
        args = dict(args or {})
        record = ToolCall(
            index=len(self.calls), step=self.step, tool=name, args=args, route=self.route(), started_ms=self._ms()
        )
        self.calls.append(record)
        started = time.monotonic()  # the call's time includes the catalog read before it, as an agent host's does
        try:
            listings = await self._listings()
        except PlaywrightError as err:
            record.error = f"could not read the catalog: {_first_line(err)}"
            return record
        names = {t.name for t in self._tools(listings)}
        # the frame whose tool it is: the top page's first, as the catalog lists it
        frame = next((f for f, raw in listings if any(t.get("name") == name for t in raw)), None)
        if frame is None:
            record.in_catalog = False
            record.refused = True
            record.error = f"refused: {name!r} is not in the active catalog ({', '.join(sorted(names)) or 'empty'})"
            return record
        seen = len(self.log.events)
        writes_before = len(self.writes_seen()) if self.writes_seen else None
        answer = await self.surface.call(frame, name, args, CALL_TIMEOUT_MS)
        record.result, record.error, record.via, record.bounds = answer.result, answer.error, answer.via, answer.bounds
        record.duration_ms = round((time.monotonic() - started) * 1000, 1)
        if self.writes_seen and writes_before is not None:
            record.writes = self.writes_seen()[writes_before:]
        await asyncio.sleep(0)  # let the shim's report of this call arrive
        start, _ = self.surface.call_events(seen, name)
        if start is not None:
            record.instance = start.get("instance")
            record.document = start.get("document")
            if not is_top(start):  # a frame's tool: the frame's route, not the top page's, is its route
                record.frame = FrameRecord.model_validate(start["frame"])
            if start["type"] == "refused":
                record.refused = True
        return record


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
