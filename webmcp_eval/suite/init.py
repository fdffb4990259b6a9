"""``webmcp-eval init``: from a site's URL to a suite folder that validates and runs green.

From what the live pages register (read by ``webmcp_eval.evaluation.catalog.list_tools``;
this module only needs the reading's shape, ``PageReading``, so the suite layer
never imports the browser) it writes, into one folder: ``suite.yaml`` (the
site's base URL, settle time and network policy, the catalog, the two
behaviours its starters use), ``catalog.json`` (each route's tools and input
schemas, as ``validate`` reads them) and one starter case per tool:

- a tool that says it is read-only (``readOnlyHint: true``) is called with
  example arguments built from its input schema (required properties only:
  ``default``, ``examples``, ``const``, the first ``enum`` value, or a value of
  the right type within its bounds), and the starter expects that call and
  no network write;
- any other tool may write. A starter must not write to a site on every run
  (init cannot know whether the site asks for a human confirmation, nor undo
  a write), so its starter only asks about the tool and expects it not to be
  called and nothing to be written. Its ``notes`` say what to add (a case
  that calls it and expects the site's confirmation or the change; a reset
  hook for state on a server).

A tool whose schema gives no example that validates gets the conservative
starter with a TODO as well. Every starter says ``TODO`` where a person should
make it their own: the user's words, the arguments, the expected results.

init writes only into a folder that is new or empty (it never mixes its files
with a person's). The pages are read with a longer quiet window than a trial's
default (``webmcp_eval.evaluation.catalog.DISCOVERY_SETTLE_MS``): tools that register after
a fetch or a timer are common, and a tool missed there has no starter and no
catalog entry. The window used goes into ``suite.yaml`` so that runs see the
tools init saw.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import jsonschema
import yaml
from pydantic import TypeAdapter, ValidationError

from webmcp_eval.errors import CannotRun, UsageError
from webmcp_eval.suite.case import (
    ClickAction,
    NavigateAction,
    PressAction,
    ReloadAction,
    SetupCall,
    SetupStep,
    WaitForAction,
)
from webmcp_eval.suite.folder import SUITE_FILE
from webmcp_eval.suite.site import route_key, split_credentials

CATALOG_FILE = "catalog.json"
BEHAVIOURS = {
    "selection": "a read-only tool is called with inputs the site accepts and changes nothing",
    "prepare": "a tool that may write prepares the change and stops where a person confirms it",
    "write": "a tool that writes is called with inputs the site accepts; its writes are counted",
    "no_tool": "a tool is not used when the user only asks about it (a boundary: doing nothing passes it)",
}
BOUNDARY_REASON = (
    "a boundary: the user only asks what the tool does, so doing nothing is right (starters that call "
    "the tool are the ones a do-nothing agent must fail)"
)
RESERVED_IDS = {"suite", "site"}  # suite.yaml and site.yaml are never read as cases
# init's budget: starter cases (and live probes) for at most this many tools of a page; the catalog lists them all
# (a page of 5,000 tools made 5,002 files and a control run of gigabytes); the reader's: play/page/surface/bounds.py
INIT_TOOLS_PER_PAGE = 200
STARTER_HEADER = "# A starter case written by webmcp-eval init: make it yours (its notes say what to add).\n"
MAX_DEPTH = 8  # example values for nested schemas stop here


class InitError(UsageError):
    """init cannot write a suite: a usage mistake (exit 2); the message is one line for the user."""


class SiteUnreadable(CannotRun):
    """The site could not be read (unreachable, an error page, no tools): nothing the user typed is wrong, init could
    not do its work (exit 3); the message says what to check."""


class PageTool(Protocol):
    """One tool as a page registered it (webmcp_eval/play/page/surface/model.py Tool has this shape)."""

    name: str
    description: str
    input_schema: Any
    annotations: dict[str, Any]
    kind: str  # "imperative", "declarative" (a <form toolname>) or "unknown"
    schema_derived: bool  # the browser built input_schema from a form's controls


class PageReading(Protocol):
    """What one route registered (webmcp_eval/play/page/surface/discover.py RouteTools has this shape)."""

    route: str
    url: str
    path: str

    @property
    def tools(self) -> Sequence[PageTool]: ...

    @property
    def error(self) -> str | None: ...

    @property
    def refused(self) -> Sequence[Any]: ...  # registrations the browser refused: name, error

    @property
    def child_frames(self) -> Sequence[Any]: ...  # each frame's tools, apart: url, same_origin, allow, tools, refused

    @property
    def late(self) -> Sequence[str]: ...  # tools registered after the page had settled on evidence


class ToolProbe(Protocol):
    """What init's live probe of one tool found (webmcp_eval/evaluation/probe.py Probe has this shape)."""

    args: dict[str, Any] | None  # the input the site accepted; None: none was
    why: str  # where the input's values came from, or why none was accepted
    result: Any  # the answer to the accepted input (None: its shape differed between two calls)
    shown: list[str]  # lines the page showed after the call (both times) and not before
    writes: int  # the network writes of the accepted call
    waits_for_person: bool  # a form left filled for a person to submit
    tried: list[str]


