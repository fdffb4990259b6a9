"""The assertion helpers' judgement: the case format's expectations, judged by the runner's own checks.

``assert_called`` and ``assert_calls`` build the same :class:`CallExpectations`
a case file holds and hand them to :func:`webmcp_eval.judge.checks.check_calls`, so a
test and a case agree on what ``order: exact`` or ``{$pattern: …}`` means. A
matcher that could never work (an unknown ``$`` operator, a pattern that does
not compile) is a ``ValueError`` before anything is judged, as ``validate``
refuses it in a case file: a helper never passes by accident.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from webmcp_eval.judge.checks import check_calls
from webmcp_eval.matchers import MISSING, match, matcher_problems, short
from webmcp_eval.suite.case import CallExpectations, expected_leaves
from webmcp_eval.suite.loader import field_path
from webmcp_eval.trace import Assertion, ToolCall, Trace

ORDERS = ("sequence", "set", "exact")


def as_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _refuse_bad_matchers(where: str, matcher: object) -> None:
    __tracebackhide__ = True  # a mistyped matcher is the test's line, not a traceback into the plugin
    problems = matcher_problems(matcher)
    if problems:
        path, message = problems[0]
        at = ".".join(str(p) for p in path)
        raise ValueError(f"{where}{'.' + at if at else ''}: {message}")


def call_expectations(
    expected: Sequence[Any], order: str = "sequence", forbidden: Sequence[Any] = (), max_calls: int | None = None
) -> CallExpectations:
    """The helpers' arguments as a case's ``expect.calls`` (only the rules asked for: no catalog or stale rule)."""
    __tracebackhide__ = True
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
    try:
        exp = CallExpectations.model_validate(
            {
                "order": order,
                "expected": list(expected),
                "forbidden": list(forbidden),
                "max_calls": max_calls,
                "only_active_catalog": False,
                "no_stale_tools": False,
            }
        )
    except ValidationError as err:
        first = err.errors()[0]
        raise ValueError(f"{field_path(first['loc'])}: {first['msg']}") from None
    for path, leaf in expected_leaves(exp.expected, ("expected",)):
        where = field_path(path)
        _refuse_bad_matchers(f"{where}.args", leaf.args)
        _refuse_bad_matchers(f"{where}.result", leaf.result)
        if leaf.optional and order != "exact":
            raise ValueError(f"{where}: an optional call can never fail under order {order!r}; only under 'exact'")
    for i, rule in enumerate(exp.forbidden):
        _refuse_bad_matchers(f"forbidden[{i}].args", rule.args)
    return exp


def judge_calls(calls: list[ToolCall], exp: CallExpectations) -> list[Assertion]:
    """The expectations' assertions over these calls, as a case's trial would get them."""
    trace = Trace(run_id="pytest", trial_id="pytest", case_id="pytest", behaviour="pytest", start_route="", calls=calls)
    return check_calls(exp, trace)[0]


def calls_listing(calls: list[ToolCall]) -> list[str]:
    """The calls made, one line each, as the failure message shows them."""
    if not calls:
        return ["  (no tool calls)"]
    lines = []
    for c in calls:
        outcome = f"error: {c.error}" if c.error else f"-> {short(c.result, 100)}"
        where = f" in {c.route}" if c.route else ""
        lines.append(f"  #{c.index} {c.tool}({as_json(c.args)}){where} {outcome}")
    return lines


def calls_failure(title: str, failed: list[Assertion], calls: list[ToolCall]) -> str:
    lines = [title]
    lines += [f"  ✗ {a.description}: {a.why}" for a in failed]
    lines.append("calls made:")
    lines += calls_listing(calls)
    return "\n".join(lines)


def tool_mismatches(
    actual: dict[str, Any], description: Any = None, schema: object = None, annotations: Any = None
) -> list[str]:
    """How a listed tool differs from what is asserted; each given part is a case-format matcher.

    ``schema`` is a subset: a mapping matches when each key it lists matches (nested the same way),
    so ``{"required": ["product_id"]}`` asserts that list and leaves the rest of the schema free.
    """
    __tracebackhide__ = True
    out = []
    for part, matcher in (("description", description), ("schema", schema), ("annotations", annotations)):
        if matcher is None:
            continue
        _refuse_bad_matchers(part, matcher)
        value = actual.get(part, MISSING)
        ok, why = match(matcher, value if value is not None else MISSING)
        if not ok:
            out.append(f"  {part}: {why}")
            out.append(f"    expected: {as_json(matcher)}")
            out.append(f"    actual:   {as_json(value)}")
    return out
