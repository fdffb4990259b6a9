"""The tool host: lists the active catalog and calls tools as an agent host does.

It prefers the browser's native WebMCP (Playwright's ``page.webmcp``) and falls
back to the shim's polyfill when the page has no native API; every call says
which path it took. A call to a tool that is not in the active catalog (made
up, or stale after a route change) is refused here, logged, and left for the
checks to judge: the agent is never silently corrected.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Page

from webmcp_eval.agents.protocol import ToolInfo
from webmcp_eval.play.page.devtools_tools import HungFrames
from webmcp_eval.play.page.surface.activity import PageActivity, Pending
from webmcp_eval.play.page.surface.log import RefusedEvent, RegisterErrorEvent, RegisterEvent, ShimLog, UnregisterEvent
from webmcp_eval.play.page.surface.model import Tool
from webmcp_eval.play.page.surface.reader import CALL_TIMEOUT_MS, FRAME_LIST_TIMEOUT_MS, SHIM_JS, Surface
from webmcp_eval.trace import FrameRecord, SettleRecord, ToolCall, WebMCPPath

__all__ = ["CALL_TIMEOUT_MS", "FRAME_LIST_TIMEOUT_MS", "SHIM_JS", "ShimLog", "ToolHost"]
# A page without tools (none registered yet, or all just withdrawn by a route
# change) may still be loading its scripts or the new route's data, slow under
# load; only after this long without a registration is "no tools" the answer.
NO_TOOLS_GRACE_S = 3.0
# evidence: settled when nothing is under way (requests, registrations, the document changing);
# window: settled after a fixed quiet window of settle_ms (a site whose tools come after bare timers)
SettleMode = Literal["evidence", "window"]
# evidence: how long the page's requests, registrations and document must have been still (at most settle_ms)
DEBOUNCE_S = 0.03
# A listing read this recently, with no sign of a change since (ToolHost._signs), is the page's listing
# still: the settle's own standard of a still page. Back-to-back reads (a step's catalog after its settle and the
# next step's before it, the start route's and the first step's, a step's and its first call's) read it once.
LISTING_REUSE_S = DEBOUNCE_S


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
    def __init__(
        self, page: Page, log: ShimLog, clock_start: float, settle_ms: int = 100, settle: SettleMode = "window"
    ):
        self.page = page
        self.settle_ms = settle_ms
        self.settle = settle
        self.settles: list[SettleRecord] = []  # each wait_for_tools: what it waited for, how long, why it ended
        self.log = log
        self.clock_start = clock_start
        self.calls: list[ToolCall] = []
        self.step = 0
        # the writes the network has seen so far ("POST /api/saved", the trial's proxy account), read
        # before and after each call so that a call's own writes are known; None: no proxy, not counted
        self.writes_seen: Callable[[], list[str]] | None = None
        # how many requests the proxy has seen so far; each call's [before, after) window is kept so that a 5xx
        # answer to a call's own request is told from a beacon's (play/evidence/network_evidence.py)
        self.requests_seen: Callable[[], int] | None = None
        self.request_windows: list[tuple[int, int]] = []
        # read the page right after a call, as the tool left it (expect.consistency); None: nothing to read
        self.after_call: Callable[[ToolCall], Awaitable[None]] | None = None
        # a frame whose own listing never answers is listed and called through DevTools (devtools_tools.py)
        self.frames = HungFrames(page)
        self.surface = Surface(page, log, self.frames)
        self.activity = PageActivity(page, log)  # the page's requests in flight, and the wait on the evidence
        # the last listing read: when it began, the page's signs of change then, and what it gave
        self._last_listing: tuple[float, tuple[Any, ...], list[tuple[Frame, list[dict[str, Any]]]]] | None = None

    @property
    def wakeups(self) -> int:
        """How often wait_for_tools looked at the log (events and deadlines, never a poll)."""
        return self.activity.wakeups

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

    def _signs(self) -> tuple[Any, ...]:
        """What changes when the page's tools may have: a report of the shim (a registration, a call, a new
        document), a WebMCP event of the witness, a request starting or ending, the page's frames or URL."""
        frames = tuple((id(f), f.url) for f in self.page.frames)
        activity = self.activity
        return len(self.log.events), self.frames.tools.heard, activity.network_t, len(activity.in_flight), frames

    async def _listings(self) -> list[tuple[Frame, list[dict[str, Any]]]]:
        """Each frame's own tools, the top page first; the last read's when it is recent and nothing has changed
        since (``LISTING_REUSE_S``): each read is two driver round trips and work in the page.

        A frame that may not list tools (its permissions policy) or that went away lists none.
        """
        began, signs = time.monotonic(), self._signs()
        last = self._last_listing
        if last is not None and began - last[0] < LISTING_REUSE_S and last[1] == signs:
            return last[2]
        out = await self._read_listings()
        self._last_listing = (began, signs, out)
        return out

    async def _read_listings(self) -> list[tuple[Frame, list[dict[str, Any]]]]:
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
        self,
        names: list[str] | None = None,
        timeout_ms: int = 5000,
        settle_ms: int | None = None,
        grace_in: object | None = None,
    ) -> None:
        """Wait until the current document has registered its tools and the page settles.

        After a (re)load the shim reports ``loaded`` first; registrations that
        follow belong to the new document, so an old document's quiet log does
        not count as settled. With ``names``, until those tools are registered;
        while the catalog is empty, until ``NO_TOOLS_GRACE_S`` passed without a
        change. Then, in the ``evidence`` mode, until nothing is under way: no
        request of the page open, no registration the shim has not reported or
        resolved, and no request, registration or change of the document for
        ``DEBOUNCE_S``; a document that keeps changing is waited for at most
        ``settle_ms``. In the ``window`` mode, until the registrations and the
        requests have been quiet for ``settle_ms``. ``grace_in``: a document
        (the shim's ``loaded`` event) outside which an empty catalog is no
        reason to wait (init's probe reads the page a call loaded, never its
        tools). At the deadline it returns anyway; the catalog then is whatever
        the page offers. Each wait is recorded in ``settles``.

        Nothing polls: the wait sleeps until the moment the quiet window would
        close, and wakes early only when the shim reports an event or a request
        of the page starts or ends (``wakeups`` counts the times it looked).
        """
        started, at_ms = time.monotonic(), self._ms()
        cap_s = (self.settle_ms if settle_ms is None else settle_ms) / 1000
        deadline = started + max(timeout_ms / 1000, 2 * cap_s)
        quiet_s, dom_cap = (cap_s, None) if self.settle == "window" else (min(DEBOUNCE_S, cap_s), started + cap_s)
        reason, waited = await self.activity.wait(
            lambda now: self._under_way(now, quiet_s, names, grace_in), deadline, quiet_s, dom_cap
        )
        ms = round((time.monotonic() - started) * 1000, 1)
        self.settles.append(
            SettleRecord(
                step=self.step, at_ms=at_ms, route=self.route(), reason=reason, waited_for=sorted(waited), ms=ms
            )
        )

    def _under_way(self, now: float, quiet_s: float, names: list[str] | None, grace_in: object | None) -> Pending:
        """What the log and the page's requests say is still under way, each with the moment it would be over
        if nothing else happens (None: only an event can tell)."""
        loaded = self.log.top_loaded()
        if loaded is None:
            return {"document": None}
        documents = set(self.log.current_documents())  # the top page's and its frames'
        changes = [
            e for e in self.log.of_type(RegisterEvent, UnregisterEvent, RegisterErrorEvent) if e.document in documents
        ]
        last: float = changes[-1].host_t if changes else loaded.host_t
        moments = {"registration": [last + quiet_s], "request": [self.activity.requests_over(quiet_s)]}
        active = {r.name for r in self.log.active_registrations()}
        if not active and (grace_in is None or grace_in is loaded):
            moments["tools"] = [last + NO_TOOLS_GRACE_S]  # nothing registered (yet, or since the route changed)
        pending: Pending = {what: max(ts) for what, ts in moments.items() if max(ts) > now}
        if names and not set(names) <= active:
            pending["tools"] = None  # a wanted tool is missing: only a registration can change that
        return pending

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
        requests_before = self.requests_seen() if self.requests_seen else None
        answer = await self.surface.call(frame, name, args, CALL_TIMEOUT_MS)
        if self.requests_seen and requests_before is not None:
            self.request_windows.append((requests_before, self.requests_seen()))
        record.result, record.error, record.via, record.bounds = answer.result, answer.error, answer.via, answer.bounds
        record.duration_ms = round((time.monotonic() - started) * 1000, 1)
        if self.writes_seen and writes_before is not None:
            record.writes = self.writes_seen()[writes_before:]
        await asyncio.sleep(0)  # let the shim's report of this call arrive
        start, _ = self.surface.call_events(seen, name)
        if start is not None:
            record.instance = start.instance
            record.document = start.document
            if not start.is_top:  # a frame's tool: the frame's route, not the top page's, is its route
                record.frame = FrameRecord.model_validate(start.frame)
            if isinstance(start, RefusedEvent):
                record.refused = True
        if self.after_call is not None:
            await self.after_call(record)
        return record


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
