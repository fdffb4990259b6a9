"""Inputs for smoke calls, from a tool's input schema.

Valid inputs are drawn by hypothesis-jsonschema (deterministically, no
example database): the required parameters only, every parameter, each
boundary of a bounded parameter and each enum value. Invalid inputs are one
change each away from a valid one (a required parameter left out, a value of
the wrong type, a value out of range, an extra key where the schema forbids
them), and every one is checked with jsonschema: an input that the schema
would in fact accept is never sent as "invalid".
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass
from typing import Any

import jsonschema

from webmcp_eval.suite.tool_schema import properties_of


@dataclass
class SmokeInput:
    label: str  # "required only", "all fields", "limit = 10 (maximum)", "missing required q", ...
    args: dict[str, Any]
    valid: bool


def _draw(schema: dict[str, Any]) -> dict[str, Any] | None:
    """One value of schema, the same on every run; None when the library finds none."""
    # Imported here: hypothesis takes seconds to import and to build its character tables, which a page whose
    # tools take no parameters never needs (smoke_inputs does not draw for those).
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis.errors import HypothesisException
    from hypothesis_jsonschema import from_schema

    drawn: list[Any] = []

    @settings(
        max_examples=1,
        derandomize=True,
        database=None,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(from_schema(schema))
    def collect(value: object) -> None:
        drawn.append(value)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            collect()
    except (HypothesisException, jsonschema.exceptions.SchemaError, TypeError, ValueError):
        return None
    return drawn[0] if drawn and isinstance(drawn[0], dict) else None


def _valid(schema: dict[str, Any], value: object) -> bool:
    try:
        return jsonschema.Draft202012Validator(schema).is_valid(value)
    except (jsonschema.exceptions.SchemaError, TypeError, ValueError):
        return False


_WRONG = {
    "string": 12345,
    "integer": "not a number",
    "number": "not a number",
    "boolean": "yes",
    "object": "x",
    "array": "x",
}


def smoke_inputs(schema: object) -> list[SmokeInput]:
    """Valid inputs first, then invalid ones; empty when the schema is not an object schema we can draw from."""
    if schema is None:
        schema = {"type": "object", "properties": {}}
    if not isinstance(schema, dict):
        return []
    props = properties_of(schema)
    required = [r for r in schema.get("required") or [] if r in props]
    only_required = {
        **schema,
        "properties": {k: props[k] for k in required},
        "required": required,
        "additionalProperties": False,
    }
    everything = {**schema, "required": list(props)}
    out: list[SmokeInput] = []
    # With nothing required, {} is the one value only_required allows; with no properties, {} is all the fields.
    base = {} if not required and _valid(only_required, {}) else _draw(only_required)
    full = {} if not props and _valid(everything, {}) else _draw(everything)
    if base is not None:
        out.append(SmokeInput("required only", base, True))
    if full is not None and full != base:
        out.append(SmokeInput("all fields", full, True))
    start = base if base is not None else full
    if start is None:
        return out
    for name, sub in props.items():
        if not isinstance(sub, dict):
            continue
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if isinstance(sub.get(key), int | float) and not isinstance(sub.get(key), bool):
                bound = sub[key] + (1 if key == "exclusiveMinimum" else -1 if key == "exclusiveMaximum" else 0)
                out.append(SmokeInput(f"{name} = {bound} ({key})", {**start, name: bound}, True))
        for key in ("minLength", "maxLength"):
            if isinstance(sub.get(key), int) and sub[key] <= 4096:
                out.append(
                    SmokeInput(f"{name} of {sub[key]} characters ({key})", {**start, name: "a" * sub[key]}, True)
                )
        for value in sub.get("enum") or []:
            out.append(SmokeInput(f"{name} = {value!r} (enum)", {**start, name: value}, True))
    out = [i for i in out if not i.valid or _valid(schema, i.args)]
    out += [i for i in _invalid(schema, props, required, full or start) if not _valid(schema, i.args)]
    return out


def _invalid(
    schema: dict[str, Any], props: dict[str, Any], required: list[str], full: dict[str, Any]
) -> list[SmokeInput]:
    out: list[SmokeInput] = []
    for name in required:
        args = copy.deepcopy(full)
        args.pop(name, None)
        out.append(SmokeInput(f"missing required {name}", args, False))
    for name, sub in props.items():
        if not isinstance(sub, dict):
            continue
        kind = sub.get("type")
        if isinstance(kind, str) and kind in _WRONG:
            out.append(SmokeInput(f"{name} of the wrong type", {**full, name: _WRONG[kind]}, False))
        if isinstance(sub.get("maximum"), int | float):
            out.append(SmokeInput(f"{name} above its maximum", {**full, name: sub["maximum"] + 1}, False))
        if isinstance(sub.get("minimum"), int | float):
            out.append(SmokeInput(f"{name} below its minimum", {**full, name: sub["minimum"] - 1}, False))
        if isinstance(sub.get("maxLength"), int) and sub["maxLength"] <= 4096:
            out.append(
                SmokeInput(f"{name} longer than its maxLength", {**full, name: "a" * (sub["maxLength"] + 1)}, False)
            )
        if sub.get("enum"):
            out.append(SmokeInput(f"{name} outside its enum", {**full, name: "__not_a_choice__"}, False))
    if schema.get("additionalProperties") is False:
        out.append(SmokeInput("an extra key", {**full, "unexpected_key": 1}, False))
    return out
