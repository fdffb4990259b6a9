"""The ``webmcp`` fixture's assertions on the tools, the calls and the writes of the test's page.

``PageAssertions`` is a part of the fixture's object (``page_webmcp.PageWebMCP``): each assertion reads
``tools()``, ``calls()`` or ``writes()`` and judges them with the case format's matchers and the runner's
own checks (``expectations.py``); a failure says what was asked, why it failed and what the page did.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from webmcp_eval.play.page.surface.model import Tool
from webmcp_eval.proxies.models import RequestRecord
from webmcp_eval.pytest_plugin import expectations
from webmcp_eval.pytest_plugin.expect import renamed
from webmcp_eval.trace import ToolCall


def as_matchable(tool: Tool) -> dict[str, Any]:
    """A tool as the case format's matchers read it."""
    return {"description": tool.description, "schema": tool.input_schema, "annotations": tool.annotations}


class PageAssertions:
    """The assertion helpers; the fixture's object (PageWebMCP) has what they read."""

    if TYPE_CHECKING:  # what they read of the fixture's object (page_webmcp.py)

        def tools(self) -> list[Tool]: ...

        def calls(self) -> list[ToolCall]: ...

        def writes(self) -> list[RequestRecord]: ...

    def assert_tool(self, name: str, description: Any = None, schema: object = None, annotations: Any = None) -> Tool:
        """The page lists ``name``; description, schema (a subset) and annotations match, as case matchers."""
        __tracebackhide__ = True  # pytest shows the test's line, not this helper's
        tools = self.tools()
        found = next((t for t in tools if t.name == name), None)
        if found is None:
            listed = ", ".join(sorted({t.name for t in tools})) or "none"
            raise AssertionError(f"assert_tool({name!r}): the page lists no such tool\n  listed: {listed}")
        diff = expectations.tool_mismatches(as_matchable(found), description, schema, annotations)
        if diff:
            raise AssertionError("\n".join([f"assert_tool({name!r}): the tool differs", *diff]))
        return found

    def assert_called(self, name: str, args: dict[str, Any] | None = None, result: object = None) -> ToolCall:
        """Some call of ``name`` matches ``args`` (a partial match with the case format's ``$`` matchers) and
        ``result``; the matching call."""
        __tracebackhide__ = True  # pytest shows the test's line, not this helper's
        expected: dict[str, Any] = {"tool": name, "args": dict(args or {})}
        if result is not None:
            expected["result"] = result
        exp = expectations.call_expectations([expected], order="set")
        calls = self.calls()
        (judged,) = expectations.judge_calls(calls, exp)
        if judged.status != "passed":
            shown = f"assert_called({name!r}, {expectations.as_json(args or {})})"
            raise AssertionError(expectations.calls_failure(f"{shown}: no call matches", [judged], calls))
        index: int = judged.evidence["call"]  # the position judge_calls found the call at
        return calls[index]

    def assert_calls(
        self,
        expected: Sequence[Any],
        order: str = "sequence",
        forbidden: Sequence[Any] = (),
        max_calls: int | None = None,
    ) -> None:
        """The calls as a case's ``expect.calls`` says them: ``order`` sequence, set or exact; groups
        ``{ordered: [...]}``/``{unordered: [...]}``, ``optional``, ``forbidden`` and ``max_calls``."""
        __tracebackhide__ = True  # pytest shows the test's line, not this helper's
        exp = expectations.call_expectations(expected, order, forbidden, max_calls)
        calls = self.calls()
        failed = [a for a in expectations.judge_calls(calls, exp) if a.status != "passed"]
        if failed:
            raise AssertionError(expectations.calls_failure(f"assert_calls(order={order!r}): not met", failed, calls))

    def assert_writes(self, n: int) -> None:
        """Exactly ``n`` writes went out during this test (each listed when the count differs)."""
        __tracebackhide__ = True  # pytest shows the test's line, not this helper's
        found = self.writes()
        if len(found) != n:
            listing = [f"  {m.method} {m.url} -> {m.status}" for m in found] or ["  (none)"]
            raise AssertionError(
                "\n".join([f"expected {n} network write(s), the proxy counted {len(found)}:", *listing])
            )

    def assert_no_writes(self) -> None:
        __tracebackhide__ = True
        self.assert_writes(0)

    def assert_mutations(self, n: int) -> None:
        """``assert_writes``'s old name, kept for one release."""
        __tracebackhide__ = True
        renamed("webmcp.assert_mutations()", "webmcp.assert_writes()")
        self.assert_writes(n)

    def assert_no_mutations(self) -> None:
        """``assert_no_writes``'s old name, kept for one release."""
        __tracebackhide__ = True
        renamed("webmcp.assert_no_mutations()", "webmcp.assert_no_writes()")
        self.assert_writes(0)
