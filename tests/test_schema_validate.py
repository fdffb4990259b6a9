"""One validation of a value against a tool schema (webmcp_eval/suite/tool_schema.py ``validate``): the same
answer as ``jsonschema.validate``, with each schema checked against its meta-schema and built once."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from webmcp_eval.suite import tool_schema
from webmcp_eval.suite.tool_schema import validate

SCHEMA = {
    "type": "object",
    "properties": {"city": {"enum": ["台北", "台中"]}, "when": {"type": "string", "format": "date"}},
    "required": ["city"],
    "additionalProperties": False,
}


def _said(check: Any, value: Any, schema: Any, **kw: Any) -> tuple[str, str] | None:
    try:
        check(value, schema, **kw)
    except (jsonschema.ValidationError, jsonschema.SchemaError) as err:
        return type(err).__name__, err.message
    return None


@pytest.mark.parametrize(
    "value",
    [{"city": "台北"}, {"city": "高雄"}, {}, {"city": "台北", "x": 1}, [], {"city": "台北", "when": "tomorrow"}],
)
def test_each_value_gets_the_answer_jsonschema_gives(value: Any) -> None:
    assert _said(validate, value, SCHEMA) == _said(jsonschema.validate, value, SCHEMA)
    formats = jsonschema.FormatChecker()
    theirs = _said(jsonschema.validate, value, SCHEMA, format_checker=formats)
    assert _said(validate, value, SCHEMA, formats=True) == theirs


def test_a_schema_is_checked_and_built_once_and_a_broken_one_every_time() -> None:
    tool_schema._validator.cache_clear()
    for _ in range(5):
        validate({"city": "台北"}, SCHEMA)
    assert tool_schema._validator.cache_info().misses == 1
    broken = {"type": "thing"}
    for _ in range(2):
        assert _said(validate, 1, broken) == _said(jsonschema.validate, 1, broken)
        assert _said(validate, 1, broken)[0] == "SchemaError"  # type: ignore[index]


def test_a_schema_json_cannot_say_is_validated_as_it_is() -> None:
    keyed = {"type": "object", "properties": {1: {"type": "string"}}}  # a key that is no string: not JSON's
    assert tool_schema._key(keyed) is None
    assert _said(validate, {"1": 2}, keyed) == _said(jsonschema.validate, {"1": 2}, keyed)


def test_a_tool_schema_is_checked_once_per_text_and_a_broken_one_says_the_same_each_time() -> None:
    from webmcp_eval.suite.tool_schema import ToolSchemaError, check_tool_schema

    tool_schema._checked.cache_clear()
    for _ in range(3):
        assert check_tool_schema(SCHEMA) == SCHEMA
    assert tool_schema._checked.cache_info().misses == 1 and tool_schema._checked.cache_info().hits == 2
    for broken, said in [
        ({"type": "object", "properties": {"a": {"type": "strin"}}}, "properties.a.type: not valid JSON Schema"),
        ({"properties": {"a": {"$ref": "#/$defs/none"}}}, "properties.a.$ref: '#/$defs/none' does not resolve"),
    ]:
        for _ in range(2):
            with pytest.raises(ToolSchemaError, match=said.replace("$", r"\$").replace(".", r"\.")):
                check_tool_schema(broken)
    assert check_tool_schema({"type": "object", "properties": {1: {}}}) == {"type": "object", "properties": {1: {}}}
