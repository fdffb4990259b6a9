"""When the tools of a route count as settled: driven by the shim's events and the page's requests.

The waits here are the host's own quiet windows (a few hundred ms); the tests
assert their order and count (never less than the window after the last
change, and woken only by events), never how fast anything ran.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from tests.eval_support import in_thread
from webmcp_eval.play.page.toolhost import ShimLog, ToolHost

SETTLE_MS = 200


class _Page:
    """What ToolHost reads of a page before any call: its URL and its request events."""

    url = "http://127.0.0.1:1/"

    def __init__(self) -> None:
        self.handlers: dict[str, Any] = {}

    def on(self, name: str, handler: Any) -> None:
        self.handlers[name] = handler


def _host() -> tuple[ToolHost, ShimLog, _Page]:
    log, page = ShimLog(), _Page()
    host = ToolHost(page, log, time.monotonic(), settle_ms=SETTLE_MS)  # type: ignore[arg-type]
    log.add({"type": "loaded", "document": "d1", "native": True})
    return host, log, page


def _register(log: ShimLog, name: str, instance: int) -> None:
    log.add({"type": "register", "document": "d1", "name": name, "instance": instance})


def test_a_quiet_route_settles_one_window_after_its_last_registration_without_polling():
    async def play() -> tuple[float, ToolHost, ShimLog]:
        host, log, _ = _host()
        _register(log, "search", 1)
        await host.wait_for_tools()
        return time.monotonic(), host, log

    returned, host, log = in_thread(asyncio.run, play())
    assert returned - log.events[-1].host_t >= SETTLE_MS / 1000
    assert host.wakeups <= 2  # one look, one sleep to the window's end (a 30 ms poll looked 7+ times)


def test_a_late_registration_and_a_request_each_restart_the_quiet_window():
    async def play() -> tuple[float, float, ToolHost]:
        host, log, page = _host()
        _register(log, "search", 1)
        loop = asyncio.get_running_loop()
        request = object()
        loop.call_later(0.05, page.handlers["request"], request)
        loop.call_later(0.15, page.handlers["requestfinished"], request)
        loop.call_later(0.25, _register, log, "share", 2)  # after a timer, as the static shop does
        await host.wait_for_tools()
        return time.monotonic(), log.events[-1].host_t, host

    returned, last_registration, host = in_thread(asyncio.run, play())
    assert returned - last_registration >= SETTLE_MS / 1000
    assert host.wakeups <= 6  # the first look, three events, the window's end (and one spare)


def test_a_wanted_tool_that_never_comes_waits_for_the_deadline_only():
    async def play() -> tuple[float, float, ToolHost]:
        host, log, _ = _host()
        _register(log, "search", 1)
        started = time.monotonic()
        await host.wait_for_tools(["checkout"], timeout_ms=400)
        return started, time.monotonic(), host

    started, returned, host = in_thread(asyncio.run, play())
    assert returned - started >= 0.4
    assert host.wakeups <= 2


def test_a_page_without_tools_gets_the_grace_period_not_the_quiet_window(monkeypatch):
    monkeypatch.setattr("webmcp_eval.play.page.toolhost.NO_TOOLS_GRACE_S", 0.5)

    async def play() -> tuple[float, float]:
        host, log, _ = _host()
        await host.wait_for_tools(timeout_ms=2000)
        return log.events[0].host_t, time.monotonic()

    loaded, returned = in_thread(asyncio.run, play())
    assert returned - loaded >= 0.5
