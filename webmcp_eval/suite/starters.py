"""init's starter cases: example arguments from a tool's input schema, and per tool a positive starter (it calls
the tool) or a boundary one (the user only asks about it), from what the page registered and init's live probe."""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any, Protocol

import jsonschema

from webmcp_eval.suite.tool_schema import validate as validate_json

BOUNDARY_REASON = (
    "a boundary: the user only asks what the tool does, so doing nothing is right (starters that call "
    "the tool are the ones a do-nothing agent must fail)"
)
RESERVED_IDS = {"suite", "site"}  # suite.yaml and site.yaml are never read as cases


MAX_DEPTH = 8  # example values for nested schemas stop here


class PageTool(Protocol):
    """One tool as a page registered it (webmcp_eval/play/page/surface/model.py Tool has this shape)."""

    name: str
    description: str
    input_schema: Any
    annotations: dict[str, Any]
    kind: str  # "imperative", "declarative" (a <form toolname>) or "unknown"
    schema_derived: bool  # the browser built input_schema from a form's controls


class ToolProbe(Protocol):
    """What init's live probe of one tool found (webmcp_eval/evaluation/probe.py Probe has this shape)."""

    args: dict[str, Any] | None  # the input the site accepted; None: none was
    why: str  # where the input's values came from, or why none was accepted
    result: Any  # the answer to the accepted input (None: its shape differed between two calls)
    shown: list[str]  # lines the page showed after the call (both times) and not before
    writes: int  # the network writes of the accepted call
    waits_for_person: bool  # a form left filled for a person to submit
    tried: list[str]
    adds: list[str]  # tools the accepted call registered
    removes: list[str]  # tools it withdrew
    outlived: list[str]  # tools it left registered after it moved the page to another route


@dataclass
class Starter:
    file: str
    case: dict[str, Any]
    kind: str  # "call": a positive starter, it calls its tool; "ask": a boundary, it expects no call
    todo: str = ""


# ---- example arguments from an input schema -------------------------------------------


class NoExample(Exception):
    """The schema gives no value init can be sure of."""


def example_for(schema: object, depth: int = 0) -> Any:
    """A value valid under ``schema`` (checked by the caller), or NoExample."""
    if depth > MAX_DEPTH or not isinstance(schema, dict):
        raise NoExample("nested too deep")
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return example_for(schema[key][0], depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        props = schema.get("properties") or {}
        return {name: example_for(props.get(name, {}), depth + 1) for name in schema.get("required") or []}
    if kind == "array":
        return [example_for(schema.get("items") or {}, depth + 1) for _ in range(int(schema.get("minItems") or 0))]
    if kind == "string":
        if "pattern" in schema or "format" in schema:
            raise NoExample("a string with a pattern or format")
        return "example".ljust(int(schema.get("minLength") or 0), "x")[: schema.get("maxLength") or None]
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0) + (1 if "exclusiveMinimum" in schema else 0))
        value = max(1, low) if "maximum" not in schema else min(max(1, low), schema["maximum"])
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    raise NoExample(f"type {kind!r}")


def example_arguments(schema: Any) -> dict[str, Any] | None:
    """Schema-valid example arguments for a tool, or None when init cannot make any."""
    schema = schema or {"type": "object"}
    try:
        args = example_for(schema)
        validate_json(args, schema)
    except (NoExample, jsonschema.ValidationError, jsonschema.SchemaError, TypeError, ValueError):
        return None
    return args if isinstance(args, dict) else None


# ---- starters ------------------------------------------------------------------------


