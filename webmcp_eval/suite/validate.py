"""``webmcp-eval validate``: is the suite itself well formed? (``run`` checks the same, first.)

docs/design.md, "Validating a suite": duplicate IDs, a missing start route, an unknown
behaviour, tool or matcher, a behaviour with fewer than two cases, a reference
plan that does not satisfy its own case's input schemas or expectations. Beyond
that, every rule is checked against what it refers to, so that a rule that can
never fire is an error and never a silent pass: argument names and matcher
shapes against the tool's input schema, ``step:`` against the case's user
steps, operator arguments by type, capture and state paths by syntax. Every
problem is reported as file:line with the field path. Passing says nothing
about any agent.

``load_suite`` is the one code path: ``validate``, ``run`` and ``record`` all
load and check cases through it, before any browser starts.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jsonschema

from webmcp_eval.data_file import FieldPath, FileProblem, LineMap, deepest_line, load_json_document, shown_field
from webmcp_eval.errors import InvalidInput
from webmcp_eval.matchers import COMPARISONS, PathError, is_operator, matcher_problems, parse_path, refs_in
from webmcp_eval.suite.call_tree import best_assignment, order_kept
from webmcp_eval.suite.case import (
    BEHAVIOURS,
    ExpectedCall,
    HistoryCall,
    PressAction,
    SetupCall,
    UserStep,
    expected_leaves,
    has_groups_or_optional,
)
from webmcp_eval.suite.folder import Suite, find_suite, shown_path
from webmcp_eval.suite.loader import LoadedCase, Problem, field_path, line_for, load_cases
from webmcp_eval.suite.plan_contradictions import plan_problems
from webmcp_eval.suite.route_tools import route_problems
from webmcp_eval.suite.site import SiteConfig, route_key
from webmcp_eval.suite.tool_schema import ToolSchemaError, check_tool_schema

MIN_CASES_PER_BEHAVIOUR = 2
COUNTED_METHODS = ("POST", "PUT", "PATCH", "DELETE")  # the proxy's default write_methods
MAX_ID_LENGTH = 100  # ids name trace, fixture and screenshot files
CATALOG_FILE = "catalog.json"
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


class CatalogError(InvalidInput):
    """A catalog file that cannot be used; the message is one line for the user."""


class SuiteCatalog:
    """The site's tools per route pattern (``catalog.json`` beside the cases), for static checks.

    A test compares the demo's with what the live demo site registers, so it cannot drift.
    """

    def __init__(self, data: Any, source: str = "the given catalog", lines: LineMap | None = None):
        routes = data.get("routes") if isinstance(data, dict) else None
        if not isinstance(routes, dict) or not all(
            isinstance(tools, dict) and all(isinstance(s, dict | bool) for s in tools.values())
            for tools in routes.values()
        ):
            raise CatalogError(
                f'{source}: not a catalog: expected {{"routes": {{"/route": {{"tool": {{input schema}}}}}}}}'
            )
        self.routes: dict[str, dict[str, Any]] = {
            route: {tool: _checked(schema, source, ("routes", route, tool), lines) for tool, schema in tools.items()}
            for route, tools in routes.items()
        }
        self.source = source
        # {pattern: {tool: {hint: true}}}: the hints each tool is registered with (absent: not recorded)
        hints = data.get("annotations")
        if hints is not None and not (
            isinstance(hints, dict) and all(isinstance(t, dict) and all(isinstance(h, dict) for h in t.values())
                                             for t in hints.values())
        ):  # fmt: skip
            raise CatalogError(f'{source}: "annotations" must be {{"/route": {{"tool": {{"readOnlyHint": true}}}}}}')
        self.annotations: dict[str, dict[str, Any]] | None = hints
        self.enforced = _enforced(data.get("enforced"), self.routes, source)

    def schema_surface(self) -> dict[str, Any]:
        """What each trial holds the live tools' input schemas to (``tools.schemas``): the routes' schemas and
        the arguments whose constraints the server enforces."""
        return {"routes": self.routes, "enforced": self.enforced}

    @classmethod
    def load(cls, path: Path) -> SuiteCatalog:
        try:
            document = load_json_document(path)
        except FileProblem as err:
            raise CatalogError(f"catalog {err.at(path)}") from None
        return cls(document.data, str(path), document.lines)

    def route_pattern(self, route: str) -> str | None:
        """The catalog's route for a case route: path segments and hash segments (``/#/hotel/{id}``) matched
        ({name} matches one segment); a hash the catalog has no route for (an anchor such as ``#reviews``)
        falls back to the route of its path."""
        path, _, fragment = route_key(route).partition("#")
        for with_hash in (True, False) if fragment else (False,):
            for pattern in self.routes:
                pat_path, has_hash, pat_fragment = pattern.partition("#")
                if bool(has_hash) != with_hash or not _segments_match(pat_path, path):
                    continue
                if not with_hash or _segments_match(pat_fragment, fragment):
                    return pattern
        return None

    def tools(self) -> set[str]:
        return {name for tools in self.routes.values() for name in tools}

    def schemas(self, tool: str) -> list[Any]:
        return [tools[tool] for tools in self.routes.values() if tool in tools]

    def argument_names(self, tool: str) -> set[str] | None:
        """The argument names ``tool`` takes on any route, or None when a schema leaves them open."""
        names: set[str] = set()
        for schema in self.schemas(tool):
            props = schema.get("properties")
            extra = schema.get("additionalProperties", False)
            if not isinstance(props, dict) or extra not in (False, None) or "patternProperties" in schema:
                return None
            names |= set(props)
        return names

    def argument_schemas(self, tool: str, name: str) -> list[dict[str, Any]]:
        return [s["properties"][name] for s in self.schemas(tool) if name in (s.get("properties") or {})]


def _enforced(data: object, routes: dict[str, dict[str, Any]], source: str) -> dict[str, dict[str, list[str]]]:
    """``enforced``: {"/route": {"tool": ["argument", ...]}}, the arguments whose catalog constraints (type,
    enum, required) the server refuses to see broken; each must be an argument of that tool on that route."""
    shape = f'{source}: "enforced" must be {{"/route": {{"tool": ["argument", ...]}}}}'
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(
        isinstance(tools, dict)
        and all(isinstance(args, list) and all(isinstance(a, str) for a in args) for args in tools.values())
        for tools in data.values()
    ):
        raise CatalogError(shape)
    for route, tools in data.items():
        for tool, args in tools.items():
            known = set((routes.get(route, {}).get(tool) or {}).get("properties") or {})
            unknown = [a for a in args if a not in known]
            if tool not in routes.get(route, {}) or unknown:
                what = f"argument(s) {', '.join(unknown)} of " if unknown and tool in routes.get(route, {}) else ""
                raise CatalogError(f'{source}: "enforced": {what}{tool} on {route} is not in the catalog\'s routes')
    return data


def _segments_match(pattern: str, path: str) -> bool:
    pat, parts = pattern.strip("/").split("/"), path.strip("/").split("/")
    return len(pat) == len(parts) and all(p.startswith("{") or p == r for p, r in zip(pat, parts, strict=True))


def _checked(schema: object, source: str, where: FieldPath, lines: LineMap | None) -> dict[str, Any]:
    """A tool's input schema checked (webmcp_eval/suite/tool_schema.py); CatalogError at its file:line and JSON path."""
    try:
        return check_tool_schema(schema)
    except ToolSchemaError as err:
        at = f"{source}:{deepest_line(lines, where)}" if lines else source
        raise CatalogError(f"catalog {at}: {shown_field(where)}: {err}") from None


def find_catalog(paths: list[str], explicit: str | None, suite: Suite | None = None) -> tuple[SuiteCatalog | None, str]:
    """The catalog for these case paths, and a line that says which one (or that there is none).

    ``--catalog FILE`` must exist and parse (else CatalogError); then the one
    the suite's ``suite.yaml`` names (it must exist too); then the
    ``catalog.json`` in the suite's folder, never one from another suite.
    """
    if explicit:
        catalog = SuiteCatalog.load(Path(explicit))
        return catalog, f"tools checked against {explicit}"
    suite = suite if suite is not None else find_suite([Path(p) for p in paths])
    candidate, named = suite.catalog_path()
    if candidate is not None and (named or candidate.is_file()):
        shown = shown_path(candidate)
        return SuiteCatalog.load(candidate), f"tools checked against {shown}"
    looked = str(shown_path(candidate)) if candidate is not None else CATALOG_FILE
    return None, (
        f"no catalog (looked for {looked}): tool names, arguments and routes are NOT checked; "
        f"turn the checks on with --catalog FILE or a {CATALOG_FILE} beside the cases"
    )


def load_suite(
    paths: Iterable[str | Path], catalog: SuiteCatalog | None, whole_suite: bool = True, suite: Suite | None = None
) -> tuple[list[LoadedCase], list[Problem]]:
    """Load and validate cases: the cases that loaded, and every problem of every file."""
    suite = suite if suite is not None else Suite(None)
    loaded, problems = load_cases(paths, suite.config.ignore)
    rules = (suite.behaviours, suite.config.min_cases_per_behaviour)
    site = suite.config.site
    counted = tuple(site.write_methods) if isinstance(site, SiteConfig) else COUNTED_METHODS
    problems += validate_suite(loaded, catalog, whole_suite, rules, counted)
    return loaded, problems + (_empty_behaviours(loaded, suite) if whole_suite else [])


def _empty_behaviours(loaded: list[LoadedCase], suite: Suite) -> list[Problem]:
    """A behaviour suite.yaml declares and no case tests: the coverage rule holds it to its count like any other."""
    least = suite.config.min_cases_per_behaviour
    if suite.config.behaviours is None or suite.config_file is None or least == 0:
        return []
    tested = {lc.case.behaviour for lc in loaded}
    return [
        Problem(
            str(suite.config_file),
            line_for(suite.lines, ("behaviours", name)),
            f"behaviours.{name}",
            f"behaviour {name} has 0 case(s); the suite needs at least {least} per behaviour "
            "(min_cases_per_behaviour): add its cases, or drop it from behaviours",
            of_case=False,
        )
        for name in suite.config.behaviours
        if name not in tested
    ]


def split_valid(loaded: list[LoadedCase], problems: list[Problem]) -> tuple[list[LoadedCase], list[str]]:
    """The cases with no problem, and the files of the rest (for ``run --skip-invalid``).

    Every case that shares its id with another is left out: which of them was
    meant cannot be known, and results are keyed by id.
    """
    bad_files = {p.file for p in problems if p.of_case}
    counts: dict[str, int] = defaultdict(int)
    for lc in loaded:
        counts[lc.case.id] += 1
    valid = [lc for lc in loaded if lc.file not in bad_files and counts[lc.case.id] == 1]
    kept = {lc.file for lc in valid}
    skipped = sorted(bad_files | {lc.file for lc in loaded if lc.file not in kept})
    return valid, skipped


def validate_suite(
    cases: list[LoadedCase],
    catalog: SuiteCatalog | None,
    whole_suite: bool = True,
    rules: tuple[dict[str, str], int] = (BEHAVIOURS, MIN_CASES_PER_BEHAVIOUR),
    counted: tuple[str, ...] = COUNTED_METHODS,
) -> list[Problem]:
    """All problems; ``whole_suite`` adds the coverage rule (``rules``: the suite's behaviours, cases each).

    ``counted``: the request methods the proxy counts as writes (the site config's ``write_methods``).
    """
    problems: list[Problem] = []
    problems += _duplicates(cases)
    problems += _behaviours(cases, whole_suite, *rules)
    for lc in cases:
        problems += _case_problems(lc, catalog)
        problems += _mutation_rule_problems(lc, counted)
    return sorted(problems, key=lambda p: (p.file, p.line))


def _duplicates(cases: list[LoadedCase]) -> list[Problem]:
    seen: dict[str, LoadedCase] = {}
    folded: dict[str, LoadedCase] = {}
    out = []
    for lc in cases:
        first = seen.setdefault(lc.case.id, lc)
        other = folded.setdefault(lc.case.id.casefold(), lc)
        if first is lc and other is not lc:
            out.append(
                _at(
                    lc,
                    ("id",),
                    f"case id {lc.case.id} differs from {other.case.id} ({other.file}:{other.line_of('id')}) only "
                    "in case: on a case-insensitive file system their traces and fixtures overwrite each other",
                )
            )
        if first is not lc:
            out.append(
                Problem(
                    lc.file,
                    lc.line_of("id"),
                    "id",
                    f"duplicate case id {lc.case.id} (first in {first.file}:{first.line_of('id')}); "
                    "results are kept per id, so every case needs its own",
                )
            )
    return out


def _behaviours(cases: list[LoadedCase], whole_suite: bool, behaviours: dict[str, str], least: int) -> list[Problem]:
    by: dict[str, list[LoadedCase]] = defaultdict(list)
    out = []
    for lc in cases:
        if lc.case.behaviour not in behaviours:
            out.append(
                Problem(
                    lc.file,
                    lc.line_of("behaviour"),
                    "behaviour",
                    f"unknown behaviour {lc.case.behaviour!r}; one of: {', '.join(behaviours)}",
                )
            )
        else:
            by[lc.case.behaviour].append(lc)
    for behaviour, group in by.items():
        if whole_suite and len(group) < least:
            lc = group[0]
            out.append(
                Problem(
                    lc.file,
                    lc.line_of("behaviour"),
                    "behaviour",
                    f"behaviour {behaviour} has {len(group)} case(s); the suite needs at least "
                    f"{least} per behaviour (min_cases_per_behaviour)",
                    of_case=False,
                )
            )
    return out


def _at(lc: LoadedCase, loc: FieldPath, message: str) -> Problem:
    """A problem at the line of ``loc`` (or its deepest part in the file), named by ``loc``."""
    return Problem(lc.file, lc.line_of(*loc), field_path(loc), message)


def _case_problems(lc: LoadedCase, catalog: SuiteCatalog | None) -> list[Problem]:
    case, out = lc.case, []
    out += _id_problems(lc)
    if catalog is not None and catalog.route_pattern(case.start_route) is None:
        out.append(_at(lc, ("start_route",), f"{case.start_route} is not a route of the site"))
    out += _plan_problems(lc, catalog)
    out += goal_problems(lc, catalog)
    out += route_problems(lc, catalog)
    out += _expectation_problems(lc, catalog)
    out += plan_satisfies_expectations(lc)
    out += _press_problems(lc)
    return out or plan_problems([lc])  # a rule already wrong is named once, not again against the plan


def _press_problems(lc: LoadedCase) -> list[Problem]:
    """press presses the case's confirmation control unless it names its own target."""
    if lc.case.expect.confirmation is not None:
        return []
    return [
        _at(lc, (part, i), "press needs a control: give it a target, or the case an expect.confirmation")
        for part in ("setup", "steps")
        for i, step in enumerate(getattr(lc.case, part))
        if isinstance(step, PressAction) and step.target is None
    ]


def _mutation_rule_problems(lc: LoadedCase, counted: tuple[str, ...]) -> list[Problem]:
    """A write rule on a method the proxy never counts always sees 0: it can never fire."""
    out = []
    methods = {m.upper() for m in counted}
    for key in lc.case.expect.network.writes:
        method = key.split(" ", 1)[0].upper()
        if key != "total" and method != "*" and method not in methods:
            out.append(
                _at(
                    lc,
                    ("expect", "network", "writes", key),
                    f"{method} requests are never counted as writes (counted: {', '.join(sorted(methods))}), "
                    "so this rule can never fire; name a write method or '*'",
                )
            )
    return out


def _id_problems(lc: LoadedCase) -> list[Problem]:
    """The id names files (traces, fixtures, screenshots): it must be a short, plain file name."""
    case_id = lc.case.id
    if len(case_id) > MAX_ID_LENGTH:
        return [_at(lc, ("id",), f"the id is {len(case_id)} characters; at most {MAX_ID_LENGTH} (it names files)")]
    if not _SAFE_ID.fullmatch(case_id):
        return [_at(lc, ("id",), "the id names files: use letters, digits, '.', '_' and '-' only")]
    return []


def _plan_problems(lc: LoadedCase, catalog: SuiteCatalog | None) -> list[Problem]:
    out: list[Problem] = []
    known = catalog.tools() if catalog is not None else set()
    captured: set[str] = set()
    for si, step in enumerate(lc.case.steps):
        if not isinstance(step, UserStep):
            continue
        if not step.user.strip() and not (step.history and isinstance(step.history[-1], HistoryCall)):
            out.append(
                _at(
                    lc,
                    ("steps", si, "user"),
                    "an empty message only goes on from a history that ends with a tool's answer "
                    "({call, args, result}); write what the user says",
                )
            )
        for hi, turn in enumerate(step.history):
            name = getattr(turn, "call", None)
            if catalog is not None and name is not None and name not in known:
                out.append(_at(lc, ("steps", si, "history", hi, "call"), f"unknown tool {name!r} in the history"))
        for pi, planned in enumerate(step.plan):
            out += _planned_call_problems(lc, ("steps", si, "plan", pi), planned, captured, catalog, known)
    return out


def _planned_call_problems(
    lc: LoadedCase,
    where: tuple[Any, ...],
    planned: Any,
    captured: set[str],
    catalog: SuiteCatalog | None,
    known: set[str],
) -> list[Problem]:
    """One call of a reference plan (a step's or a goal's): a known tool, arguments that fit its schema,
    ``$ref``s captured earlier, made-up values that name its arguments. Adds its captures to ``captured``."""
    out: list[Problem] = []
    if catalog is not None and planned.call not in known:
        out.append(_at(lc, (*where, "call"), f"unknown tool {planned.call!r}"))
    for name in refs_in(planned.args):
        if name not in captured:
            out.append(_at(lc, (*where, "args"), f"$ref {name!r} is used before the plan captures it"))
    out += _plan_value_problems(lc, (*where, "args"), planned.args)
    if catalog is not None and planned.call in known and not refs_in(planned.args):
        out += _schema_problems(lc, where, planned.call, planned.args, catalog)
    out += _capture_problems(lc, where, planned.capture)
    out += [
        _at(lc, (*where, "synthesized", name), f"names no argument of this call ({name!r} is not in args)")
        for name in planned.synthesized
        if name not in planned.args
    ]
    captured |= set(planned.capture)
    return out


def goal_problems(lc: LoadedCase, catalog: SuiteCatalog | None) -> list[Problem]:
    """A goal case's setup calls and reference plan, checked as a plan is: known tools, fitting arguments."""
    out: list[Problem] = []
    known = catalog.tools() if catalog is not None else set()
    for i, step in enumerate(lc.case.setup):
        if not isinstance(step, SetupCall) or catalog is None:
            continue
        name = step.call
        if name not in known:
            out.append(_at(lc, ("setup", i, "call"), f"unknown tool {name!r} in setup"))
        else:
            out += _schema_problems(lc, ("setup", i), name, step.args, catalog, what="the setup call")
    goal = lc.case.user
    captured: set[str] = set()
    for pi, planned in enumerate((goal.plan or []) if goal else []):
        out += _planned_call_problems(lc, ("user", "plan", pi), planned, captured, catalog, known)
    return out


def _plan_value_problems(lc: LoadedCase, where: FieldPath, value: object) -> list[Problem]:
    """Plan arguments are values sent as written; only ``{$ref: name}`` is replaced."""
    if isinstance(value, dict):
        if is_operator(value) and set(value) != {"$ref"}:
            return [
                _at(
                    lc,
                    where,
                    f"the reference plan sends values as written; only {{$ref: name}} is replaced, "
                    f"not {', '.join(map(str, value))}",
                )
            ]
        return [p for k, v in value.items() for p in _plan_value_problems(lc, (*where, k), v)]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _plan_value_problems(lc, (*where, i), v)]
    return []