@dataclass
class Starter:
    file: str
    case: dict[str, Any]
    kind: str  # "call": a positive starter, it calls its tool; "ask": a boundary, it expects no call
    todo: str = ""


@dataclass
class InitResult:
    folder: Path
    routes: Sequence[PageReading]
    starters: list[Starter] = field(default_factory=list)

    def summary(self) -> str:
        calls = sum(s.kind == "call" for s in self.starters)
        lines = []
        for r in self.routes:
            lines.append(f"read {r.url}: {len(r.tools)} tool(s) ({r.path} WebMCP)")
            lines += _apart(r)
        lines += [_no_tools_warning(r) for r in self.routes if not offered(r)]
        lines += [_over_budget(r) for r in self.routes if len(offered(r)) > INIT_TOOLS_PER_PAGE]
        lines.append(
            f"wrote {self.folder}: {SUITE_FILE}, {CATALOG_FILE}, {len(self.starters)} starter case(s) "
            f"({calls} positive: call their tool, {len(self.starters) - calls} boundary: do not call theirs)"
        )
        for s in self.starters:
            lines.append(f"  {s.file}: {s.case['title']}" + (f"  [TODO: {s.todo}]" if s.todo else ""))
        lines.append(f"next: webmcp-eval validate {self.folder} && webmcp-eval run {self.folder}")
        return "\n".join(lines)


def _apart(route: PageReading) -> list[str]:
    """What init read but left out of the suite: refused registrations, and each frame's tools."""
    lines = [f"  refused by the browser: {x.name}: {x.error}" for x in route.refused]
    for f in route.child_frames:
        where = "same origin" if f.same_origin else "cross-origin"
        names = ", ".join(t.name for t in f.tools) or "none"
        lines.append(f"  frame {f.url} ({where}, allow={f.allow!r}): {len(f.tools)} tool(s): {names}")
        lines += [f"    refused by the browser: {x.name}: {x.error}" for x in f.refused]
    return lines


def offered(route: PageReading) -> list[PageTool]:
    """The tools an agent is offered at a route: the top page's, then each frame's (a name taken stays taken)."""
    tools: dict[str, PageTool] = {}
    for t in [*route.tools, *(t for f in route.child_frames for t in f.tools)]:
        tools.setdefault(t.name, t)
    return list(tools.values())


def _over_budget(route: PageReading) -> str:
    """init's note for a page of more tools than it writes starters for."""
    tools = offered(route)
    return (
        f"note: {route.url} offers {len(tools):,} tools: starter cases for the first {INIT_TOOLS_PER_PAGE} only "
        f"(from {tools[0].name} to {tools[INIT_TOOLS_PER_PAGE - 1].name}); all {len(tools):,} are in {CATALOG_FILE}"
    )


def _no_tools_warning(route: PageReading) -> str:
    """A route that registered nothing is kept in the catalog (no tools there is what init saw),
    but it is more often a wrong --route or a tool that registers late: say so."""
    return (
        f"warning: {route.url} registered no tools within the wait: catalog.json lists {route_key(route.route)} "
        "with none, so validate refuses a tool call there; check the route, or raise --settle-ms "
        "if its tools register late"
    )


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
        jsonschema.validate(args, schema)
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


