"""The public webmcp-evals tool's files, both ways: its ``schema.json`` (the tool list) as a suite's catalog, and a
suite written back as ``evals.json`` + ``schema.json``.

``schema.json`` is ``{"tools": [{name, description, inputSchema, outputSchema?}]}`` (a bare list is taken too).
Its tools become ``catalog.json`` under the start route ``/`` (the public tool opens one URL), and the file is
kept beside it, so their descriptions travel on to ``export`` and to the audit's rules in ``validate``.

``export`` writes one eval per case: the history and the user message as messages, the expected calls (groups,
``optional``) as ``expectedCall``, ``max_calls: 0`` as ``null``. A case the public format cannot say (several
steps, scripted actions, an operator it lacks) is left out and named, never written weaker.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from runner.data_file import FileProblem, load_json_document
from runner.suite.case import Case, ExpectedCall, HistoryCall, HistoryModel, HistoryUser, OrderedGroup, UserStep
from runner.suite.tool_schema import ToolSchemaError, check_tool_schema

SCHEMA_FILE = "schema.json"
THEIR_OPERATORS = {"$pattern", "$contains", "$gt", "$gte", "$lt", "$lte", "$type", "$any"}


class PeerFileError(ValueError):
    """A schema.json that cannot be used; one line naming the file and the JSON path."""


def read_schema_tools(path: Path) -> list[dict[str, Any]]:
    """The tools of a schema.json: each {name, description, inputSchema}, the schema checked (tool_schema.py)."""
    try:
        document = load_json_document(path)
    except FileProblem as err:
        raise PeerFileError(err.at(path)) from None
    data = document.data
    tools = data.get("tools") if isinstance(data, dict) else data
    if not isinstance(tools, list):
        raise PeerFileError(f'{path}: expected {{"tools": [...]}}, the webmcp-evals tool list')
    seen: set[str] = set()
    prefix = ("tools",) if isinstance(data, dict) else ()
    for i, tool in enumerate(tools):
        where = f"{path}:{document.line_of((*prefix, i))}: tools[{i}]"
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str) or not tool["name"]:
            raise PeerFileError(f"{where}.name: every tool needs a name")
        if tool["name"] in seen:
            raise PeerFileError(f"{where}.name: {tool['name']} is listed twice")
        seen.add(tool["name"])
        if tool.get("inputSchema") is None:
            continue
        try:
            tool["inputSchema"] = check_tool_schema(tool["inputSchema"])
        except ToolSchemaError as err:
            raise PeerFileError(f"{where}.inputSchema: {err}") from None
    return tools


def catalog_from_tools(tools: list[dict[str, Any]], route: str = "/") -> dict[str, Any]:
    """Our catalog.json ({routes: {route: {tool: input schema}}}) from the tool list."""
    return {"routes": {route: {t["name"]: t.get("inputSchema") or {"type": "object"} for t in tools}}}


def tools_from_catalog(catalog: dict[str, Any], described: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The tool list of a catalog (every route's tools, once each), descriptions from an earlier schema.json."""
    descriptions = {t["name"]: t.get("description") or "" for t in described or []}
    out: dict[str, dict[str, Any]] = {}
    for tools in (catalog.get("routes") or {}).values():
        for name, schema in (tools or {}).items():
            out.setdefault(name, {"name": name, "description": descriptions.get(name, ""), "inputSchema": schema})
    return [out[n] for n in sorted(out)]


# ---- export: a suite as evals.json ----------------------------------------------------------------


class NotExportable(ValueError):
    """Why one case cannot be said in the public format."""


def _matchers(value: Any, where: str) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key.startswith("$") and key not in THEIR_OPERATORS:
                raise NotExportable(f"{where}: the public format has no {key}")
            _matchers(item, where)
    elif isinstance(value, list):
        for item in value:
            _matchers(item, where)


