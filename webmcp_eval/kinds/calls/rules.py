"""The rules of ``expect.calls`` against the suite (``validate``): tools the catalog has, arguments their
input schemas can take, well-formed matchers and capture paths, ``step:`` a user step, ``$ref`` s captured
earlier, and a reference plan that makes every expected call and no forbidden one (else the case cannot
pass with its own plan).
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from webmcp_eval.data_file import FieldPath
from webmcp_eval.kinds import CaseFacts, Catalog, RuleProblem
from webmcp_eval.kinds.calls.model import CallExpectations, ExpectedCall, expected_leaves, has_groups_or_optional
from webmcp_eval.kinds.calls.tree import best_assignment, order_kept
from webmcp_eval.matchers import COMPARISONS, PathError, is_operator, matcher_problems, parse_path, refs_in


def call_problems(calls: CallExpectations, facts: CaseFacts) -> list[RuleProblem]:
    """Every rule of the block, then its ``$ref`` s, then the reference plan against it."""
    return _rule_problems(calls, facts) + _ref_problems(calls) + _plan_problems(calls, facts)


def _rule_problems(calls: CallExpectations, facts: CaseFacts) -> list[RuleProblem]:
    out: list[RuleProblem] = []
    catalog, user_steps = facts.catalog, facts.user_steps
    rules: list[tuple[str, FieldPath, Any]] = [
        ("expected", where, item) for where, item in expected_leaves(calls.expected)
    ]
    rules += [("forbidden", ("expect", "calls", "forbidden", i), item) for i, item in enumerate(calls.forbidden)]
    for group, where, item in rules:
        if catalog is not None and item.tool not in catalog.tools():
            out.append(((*where, "tool"), f"unknown tool {item.tool!r}"))
        elif catalog is not None:
            out += _argument_problems(where, item.tool, item.args, catalog)
        out += _matchers((*where, "args"), item.args)
        if group == "expected":
            out += _matchers((*where, "result"), item.result)
            out += capture_problems(where, item.capture)
        if item.step is not None and item.step not in user_steps:
            out.append(((*where, "step"), _step_message(facts, item.step)))
        if group == "expected" and item.optional and calls.order != "exact":
            out.append(
                (
                    (*where, "optional"),
                    f"an optional call can never fail under order: {calls.order} (other calls are allowed "
                    "anyway); it only means something under order: exact",
                )
            )
    return out


def capture_problems(where: FieldPath, capture: dict[str, str]) -> list[RuleProblem]:
    """Capture paths (of an expected call, or of a planned one) start at args or result."""
    out: list[RuleProblem] = []
    for name, path in capture.items():
        try:
            first = parse_path(path)[0]
        except PathError as err:
            out.append(((*where, "capture", name), str(err)))
            continue
        if first not in ("args", "result"):
            out.append(((*where, "capture", name), f"a capture path starts at args or result, not {first!r}: {path}"))
    return out


def _step_message(facts: CaseFacts, step: int) -> str:
    listing = ", ".join(map(str, facts.user_steps))
    if 0 <= step < len(facts.steps):
        action = getattr(facts.steps[step], "action", "action")
        return f"step {step} is a {action} action, where the agent makes no calls; the user steps are {listing}"
    return f"the case has no step {step}; its user steps (0-based) are {listing}"


def _matchers(where: FieldPath, matcher: object) -> list[RuleProblem]:
    return [((*where, *path), message) for path, message in matcher_problems(matcher)]


def _argument_problems(where: FieldPath, tool: str, args: dict[str, Any], catalog: Catalog) -> list[RuleProblem]:
    """Argument names the tool takes, and matchers its schema can satisfy: else the rule never fires."""
    out: list[RuleProblem] = []
    names = catalog.argument_names(tool)
    for name, matcher in args.items():
        loc = (*where, "args", name)
        if names is not None and name not in names:
            known = ", ".join(sorted(names)) if names else "none"
            out.append((loc, f"{tool} has no argument {name!r} (its arguments: {known}), so this never fires"))
            continue
        if matcher_problems(matcher):
            continue  # its shape is the problem (reported once, by _matchers)
        schemas = catalog.argument_schemas(tool, name)
        reasons = [_unfit(matcher, s) for s in schemas]
        if schemas and all(reasons):
            out.append((loc, f"can never match {tool}'s input schema: {reasons[0]}"))
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


def _ref_problems(calls: CallExpectations) -> list[RuleProblem]:
    """Every $ref in an expectation names a value an earlier expected call captures."""
    out: list[RuleProblem] = []
    captured: set[str] = set()
    for where, exp in expected_leaves(calls.expected):
        for name in refs_in(exp.args) + refs_in(exp.result):
            if name not in captured | set(exp.capture):
                out.append((where, f"$ref {name!r} is never captured by an earlier expected call"))
        captured |= set(exp.capture)
    for i, rule in enumerate(calls.forbidden):
        where = ("expect", "calls", "forbidden", i, "args")
        out += [(where, f"$ref {name!r} is never captured by an expected call")
                for name in refs_in(rule.args) if name not in captured]  # fmt: skip
    return out


# ---- the reference plan against the expectations -----------------------------------


def _plan_problems(calls: CallExpectations, facts: CaseFacts) -> list[RuleProblem]:
    """The reference plan, read statically, makes every expected call (by tool and step, per ``order``)."""
    planned = facts.planned
    if planned is None:
        return []  # a goal case without a plan: the reference agent does not play it (not_run, with why)
    if has_groups_or_optional(calls):
        return _plan_fits_tree(calls, planned) + _plan_forbidden(calls, planned)
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
    out: list[RuleProblem] = [
        (
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
            (
                ("expect", "calls", "order"),
                f"order: exact allows no other calls, but the reference plan also calls {extra}",
            )
        )
    return out + _plan_forbidden(calls, planned)


def _plan_forbidden(calls: CallExpectations, planned: list[tuple[int, str]]) -> list[RuleProblem]:
    out: list[RuleProblem] = []
    for i, rule in enumerate(calls.forbidden):
        if not rule.args and any(call == rule.tool and rule.step in (None, si) for si, call in planned):
            out.append(
                (("expect", "calls", "forbidden", i), f"the reference plan calls {rule.tool}, which the case forbids")
            )
    return out


def _plan_fits_tree(calls: CallExpectations, planned: list[tuple[int, str]]) -> list[RuleProblem]:
    """With groups or optional calls: the checks' own search (kinds/calls/tree.py) on the plan, by tool and step."""
    leaves = expected_leaves(calls.expected)

    def fits(expected: ExpectedCall, call: tuple[int, str], captures: dict[str, Any]) -> dict[str, Any] | None:
        step, tool = call
        return captures if tool == expected.tool and expected.step in (None, step) else None

    assignment, _ = best_assignment(calls, [e for _, e in leaves], planned, fits)
    out: list[RuleProblem] = [
        (
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
            (
                ("expect", "calls", "order"),
                "order: exact takes each group as one block of calls, but the reference plan makes another "
                "call between a group's calls",
            )
        )
    if calls.order == "exact" and extra:
        out.append(
            (
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
