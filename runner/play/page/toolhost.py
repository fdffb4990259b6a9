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
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Page

from runner.play.page.devtools_tools import DevToolsCallError, HungFrames
from runner.trace import FrameRecord, ToolCall, ToolInfo

SHIM_JS = (Path(__file__).with_name("shim.js")).read_text(encoding="utf-8")
CALL_TIMEOUT_MS = 15_000
# A page without tools (none registered yet, or all just withdrawn by a route
# change) may still be loading its scripts or the new route's data, slow under
# load; only after this long without a registration is "no tools" the answer.
NO_TOOLS_GRACE_S = 3.0
# A frame that does not answer its listing in this long (still loading, hung) offers no tools this time.
FRAME_LIST_TIMEOUT_MS = 3000
# A request older than this is a long poll or a stream, not the route loading.
LOADING_REQUEST_S = 5.0


class ShimLog:
    """Events the shim reports through the exposed binding, in arrival order.

    The shim runs in every frame of the page. Each event names its document;
    the binding tells which frame (Playwright's ``Frame``) that document is in,
    so a frame's document is never taken for a new document of the top page.
    """

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.changed = asyncio.Event()
        self._frames: dict[str, Any] = {}  # document id -> the Playwright Frame that shows it
        self._allow: dict[int, str | None] = {}  # id(frame) -> its element's allow attribute, read from outside
        self._tasks: set[asyncio.Task[None]] = set()

    def add(self, event: dict[str, Any], frame: Any = None) -> None:
        """Log one event; ``frame`` is the Playwright Frame it came from (the binding's source), when known."""
        event["host_t"] = time.monotonic()
        document = event.get("document")
        if frame is not None and document is not None:
            self._frames.setdefault(document, frame)
            self._fill_allow(event, frame)
        self.events.append(event)
        self.changed.set()

    def _fill_allow(self, event: dict[str, Any], frame: Any) -> None:
        """A cross-origin frame cannot read its own element: its allow attribute is read from the parent."""
        info = event.get("frame")
        if not isinstance(info, dict) or info.get("top") or "allow" in info:
            return
        if id(frame) in self._allow:
            info["allow"] = self._allow[id(frame)]
            return
        with contextlib.suppress(RuntimeError):  # no running loop (a test's log): left unknown
            task = asyncio.get_running_loop().create_task(self._read_allow(frame))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _read_allow(self, frame: Any) -> None:
        try:
            element = await frame.frame_element()
            allow = await element.get_attribute("allow")
        except Exception:  # the frame went away first: its allow stays unknown
            return
        self._allow[id(frame)] = allow
        for e in self.events:
            info = e.get("frame")
            if isinstance(info, dict) and "allow" not in info and self._frames.get(e.get("document")) is frame:
                info["allow"] = allow

    def of_type(self, *types: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") in types]

    def native(self) -> bool | None:
        loaded = [e for e in self.of_type("loaded") if is_top(e)]
        return loaded[-1].get("native") if loaded else None

    def top_loaded(self) -> dict[str, Any] | None:
        """The top page's latest ``loaded`` event: its current document."""
        return next((e for e in reversed(self.of_type("loaded")) if is_top(e)), None)

    def current_documents(self) -> list[str]:
        """The documents the page shows now: the top page's, then each of its frames' latest.

        A frame's document counts when it loaded after the top page's and its
        frame is still attached; a frame that navigated shows only its latest.
        """
        top = self.top_loaded()
        if top is None:
            return []
        latest: dict[Any, str] = {}
        after = False
        for e in self.of_type("loaded"):
            after = after or e is top
            if not after or e is top:
                continue
            frame = self._frames.get(e["document"])
            if frame is not None and frame.is_detached():
                continue
            latest[id(frame) if frame is not None else e["document"]] = e["document"]
        return [top["document"], *latest.values()]

    def active_registrations(self, *, top_only: bool = False) -> list[dict[str, Any]]:
        """Registrations of the documents shown now (the top page's alone with top_only), never withdrawn."""
        documents = self.current_documents()
        shown = set(documents[:1] if top_only else documents)
        live: dict[tuple[str, int], dict[str, Any]] = {}
        for e in self.events:
            if e.get("document") not in shown:
                continue
            key = (e["document"], e.get("instance"))
            if e["type"] == "register":
                live[key] = e
            elif e["type"] in ("unregister", "register_error"):
                live.pop(key, None)
        return list(live.values())

    def document_in(self, frame: Any) -> str | None:
        """The document a Playwright Frame shows now, as the shim in it reported (None: no shim there)."""
        current = self.current_documents()
        return next((d for d in reversed(current) if self._frames.get(d) is frame), None)

    def frame_route(self, document: str) -> str | None:
        """The path a frame's document is at now (same-document navigations included); None: unknown."""
        frame = self._frames.get(document)
        if frame is None:
            return None
        return urlsplit(frame.url).path or "/"

    def stale_registrations(self, top_route: str) -> list[dict[str, Any]]:
        """Registrations still active after their own frame left the route they were registered on.

        A frame's tools are held against the frame's route, never the top page's:
        a frame's document is not a route of the top page.
        """
        out = []
        for r in self.active_registrations():
            now = top_route if is_top(r) else self.frame_route(r["document"])
            if now is not None and r.get("route") != now:
                out.append(r)
        return out


def is_top(event: dict[str, Any]) -> bool:
    """Whether a shim event came from the top page (events before frames were logged did)."""
    info = event.get("frame")
    return not isinstance(info, dict) or info.get("top", True) is not False


def _tool_info(raw: dict[str, Any]) -> ToolInfo:
    ann = raw.get("annotations") or {}
    return ToolInfo(
        name=raw.get("name", ""),
        description=raw.get("description") or "",
        input_schema=raw.get("inputSchema"),
        read_only=bool(ann.get("readOnly") or ann.get("readOnlyHint")),
        untrusted_content=bool(ann.get("untrustedContent") or ann.get("untrustedContentHint")),
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
    def path(self) -> str:
        native = self.log.native()
        return "native" if native else "shim" if native is False else "unknown"

    def route(self) -> str:
        url = self.page.url
        return "/" + url.split("://", 1)[-1].split("/", 1)[-1].split("?", 1)[0] if "://" in url else url

    async def catalog(self) -> list[ToolInfo]:
        """The tools the page offers right now (re-read every time: they change with the route).

        The top page's first, then each frame's: an agent of the browser sees a
        frame's tools too. A name an earlier frame already offers stays that frame's.
        """
        return self._tools(await self._listings())

    def _tools(self, listings: list[tuple[Frame, list[dict[str, Any]]]]) -> list[ToolInfo]:
        tools: dict[str, ToolInfo] = {}
        for frame, raw in listings:
            # the shim saw the annotations as the page passed them; the native listing renames them (readOnly)
            document = self.log.document_in(frame)
            registered = {
                r["name"]: r["annotations"]
                for r in self.log.active_registrations()
                if (document is None or r.get("document") == document) and isinstance(r.get("annotations"), dict)
            }
            for t in raw:
                # the browser's reading, and over it the page's own (a readOnly the browser does not read counts)
                annotations = {**(t.get("annotations") or {}), **(registered.get(t.get("name")) or {})}
                tools.setdefault(t.get("name", ""), _tool_info({**t, "annotations": annotations}))
        return list(tools.values())

    async def _listings(self) -> list[tuple[Frame, list[dict[str, Any]]]]:
        """Each frame's own tools, the top page first.

        A frame that may not list tools (its permissions policy) or that went away lists none.
        """
        out: list[tuple[Frame, list[dict[str, Any]]]] = []
        for frame in self.page.frames:
            try:
                top = frame is self.page.main_frame
                if self.path == "native":
                    raw = await self.native_listing(frame)
                else:
                    raw = await frame.evaluate("window.__webmcpEval ? window.__webmcpEval.tools() : []")
            except PlaywrightError:
                if top:
                    raise
                continue
            out.append((frame, raw))
        return out

    async def native_listing(self, frame: Frame) -> list[dict[str, Any]]:
        """The browser's listing of the frame's own tools; a child frame whose listing does not answer
        is read from DevTools from then on (the same registry; devtools_tools.py says why)."""
        return await self.frames.listing(frame, (id(frame), self.log.document_in(frame)), FRAME_LIST_TIMEOUT_MS)

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
        last = changes[-1]["host_t"] if changes else loaded["host_t"]
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
        started = time.monotonic()
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
        hung = self.frames.frame_id((id(frame), self.log.document_in(frame)))
        writes_before = len(self.writes_seen()) if self.writes_seen else None
        try:
            if hung is not None:
                record.via = "devtools"
                record.result = await self.frames.call(hung, name, args, CALL_TIMEOUT_MS)
            elif self.path == "native":
                record.result = await frame.webmcp.call_tool(name, args, timeout=CALL_TIMEOUT_MS)
            else:
                record.result = await frame.evaluate("([n, a]) => window.__webmcpEval.call(n, a)", [name, args])
        except (PlaywrightError, DevToolsCallError) as err:
            record.error = _first_line(err)
        finally:
            record.duration_ms = round((time.monotonic() - started) * 1000, 1)
            if self.writes_seen and writes_before is not None:
                record.writes = self.writes_seen()[writes_before:]
        await asyncio.sleep(0)  # let the shim's report of this call arrive
        for event in self.log.events[seen:]:
            if event.get("name") == name and event["type"] in ("call", "refused"):
                record.instance = event.get("instance")
                record.document = event.get("document")
                if not is_top(event):  # a frame's tool: the frame's route, not the top page's, is its route
                    record.frame = FrameRecord.model_validate(event["frame"])
                if event["type"] == "refused":
                    record.refused = True
                break
        return record


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
