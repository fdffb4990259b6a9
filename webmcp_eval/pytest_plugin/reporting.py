"""A test's WebMCP evidence in pytest's reports, and the coverage of the tools its calls touched.

At the end of every test that used the ``webmcp`` fixture, its calls (tool,
arguments, result or error, when and how long), the findings of the ``lint()``
and ``smoke()`` it ran, and its coverage become properties of the test's report:
pytest's JUnit XML writes them as ``<property name="webmcp.calls" value="[…]"/>``
(JSON values), and pytest-html, when it is installed, shows them as JSON extras.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from webmcp_eval.audit.coverage import Coverage, ToolCoverage, tool_coverage
from webmcp_eval.trace import ToolCall

if TYPE_CHECKING:
    from webmcp_eval.audit.model import Finding

PREFIX = "webmcp."


@dataclass
class TestEvidence:
    """What a test asked of the audit's engine, kept for its report."""

    __test__ = False  # not a test class, whatever pytest's collection thinks of the name

    lint: list[Any] = field(default_factory=list)  # webmcp_eval.audit.model.Finding
    smoke: list[Any] = field(default_factory=list)
    smoke_calls: int = 0


class SmokeFindings(list[Any]):
    """``smoke()``'s findings, a list as before, with how many calls the smoke made (``calls``)."""

    def __init__(self, findings: Iterable[Any] = (), calls: int = 0) -> None:
        super().__init__(findings)
        self.calls = calls


@dataclass
class CallCoverage:
    """Which of the page's tools the calls touched, each with its parameters and enum values."""

    tools: list[ToolCoverage]

    @property
    def called(self) -> list[str]:
        return [t.tool for t in self.tools if t.touched]

    @property
    def not_called(self) -> list[str]:
        return [t.tool for t in self.tools if not t.touched]

    @property
    def fraction(self) -> float:
        return len(self.called) / len(self.tools) if self.tools else 0.0

    def summary(self) -> str:
        left = f"; not called: {', '.join(self.not_called)}" if self.not_called else ""
        return f"{len(self.called)} of {len(self.tools)} tool(s) called{left}"


def call_coverage(calls: Iterable[ToolCall], tools: Sequence[Any]) -> CallCoverage:
    """The tools (anything with ``name`` and ``input_schema``, one per name) against the calls made."""
    cov = Coverage()
    for call in calls:
        if not call.refused:
            cov.add(call.tool, call.args if isinstance(call.args, dict) else {})
    unique = {t.name: t for t in tools}
    return CallCoverage(tool_coverage(cov, list(unique.values())))


STRING_CHARS = 500  # a longer string in a call's result is cut, marked with "…"
LIST_ITEMS = 50  # a longer list keeps its first items and a last one that says how many more


def bounded(value: Any) -> Any:
    """A call's result as a JSON value, the same shape, with long strings and lists cut (a page's whole
    catalogue would swell every report), never a JSON string of it."""
    if isinstance(value, str):
        return value if len(value) <= STRING_CHARS else value[: STRING_CHARS - 1] + "…"
    if isinstance(value, list):
        kept = [bounded(v) for v in value[:LIST_ITEMS]]
        return kept + ([f"… {len(value) - LIST_ITEMS} more"] if len(value) > LIST_ITEMS else [])
    if isinstance(value, dict):
        return {str(k): bounded(v) for k, v in value.items()}
    return value


def call_row(call: ToolCall) -> dict[str, Any]:
    row: dict[str, Any] = {"tool": call.tool, "args": call.args}
    if call.error is not None:
        row["error"] = call.error
    else:
        row["result"] = bounded(call.result)
    row["started_ms"], row["duration_ms"] = call.started_ms, call.duration_ms
    return row


def finding_row(finding: Finding) -> dict[str, Any]:
    return {k: v for k, v in finding.as_dict().items() if v not in (None, "", [], {})}


def properties(calls: list[ToolCall], evidence: TestEvidence, coverage: CallCoverage | None) -> list[tuple[str, str]]:
    """The report's properties, each value JSON."""
    out = [(f"{PREFIX}calls", _json([call_row(c) for c in calls]))]
    if coverage is not None:
        cov = {"called": coverage.called, "not_called": coverage.not_called, "fraction": round(coverage.fraction, 3)}
        out.append((f"{PREFIX}coverage", _json(cov)))
    if evidence.lint:
        out.append((f"{PREFIX}lint", _json([finding_row(f) for f in evidence.lint])))
    if evidence.smoke or evidence.smoke_calls:
        smoke = {"calls": evidence.smoke_calls, "findings": [finding_row(f) for f in evidence.smoke]}
        out.append((f"{PREFIX}smoke", _json(smoke)))
    return out


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
