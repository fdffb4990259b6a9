"""The public webmcp-evals tool's files, both ways: its ``schema.json`` (the tool list) as a suite's catalog, and a
suite written back as ``evals.json`` + ``schema.json``.

``schema.json`` is ``{"tools": [{name, description, inputSchema}]}`` (a bare list is taken too).
Its tools become ``catalog.json`` under the start route ``/`` (the public tool opens one URL), and the file is
kept beside it, so their descriptions travel on to ``export`` and to the audit's rules in ``validate``.

``export`` writes one eval per case: the history and the user message as messages, the expected calls (groups,
``optional``) as ``expectedCall``, ``max_calls: 0`` as ``null``, and the catalog's tools as ``schema.json``.
It never writes a weaker suite without saying so: a case the public format cannot say at all (scripted
steps, a goal), or whose eval would drop an expectation (the answer, network, UI, state, confirmation,
untrusted text, forbidden calls, a start route other than ``/``, setup, an operator the format lacks...), is
refused with what would be lost, unless ``--lossy`` asks for the weaker file and the list of what it dropped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from webmcp_eval.data_file import FileProblem, load_json_document
from webmcp_eval.errors import InvalidInput
from webmcp_eval.suite.case import (
    Case,
    Expectations,
    ExpectedCall,
    HistoryCall,
    HistoryModel,
    HistoryUser,
    OrderedGroup,
    UserStep,
    expected_leaves,
)
from webmcp_eval.suite.tool_schema import ToolSchemaError, check_tool_schema

SCHEMA_FILE = "schema.json"
START_ROUTE = "/"  # the public tool opens one URL: the base URL itself
THEIR_OPERATORS = {"$pattern", "$contains", "$gt", "$gte", "$lt", "$lte", "$type", "$any"}


class PeerFileError(InvalidInput, ValueError):
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
    checked: list[dict[str, Any]] = []  # every tool, each a mapping with a name
    prefix = ("tools",) if isinstance(data, dict) else ()
    for i, tool in enumerate(tools):
        where = f"{path}:{document.line_of((*prefix, i))}: tools[{i}]"
        name = tool.get("name") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or not isinstance(name, str) or not name:
            raise PeerFileError(f"{where}.name: every tool needs a name")
        if name in seen:
            raise PeerFileError(f"{where}.name: {name} is listed twice")
        seen.add(name)
        checked.append(tool)
        if tool.get("inputSchema") is None:
            continue
        try:
            tool["inputSchema"] = check_tool_schema(tool["inputSchema"])
        except ToolSchemaError as err:
            raise PeerFileError(f"{where}.inputSchema: {err}") from None
    return checked


def catalog_from_tools(tools: list[dict[str, Any]], route: str = "/") -> dict[str, Any]:
    """Our catalog.json ({routes: {route: {tool: input schema}}}) from the tool list."""
    return {"routes": {route: {t["name"]: t.get("inputSchema") or {"type": "object"} for t in tools}}}


def tools_from_catalog(
    routes: dict[str, dict[str, Any]], described: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """The tool list of a catalog's routes (every route's tools, once each), descriptions from a schema.json."""
    descriptions = {t["name"]: t.get("description") or "" for t in described or []}
    out: dict[str, dict[str, Any]] = {}
    for tools in routes.values():
        for name, schema in tools.items():
            out.setdefault(name, {"name": name, "description": descriptions.get(name, ""), "inputSchema": schema})
    return [out[n] for n in sorted(out)]


# ---- export: a suite as evals.json ----------------------------------------------------------------


class NotExportable(ValueError):
    """Why one case cannot be said in the public format at all."""


def _matchers(value: object, where: str, dropped: list[str]) -> Any:
    """The matcher tree with what the public format lacks left out, each left-out operator in ``dropped``."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key.startswith("$") and key not in THEIR_OPERATORS:
                dropped.append(f"{where}: {key}")
                continue
            kept = _matchers(item, f"{where}.{key}" if not key.startswith("$") else where, dropped)
            if kept == {} and isinstance(item, dict) and item:
                # every operator of it dropped ($absent, $not...): an empty object there would ask for an empty
                # object; the argument left out asks for nothing, which is what is left of the rule
                dropped.append(f"{where}.{key}: left out")
                continue
            out[key] = kept
        return out
    if isinstance(value, list):
        return [_matchers(item, where, dropped) for item in value]
    return value


