"""Value matchers and paths, shared by the checks and the reference agent.

A matcher is written in a case file where a value is expected:

- a scalar: equal to it;
- a list: equal element by element;
- a mapping without operators: a *partial* match, each listed key must match;
- an operator mapping: ``{$contains: x}`` (substring, or list element),
  ``{$pattern: regex}`` (re.search on a string), ``{$any: true}`` (present,
  any value), ``{$ref: name}`` (equal to a value captured earlier),
  ``{$in: [..]}``, ``{$len: n}``, ``{$absent: true}`` (must not be there),
  ``{$not: matcher}``.

A path reads into JSON-like data: ``result.data.events[0].id``, and
``events[id=evt-1].seatsLeft`` picks the first list element whose field equals
the value.
"""

from __future__ import annotations

import json
import re
from typing import Any

OPERATORS = {"$contains", "$pattern", "$any", "$ref", "$in", "$len", "$absent", "$not"}
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


def resolve(data: Any, path: str) -> Any:
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


def short(value: Any, limit: int = 80) -> str:
    text = "(missing)" if value is MISSING else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_operator(matcher: Any) -> bool:
    return isinstance(matcher, dict) and any(str(k).startswith("$") for k in matcher)


def unknown_operators(matcher: Any) -> list[str]:
    """Every ``$name`` in a matcher tree that is not a known operator (for validate)."""
    found: list[str] = []
    if isinstance(matcher, dict):
        for key, sub in matcher.items():
            if str(key).startswith("$") and key not in OPERATORS:
                found.append(str(key))
            found.extend(unknown_operators(sub))
    elif isinstance(matcher, list):
        for sub in matcher:
            found.extend(unknown_operators(sub))
    return found


def refs_in(matcher: Any) -> list[str]:
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


def _match_operators(matcher: dict, value: Any, captures: dict[str, Any]) -> tuple[bool, str]:
    for op, arg in matcher.items():
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
