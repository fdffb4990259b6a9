"""The site's tools per route (``catalog.json`` beside the cases): what ``validate`` holds a case's tools,
arguments and routes to, and each trial the live tools' annotations and input schemas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from webmcp_eval.data_file import FieldPath, FileProblem, LineMap, deepest_line, load_json_document, shown_field
from webmcp_eval.errors import InvalidInput
from webmcp_eval.matchers import route_pattern
from webmcp_eval.suite.tool_schema import ToolSchemaError, check_tool_schema


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
        return route_pattern(self.routes, route)

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


def _checked(schema: object, source: str, where: FieldPath, lines: LineMap | None) -> dict[str, Any]:
    """A tool's input schema checked (webmcp_eval/suite/tool_schema.py); CatalogError at its file:line and JSON path."""
    try:
        return check_tool_schema(schema)
    except ToolSchemaError as err:
        at = f"{source}:{deepest_line(lines, where)}" if lines else source
        raise CatalogError(f"catalog {at}: {shown_field(where)}: {err}") from None