def _expected(node: Any) -> dict[str, Any]:
    if isinstance(node, ExpectedCall):
        if node.step not in (None, 0) or node.capture or node.no_other_args:
            raise NotExportable(f"{node.tool}: step, capture and no_other_args have no public equivalent")
        _matchers(node.args, node.tool)
        out: dict[str, Any] = {"functionName": node.tool, "arguments": node.args}
        if "result" in node.model_fields_set:
            out["result"] = None if node.result == {"$type": "null"} else node.result
            _matchers(out["result"], node.tool)
        if node.optional:
            out["optional"] = True
        return out
    key = "ordered" if isinstance(node, OrderedGroup) else "unordered"
    return {key: [_expected(n) for n in getattr(node, key)]}


def _messages(step: UserStep) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for turn in step.history:
        if isinstance(turn, HistoryUser):
            out.append({"role": "user", "type": "message", "content": turn.user})
        elif isinstance(turn, HistoryModel):
            out.append({"role": "model", "type": "message", "content": turn.model})
        elif isinstance(turn, HistoryCall):
            if "args" in turn.model_fields_set or "result" not in turn.model_fields_set:
                out.append({"role": "model", "type": "functioncall", "name": turn.call, "arguments": turn.args})
            if "result" in turn.model_fields_set:
                out.append({"role": "user", "type": "functionresponse", "name": turn.call, "response": turn.result})
    if step.user:
        out.append({"role": "user", "type": "message", "content": step.user})
    return out


def case_as_eval(case: Case) -> dict[str, Any]:
    """One case as one eval; NotExportable says why it cannot be."""
    if len(case.steps) != 1 or not isinstance(case.steps[0], UserStep):
        raise NotExportable("one user message (with its history) per eval; this case has scripted steps")
    calls = case.expect.calls
    if calls.forbidden or (calls.order != "exact" and calls.expected):
        raise NotExportable(
            f"the public tool checks an exact list of calls: forbidden calls and order {calls.order} cannot be said"
        )
    messages = _messages(case.steps[0])
    if not messages:
        raise NotExportable("no message to send")
    expected = [_expected(n) for n in calls.expected]
    if not expected and calls.max_calls != 0:
        raise NotExportable("no expected call and no max_calls: 0: the public format has no 'any calls'")
    return {"name": case.title, "messages": messages, "expectedCall": expected or None}


def export_suite(
    cases: list[Case], catalog: dict[str, Any] | None, described: list[dict[str, Any]] | None, out: Path
) -> tuple[int, list[str]]:
    """Write out/evals.json and out/schema.json; (evals written, one line per case left out)."""
    evals, skipped = [], []
    for case in cases:
        try:
            evals.append(case_as_eval(case))
        except NotExportable as why:
            skipped.append(f"{case.id}: {why}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "evals.json").write_text(json.dumps(evals, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tools = tools_from_catalog(catalog or {}, described)
    (out / SCHEMA_FILE).write_text(json.dumps({"tools": tools}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return len(evals), skipped


def place_catalog(schema: Path, out: Path) -> str:
    """schema.json's tools as out/catalog.json, and the file itself beside it; the note import prints."""
    tools = read_schema_tools(schema)
    out.mkdir(parents=True, exist_ok=True)
    catalog = catalog_from_tools(tools)
    (out / "catalog.json").write_text(json.dumps(catalog, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / SCHEMA_FILE).write_text(json.dumps({"tools": tools}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return f"{schema}: {len(tools)} tool(s) as the suite's catalog (catalog.json, route /); validate checks every call"


def check_against_catalog(out: Path) -> list[Any]:
    """The problems of an imported folder once its catalog is there: every call must name a tool of the list."""
    from runner.suite.folder import find_suite
    from runner.suite.validate import SuiteCatalog, load_suite

    suite = find_suite([out])
    _, problems = load_suite([out], SuiteCatalog.load(out / "catalog.json"), True, suite)
    return problems
