"""``expect(webmcp)``: the fixture's assertions that wait, as Playwright's ``expect`` waits for a locator.

Each ``to_…`` assertion looks again and again, with the same matchers as the
``assert_…`` helper it stands on, until it holds or its timeout runs out (5 s by
default, as Playwright's; ``expect.set_options(timeout=ms)``, the ini value
``webmcp_expect_timeout`` or ``--webmcp-expect-timeout``). Between two looks the
page runs (``page.wait_for_timeout``), so its late registrations and calls
arrive. When time is up, the helper's own failure message is raised, under a
line that says how long it was retried. The ``assert_…`` helpers stay as the
one-look forms. A mistake in the assertion itself (a matcher that could never
work, ``writes`` without a proxy) is raised at the first look.

    from webmcp_eval.pytest_plugin import expect

    page.goto(base_url)
    expect(webmcp).to_have_tool("share_cart")          # registered 400 ms after load: waited for
    expect(webmcp).not_to_have_tool("list_offers")
    webmcp.call("share_cart")
    expect(webmcp).to_have_called("share_cart")
    expect(webmcp).to_have_writes(1)
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypeVar


def renamed(old: str, new: str) -> None:
    """An old name of the fixture's, kept for one release: one DeprecationWarning at the test's line."""
    warnings.warn(f"{old} is deprecated: use {new}", DeprecationWarning, stacklevel=3)


# The fixture's object (page_webmcp.PageWebMCP) and what it returns are typed Any here: this module is
# imported by the package itself (``from webmcp_eval.pytest_plugin import expect``), which page_webmcp imports.
PageWebMCP = Any
FrameTool = Any
ToolCall = Any
T = TypeVar("T")
POLL_MS = (50, 100, 250, 500)  # between looks, growing as Playwright's expect does; then the last one
DEFAULT_TIMEOUT_MS = 5000


def _checked_timeout(timeout_ms: float) -> float:
    """A timeout a wait can end on: NaN compares false with every clock, so a wait for it would never end."""
    __tracebackhide__ = True
    if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int | float) or not 0 <= timeout_ms <= 3_600_000:
        raise ValueError(f"timeout={timeout_ms!r}: give milliseconds from 0 to 3600000 (one hour)")
    return timeout_ms


class WebMCPAssertions:
    """The waiting assertions on one ``webmcp`` fixture (what ``expect(webmcp)`` returns)."""

    def __init__(self, webmcp: PageWebMCP, timeout_ms: float, message: str | None = None) -> None:
        self._webmcp = webmcp
        self._timeout_ms = timeout_ms
        self._message = message

    def _retry(self, what: str, look: Callable[[], T], timeout: float | None) -> T:
        __tracebackhide__ = True  # pytest shows the test's line, not this helper's
        timeout_ms = _checked_timeout(self._timeout_ms if timeout is None else timeout)
        deadline = time.monotonic() + timeout_ms / 1000
        for attempt in range(1_000_000):
            try:
                return look()
            except AssertionError as err:
                if time.monotonic() >= deadline:
                    head = f"{self._message}\n" if self._message else ""
                    waited = f"expect(webmcp).{what}: still not met after {timeout_ms / 1000:g} s of retrying"
                    raise AssertionError(f"{head}{waited}\n{err}") from None
            pause = POLL_MS[min(attempt, len(POLL_MS) - 1)]
            left_ms = max(0.0, (deadline - time.monotonic()) * 1000)
            self._webmcp.page.wait_for_timeout(min(pause, left_ms) or 1)  # the page runs meanwhile
        raise AssertionError(f"expect(webmcp).{what}: retried without end")  # pragma: no cover - a bound

    def to_have_tool(
        self,
        name: str,
        description: Any = None,
        schema: object = None,
        annotations: Any = None,
        *,
        timeout: float | None = None,
    ) -> FrameTool:
        """Some frame lists ``name``, matching as ``assert_tool``; the tool."""
        __tracebackhide__ = True
        look = lambda: self._webmcp.assert_tool(name, description, schema, annotations)  # noqa: E731
        return self._retry(f"to_have_tool({name!r})", look, timeout)

    def not_to_have_tool(self, name: str, *, timeout: float | None = None) -> None:
        """No frame lists ``name`` (waits for a withdrawal)."""
        __tracebackhide__ = True

        def look() -> None:
            __tracebackhide__ = True
            listed = [t for t in self._webmcp.tools() if t.name == name]
            if listed:
                where = ", ".join(sorted({t.frame_url for t in listed}))
                raise AssertionError(f"not_to_have_tool({name!r}): the page lists it\n  in: {where}")

        self._retry(f"not_to_have_tool({name!r})", look, timeout)

    def to_have_called(
        self, name: str, args: dict[str, Any] | None = None, result: object = None, *, timeout: float | None = None
    ) -> ToolCall:
        """Some call of ``name`` matches, as ``assert_called``; the matching call."""
        __tracebackhide__ = True
        look = lambda: self._webmcp.assert_called(name, args, result)  # noqa: E731
        return self._retry(f"to_have_called({name!r})", look, timeout)

    def to_have_calls(
        self,
        expected: Sequence[Any],
        order: str = "sequence",
        forbidden: Sequence[Any] = (),
        max_calls: int | None = None,
        *,
        timeout: float | None = None,
    ) -> None:
        """The calls as ``assert_calls`` judges them."""
        __tracebackhide__ = True
        look = lambda: self._webmcp.assert_calls(expected, order, forbidden, max_calls)  # noqa: E731
        self._retry(f"to_have_calls(order={order!r})", look, timeout)

    def to_have_writes(self, n: int, *, timeout: float | None = None) -> None:
        """Exactly ``n`` writes went out during this test, as ``assert_writes`` counts them."""
        __tracebackhide__ = True
        self._retry(f"to_have_writes({n})", lambda: self._webmcp.assert_writes(n), timeout)

    def to_have_mutations(self, n: int, *, timeout: float | None = None) -> None:
        """``to_have_writes``'s old name, kept for one release."""
        __tracebackhide__ = True
        renamed("expect(webmcp).to_have_mutations()", "expect(webmcp).to_have_writes()")
        self.to_have_writes(n, timeout=timeout)


class Expect:
    """``expect(webmcp, message=None)``, with ``expect.set_options(timeout=ms)`` as Playwright's expect has."""

    def __init__(self) -> None:
        self.timeout_ms: float = DEFAULT_TIMEOUT_MS

    def __call__(self, webmcp: PageWebMCP, message: str | None = None) -> WebMCPAssertions:
        return WebMCPAssertions(webmcp, self.timeout_ms, message)

    def set_options(self, timeout: float | None = None) -> None:
        """The default timeout of every later assertion, in ms."""
        if timeout is not None:
            self.timeout_ms = _checked_timeout(timeout)


expect = Expect()
