"""Plan values that are made up: a value for an argument whose expectation says only its type.

An imported eval that expects ``date: {$type: string}`` gives the reference plan
no real value, so the importer plays a stand-in (``"x"``) and marks it
``synthesized`` in the plan. When the trial runs, the reference agent asks the
tool's input schema, as the page registered it, for a better one: an
``examples`` or ``enum`` value, the ``default``, one of the ``format`` (date,
time, date-time, email, uri), or the ``minimum`` — the first the schema and the
case's own matcher both accept. A call the site still refuses with a made-up
value is the plan's gap, not the agent's or the site's: the trial is
``not_run`` with that reason, never ``failed``.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from webmcp_eval.matchers import MISSING, match
from webmcp_eval.suite.tool_schema import validate as validate_json
from webmcp_eval.trace import NotRunKind, Trace

FORMATS = {
    "date": "2027-01-15",
    "time": "19:30:00",
    "date-time": "2027-01-15T19:30:00Z",
    "email": "guest@example.com",
    "uri": "https://example.com/",
}


def from_schema(matcher: object, schema: object) -> tuple[Any, str]:
    """A value both ``schema`` (an argument's input schema) and ``matcher`` accept, and where it came from.

    (MISSING, "") when the schema offers none.
    """
    if not isinstance(schema, dict):
        return MISSING, ""
    for value, source in _candidates(schema):
        if _fits(value, schema) and _accepts(matcher, value):
            return value, source
    return MISSING, ""


def _candidates(schema: dict[str, Any]) -> list[tuple[Any, str]]:
    out: list[tuple[Any, str]] = []
    if isinstance(schema.get("examples"), list):
        out += [(v, "the schema's examples") for v in schema["examples"]]
    if isinstance(schema.get("enum"), list):
        out += [(v, "the schema's enum") for v in schema["enum"]]
    if "default" in schema:
        out.append((schema["default"], "the schema's default"))
    if schema.get("format") in FORMATS:
        out.append((FORMATS[schema["format"]], f"the schema's format {schema['format']}"))
    for bound in ("minimum", "exclusiveMinimum"):
        low = schema.get(bound)
        if isinstance(low, int | float) and not isinstance(low, bool):
            out.append((low if bound == "minimum" else low + 1, f"the schema's {bound}"))
    return out


def _fits(value: object, schema: dict[str, Any]) -> bool:
    try:
        validate_json(value, schema, formats=True)
    except (jsonschema.ValidationError, jsonschema.SchemaError):
        return False
    return True


def _accepts(matcher: object, value: object) -> bool:
    try:
        return match(matcher, value)[0]
    except ValueError:
        return False


def described(matcher: object) -> str:
    return json.dumps(matcher, ensure_ascii=False).replace('"', "")


def made_up_value_refused(trace: Trace) -> tuple[str, NotRunKind] | None:
    """(reason, not_run kind) when a call with a made-up value failed: the plan's gap, never a verdict."""
    for call in trace.calls:
        if call.synthesized and call.error:
            name, how = next(iter(call.synthesized.items()))
            return (
                f"the value for {name} was {how}: give the plan a real one "
                f"(call #{call.index} {call.tool}: {call.error})",
                "case",
            )
    return None