def _capture_problems(lc: LoadedCase, where: FieldPath, capture: dict[str, str]) -> list[Problem]:
    out = []
    for name, path in capture.items():
        try:
            first = parse_path(path)[0]
        except PathError as err:
            out.append(_at(lc, (*where, "capture", name), str(err)))
            continue
        if first not in ("args", "result"):
            out.append(
                _at(lc, (*where, "capture", name), f"a capture path starts at args or result, not {first!r}: {path}")
            )
    return out


def _schema_problems(
    lc: LoadedCase,
    where: FieldPath,
    tool: str,
    args: dict[str, Any],
    catalog: SuiteCatalog,
    what: str = "the reference plan",
) -> list[Problem]:
    """The planned arguments must fit the tool's schema on at least one route."""
    errors = []
    for schema in catalog.schemas(tool):
        try:
            jsonschema.validate(args, schema or {"type": "object"})
            return []
        except jsonschema.ValidationError as err:
            errors.append(err)
        except jsonschema.SchemaError as err:
            return [_at(lc, (*where, "call"), f"the catalog's input schema of {tool} is not valid: {err.message}")]
    first = errors[0]
    return [
        _at(
            lc,
            (*where, "args", *first.absolute_path),
            f"{what} does not fit {tool}'s input schema: {first.message}",
        )
    ]


