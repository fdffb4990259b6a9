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

import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jsonschema

from webmcp_eval.data_file import FieldPath
from webmcp_eval.kinds import CaseFacts, blocks, module_kinds
from webmcp_eval.kinds.calls.rules import capture_problems
from webmcp_eval.matchers import is_operator, refs_in
from webmcp_eval.suite.case import BEHAVIOURS, HistoryCall, SetupCall, UserStep
from webmcp_eval.suite.catalog import CatalogError as CatalogError  # its callers import both from here
from webmcp_eval.suite.catalog import SuiteCatalog as SuiteCatalog
from webmcp_eval.suite.folder import Suite, find_suite, shown_path
from webmcp_eval.suite.loader import LoadedCase, Problem, field_path, line_for, load_cases
from webmcp_eval.suite.plan_contradictions import plan_problems
from webmcp_eval.suite.route_tools import route_problems
from webmcp_eval.suite.site import SiteConfig
from webmcp_eval.suite.tool_schema import validate as validate_json

MIN_CASES_PER_BEHAVIOUR = 2
COUNTED_METHODS = ("POST", "PUT", "PATCH", "DELETE")  # the proxy's default write_methods
MAX_ID_LENGTH = 100  # ids name trace, fixture and screenshot files
CATALOG_FILE = "catalog.json"
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


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
        problems += _case_problems(lc, catalog, counted)
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


def _case_problems(lc: LoadedCase, catalog: SuiteCatalog | None, counted: tuple[str, ...]) -> list[Problem]:
    case, out = lc.case, []
    out += _id_problems(lc)
    if catalog is not None and catalog.route_pattern(case.start_route) is None:
        out.append(_at(lc, ("start_route",), f"{case.start_route} is not a route of the site"))
    out += _plan_problems(lc, catalog)
    out += goal_problems(lc, catalog)
    out += route_problems(lc, catalog)
    out += _expectation_problems(lc, case_facts(lc, catalog, counted))
    return out or plan_problems([lc])  # a rule already wrong is named once, not again against the plan


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
    out += [_at(lc, at, message) for at, message in capture_problems(where, planned.capture)]
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
            validate_json(args, schema or {"type": "object"})
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


def case_facts(
    lc: LoadedCase, catalog: SuiteCatalog | None = None, counted: tuple[str, ...] = COUNTED_METHODS
) -> CaseFacts:
    """What the kinds' rules hold a case's blocks to, besides the blocks themselves."""
    case = lc.case
    steps = case.reference_steps if case.user is None or case.user.plan is not None else None
    planned = (
        None
        if steps is None
        else [(si, p.call) for si, s in enumerate(steps) if isinstance(s, UserStep) for p in s.plan]
    )
    user_steps = [si for si, s in enumerate(case.steps) if isinstance(s, UserStep)]
    return CaseFacts(case.steps, case.setup, user_steps, case.expect, planned, catalog, counted)


def _expectation_problems(lc: LoadedCase, facts: CaseFacts) -> list[Problem]:
    """Each block of expect: held to the suite by its kind's rules (webmcp_eval/kinds/), in the kinds' order;
    then, for each kind the case has no block of, its rules of what leans on that block."""
    present = blocks(lc.case.expect)
    problems = [
        where_message
        for kind, value in present
        if kind.validate is not None
        for where_message in kind.validate(value, facts)
    ]
    written = {kind.name for kind, _ in present}
    problems += [
        where_message
        for kind in module_kinds()
        if kind.name not in written and kind.validate_absent is not None
        for where_message in kind.validate_absent(facts)
    ]
    return [_at(lc, where, message) for where, message in problems]


def case_warnings(cases: list[LoadedCase]) -> list[Problem]:
    """What the kinds warn of in each case (their ``warn``: page-wide text in a case with a confirmation point
    or a dialog, ...): allowed, the case still runs, but likely not what was meant."""
    return [
        _at(lc, where, message)
        for lc in cases
        for kind, value in blocks(lc.case.expect)
        if kind.warn is not None
        for where, message in kind.warn(value, case_facts(lc))
    ]