def case_id_for(tool: str, taken: set[str]) -> str:
    """A file-safe id for the tool's starter, never one whose file is not a case (suite.yaml, site.yaml)."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", tool).strip("-._") or "tool"
    case_id, n = base, 2
    while case_id.lower() in taken or case_id.lower() in RESERVED_IDS:
        case_id, n = f"{base}-{n}", n + 1
    taken.add(case_id.lower())
    return case_id


def _read_only(tool: PageTool) -> bool:
    return tool.annotations.get("readOnlyHint") is True or tool.annotations.get("readOnly") is True  # either spelling


def starter_for(tool: PageTool, route: str, case_id: str) -> Starter:
    """The starter of a tool init did not call: a read-only one with schema-made arguments, else a boundary."""
    about = tool.description.strip() or "no description"
    # Without a probe, only a tool that says it is read-only is called: init cannot know what any other tool
    # writes, whether the site asks a person to confirm it, or how to undo it, and a starter runs on every run.
    args = example_arguments(tool.input_schema) if _read_only(tool) else None
    if args is not None:
        case = {
            "id": case_id,
            "behaviour": "selection",
            "title": f"{tool.name}: called with valid arguments, nothing written",
            "start_route": route,
            "steps": [
                {
                    # the site's description is the site's words, never the user's: it goes in the notes
                    "user": f"Could you use {tool.name} for me?",
                    "plan": [{"call": tool.name, "args": args}],
                    "reply": "",
                }
            ],
            "expect": {
                "calls": {"expected": [{"tool": tool.name, "args": copy.deepcopy(args), "no_other_args": True}]},
                "network": {"writes": {"total": 0}},
            },
            "notes": "TODO: write what a user of your site would ask, real arguments, and what the result must "
            "hold (expect.calls.expected[0].result), and the answer (expect.answer). Written by webmcp-eval init "
            f"from {tool.name}'s input schema (it says readOnlyHint: true, so no write is expected). "
            f"The site describes it as: {about}",
        }
        return Starter(f"{case_id}.yaml", case, "call")
    why = (
        "its input schema gives no example init can be sure of"
        if _read_only(tool)
        else "it does not say readOnlyHint: true, so it may write"
    )
    return boundary_for(tool, route, case_id, why)


def boundary_for(tool: PageTool, route: str, case_id: str, why: str) -> Starter:
    """The boundary starter: the user only asks about the tool; it must not be called, nothing written. A
    do-nothing agent passes it, which the case says (null_agent)."""
    about = tool.description.strip() or "no description"
    case = {
        "id": case_id,
        "behaviour": "no_tool",
        "title": f"{tool.name}: not used when the user only asks about it (boundary)",
        "start_route": route,
        "steps": [
            {
                "user": f"What does {tool.name} do? Only tell me, do not use it.",
                "plan": [],
                "reply": f"{tool.name}: {about}",
            }
        ],
        "expect": {
            "calls": {"forbidden": [{"tool": tool.name, "why": "the user only asked what it does"}]},
            "network": {"writes": {"total": 0}},
        },
        "null_agent": {"passes": True, "reason": BOUNDARY_REASON},
        "notes": f"A boundary: {tool.name} must not be called when the user only asks about it. "
        + (f"TODO: no starter calls it: {why}. To test it, write" if why else "Another starter calls it; write")
        + " a case that calls it with real arguments and expects what your site shows: a confirmation the "
        "human gives (expect.confirmation, a result code such as CONFIRMATION_REQUIRED) or the change itself "
        "(expect.state, expect.network.writes). Each trial has a fresh browser context; state on a server needs "
        "a reset hook (site.hooks.reset in suite.yaml) so that trials do not see each other's writes. "
        f"The site describes it as: {about}",
    }
    todo = f"{tool.name} is not called ({why})" if why else ""
    return Starter(f"{case_id}.yaml", case, "ask", todo=todo)


def _confirmation_step(probe: ToolProbe) -> bool:
    """The site stops for a person: a form left filled for them, or an answer that says a confirmation is needed."""
    text = json.dumps(probe.result, ensure_ascii=False, default=str) if probe.result is not None else ""
    return probe.waits_for_person or bool(re.search(r"(?i)confirm", text))


def probed_starter(tool: PageTool, route: str, case_id: str, probe: ToolProbe) -> Starter:
    """A positive starter from what the site did during init's probe: the call with the accepted input, the
    answer's shape, the text the page showed after it, and the writes (none where a person confirms)."""
    assert probe.args is not None
    about = tool.description.strip() or "no description"
    args = probe.args
    given = ", ".join(f"{k} {json.dumps(v, ensure_ascii=False)}" for k, v in args.items()) or "nothing else"
    expected: dict[str, Any] = {"tool": tool.name, "args": copy.deepcopy(args), "no_other_args": True}
    if probe.result is not None and not probe.waits_for_person:
        expected["result"] = answer_shape(probe.result)
    if _read_only(tool):
        behaviour, user, writes = "selection", f"Please use {tool.name} with {given}.", 0
        what = "called with inputs the site accepted, nothing written"
    elif _confirmation_step(probe):
        behaviour, writes = "prepare", 0
        user = f"Please prepare {tool.name} with {given}, but do not submit it: I will confirm it myself."
        what = "prepared with inputs the site accepted, left for the person to confirm"
    else:
        behaviour, user, writes = "write", f"Please use {tool.name} with {given}.", probe.writes
        what = f"called with inputs the site accepted, {probe.writes} write(s) counted"
    expect: dict[str, Any] = {"calls": {"expected": [expected]}, "network": {"writes": {"total": writes}}}
    if probe.shown:
        why = "init's probe saw the page show it after the call, twice, and not before"
        # not exact: the page's text as a person reads it (a CSS text-transform, a line of a longer block)
        expect["ui"] = [{"target": {"text": line, "exact": False}, "why": why} for line in probe.shown[:2]]
    case = {
        "id": case_id,
        "behaviour": behaviour,
        "title": f"{tool.name}: {what}",
        "start_route": route,
        "steps": [{"user": user, "plan": [{"call": tool.name, "args": args}], "reply": ""}],
        "expect": expect,
        "notes": f"Written by webmcp-eval init from a live call of {tool.name} in a throw-away browser: the site "
        f"accepted these arguments ({probe.why}). TODO: write what a user of your site would ask, and what the "
        "answer must say (expect.answer). "
        + (
            "A date here was a month ahead when init wrote it: move it on before it comes near. "
            if "month ahead" in probe.why
            else ""
        )  # fmt: skip
        + "Tried: "
        + "; ".join(probe.tried)
        + f". The site describes it as: {about}",
    }
    return Starter(f"{case_id}.yaml", case, "call")