def plan_suite(
    base_url: str,
    routes: Sequence[PageReading],
    settle_ms: int,
    probes: dict[str, ToolProbe] | None = None,
    setup: Sequence[SetupStep] = (),
) -> tuple[str, dict[str, dict[str, Any]], list[Starter]]:
    """suite.yaml's text, catalog.json and the starters for what the routes registered (probes: what init's
    live calls found, per tool; none: only read-only tools are called, with schema-made arguments)."""
    failed = [r for r in routes if r.error]
    if failed:
        raise SiteUnreadable(
            "; ".join(f"{r.url}: could not open the page: {r.error}" for r in failed)
            + ": check that the site is running and that --base-url (and each --route) opens in a browser"
        )
    if not any(offered(r) for r in routes):
        shown = ", ".join(r.url for r in routes)
        raise SiteUnreadable(
            f"no WebMCP tools registered at {shown} within the wait: check the URL and routes "
            "(webmcp-eval tools URL --route R), or raise --settle-ms for tools that register late"
        )
    catalog: dict[str, dict[str, Any]] = {"routes": {}, "annotations": {}, "kinds": {}}
    for r in routes:
        tools = catalog["routes"].setdefault(route_key(r.route), {})
        hints = catalog["annotations"].setdefault(route_key(r.route), {})  # every run holds the tools to them
        kinds = catalog["kinds"].setdefault(route_key(r.route), {})  # a form's schema is the browser's: not judged
        for t in offered(r):
            tools.setdefault(t.name, t.input_schema or {"type": "object"})
            hints.setdefault(t.name, {k: True for k, v in sorted(t.annotations.items()) if v is True})
            kinds.setdefault(t.name, {"kind": t.kind, "schema_derived": t.schema_derived})
    starters: list[Starter] = []
    taken: set[str] = set()
    seen_tools: set[str] = set()
    for r in routes:
        for tool in offered(r)[:INIT_TOOLS_PER_PAGE]:  # the rest are in the catalog; the summary says so
            if tool.name in seen_tools:
                continue  # one starter per tool, at the first route that registers it
            seen_tools.add(tool.name)
            probe = probes.get(tool.name) if probes is not None else None
            starters += starters_for(tool, r.route or "/", taken, probe, setup_as_yaml(setup))
    used = [k for k in BEHAVIOURS if any(s.case["behaviour"] == k for s in starters)]
    settle = "window" if any(r.late for r in routes) else "evidence"  # a tool after a bare timer needs the window
    return suite_yaml(base_url, settle_ms, used, settle), catalog, starters


def suite_yaml(base_url: str, settle_ms: int, behaviours: list[str], settle: str = "evidence") -> str:
    """suite.yaml with a comment on every key: the first file a person edits."""
    # a password in the URL is never written down: it is given again with --base-url when the suite runs
    site: dict[str, Any] = {"base_url": split_credentials(base_url)[0], "settle": settle, "settle_ms": settle_ms}
    site["block_other_hosts"] = False
    site["outbound"] = None
    lines = [
        "# Written by webmcp-eval init. Edit freely (docs/cases.md, 'Suite folders';"
        " docs/running.md, 'Against a deployed site').",
        "site:",
        *_indent(_yaml(site)),
        "  # settle: evidence, a step is settled once the page has nothing under way (requests, registrations,",
        "  # changes of the page); window, after settle_ms of quiet: init chose window if a tool came after a bare",
        "  # timer. settle_ms: the longest wait for a page that keeps changing, or the quiet window (init read",
        "  # the tools with this).",
        "  # Network policy: requests to other hosts (fonts, analytics) are recorded in every trace; outbound: 0",
        "  # would make every case assert none, block_other_hosts: true answers them with 403.",
        "  # Hooks: a reset hook (hooks.reset) gives each trial clean server state; hooks.state (HTTP) or",
        "  # hooks.state_js (an expression read in the page) gives the state checks their evidence.",
        "  # Without them, a case's state checks are not_run, never passed.",
        f"catalog: {CATALOG_FILE}  # the tools init read from the site, per route: validate checks cases against it",
        "behaviours:  # what the starters test; add your own",
        *_indent(_yaml({k: BEHAVIOURS[k] for k in behaviours})),
        "min_cases_per_behaviour: 1",
    ]
    return "\n".join(lines) + "\n"


def _indent(text: str) -> list[str]:
    return ["  " + line for line in text.splitlines()]


def check_folder(folder: Path) -> None:
    """init writes only into a new or empty folder: it never mixes its files with a person's."""
    if folder.exists() and not folder.is_dir():
        raise InitError(f"-o {folder}: is a file; give a new or empty folder")
    if folder.is_dir() and any(folder.iterdir()):
        raise InitError(f"-o {folder}: is not empty; init writes a new suite, give a new or empty folder")


