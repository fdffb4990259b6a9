"""Coverage: which tools, parameters and enum values a suite's cases call or assert.

A tool is touched when a case's reference plan or history calls it, or an
expectation asserts a call of it (expected or forbidden); a parameter when a
plan, history or expectation gives it; an enum value when one of those gives
that literal value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from webmcp_eval.audit.model import Tool
from webmcp_eval.suite.case import Case, ExpectedCall, HistoryCall, UserStep, expected_leaves
from webmcp_eval.suite.tool_schema import properties_of

if TYPE_CHECKING:
    from webmcp_eval.suite.folder import Suite


@dataclass
class Coverage:
    tools: set[str] = field(default_factory=set)
    params: dict[str, set[str]] = field(default_factory=dict)
    values: dict[str, dict[str, set[str]]] = field(default_factory=dict)

    def add(self, tool: str, args: dict[str, Any]) -> None:
        self.tools.add(tool)
        self.params.setdefault(tool, set()).update(args)
        for name, value in args.items():
            if isinstance(value, str | int | float | bool):
                self.values.setdefault(tool, {}).setdefault(name, set()).add(repr(value))


def case_coverage(cases: list[Case]) -> Coverage:
    cov = Coverage()
    for case in cases:
        for step in case.steps:
            if isinstance(step, UserStep):
                for call in step.plan:
                    cov.add(call.call, call.args)
                for turn in step.history:
                    if isinstance(turn, HistoryCall):
                        cov.add(turn.call, turn.args)
        calls = case.expect.calls
        for _, leaf in expected_leaves(calls.expected):
            if isinstance(leaf, ExpectedCall):
                cov.add(leaf.tool, leaf.args)
        for forbidden in calls.forbidden:
            cov.add(forbidden.tool, forbidden.args)
    return cov


def suite_coverage(suite: Suite) -> Coverage:
    """The coverage of a suite folder's valid cases (invalid ones are validate's to report)."""
    from webmcp_eval.suite.loader import load_cases

    if suite.folder is None:
        return Coverage()
    loaded, _ = load_cases(suite.case_files([suite.folder]), suite.config.ignore)
    return case_coverage([c.case for c in loaded])


@dataclass
class ToolCoverage:
    tool: str
    touched: bool
    params: tuple[int, int]  # touched, declared
    values: tuple[int, int]  # enum values touched, declared


def tool_coverage(cov: Coverage, tools: list[Tool]) -> list[ToolCoverage]:
    rows = []
    for tool in sorted(tools, key=lambda t: t.name):
        schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
        props = properties_of(schema)
        given = cov.params.get(tool.name, set())
        enums = {n: [repr(v) for v in (p.get("enum") or [])] for n, p in props.items() if isinstance(p, dict)}
        seen = cov.values.get(tool.name, {})
        values = sum(1 for n, vs in enums.items() for v in vs if v in seen.get(n, set()))
        rows.append(
            ToolCoverage(
                tool.name,
                tool.name in cov.tools,
                (len(given & set(props)), len(props)),
                (values, sum(len(v) for v in enums.values())),
            )
        )
    return rows