# ---- expectations ----------------------------------------------------------------


def _expectation_problems(lc: LoadedCase, catalog: SuiteCatalog | None) -> list[Problem]:
    out = []
    calls = lc.case.expect.calls
    user_steps = [si for si, s in enumerate(lc.case.steps) if isinstance(s, UserStep)]
    rules: list[tuple[str, FieldPath, Any]] = [
        ("expected", where, item) for where, item in expected_leaves(calls.expected)
    ]
    rules += [("forbidden", ("expect", "calls", "forbidden", i), item) for i, item in enumerate(calls.forbidden)]
    for group, where, item in rules:
        if catalog is not None and item.tool not in catalog.tools():
            out.append(_at(lc, (*where, "tool"), f"unknown tool {item.tool!r}"))
        elif catalog is not None:
            out += _argument_problems(lc, where, item.tool, item.args, catalog)
        out += _matcher_problems(lc, (*where, "args"), item.args)
        if group == "expected":
            out += _matcher_problems(lc, (*where, "result"), item.result)
            out += _capture_problems(lc, where, item.capture)
        if item.step is not None and item.step not in user_steps:
            out.append(_at(lc, (*where, "step"), _step_message(lc, item.step, user_steps)))
        if group == "expected" and item.optional and calls.order != "exact":
            out.append(
                _at(
                    lc,
                    (*where, "optional"),
                    f"an optional call can never fail under order: {calls.order} (other calls are allowed "
                    "anyway); it only means something under order: exact",
                )
            )
    state = lc.case.expect.state
    if state:
        out += _state_problems(lc, state)
    for i, ui in enumerate(lc.case.expect.ui):
        for field in ("value", "text"):
            out += _matcher_problems(lc, ("expect", "ui", i, field), getattr(ui, field))
        for label, matcher in (ui.summary or {}).items():
            out += _matcher_problems(lc, ("expect", "ui", i, "summary", label), matcher)
    if lc.case.expect.answer:
        answer = lc.case.expect.answer
        empty = [("contains", i) for i, s in enumerate(answer.contains) if not s]
        empty += [("not_contains", i) for i, s in enumerate(answer.not_contains) if not s]
        empty += [("contains_any", i) for i, opts in enumerate(answer.contains_any) if not opts or "" in opts]
        for field, i in empty:
            out.append(_at(lc, ("expect", "answer", field, i), "an empty text (or list) says nothing about the answer"))
    return out + _ref_problems(lc)


