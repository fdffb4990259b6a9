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
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from runner.trace import ToolCall, ToolInfo

SHIM_JS = (Path(__file__).with_name("shim.js")).read_text(encoding="utf-8")
CALL_TIMEOUT_MS = 15_000
# A page without tools (none registered yet, or all just withdrawn by a route
# change) may still be loading its scripts or the new route's data, slow under
# load; only after this long without a registration is "no tools" the answer.
NO_TOOLS_GRACE_S = 3.0
# A request older than this is a long poll or a stream, not the route loading.
LOADING_REQUEST_S = 5.0


class ShimLog:
    """Events the shim reports through the exposed binding, in arrival order."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.changed = asyncio.Event()

    def add(self, event: dict[str, Any]) -> None:
        event["host_t"] = time.monotonic()
        self.events.append(event)
        self.changed.set()

    def of_type(self, *types: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") in types]

    def native(self) -> bool | None:
        loaded = self.of_type("loaded")
        return loaded[-1].get("native") if loaded else None

    def active_registrations(self) -> list[dict[str, Any]]:
        """Registrations of the current document that were never withdrawn."""
        loaded = self.of_type("loaded")
        document = loaded[-1]["document"] if loaded else None
        live: dict[int, dict[str, Any]] = {}
        for e in self.events:
            if e.get("document") != document:
                continue
            if e["type"] == "register":
                live[e["instance"]] = e
            elif e["type"] in ("unregister", "register_error"):
                live.pop(e["instance"], None)
        return list(live.values())


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
        """The tools the page offers right now (re-read every time: they change with the route)."""
        if self.path == "native":
            raw = await self.page.webmcp.tools()
        else:
            raw = await self.page.evaluate("window.__webmcpEval ? window.__webmcpEval.tools() : []")
        # the native listing has no annotations: the shim saw them when the page registered the tool
        registered = {r["name"]: r.get("annotations") for r in self.log.active_registrations()}
        return [_tool_info({**t, "annotations": t.get("annotations") or registered.get(t.get("name"))}) for t in raw]

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
        loaded = self.log.of_type("loaded")
        if not loaded:
            return None
        document = loaded[-1]["document"]
        changes = [
            e for e in self.log.of_type("register", "unregister", "register_error") if e.get("document") == document
        ]
        last = changes[-1]["host_t"] if changes else loaded[-1]["host_t"]
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
            names = {t.name for t in await self.catalog()}
        except PlaywrightError as err:
            record.error = f"could not read the catalog: {_first_line(err)}"
            return record
        if name not in names:
            record.in_catalog = False
            record.refused = True
            record.error = f"refused: {name!r} is not in the active catalog ({', '.join(sorted(names)) or 'empty'})"
            return record
        seen = len(self.log.events)
        try:
            if self.path == "native":
                record.result = await self.page.webmcp.call_tool(name, args, timeout=CALL_TIMEOUT_MS)
            else:
                record.result = await self.page.evaluate("([n, a]) => window.__webmcpEval.call(n, a)", [name, args])
        except PlaywrightError as err:
            record.error = _first_line(err)
        finally:
            record.duration_ms = round((time.monotonic() - started) * 1000, 1)
        await asyncio.sleep(0)  # let the shim's report of this call arrive
        for event in self.log.events[seen:]:
            if event.get("name") == name and event["type"] in ("call", "refused"):
                record.instance = event.get("instance")
                record.document = event.get("document")
                if event["type"] == "refused":
                    record.refused = True
                break
        return record


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
