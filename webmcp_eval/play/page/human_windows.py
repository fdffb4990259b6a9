"""The person's share of the shim's log: which page events a human caused, not the agent.

A human click (a case's click step, or the person at a headed confirmation
point) is bracketed by two marks put into the shim's log; the events between
them are the human's. The binding delivers the page's reports in order, so an
event that arrives after a mark happened after it, however late it arrives
under load.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from webmcp_eval.play.page.surface.log import ClickEvent, MarkEvent, ShimEvent

MARK_WAIT_S = 2.0  # how long a mark may take to come back through the binding


class HumanWindows:
    def __init__(self, page: Page, events: list[ShimEvent]) -> None:
        self.page = page
        self.events = events  # the shim log's events, growing as the page reports
        self.windows: list[tuple[int, int]] = []  # [start, end) ranges of the log that were the human's
        self._marks = 0

    @contextlib.asynccontextmanager
    async def human(self) -> AsyncIterator[None]:
        """What happens inside is the human's; a window is kept only when it completes."""
        start = await self.mark("human-begins")
        yield
        self.windows.append((start, await self.mark("human-ends")))

    def by_human(self, index: int, event: ClickEvent) -> bool:
        """A page script's click is never the human's, even inside a human window."""
        return event.trusted is not False and any(a <= index < b for a, b in self.windows)

    async def mark(self, label: str) -> int:
        """Put a mark in the shim's log and wait for it; its index splits the log.

        Where the page cannot take the mark (it is navigating), the current end
        of the log is the best split there is.
        """
        self._marks += 1
        token = f"{label}-{self._marks}"
        with contextlib.suppress(PlaywrightError):
            if await self.page.evaluate("t => !!window.__webmcpEval && (window.__webmcpEval.mark(t), true)", token):
                deadline = time.monotonic() + MARK_WAIT_S
                while time.monotonic() < deadline:
                    for i in range(len(self.events) - 1, -1, -1):
                        event = self.events[i]
                        if isinstance(event, MarkEvent) and event.label == token:
                            return i
                    await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        return len(self.events)