def _step_message(lc: LoadedCase, step: int, user_steps: list[int]) -> str:
    listing = ", ".join(map(str, user_steps))
    if 0 <= step < len(lc.case.steps):
        action = getattr(lc.case.steps[step], "action", "action")
        return f"step {step} is a {action} action, where the agent makes no calls; the user steps are {listing}"
    return f"the case has no step {step}; its user steps (0-based) are {listing}"


def _matcher_problems(lc: LoadedCase, where: FieldPath, matcher: object) -> list[Problem]:
    return [_at(lc, (*where, *path), message) for path, message in matcher_problems(matcher)]


def _changed_only_problems(lc: LoadedCase, state: Any) -> list[Problem]:
    """changed_only paths are read as after paths are, in the form the state diff names a change: keys joined by
    '.', list items by id ([id=…]); a path in any other form matches no change, so the rule refuses them all."""
    out = []
    for i, path in enumerate(state.changed_only or []):
        where = ("expect", "state", "changed_only", i)
        if _PLACEHOLDER.search(path):
            out.append(_at(lc, where, f"{path!r}: changed_only paths are not filled from captures; name the place"))
            continue
        try:
            parts = parse_path(path)
        except PathError as err:
            out.append(_at(lc, where, str(err)))
            continue
        if any(isinstance(p, int) or (isinstance(p, tuple) and p[0] != "id") for p in parts):
            out.append(
                _at(
                    lc,
                    where,
                    f"{path!r}: the state diff names a list item by its id ([id=…]), never by "
                    "position or another field, so this path matches no change",
                )
            )
            continue
        shown = ".".join(p if isinstance(p, str) else f"[id={p[1]}]" for p in parts).replace(".[", "[")
        if shown != path:
            out.append(_at(lc, where, f"{path!r} matches no change as written: write it as {shown!r}"))
    return out