def _expected(node: object, where: str, dropped: list[str]) -> dict[str, Any]:
    if isinstance(node, ExpectedCall):
        at = f"{where} ({node.tool})"
        for name in ("step", "capture", "no_other_args"):
            if getattr(node, name) not in (None, 0, {}, False):
                dropped.append(f"{at}.{name}")
        out: dict[str, Any] = {"functionName": node.tool, "arguments": _matchers(node.args, f"{at}.args", dropped)}
        if "result" in node.model_fields_set:
            result = None if node.result == {"$type": "null"} else node.result
            out["result"] = _matchers(result, f"{at}.result", dropped)
        if node.optional:
            out["optional"] = True
        return out
    key = "ordered" if isinstance(node, OrderedGroup) else "unordered"
    return {key: [_expected(n, f"{where}.{key}[{i}]", dropped) for i, n in enumerate(getattr(node, key))]}


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


# expectations and settings an eval cannot hold: (field path, how it reads when it is set)
BEYOND_CALLS = tuple(name for name in Expectations.model_fields if name != "calls")  # every other kind


def _beyond_calls(case: Case) -> list[str]:
    """What the case asks besides its calls that an eval would drop (the public tool sees calls only)."""
    dropped = [f"expect.{name}" for name in BEYOND_CALLS if name in case.expect.model_fields_set]
    if case.start_route.strip("/") != START_ROUTE.strip("/"):
        dropped.append(f"start_route {case.start_route} (the public tool opens the base URL)")
    dropped += [name for name in ("setup", "breaks") if getattr(case, name)]
    if case.seed != "default":
        dropped.append(f"seed {case.seed}")
    # the person's clock and language: the public tool opens every eval in its own browser's
    dropped += [f"{name} {getattr(case, name)}" for name in ("timezone_id", "locale") if getattr(case, name)]
    return dropped


def case_as_eval(case: Case) -> tuple[dict[str, Any], list[str]]:
    """One case as one eval, and what the eval drops of it; NotExportable when no eval can say it."""
    if case.user is not None or len(case.steps) != 1 or not isinstance(case.steps[0], UserStep):
        raise NotExportable("one user message (with its history) per eval; this case has scripted steps or a goal")
    messages = _messages(case.steps[0])
    if not messages:
        raise NotExportable("no message to send")
    calls, dropped = case.expect.calls, _beyond_calls(case)
    if calls.forbidden:
        dropped.append(f"expect.calls.forbidden ({', '.join(f.tool for f in calls.forbidden)})")
    if calls.order != "exact" and calls.expected:
        dropped.append(f"expect.calls.order {calls.order} (the public tool checks an exact list: stricter)")
    expected = [_expected(n, f"expect.calls.expected[{i}]", dropped) for i, n in enumerate(calls.expected)]
    leaves = len(expected_leaves(calls.expected))
    if not expected and calls.max_calls != 0:
        raise NotExportable("no expected call and no max_calls: 0: the public format has no 'any calls'")
    if calls.max_calls is not None and expected and calls.max_calls < leaves:
        dropped.append(f"expect.calls.max_calls {calls.max_calls}")
    return {"name": case.title, "messages": messages, "expectedCall": expected or None}, dropped


@dataclass
class Exported:
    """What export did or would do: the evals, the cases it leaves out (why), what each written one drops."""

    evals: list[dict[str, Any]] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    @property
    def weaker(self) -> bool:
        return bool(self.left_out or self.dropped)


def export_cases(cases: list[Case]) -> Exported:
    """Every case as an eval where one can say it; nothing written."""
    out = Exported()
    for case in cases:
        try:
            evaluation, dropped = case_as_eval(case)
        except NotExportable as why:
            out.left_out.append(f"{case.id}: {why}")
            continue
        out.evals.append(evaluation)
        out.dropped += [f"{case.id}: {what}" for what in dropped]
    return out


def write_export(exported: Exported, tools: list[dict[str, Any]] | None, out: Path) -> list[Path]:
    """out/evals.json, and out/schema.json when the suite has a catalog; the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "evals.json"]
    written[0].write_text(json.dumps(exported.evals, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if tools is not None:
        written.append(out / SCHEMA_FILE)
        written[1].write_text(json.dumps({"tools": tools}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return written


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
    from webmcp_eval.suite.folder import find_suite
    from webmcp_eval.suite.validate import SuiteCatalog, load_suite

    suite = find_suite([out])
    _, problems = load_suite([out], SuiteCatalog.load(out / "catalog.json"), True, suite)
    return problems
