"""``webmcp-eval validate``: is the suite itself well formed?

Seed 000's ``evals:validate``: duplicate IDs, a missing start route, an unknown
behaviour, tool or matcher, a behaviour with fewer than two cases, a reference
plan that does not satisfy its own case's input schemas or expectations. Every
problem is reported as file:line with the field path. Passing says nothing
about any agent.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import jsonschema

from runner.case import BEHAVIOURS, UserStep
from runner.loader import LoadedCase, Problem
from runner.matchers import refs_in, unknown_operators

MIN_CASES_PER_BEHAVIOUR = 2


class SuiteCatalog:
    """The site's tools per route pattern (``cases/catalog.json``), for static checks.

    A test compares it with what the live demo site registers, so it cannot drift.
    """

    def __init__(self, data: dict[str, Any]):
        self.routes: dict[str, dict[str, Any]] = data["routes"]

    @classmethod
    def load(cls, path: Path) -> SuiteCatalog:
        return cls(json.loads(path.read_text(encoding="utf-8")))

    def route_pattern(self, route: str) -> str | None:
        parts = route.split("?")[0].strip("/").split("/")
        for pattern in self.routes:
            pat = pattern.strip("/").split("/")
            if len(pat) == len(parts) and all(p.startswith("{") or p == r for p, r in zip(pat, parts, strict=True)):
                return pattern
        return None

    def tools(self) -> set[str]:
        return {name for tools in self.routes.values() for name in tools}

    def schemas(self, tool: str) -> list[Any]:
        return [tools[tool] for tools in self.routes.values() if tool in tools]


def validate_suite(cases: list[LoadedCase], catalog: SuiteCatalog | None, whole_suite: bool = True) -> list[Problem]:
    """All problems; ``whole_suite`` adds the coverage rule (two cases per behaviour)."""
    problems: list[Problem] = []
    problems += _duplicates(cases)
    problems += _behaviours(cases, whole_suite)
    for lc in cases:
        problems += _case_problems(lc, catalog)
    return sorted(problems, key=lambda p: (p.file, p.line))


def _duplicates(cases: list[LoadedCase]) -> list[Problem]:
    seen: dict[str, LoadedCase] = {}
    out = []
    for lc in cases:
        first = seen.setdefault(lc.case.id, lc)
        if first is not lc:
            out.append(
                Problem(
                    lc.file,
                    lc.line_of("id"),
                    "id",
                    f"duplicate case id {lc.case.id} (first in {first.file}:{first.line_of('id')})",
                )
            )
    return out


def _behaviours(cases: list[LoadedCase], whole_suite: bool) -> list[Problem]:
    by: dict[str, list[LoadedCase]] = defaultdict(list)
    out = []
    for lc in cases:
        if lc.case.behaviour not in BEHAVIOURS:
            out.append(
                Problem(
                    lc.file,
                    lc.line_of("behaviour"),
                    "behaviour",
                    f"unknown behaviour {lc.case.behaviour!r}; one of: {', '.join(BEHAVIOURS)}",
                )
            )
        else:
            by[lc.case.behaviour].append(lc)
    for behaviour, group in by.items():
        if whole_suite and len(group) < MIN_CASES_PER_BEHAVIOUR:
            lc = group[0]
            out.append(
                Problem(
                    lc.file,
                    lc.line_of("behaviour"),
                    "behaviour",
                    f"behaviour {behaviour} has {len(group)} case(s); the suite needs at least "
                    f"{MIN_CASES_PER_BEHAVIOUR} per behaviour",
                )
            )
    return out


def _case_problems(lc: LoadedCase, catalog: SuiteCatalog | None) -> list[Problem]:
    case, out = lc.case, []
    if not case.start_route.strip("/"):
        out.append(Problem(lc.file, lc.line_of("start_route"), "start_route", "the start route is empty"))
    if catalog is not None and catalog.route_pattern(case.start_route) is None:
        out.append(
            Problem(lc.file, lc.line_of("start_route"), "start_route", f"{case.start_route} is not a route of the site")
        )
    known = catalog.tools() if catalog is not None else set()
    captured: set[str] = set()
    for si, step in enumerate(case.steps):
        if not isinstance(step, UserStep):
            continue
        for pi, planned in enumerate(step.plan):
            where = ("steps", si, "plan", pi)
            if catalog is not None and planned.call not in known:
                out.append(
                    Problem(
                        lc.file,
                        lc.line_of(*where, "call"),
                        f"steps[{si}].plan[{pi}].call",
                        f"unknown tool {planned.call!r}",
                    )
                )
            for name in refs_in(planned.args):
                if name not in captured:
                    out.append(
                        Problem(
                            lc.file,
                            lc.line_of(*where, "args"),
                            f"steps[{si}].plan[{pi}].args",
                            f"$ref {name!r} is used before the plan captures it",
                        )
                    )
            if catalog is not None and planned.call in known and not refs_in(planned.args):
                out += _schema_problems(lc, where, planned.call, planned.args, catalog)
            captured |= set(planned.capture)
    out += _expectation_problems(lc, known if catalog is not None else None)
    out += plan_satisfies_expectations(lc)
    return out


def _schema_problems(lc: LoadedCase, where: tuple, tool: str, args: dict, catalog: SuiteCatalog) -> list[Problem]:
    """The planned arguments must fit the tool's schema on at least one route."""
    errors = []
    for schema in catalog.schemas(tool):
        try:
            jsonschema.validate(args, schema or {"type": "object"})
            return []
        except jsonschema.ValidationError as err:
            errors.append(err)
    err = errors[0]
    field = ".".join(str(p) for p in err.absolute_path)
    path = f"steps[{where[1]}].plan[{where[3]}].args" + (f".{field}" if field else "")
    return [
        Problem(
            lc.file,
            lc.line_of(*where, "args", *err.absolute_path),
            path,
            f"the reference plan does not fit {tool}'s input schema: {err.message}",
        )
    ]