def _state_problems(lc: LoadedCase, state: Any) -> list[Problem]:
    out = _changed_only_problems(lc, state)
    captured = {name for _, exp in expected_leaves(lc.case.expect.calls.expected) for name in exp.capture}
    for path, matcher in state.after.items():
        where = ("expect", "state", "after", path)
        try:
            parse_path(path)
        except PathError as err:
            out.append(_at(lc, where, str(err)))
        for name in _PLACEHOLDER.findall(path):
            if name not in captured:
                out.append(_at(lc, where, f"{{{name}}} in the path is never captured by an expected call"))
        out += _matcher_problems(lc, where, matcher)
    return out


def _argument_problems(
    lc: LoadedCase, where: FieldPath, tool: str, args: dict[str, Any], catalog: SuiteCatalog
) -> list[Problem]:
    """Argument names the tool takes, and matchers its schema can satisfy: else the rule never fires."""
    out = []
    names = catalog.argument_names(tool)
    for name, matcher in args.items():
        loc = (*where, "args", name)
        if names is not None and name not in names:
            known = ", ".join(sorted(names)) if names else "none"
            out.append(_at(lc, loc, f"{tool} has no argument {name!r} (its arguments: {known}), so this never fires"))
            continue
        if matcher_problems(matcher):
            continue  # its shape is the problem (reported once, by _matcher_problems)
        schemas = catalog.argument_schemas(tool, name)
        reasons = [_unfit(matcher, s) for s in schemas]
        if schemas and all(reasons):
            out.append(_at(lc, loc, f"can never match {tool}'s input schema: {reasons[0]}"))
    return out


