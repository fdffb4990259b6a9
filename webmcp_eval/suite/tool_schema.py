"""A tool's input schema as the runner takes it from a catalog or a ``schema.json``.

Checked once, where it is read, so nothing downstream (argument checks, matchers against a
property's schema, example values) meets a schema it cannot use: valid under its own JSON Schema
meta-schema (the jsonschema library's check, draft 2020-12 unless ``$schema`` says otherwise),
and every ``$ref`` resolved inside the schema itself (the runner never fetches one). A boolean
schema (``true``: anything; ``false``: nothing) is valid JSON Schema and is kept as the object
schema that means the same (``{}``, ``{"not": {}}``), so every reader can take a schema as a mapping;
only ``additionalProperties: false`` (and its like) stays as written, the form readers look for.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from typing import Any

import jsonschema
import jsonschema.exceptions
import jsonschema.protocols
import referencing
import referencing.exceptions
from referencing.jsonschema import DRAFT202012

from webmcp_eval.data_file import JSON, FieldPath

_ROOT = "urn:webmcp-eval:tool-schema"


class ToolSchemaError(ValueError):
    """Why a schema cannot be used, with the JSON path inside it: ``properties.size.type: ...``."""


def as_objects(schema: JSON) -> JSON:
    """The schema with every boolean subschema written as the object schema that means the same."""
    if isinstance(schema, bool):
        return _boolean_schema(schema)
    if isinstance(schema, list):
        return [as_objects(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    return _mapping_as_objects(schema)


def properties_of(schema: Mapping[str, Any]) -> dict[str, Any]:
    """An object schema's ``properties`` (none when it has no mapping there)."""
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def _boolean_schema(schema: bool) -> dict[str, Any]:
    return {} if schema else {"not": {}}


def _mapping_as_objects(schema: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _NAMED_SCHEMAS and isinstance(value, dict):
            out[key] = {name: as_objects(v) for name, v in value.items()}
        elif key in _DATA_KEYWORDS or (key in _OPEN_OR_CLOSED and isinstance(value, bool)):
            out[key] = value
        else:
            out[key] = as_objects(value)
    return out


# keywords whose value is data, not a schema (a true/false there stays as it is), and maps of name -> schema
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples", "required", "type", "$schema", "$id", "$ref"})
# ``additionalProperties: false`` is read as such (no argument beyond the named ones): kept as written
_OPEN_OR_CLOSED = frozenset({"additionalProperties", "unevaluatedProperties", "unevaluatedItems"})
_NAMED_SCHEMAS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def _path(parts: Iterable[str | int]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".")


def _refs(value: object, path: FieldPath = ()) -> list[tuple[FieldPath, str]]:
    """Every ``$ref`` in the schema with where it is."""
    if isinstance(value, dict):
        own = [(path, value["$ref"])] if isinstance(value.get("$ref"), str) else []
        return own + [r for k, v in value.items() for r in _refs(v, (*path, k))]
    if isinstance(value, list):
        return [r for i, v in enumerate(value) for r in _refs(v, (*path, i))]
    return []


def check_tool_schema(schema: object) -> dict[str, Any]:
    """The schema, checked and with booleans as objects; ToolSchemaError says what is wrong and where."""
    if isinstance(schema, bool):
        return _boolean_schema(schema)
    if not isinstance(schema, dict):
        raise ToolSchemaError(f"an input schema is a JSON object, not {type(schema).__name__}")
    # the answer kept per schema text: a page's tools often share one schema (3,000 of them took 8 s to check)
    key = _key(schema)
    problem = _checked(key) if key is not None and len(key) <= _CHECKED_TEXT_MAX else _problem(schema)
    if problem is not None:
        raise ToolSchemaError(problem)
    return _mapping_as_objects(schema)


# schema texts up to this long have their check's answer kept (at most _CHECKED_KEPT of them)
_CHECKED_TEXT_MAX = 64 * 1024
_CHECKED_KEPT = 1024


@functools.lru_cache(maxsize=_CHECKED_KEPT)
def _checked(text: str) -> str | None:
    return _problem(json.loads(text))


def _problem(schema: dict[str, Any]) -> str | None:
    """What is wrong with the schema and where (None: nothing)."""
    try:
        validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        validator.check_schema(schema)
    except jsonschema.SchemaError as err:
        place = _path(err.path)
        return f"{place + ': ' if place else ''}not valid JSON Schema: {err.message}"
    except RecursionError:
        return "nested too deeply to check"
    resource = referencing.Resource.from_contents(schema, default_specification=DRAFT202012)
    resolver = referencing.Registry().with_resource(_ROOT, resource).resolver(base_uri=_ROOT)
    for where, ref in _refs(schema):
        try:
            resolver.lookup(ref)
        except referencing.exceptions.Unresolvable:
            at = _path((*where, "$ref"))
            return f"{at}: {ref!r} does not resolve inside the schema (the runner never fetches one)"
    return None


def validate(instance: Any, schema: Any, *, formats: bool = False) -> None:
    """``jsonschema.validate``, each schema checked against its meta-schema and built once: a suite holds its
    planned calls and matchers to the same few tool schemas again and again. Raises what it raises
    (ValidationError, the best match; SchemaError)."""
    key = _key(schema)
    if key is None:  # not plain JSON (a key that is no string): checked and built each time
        jsonschema.validate(instance, schema, format_checker=jsonschema.FormatChecker() if formats else None)
        return
    error = jsonschema.exceptions.best_match(_validator(key, formats).iter_errors(instance))
    if error is not None:
        raise error


def _key(schema: Any) -> str | None:
    """The schema's JSON text when it says all the schema says (else None)."""
    try:
        text = json.dumps(schema, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None
    return text if json.loads(text) == schema else None


@functools.lru_cache(maxsize=512)
def _validator(text: str, formats: bool) -> jsonschema.protocols.Validator:
    schema = json.loads(text)
    kind = jsonschema.validators.validator_for(schema)
    kind.check_schema(schema)  # a SchemaError is raised, never kept: the next call checks again
    return kind(schema, format_checker=jsonschema.FormatChecker() if formats else None)