def _expectation_problems(lc: LoadedCase, known: set[str] | None) -> list[Problem]:
    out = []
    calls = lc.case.expect.calls
    groups: list[tuple[str, list[Any]]] = [("expected", calls.expected), ("forbidden", calls.forbidden)]
    for group, items in groups:
        for i, item in enumerate(items):
            where = ("expect", "calls", group, i)
            if known is not None and item.tool not in known:
                out.append(
                    Problem(
                        lc.file,
                        lc.line_of(*where, "tool"),
                        f"expect.calls.{group}[{i}].tool",
                        f"unknown tool {item.tool!r}",
                    )
                )
            for op in unknown_operators(item.args) + unknown_operators(getattr(item, "result", None)):
                out.append(Problem(lc.file, lc.line_of(*where), f"expect.calls.{group}[{i}]", f"unknown matcher {op}"))
    state = lc.case.expect.state
    if state:
        for op in unknown_operators(state.after):
            out.append(
                Problem(lc.file, lc.line_of("expect", "state", "after"), "expect.state.after", f"unknown matcher {op}")
            )
    for i, ui in enumerate(lc.case.expect.ui):
        for field in ("value", "text"):
            for op in unknown_operators(getattr(ui, field)):
                out.append(
                    Problem(
                        lc.file,
                        lc.line_of("expect", "ui", i, field),
                        f"expect.ui[{i}].{field}",
                        f"unknown matcher {op}",
                    )
                )
    return out + _ref_problems(lc)


def _ref_problems(lc: LoadedCase) -> list[Problem]:
    """Every $ref in an expectation names a value an earlier expected call captures."""
    calls = lc.case.expect.calls
    out: list[Problem] = []
    captured: set[str] = set()
    for i, exp in enumerate(calls.expected):
        for name in refs_in(exp.args) + refs_in(exp.result):
            if name not in captured | set(exp.capture):
                out.append(
                    Problem(
                        lc.file,
                        lc.line_of("expect", "calls", "expected", i),
                        f"expect.calls.expected[{i}]",
                        f"$ref {name!r} is never captured by an earlier expected call",
                    )
                )
        captured |= set(exp.capture)
    places: list[tuple[tuple, str, Any]] = [
        (("expect", "calls", "forbidden", i, "args"), f"expect.calls.forbidden[{i}].args", rule.args)
        for i, rule in enumerate(calls.forbidden)
    ]
    if lc.case.expect.state:
        places.append((("expect", "state", "after"), "expect.state.after", lc.case.expect.state.after))
    for where, field, tree in places:
        for name in refs_in(tree):
            if name not in captured:
                out.append(
                    Problem(lc.file, lc.line_of(*where), field, f"$ref {name!r} is never captured by an expected call")
                )
    return out


def plan_satisfies_expectations(lc: LoadedCase) -> list[Problem]:
    """The reference plan, read statically, makes every expected call (in order, in its step)."""
    planned = [(si, p.call) for si, s in enumerate(lc.case.steps) if isinstance(s, UserStep) for p in s.plan]
    out = []
    cursor = 0
    for i, exp in enumerate(lc.case.expect.calls.expected):
        hits = [
            j
            for j, (si, call) in enumerate(planned)
            if j >= cursor and call == exp.tool and (exp.step is None or si == exp.step)
        ]
        if hits:
            cursor = hits[0] + 1
            continue
        out.append(
            Problem(
                lc.file,
                lc.line_of("expect", "calls", "expected", i),
                f"expect.calls.expected[{i}]",
                f"the reference plan never calls {exp.tool} here, so it cannot pass its own case",
            )
        )
    for i, rule in enumerate(lc.case.expect.calls.forbidden):
        if not rule.args and any(call == rule.tool and rule.step in (None, si) for si, call in planned):
            out.append(
                Problem(
                    lc.file,
                    lc.line_of("expect", "calls", "forbidden", i),
                    f"expect.calls.forbidden[{i}]",
                    f"the reference plan calls {rule.tool}, which the case forbids",
                )
            )
    return out
