"""A page and locators with only the methods the trial's units call: tests of play/ without a browser.

A control exists when its description (Locator.describe()) is in the page's
``controls``; a missing one times out the way Playwright does (its Error).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError

from webmcp_eval.play.page.surface.log import ShimEvent, parse_event
from webmcp_eval.suite.case import Locator


def run(coro: Any) -> Any:
    """Run a coroutine on a loop of its own thread (pytest-playwright holds this thread's loop)."""
    from tests.eval_support import in_thread

    return in_thread(asyncio.run, coro)


@dataclass
class Control:
    text: str = ""
    value: str | None = None  # None: not an input
    visible: bool = True
    actionable: dict[str, Any] = field(default_factory=lambda: {"enabled": True})


class FakeLocator:
    def __init__(self, page: FakePage, key: str) -> None:
        self.page = page
        self.key = key

    @property
    def control(self) -> Control | None:
        return self.page.controls.get(self.key)

    @property
    def first(self) -> FakeLocator:
        return self

    def nth(self, index: int) -> FakeLocator:
        return FakeLocator(self.page, f"{self.key}[{index}]")

    def _need(self) -> Control:
        if self.control is None:
            raise PlaywrightError(f"Timeout 10000ms exceeded waiting for {self.key}")
        return self.control

    async def count(self) -> int:
        return 0 if self.control is None else 1

    async def is_visible(self) -> bool:
        return self.control is not None and self.control.visible

    async def inner_text(self, timeout: float | None = None) -> str:
        return self._need().text

    async def input_value(self, timeout: float | None = None) -> str:
        value = self._need().value
        if value is None:
            raise PlaywrightError("Error: Node is not an <input>, <textarea> or <select> element")
        return value

    async def evaluate_all(self, script: str, arg: Any = None) -> dict[str, Any]:
        """observe.READ_JS: what count(), is_visible(), inner_text() and input_value() give, in one read
        (``arg``: whether a summary's label/value pairs are read too; the fake page has none)."""
        count = await self.count()
        if not count:
            return {"count": 0, "visible": False}
        control = self._need()
        return {"count": count, "visible": control.visible, "text": control.text, "value": control.value}

    async def click(self) -> None:
        self._need()
        self.page.did.append(("click", self.key))
        self.page.report({"type": "click", "text": self.control.text if self.control else "", "seq": 0})

    async def wait_for(self, state: str, timeout: float) -> None:
        self._need()
        self.page.did.append(("wait_for", self.key))

    async def evaluate(self, script: str, arg: Any = None, timeout: float | None = None) -> Any:
        control = self._need()
        if "outline" in script:
            self.page.did.append(("outline", self.key))
            return None
        return control.actionable  # probes.actionable

    async def scroll_into_view_if_needed(self) -> None:
        self._need()

    async def aria_snapshot(self, timeout: float | None = None) -> str:
        if self.page.aria is None:
            raise PlaywrightError("Target page, context or browser has been closed")
        return self.page.aria

    def get_by_role(self, role: str, name: str | None = None, exact: bool = False) -> FakeLocator:
        return FakeLocator(self.page, f"{Locator(role=role, name=name).describe()} within {self.key}")


class FakePage:
    def __init__(self, controls: dict[str, Control] | None = None, links: list[str] | None = None) -> None:
        self.controls = controls or {}
        self.links = links or []  # hrefs of the page's links
        self.url = "http://site.test/"
        self.events: list[ShimEvent] = []  # the shim log's events, as the binding delivers them (parsed)
        self.did: list[tuple[str, str]] = []
        self.takes_marks = True
        self.aria: str | None = "- main"
        self.screenshot_fails = False

    def report(self, event: dict[str, Any]) -> None:
        self.events.append(parse_event(event))

    def get_by_role(self, role: str, name: str | None = None, exact: bool = False) -> FakeLocator:
        return FakeLocator(self, Locator(role=role, name=name).describe())

    def get_by_label(self, label: str, exact: bool = False) -> FakeLocator:
        return FakeLocator(self, Locator(label=label).describe())

    def get_by_text(self, text: str, exact: bool = False) -> FakeLocator:
        return FakeLocator(self, Locator(text=text).describe())

    def locator(self, selector: str) -> FakeLocator:
        if selector == "a[href]":
            for i, href in enumerate(self.links):
                self.controls.setdefault(f"a[href][{i}]", Control(text=href))
        return FakeLocator(self, selector)

    async def evaluate(self, script: str, arg: Any = None) -> Any:
        if "__webmcpEval" in script:  # a mark: the shim reports it back through the binding
            if not self.takes_marks:
                raise PlaywrightError("Execution context was destroyed, most likely because of a navigation")
            self.report({"type": "mark", "label": arg})
            return True
        if "a[href]" in script:
            return self.links.index(arg) if arg in self.links else -1
        raise AssertionError(f"unexpected script: {script}")

    async def goto(self, url: str, wait_until: str = "load") -> None:
        self.did.append(("goto", url))
        self.url = url

    async def wait_for_url(self, url: str) -> None:
        self.did.append(("wait_for_url", url))
        self.url = url

    async def reload(self, wait_until: str = "load") -> None:
        self.did.append(("reload", self.url))

    async def screenshot(self, path: str | None = None, timeout: float = 0) -> bytes:
        if self.screenshot_fails:
            raise PlaywrightError("Target page, context or browser has been closed")
        if path:
            Path(path).write_bytes(b"\x89PNG\r\n")
        return b"\x89PNG\r\n"
