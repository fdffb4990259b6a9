"""A value that satisfies a matcher: what the reference plan of an imported eval sends for each matched argument
(``$pattern``, ``$contains``, ``$gt`` ... ``$type``, ``$any``)."""

from __future__ import annotations

import re
from typing import Any

from webmcp_eval.matchers import MISSING, is_operator, match

_TYPE_EXAMPLES = {"string": "x", "number": 1, "integer": 1, "boolean": True, "array": [], "object": {}, "null": None}


def example(matcher: object) -> Any:
    """A value ``matcher`` accepts, or MISSING when none is known (checked with the matcher itself)."""
    if isinstance(matcher, list):
        items = [example(m) for m in matcher]
        value: Any = MISSING if any(v is MISSING for v in items) else items
    elif isinstance(matcher, dict) and not is_operator(matcher):
        parts = {k: example(v) for k, v in matcher.items()}
        value = MISSING if any(v is MISSING for v in parts.values()) else parts
    elif isinstance(matcher, dict):
        value = _operator_example(matcher)
    else:
        value = matcher
    if value is MISSING:
        return MISSING
    try:
        return value if match(matcher, value)[0] else MISSING
    except ValueError:  # an operator that cannot be read: validate names it
        return MISSING


def _typed_only(matcher: object) -> bool:
    """A matcher that says only a type, or only that a value is there (``$any``): the value played for it is a
    stand-in."""
    if isinstance(matcher, dict):
        return set(matcher) in ({"$type"}, {"$any"}) or any(_typed_only(v) for v in matcher.values())
    return isinstance(matcher, list) and any(_typed_only(v) for v in matcher)


def _operator_example(ops: dict[str, Any]) -> Any:
    bounds = {k: v for k, v in ops.items() if k in ("$gt", "$gte", "$lt", "$lte") and isinstance(v, int | float)}
    if bounds:
        return _number_between(bounds, ops.get("$type") == "integer")
    if "$contains" in ops:
        return str(ops["$contains"])
    if "$pattern" in ops and isinstance(ops["$pattern"], str):
        return _pattern_example(ops["$pattern"])
    if "$in" in ops and isinstance(ops["$in"], list) and ops["$in"]:
        return ops["$in"][0]
    if isinstance(ops.get("$type"), str):  # any other $type is a problem validate names
        return _TYPE_EXAMPLES.get(ops["$type"], MISSING)
    if ops == {"$any": True}:  # any value that is there: a stand-in, as for a $type
        return _TYPE_EXAMPLES["string"]
    return MISSING  # $ref, $absent, $not, ...: the value cannot be known from the rule


def _number_between(bounds: dict[str, float], whole: bool) -> float:
    low = max([bounds.get("$gte", float("-inf")), bounds.get("$gt", float("-inf"))])
    high = min([bounds.get("$lte", float("inf")), bounds.get("$lt", float("inf"))])
    if "$gte" in bounds and bounds["$gte"] >= bounds.get("$gt", float("-inf")):
        candidate = bounds["$gte"]
    elif low != float("-inf"):
        candidate = low + 1
    elif "$lte" in bounds:
        candidate = bounds["$lte"]
    else:
        candidate = high - 1
    if candidate >= high and low != float("-inf"):
        candidate = (low + high) / 2
    return int(candidate) if whole or float(candidate).is_integer() else candidate


def _pattern_example(pattern: str) -> str:
    """Text a simple pattern matches: ``^Bob.*Smith$`` -> ``Bob Smith``, ``^(a|b)$`` -> ``a`` (the caller checks)."""
    text = re.sub(r"^\(\?[a-z]+\)", "", pattern).removeprefix("^").removesuffix("$")
    choice = re.fullmatch(r"\(([^()]*)\)", text)
    if choice and "|" in choice.group(1):
        options = [_plain(o) for o in re.split(r"(?<!\\)\|", choice.group(1))]
        try:
            return next((o for o in options if re.search(pattern, o)), options[0])
        except re.error:  # not a pattern at all: validate names it; the plan plays the first option
            return options[0]
    return _plain(text)


def _plain(text: str) -> str:
    for wild, plain in ((".*", " "), (".+", " x "), (r"\d+", "1"), (r"\d", "1"), (r"\s+", " "), (r"\s*", " ")):
        text = text.replace(wild, plain)
    text = re.sub(r"\\(.)", r"\1", text)
    return re.sub(r" {2,}", " ", text).strip() or "x"