_NUMERIC = {"number", "integer"}


def _types(schema: dict[str, Any]) -> set[str] | None:
    kind = schema.get("type")
    if isinstance(kind, str):
        kinds = {kind}
    elif isinstance(kind, list) and all(isinstance(k, str) for k in kind):
        kinds = set(kind)
    else:
        return None
    return kinds | _NUMERIC if kinds & _NUMERIC else kinds


def _unfit(matcher: Any, schema: dict[str, Any]) -> str | None:
    """Why no value valid under ``schema`` can satisfy ``matcher`` (None: some can, or we cannot tell)."""
    kinds = _types(schema)
    if not is_operator(matcher):
        if isinstance(matcher, dict | list):
            wanted = "object" if isinstance(matcher, dict) else "array"
            return None if kinds is None or wanted in kinds else f"the argument is {'/'.join(sorted(kinds))}"
        try:
            jsonschema.validate(matcher, schema)
        except (jsonschema.ValidationError, jsonschema.SchemaError) as err:
            return err.message
        return None
    for op, arg in matcher.items():
        why = _operator_unfit(op, arg, schema, kinds)
        if why:
            return why
    return None


def _operator_unfit(op: str, arg: object, schema: dict[str, Any], kinds: set[str] | None) -> str | None:
    if op == "$in" and isinstance(arg, list):
        reasons = [_unfit(a, schema) for a in arg]
        return f"none of {json.dumps(arg, ensure_ascii=False)[:80]} fits ({reasons[0]})" if all(reasons) else None
    if kinds is None:
        return None
    if op == "$contains" and isinstance(arg, dict | list) and "array" not in kinds:
        # on text, $contains looks for a substring: a list or mapping is never one
        return (
            f"$contains with {'a list' if isinstance(arg, list) else 'a mapping'} looks for a list element, "
            f"but the argument is {'/'.join(sorted(kinds))}"
        )
    needs = _needs(op, arg)
    if needs is not None and not needs & kinds:
        return f"{op} needs {'/'.join(sorted(needs))}, but the argument is {'/'.join(sorted(kinds))}"
    return None


