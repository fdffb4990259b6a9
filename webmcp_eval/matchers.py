"""Value matchers and paths, shared by the checks and the reference agent.

A matcher is written in a case file where a value is expected:

- a scalar: equal to it (12 equals 12.0; a boolean never equals a number);
- a list: equal element by element;
- a mapping without operators: a *partial* match, each listed key must match;
- an operator mapping (only operators, never mixed with field names):
  ``{$contains: x}`` (substring, or a list element matching x),
  ``{$pattern: regex}`` (re.search on a string), ``{$any: true}`` (present,
  any value), ``{$ref: name}`` (equal to a value captured earlier),
  ``{$in: [..]}`` (one of a list), ``{$len: n}`` (length of a list, string or
  object), ``{$absent: true}`` (must not be there), ``{$not: matcher}``,
  ``{$type: string|number|integer|boolean|object|array|null}`` (the JSON
  type), ``{$gt: n}``, ``{$gte: n}``, ``{$lt: n}``, ``{$lte: n}`` (numbers
  only). Several operators in one mapping must all hold.

An operator with an argument of the wrong shape (``$in: "x"``, a pattern that
does not compile) is a problem for ``validate`` (``matcher_problems``) and a
``ValueError`` naming the operator at check time: it never matches by accident.

A path reads into JSON-like data: ``result.data.events[0].id``, and
``events[id=evt-1].seatsLeft`` picks the first list element whose field equals
the value.

A route is matched to a catalog's route pattern (``/events/{id}``, ``/#/hotel/{id}``) by
``route_pattern``, after ``route_key`` names it as a catalog does.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any

from webmcp_eval.data_file import FieldPath

COMPARISONS = {"$gt": "greater than", "$gte": "at least", "$lt": "less than", "$lte": "at most"}
OPERATORS = {"$contains", "$pattern", "$any", "$ref", "$in", "$len", "$absent", "$not", "$type", *COMPARISONS}
JSON_TYPES = ("string", "number", "integer", "boolean", "object", "array", "null")
MISSING = object()

_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]|\[([^=\]]+)=([^\]]*)\]")


class PathError(ValueError):
    pass


def parse_path(path: str) -> list[Any]:
    """Split a path into keys (str), indexes (int) and selectors ((field, value))."""
    parts: list[Any] = []
    pos = 0
    while pos < len(path):
        if path[pos] == ".":
            pos += 1
            continue
        m = _SEGMENT.match(path, pos)
        if not m:
            raise PathError(f"cannot read path {path!r} at {path[pos:]!r}")
        key, index, field, value = m.groups()
        parts.append(key if key is not None else int(index) if index is not None else (field, value))
        pos = m.end()
    if not parts:
        raise PathError("empty path")
    return parts


def resolve(data: object, path: str) -> Any:
    """The value at ``path`` or MISSING."""
    current = data
    for part in parse_path(path):
        if isinstance(part, tuple):
            field, value = part
            if not isinstance(current, list):
                return MISSING
            current = next(
                (x for x in current if isinstance(x, dict) and field in x and str(x[field]) == value), MISSING
            )
        elif isinstance(part, int):
            if not isinstance(current, list) or part >= len(current):
                return MISSING
            current = current[part]
        else:
            if not isinstance(current, dict) or part not in current:
                return MISSING
            current = current[part]
        if current is MISSING:
            return MISSING
    return current


def short(value: object, limit: int = 80) -> str:
    text = "(missing)" if value is MISSING else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_operator(matcher: object) -> bool:
    return isinstance(matcher, dict) and any(str(k).startswith("$") for k in matcher)


def operator_problem(op: str, arg: Any) -> str | None:
    """Why ``{op: arg}`` cannot be a matcher, or None when it can."""
    if op not in OPERATORS:
        return f"unknown matcher {op}; known: {', '.join(sorted(OPERATORS))}"
    if op == "$in" and not isinstance(arg, list):
        return f"$in takes a list of values, got {_kind(arg)} {short(arg, 40)} (write [{short(arg, 40)}])"
    if op == "$pattern":
        if not isinstance(arg, str):
            return f"$pattern takes a regular expression (a string), got {_kind(arg)} {short(arg, 40)}"
        try:
            re.compile(arg)
        except re.error as err:
            return f"$pattern {arg!r} does not compile: {err}"
        except (OverflowError, RecursionError) as err:  # x{99999999999}, nesting Python's re cannot hold
            return f"$pattern {short(arg, 40)} does not compile: {err}"
    if op == "$len" and not (_is_int(arg) and arg >= 0):
        return f"$len takes a whole number of 0 or more, got {_kind(arg)} {short(arg, 40)}"
    if op == "$any" and arg is not True:
        return f"$any takes true (the value is present), got {short(arg, 40)}; for absence use $absent: true"
    if op == "$absent" and not isinstance(arg, bool):
        return f"$absent takes true or false, got {_kind(arg)} {short(arg, 40)}"
    if op == "$ref" and not (isinstance(arg, str) and arg):
        return f"$ref takes the name of a captured value, got {_kind(arg)} {short(arg, 40)}"
    if op == "$type" and arg not in JSON_TYPES:
        return f"$type takes one of {', '.join(JSON_TYPES)}, got {short(arg, 40)}"
    if op in COMPARISONS and not (_is_number(arg) and math.isfinite(arg)):
        return f"{op} takes a number, got {_kind(arg)} {short(arg, 40)}"
    return None


def matcher_problems(matcher: object, path: FieldPath = ()) -> list[tuple[FieldPath, str]]:
    """Every reason a matcher tree cannot work as written, with the path of its key (for validate)."""
    found: list[tuple[FieldPath, str]] = []
    if isinstance(matcher, dict):
        ops = [k for k in matcher if str(k).startswith("$")]
        fields = [k for k in matcher if not str(k).startswith("$")]
        if ops and fields:
            found.append((path, _mixed(ops, fields)))
        for key, sub in matcher.items():
            if not isinstance(key, str):
                found.append(((*path, key), f"field name {key!r} is not a string (quote it in YAML: '{key}')"))
            elif key.startswith("$"):
                problem = operator_problem(key, sub)
                if problem:
                    found.append(((*path, key), problem))
                    continue
                if key in ("$not", "$contains", "$in"):
                    found.extend(matcher_problems(sub, (*path, key)))
                continue
            else:
                found.extend(matcher_problems(sub, (*path, key)))
        if ops and not fields and not found:
            why = contradiction(matcher)
            if why:
                found.append((path, f"no value can satisfy it: {why}"))
    elif isinstance(matcher, list):
        for i, sub in enumerate(matcher):
            found.extend(matcher_problems(sub, (*path, i)))
    return found


# the operators that hold only for one kind of value, and that kind (as $type names it)
_NEEDS_KIND = {"$pattern": ("string",), "$gt": ("number", "integer"), "$gte": ("number", "integer")}
_NEEDS_KIND |= {"$lt": ("number", "integer"), "$lte": ("number", "integer"), "$len": ("string", "array", "object")}
_NEEDS_KIND |= {"$contains": ("string", "array")}


def _has_operator(value: object) -> bool:
    if isinstance(value, dict):
        return is_operator(value) or any(_has_operator(v) for v in value.values())
    return isinstance(value, list) and any(_has_operator(v) for v in value)


def contradiction(ops: dict[str, Any]) -> str | None:
    """Why a set of operators (all of which must hold) can match no value at all, or None.

    Known before any run, so the rule is refused rather than failing every trial: bounds that leave
    no number, a $type the other operators rule out, an $in none of whose values passes the rest,
    $absent: true beside an operator that needs a value."""
    lows = [k for k in ("$gt", "$gte") if k in ops]
    highs = [k for k in ("$lt", "$lte") if k in ops]
    for lo in lows:
        for hi in highs:
            if ops[lo] > ops[hi] or (ops[lo] == ops[hi] and (lo == "$gt" or hi == "$lt")):
                return f"{lo} {ops[lo]} and {hi} {ops[hi]} leave no number"
    kind = ops.get("$type")
    for op, kinds in _NEEDS_KIND.items():
        if op in ops and kind is not None and kind not in kinds:
            return f"{op} needs {' or '.join(kinds)}, but $type is {kind}"
    if ops.get("$absent") is True and set(ops) - {"$absent", "$not"}:
        others = ", ".join(sorted(set(ops) - {"$absent", "$not"}))
        return f"$absent: true means no value, and {others} needs one"
    if "$in" in ops and ops["$in"] and not _has_operator(ops["$in"]) and not refs_in(ops):
        rest = {k: v for k, v in ops.items() if k != "$in"}
        try:
            if rest and not any(match(rest, value)[0] for value in ops["$in"]):
                return f"none of $in's values {short(ops['$in'], 40)} passes {short(rest, 40)}"
        except ValueError:
            return None  # an operator that cannot be read: named on its own
    return None


def _mixed(ops: list[str], fields: list[str]) -> str:
    return (
        f"mixes operators ({', '.join(map(str, ops))}) with field names ({', '.join(map(str, fields))}); "
        "a mapping is either all operators or a partial match on fields"
    )


def _kind(value: object) -> str:
    kinds: dict[type, str] = {
        bool: "a boolean",
        str: "a string",
        int: "a number",
        float: "a number",
        list: "a list",
        dict: "a mapping",
        type(None): "null",
    }
    return kinds.get(type(value), type(value).__name__)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def json_type_of(value: object) -> str:
    """The JSON type name of a decoded JSON value (integers are numbers too; see ``has_type``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if _is_number(value):
        return "integer" if _is_int(value) or (isinstance(value, float) and value.is_integer()) else "number"
    names: dict[type, str] = {str: "string", list: "array", dict: "object"}
    return names.get(type(value), type(value).__name__)


def has_type(value: object, name: str) -> bool:
    actual = json_type_of(value)
    return actual == name or (name == "number" and actual == "integer")


def refs_in(matcher: object) -> list[str]:
    """Names used with ``$ref`` in a matcher tree."""
    if isinstance(matcher, dict):
        own = [str(matcher["$ref"])] if "$ref" in matcher else []
        return own + [r for v in matcher.values() for r in refs_in(v)]
    if isinstance(matcher, list):
        return [r for v in matcher for r in refs_in(v)]
    return []


def match(matcher: Any, value: Any, captures: dict[str, Any] | None = None) -> tuple[bool, str]:
    """Does ``value`` (MISSING when absent) satisfy ``matcher``? Returns (ok, why-not)."""
    captures = captures or {}
    if is_operator(matcher):
        return _match_operators(matcher, value, captures)
    if value is MISSING:
        return False, f"missing, expected {short(matcher)}"
    if isinstance(matcher, dict):
        if not isinstance(value, dict):
            return False, f"expected an object, got {short(value)}"
        for key, sub in matcher.items():
            ok, why = match(sub, value.get(key, MISSING), captures)
            if not ok:
                return False, f"{key}: {why}"
        return True, ""
    if isinstance(matcher, list):
        if not isinstance(value, list) or len(value) != len(matcher):
            return False, f"expected {short(matcher)}, got {short(value)}"
        for i, (sub, item) in enumerate(zip(matcher, value, strict=True)):
            ok, why = match(sub, item, captures)
            if not ok:
                return False, f"[{i}]: {why}"
        return True, ""
    if value == matcher and type(value) is type(matcher):
        return True, ""
    # 12 matches 12.0, but True never matches 1: booleans are not numbers here.
    numbers = isinstance(value, int | float) and isinstance(matcher, int | float)
    if numbers and not isinstance(value, bool) and not isinstance(matcher, bool) and value == matcher:
        return True, ""
    return False, f"expected {short(matcher)}, got {short(value)}"


def _match_operators(matcher: dict[str, Any], value: object, captures: dict[str, Any]) -> tuple[bool, str]:
    fields = [k for k in matcher if not str(k).startswith("$")]
    if fields:
        raise ValueError(f"matcher {short(matcher, 60)} {_mixed([k for k in matcher if k not in fields], fields)}")
    for op, arg in matcher.items():
        problem = operator_problem(op, arg)
        if problem:
            # A rule that cannot be read must never match or miss by accident.
            raise ValueError(f"matcher {op}: {problem}")
        ok, why = _one_operator(op, arg, value, captures)
        if not ok:
            return False, why
    return True, ""


def _one_operator(op: str, arg: Any, value: Any, captures: dict[str, Any]) -> tuple[bool, str]:
    if op == "$absent":
        present = value is not MISSING
        return (present != bool(arg)), (f"must be absent, got {short(value)}" if arg else "must be present")
    if op == "$not":
        ok, _ = match(arg, value, captures)
        return (not ok), f"must not match {short(arg)}, got {short(value)}"
    if value is MISSING:
        return False, f"missing, expected {op} {short(arg)}"
    if op == "$any":
        return True, ""
    if op == "$ref":
        if arg not in captures:
            return False, f"nothing was captured as {arg!r} (an earlier expectation did not match)"
        return match(captures[arg], value, captures)
    if op == "$contains":
        if isinstance(value, str):
            return (str(arg) in value), f"{short(value)} does not contain {short(arg)}"
        if isinstance(value, list):
            return any(match(arg, item, captures)[0] for item in value), f"no element matches {short(arg)}"
        return False, f"$contains needs a string or list, got {short(value)}"
    if op == "$pattern":
        if not isinstance(value, str):
            return False, f"$pattern needs a string, got {short(value)}"
        return bool(re.search(str(arg), value)), f"{short(value)} does not match /{arg}/"
    if op == "$in":
        return any(match(a, value, captures)[0] for a in arg), f"{short(value)} is not one of {short(arg)}"
    if op == "$len":
        if not isinstance(value, list | str | dict):
            return False, f"$len needs a list, string or object, got {short(value)}"
        return len(value) == arg, f"length {len(value)}, expected {arg}"
    if op == "$type":
        return has_type(value, arg), f"expected {arg}, got {json_type_of(value)} {short(value)}"
    if op in COMPARISONS:
        if not _is_number(value):
            return False, f"{op} needs a number, got {short(value)}"
        holds = {"$gt": value > arg, "$gte": value >= arg, "$lt": value < arg, "$lte": value <= arg}[op]
        return holds, f"{short(value)} is not {COMPARISONS[op]} {short(arg)}"
    raise ValueError(f"unknown matcher {op}")


def substitute(template: Any, captures: dict[str, Any]) -> Any:
    """Replace ``{$ref: name}`` in reference-plan arguments with captured values."""
    if isinstance(template, dict):
        if set(template) == {"$ref"}:
            name = template["$ref"]
            if name not in captures:
                raise KeyError(f"reference plan uses {name!r} before it was captured")
            return captures[name]
        return {k: substitute(v, captures) for k, v in template.items()}
    if isinstance(template, list):
        return [substitute(v, captures) for v in template]
    return template


# ---- routes as a catalog names them ------------------------------------------------------------------


def route_key(route: str) -> str:
    """A route as a catalog names it: ``/``, ``/cart.html``, ``/#/hotel/x`` (the query left out, the hash kept:
    a hash-routed page registers the tools of its hash route)."""
    path, _, fragment = route.partition("#")
    path = path.split("?")[0]
    path = path[2:] if path.startswith("./") else path
    key = "/" + path.strip("/") if path.strip("/") not in ("", ".") else "/"
    return f"{key}#{fragment}" if fragment else key


def route_pattern(patterns: Iterable[str], route: str) -> str | None:
    """The catalog's route for a case route: path segments and hash segments (``/#/hotel/{id}``) matched
    ({name} matches one segment); a hash the catalog has no route for (an anchor such as ``#reviews``)
    falls back to the route of its path."""
    path, _, fragment = route_key(route).partition("#")
    for with_hash in (True, False) if fragment else (False,):
        for pattern in patterns:
            pat_path, has_hash, pat_fragment = pattern.partition("#")
            if bool(has_hash) != with_hash or not _segments_match(pat_path, path):
                continue
            if not with_hash or _segments_match(pat_fragment, fragment):
                return pattern
    return None


def _segments_match(pattern: str, path: str) -> bool:
    pat, parts = pattern.strip("/").split("/"), path.strip("/").split("/")
    return len(pat) == len(parts) and all(p.startswith("{") or p == r for p, r in zip(pat, parts, strict=True))