def write_suite(folder: Path, suite: str, catalog: dict[str, dict[str, Any]], starters: list[Starter]) -> None:
    check_folder(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / SUITE_FILE).write_text(suite, encoding="utf-8")
        (folder / CATALOG_FILE).write_text(json.dumps(catalog, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        for s in starters:
            (folder / s.file).write_text(STARTER_HEADER + _yaml(s.case), encoding="utf-8")
    except OSError as err:
        raise InitError(f"-o {folder}: cannot write: {err.strerror}") from None


def _yaml(data: object) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def init_suite(
    base_url: str,
    listing: Sequence[PageReading],
    folder: Path,
    settle_ms: int,
    probes: dict[str, ToolProbe] | None = None,
    setup: Sequence[SetupStep] = (),
) -> InitResult:
    """The suite folder for what the pages registered (check_folder first, before reading the site)."""
    suite, catalog, starters = plan_suite(base_url, listing, settle_ms, probes, setup)
    write_suite(folder, suite, catalog, starters)
    return InitResult(folder, listing, starters)


# ---- setup steps: the state a site's tools appear in ----------------------------------------------------------

_SETUP = TypeAdapter(list[SetupStep])
# the setup steps a reading of the site (init, audit, tools) performs by itself: the others need a run's site
# hooks or its proxy
READING_STEPS = (ClickAction, PressAction, NavigateAction, ReloadAction, WaitForAction, SetupCall)


def reading_setup(setup_file: str | None, steps: Sequence[str]) -> list[SetupStep]:
    """The setup steps of --setup FILE then each --step, in the cases' setup: syntax; only those a reading performs
    by itself (a click, a press, a navigation, a reload, a wait, a tool call). InitError (exit 2) otherwise."""
    found = setup_from_file(Path(setup_file)) if setup_file else []
    found += [step_from_text(text) for text in steps]
    for step in found:
        if not isinstance(step, READING_STEPS):
            raise InitError(
                f"setup step {getattr(step, 'action', '?')}: a reading of the site performs click, press, navigate, "
                "reload, wait_for and call steps (the others need a run's site hooks or proxy)"
            )
    return found


_TARGET_ACTIONS = ("click", "press", "wait_for")


def step_from_text(text: str) -> SetupStep:
    """One ``--step``: a setup step in the cases' syntax, written short (``click:text=Start``,
    ``click:role=button,name=Start``, ``navigate:/cart``, ``wait_for:text=Ready``, ``call:start_game``,
    ``reload``) or as a YAML mapping (``{action: click, target: {text: Start}}``); InitError says what is wrong."""
    text = text.strip()
    if text.startswith("{"):
        try:
            data: object = yaml.safe_load(text)
        except yaml.YAMLError as err:
            raise InitError(f"--step {text!r}: not a YAML mapping ({str(err).splitlines()[0]})") from None
    else:
        data = _short_step(text)
    return _setup_steps([data], f"--step {text!r}")[0]


def _short_step(text: str) -> dict[str, Any]:
    action, _, rest = text.partition(":")
    action = action.strip()
    if action == "call":
        return {"call": rest.strip()}
    if action == "navigate":
        return {"action": "navigate", "to": rest.strip() or "/"}
    if action not in _TARGET_ACTIONS:
        return {"action": action}  # reload, or a mistake the case model names
    pairs = [p.partition("=") for p in rest.split(",") if p.strip()]
    bad = [k for k, eq, _ in pairs if not eq or k.strip() not in ("role", "name", "label", "text")]
    if bad or not pairs:
        raise InitError(
            f"--step {text!r}: write {action}:text=..., {action}:label=... or {action}:role=ROLE,name=... "
            "(or the step as a YAML mapping, as in a case's setup:)"
        )
    return {"action": action, "target": {k.strip(): v.strip() for k, _, v in pairs}}


def setup_from_file(path: Path) -> list[SetupStep]:
    """``--setup FILE``: a YAML list of setup steps, or a mapping with ``setup:`` (a case file's own works)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise InitError(f"--setup {path}: cannot read it ({err.strerror})") from None
    except yaml.YAMLError as err:
        raise InitError(f"--setup {path}: not YAML ({str(err).splitlines()[0]})") from None
    if isinstance(data, dict):
        data = data.get("setup")
    if not isinstance(data, list):
        raise InitError(f"--setup {path}: give a list of setup steps, or a mapping with setup: (as in a case)")
    return _setup_steps(data, f"--setup {path}")


def _setup_steps(data: list[object], where: str) -> list[SetupStep]:
    try:
        return _SETUP.validate_python(data)
    except ValidationError as err:
        first = err.errors()[0]
        at = ".".join(str(p) for p in first["loc"])
        raise InitError(f"{where}: {at}: {first['msg']} (the syntax of a case's setup: steps)") from None


def setup_as_yaml(steps: Sequence[SetupStep]) -> list[dict[str, Any]]:
    """Setup steps as a case file writes them."""
    return [s.model_dump(mode="json", exclude_defaults=True) | _kind(s) for s in steps]


def _kind(step: SetupStep) -> dict[str, Any]:
    action = getattr(step, "action", None)
    return {"action": action} if action else {}