def _needs(op: str, arg: object) -> set[str] | None:
    """The JSON types an operator can hold on (None: any); ``arg`` may be any value (a list under $not)."""
    if op == "$type":
        return ({arg} | (_NUMERIC if arg in _NUMERIC else set())) if isinstance(arg, str) else None
    if op in COMPARISONS:
        return _NUMERIC
    return {"$pattern": {"string"}, "$len": {"string", "array", "object"}, "$contains": {"string", "array"}}.get(op)


def _ref_problems(lc: LoadedCase) -> list[Problem]:
    """Every $ref in an expectation names a value an earlier expected call captures."""
    calls = lc.case.expect.calls
    out: list[Problem] = []
    captured: set[str] = set()
    for where, exp in expected_leaves(calls.expected):
        for name in refs_in(exp.args) + refs_in(exp.result):
            if name not in captured | set(exp.capture):
                out.append(
                    _at(
                        lc,
                        where,
                        f"$ref {name!r} is never captured by an earlier expected call",
                    )
                )
        captured |= set(exp.capture)
    places: list[tuple[FieldPath, Any]] = [
        (("expect", "calls", "forbidden", i, "args"), rule.args) for i, rule in enumerate(calls.forbidden)
    ]
    if lc.case.expect.state:
        places.append((("expect", "state", "after"), lc.case.expect.state.after))
    for where, tree in places:
        for name in refs_in(tree):
            if name not in captured:
                out.append(_at(lc, where, f"$ref {name!r} is never captured by an expected call"))
    return out


# ---- the reference plan against the expectations -----------------------------------


