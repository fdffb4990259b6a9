"""What a page still has under way, and the wait until it has nothing: a settle on evidence.

The evidence is the page's requests (each start and end, heard from Playwright), the shim's reports
(its log), and what the page says of itself (``shim.js`` ``quiet()``: reports not yet taken,
registrations not yet resolved, when its document last changed). The trial's tool host waits on it
after every step (``toolhost.py``), the audit after a smoke call (``audit/engine.py``).

Nothing polls in the async wait: it sleeps until the moment the quiet would be long enough, and
wakes early only when the shim reports an event or a request of the page starts or ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from webmcp_eval.play.page.surface.log import ShimLog

# A request older than this is a long poll or a stream, not the route loading.
LOADING_REQUEST_S = 5.0
# what the page reports of itself (shim.js quiet()); null: no shim in this document
PAGE_QUIET_JS = "() => (window.__webmcpEval && window.__webmcpEval.quiet ? window.__webmcpEval.quiet() : null)"

# what is under way, each with the moment it would be over if nothing else happens (None: only an event can tell)
Pending = dict[str, float | None]


class PageActivity:
    """One page's requests in flight and the wait until the page is still."""

    def __init__(self, page: Page, log: ShimLog) -> None:
        self.page = page
        self.log = log
        # A route change commonly withdraws its tools, fetches the new route's data, then registers the new
        # tools, so a quiet registration log means nothing while that fetch is open.
        self.in_flight: dict[int, float] = {}
        self.network_t = time.monotonic()  # when a request of the page last started or ended
        self.wakeups = 0  # how often a wait looked (events and deadlines, never a poll)
        page.on("request", self._request_started)
        page.on("requestfinished", self._request_ended)
        page.on("requestfailed", self._request_ended)

    def _request_started(self, request: Any) -> None:
        self.in_flight[id(request)] = self.network_t = time.monotonic()
        self.log.changed.set()  # a waiting wait looks again

    def _request_ended(self, request: Any) -> None:
        self.in_flight.pop(id(request), None)
        self.network_t = time.monotonic()
        self.log.changed.set()

    def requests_over(self, quiet_s: float) -> float:
        """When the page's requests will have been still for quiet_s, if none starts or ends meanwhile; a request
        still open keeps them going until it is old enough to be a long poll."""
        return max([self.network_t + quiet_s] + [t + LOADING_REQUEST_S for t in self.in_flight.values()])

    async def wait(
        self, under_way: Callable[[float], Pending], deadline: float, quiet_s: float, dom_cap: float | None
    ) -> tuple[str, set[str]]:
        """Sleep until nothing is under way, or the deadline; why it ended (quiet, window, cap) and what it
        waited for.

        under_way(now): what the caller's own evidence says is still under way; dom_cap: None, the fixed window
        (the page is not asked); else the page is asked too, and its document's changes waited for until then.
        """
        changed = self.log.changed
        waited: set[str] = set()
        while True:
            changed.clear()
            self.wakeups += 1
            now = time.monotonic()
            pending = under_way(now)
            if not pending and dom_cap is not None:
                pending = await self._page_under_way(quiet_s, dom_cap, deadline)
                now = time.monotonic()
                if pending.pop("cap", None) is not None:
                    return "cap", waited | set(pending)
                if not pending and changed.is_set() and now < deadline:
                    continue  # a request or a report came while the page answered: look at it first
            if not pending:
                return ("window" if dom_cap is None else "quiet"), waited
            waited |= set(pending)
            if now >= deadline:
                return "cap", waited
            moments = [t for t in pending.values() if t is not None]
            # all of it must be over: sleep until the last moment (a None: until an event, or the deadline)
            until = deadline if len(moments) < len(pending) else min(max(moments), deadline)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), max(until - now, 0))

    async def _page_under_way(self, quiet_s: float, dom_cap: float, deadline: float) -> Pending:
        """What the page itself says is under way (shim.js quiet()); "cap": its document still changes at dom_cap."""
        now = time.monotonic()
        try:
            answer = await asyncio.wait_for(self.page.evaluate(PAGE_QUIET_JS), max(deadline - now, 0.01))
        except TimeoutError:
            return {"document": time.monotonic() + quiet_s}
        except PlaywrightError as err:
            if self.page.is_closed() or type(err).__name__ == "TargetClosedError":
                raise  # the page, its browser or Playwright's driver is gone: nothing will ever settle
            return {"document": time.monotonic() + quiet_s}  # between documents: the new one reports soon
        if not isinstance(answer, dict):
            return {}  # no shim in this document: nothing it could say
        now = time.monotonic()
        pending: Pending = {}
        if answer.get("pending"):
            pending["registration"] = now + quiet_s  # its report wakes the wait earlier
        still_s = float(answer.get("mutated_ms_ago") or 0) / 1000
        if still_s < quiet_s:
            pending["dom"] = min(now + quiet_s - still_s, dom_cap)
            if now >= dom_cap:
                pending["cap"] = now
        return pending

    async def settle(self, quiet_s: float, cap_s: float) -> tuple[str, set[str]]:
        """From now, until no request of the page is open and nothing (a request, a report of the shim, a change
        of the document, this wait's start) happened for quiet_s; at most cap_s. Why it ended (quiet, cap) and
        what it waited for."""
        started = time.monotonic()
        deadline = started + cap_s

        def under_way(now: float) -> Pending:
            last = max([started] + [e.host_t for e in self.log.events[-1:]])
            moments = {"request": self.requests_over(quiet_s), "report": last + quiet_s}
            return {what: t for what, t in moments.items() if t > now}

        return await self.wait(under_way, deadline, quiet_s, deadline)