def answer_shape(result: object) -> Any:
    """An answer's shape as a result matcher: each top-level field's JSON type, or the answer's own type."""
    if isinstance(result, dict) and result:
        return {str(k): {"$type": _json_type(v)} for k, v in list(result.items())[:8]}
    return {"$type": _json_type(result)}


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def starters_for(
    tool: PageTool, route: str, taken: set[str], probe: ToolProbe | None, setup: list[dict[str, Any]]
) -> list[Starter]:
    """A tool's starters: a positive one when the probe found an input the site accepts, and a boundary one for
    a tool that may write (or that no input reached)."""
    out: list[Starter] = []
    if probe is not None and probe.args is not None:
        out.append(probed_starter(tool, route, case_id_for(tool.name, taken), probe))
        if not _read_only(tool):
            out.append(boundary_for(tool, route, case_id_for(f"{tool.name}-boundary", taken), ""))
    elif probe is not None:
        why = f"init's probe found no input the site accepts: {probe.why}" + (
            f" (tried: {'; '.join(probe.tried)})" if probe.tried else ""
        )
        out.append(boundary_for(tool, route, case_id_for(tool.name, taken), why))
    else:
        out.append(starter_for(tool, route, case_id_for(tool.name, taken)))
    for starter in out:
        if setup:  # the state the tools were read in: every trial reaches it before the agent starts
            case = starter.case
            at = list(case).index("start_route") + 1
            starter.case = {**dict(list(case.items())[:at]), "setup": setup, **dict(list(case.items())[at:])}
    return out