def plan_satisfies_expectations(lc: LoadedCase) -> list[Problem]:
    """The reference plan, read statically, makes every expected call (by tool and step, per ``order``)."""
    if lc.case.user is not None and lc.case.user.plan is None:
        return []  # a goal case without a plan: the reference agent does not play it (not_run, with why)
    steps = lc.case.reference_steps
    planned = [(si, p.call) for si, s in enumerate(steps) if isinstance(s, UserStep) for p in s.plan]
    calls = lc.case.expect.calls
    if has_groups_or_optional(calls):
        return _plan_fits_tree(lc, planned) + _plan_forbidden(lc, planned)
    expected = [n for n in calls.expected if isinstance(n, ExpectedCall)]  # no groups: every node is a call
    fits = [
        [j for j, (si, call) in enumerate(planned) if call == exp.tool and exp.step in (None, si)] for exp in expected
    ]
    if calls.order == "set":
        missing = _unassigned(fits)
    else:
        missing, cursor = [], 0
        for i, options in enumerate(fits):
            later = [j for j in options if j >= cursor]
            if calls.order == "exact":
                later = [j for j in later if j == cursor]
            if later:
                cursor = later[0] + 1
            else:
                missing.append(i)
    out = [
        _at(
            lc,
            ("expect", "calls", "expected", i),
            f"the reference plan never calls {expected[i].tool} here"
            + (" (order: exact: next in the plan, nothing between)" if calls.order == "exact" else "")
            + ", so it cannot pass its own case",
        )
        for i in missing
    ]
    if calls.order == "exact" and not missing and len(planned) > len(calls.expected):
        extra = ", ".join(call for _, call in planned[len(calls.expected) :])
        out.append(
            _at(
                lc,
                ("expect", "calls", "order"),
                f"order: exact allows no other calls, but the reference plan also calls {extra}",
            )
        )
    return out + _plan_forbidden(lc, planned)


def _plan_forbidden(lc: LoadedCase, planned: list[tuple[int, str]]) -> list[Problem]:
    out = []
    for i, rule in enumerate(lc.case.expect.calls.forbidden):
        if not rule.args and any(call == rule.tool and rule.step in (None, si) for si, call in planned):
            out.append(
                _at(
                    lc,
                    ("expect", "calls", "forbidden", i),
                    f"the reference plan calls {rule.tool}, which the case forbids",
                )
            )
    return out


def _plan_fits_tree(lc: LoadedCase, planned: list[tuple[int, str]]) -> list[Problem]:
    """With groups or optional calls: the checks' own search (suite/call_tree.py) on the plan, by tool and step."""
    calls = lc.case.expect.calls
    leaves = expected_leaves(calls.expected)

    def fits(expected: ExpectedCall, call: tuple[int, str], captures: dict[str, Any]) -> dict[str, Any] | None:
        step, tool = call
        return captures if tool == expected.tool and expected.step in (None, step) else None

    assignment, _ = best_assignment(calls, [e for _, e in leaves], planned, fits)
    out = [
        _at(
            lc,
            where,
            f"the reference plan never calls {expected.tool} here, in the order the groups ask, "
            "so it cannot pass its own case",
        )
        for k, (where, expected) in enumerate(leaves)
        if k not in assignment and not expected.optional
    ]
    extra = [tool for pos, (_, tool) in enumerate(planned) if pos not in assignment.values()]
    if calls.order == "exact" and not extra and not order_kept(calls, assignment):
        out.append(
            _at(
                lc,
                ("expect", "calls", "order"),
                "order: exact takes each group as one block of calls, but the reference plan makes another "
                "call between a group's calls",
            )
        )
    if calls.order == "exact" and extra:
        out.append(
            _at(
                lc,
                ("expect", "calls", "order"),
                f"order: exact allows no other calls, but the reference plan also makes {', '.join(extra)}",
            )
        )
    return out


def _unassigned(options: list[list[int]]) -> list[int]:
    """For order: set, the expectations left without a distinct planned call in a maximum matching."""
    owner: dict[int, int] = {}

    def assign(i: int, seen: set[int]) -> bool:
        for j in options[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or assign(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return [i for i in range(len(options)) if not assign(i, set())]


def scope_warnings(cases: list[LoadedCase]) -> list[Problem]:
    """Page-wide text assertions in cases with a confirmation point or a dialog.

    Such an assertion passes whenever the text appears anywhere (a list card, a
    heading), not on the element it speaks of; scope it with ``within``. A
    warning, not an error: the case still runs.
    """
    out = []
    for lc in cases:
        e = lc.case.expect
        locators = [u.target for u in e.ui] + ([e.confirmation.control] if e.confirmation else [])
        has_dialog = any(_names_dialog(loc) for loc in locators)
        if not (e.confirmation or has_dialog):
            continue
        for i, ui in enumerate(e.ui):
            if ui.target.page_wide_text:
                out.append(
                    Problem(
                        lc.file,
                        lc.line_of("expect", "ui", i, "target"),
                        f"expect.ui[{i}].target",
                        f"page-wide text {ui.target.text!r} in a case with a confirmation point or a dialog: "
                        "it passes wherever the text appears; scope it with within: (the dialog, form or region)",
                    )
                )
    return out


def _names_dialog(loc: Any) -> bool:
    while loc is not None:
        if loc.role in ("dialog", "alertdialog"):
            return True
        loc = loc.within
    return False
