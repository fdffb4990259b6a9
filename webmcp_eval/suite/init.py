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

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

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
from webmcp_eval.suite.starters import PageTool, Starter, ToolProbe, starters_for

CATALOG_FILE = "catalog.json"
BEHAVIOURS = {
    "selection": "a read-only tool is called with inputs the site accepts and changes nothing",
    "prepare": "a tool that may write prepares the change and stops where a person confirms it",
    "write": "a tool that writes is called with inputs the site accepts; its writes are counted",
    "no_tool": "a tool is not used when the user only asks about it (a boundary: doing nothing passes it)",
}
# init's budget: starter cases (and live probes) for at most this many tools of a page; the catalog lists them all
# (a page of 5,000 tools made 5,002 files and a control run of gigabytes); the reader's: play/page/surface/bounds.py
INIT_TOOLS_PER_PAGE = 200
STARTER_HEADER = "# A starter case written by webmcp-eval init: make it yours (its notes say what to add).\n"


class InitError(UsageError):
    """init cannot write a suite: a usage mistake (exit 2); the message is one line for the user."""


class SiteUnreadable(CannotRun):
    """The site could not be read (unreachable, an error page, no tools): nothing the user typed is wrong, init could
    not do its work (exit 3); the message says what to check."""


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

    @property
    def setup_tools(self) -> Sequence[PageTool]: ...  # the tools the setup steps call, as registered before them

    @property
    def controls(self) -> Any: ...  # the controls that change the tools (ControlsRead), None: not explored


@dataclass
class InitResult:
    folder: Path
    routes: Sequence[PageReading]
    starters: list[Starter] = field(default_factory=list)
    stepped: bool = False  # the tools were read after setup steps (--step, --setup)
    probes: dict[str, ToolProbe] = field(default_factory=dict)

    def summary(self) -> str:
        calls = sum(s.kind == "call" for s in self.starters)
        lines = []
        for r in self.routes:
            lines.append(f"read {r.url}: {len(r.tools)} tool(s) ({r.path} WebMCP)")
            lines += _apart(r)
            lines += control_notes(r, self.stepped)
        lines += call_notes(self.probes, self.stepped)
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


def control_notes(route: PageReading, stepped: bool) -> list[str]:
    """What init's clicks through the page's controls found: each control that changes the tools, and a rerun."""
    read = route.controls
    if read is None:
        return []
    skipped = "; ".join(f"{n} {why}" for why, n in read.skipped.items())
    lines = [
        f"  controls: clicked {read.clicked} in throw-away contexts ({read.ms / 1000:.1f} s), "
        f"{len(read.effects)} change the tools" + (f"; not clicked: {skipped}" if skipped else "")
    ]
    for e in read.effects:
        hashed = f" (or --route '{e.hash}')" if e.hash else ""
        lines.append(_change_note(f"clicking `{e.shown}`", e.adds, e.removes, e.step, stepped, hashed))
    return lines


def call_notes(probes: dict[str, ToolProbe], stepped: bool) -> list[str]:
    """The tools whose accepted call (init's probe, both times) registered or withdrew tools, and a rerun."""
    return [
        _change_note(f"calling {name}", p.adds, p.removes, f"call:{name}", stepped)
        for name, p in probes.items()
        if p.adds or p.removes
    ]


def _change_note(
    what: str, adds: Sequence[str], removes: Sequence[str], step: str, stepped: bool, hashed: str = ""
) -> str:
    """One line of init's output: what a click or a call adds and removes, and the --step that reaches the tools
    it adds."""
    changes = [f"adds {', '.join(adds)}"] * bool(adds) + [f"removes {', '.join(removes)}"] * bool(removes)
    line = f"  {what} {' and '.join(changes)}"
    if adds:
        after = " after your setup steps" if stepped else ""
        line += f": rerun with --step '{step}'{after}{hashed} for their starters"
    return line


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
        notes = [line.strip() for r in routes for line in control_notes(r, bool(setup))[1:]]
        raise SiteUnreadable(
            f"no WebMCP tools registered at {shown} within the wait: check the URL and routes "
            "(webmcp-eval tools URL --route R), or raise --settle-ms for tools that register late"
            + "".join(f"; {n}" for n in notes)
        )
    catalog: dict[str, dict[str, Any]] = {"routes": {}, "annotations": {}, "kinds": {}}
    for r in routes:  # the clicks that change a route's tools: a case's setup step (target) reaches them
        if r.controls is not None and r.controls.effects:
            catalog.setdefault("controls", {})[route_key(r.route)] = [
                {"click": e.target, "adds": e.adds, "removes": e.removes} for e in r.controls.effects
            ]
    for r in routes:
        tools = catalog["routes"].setdefault(route_key(r.route), {})
        hints = catalog["annotations"].setdefault(route_key(r.route), {})  # every run holds the tools to them
        kinds = catalog["kinds"].setdefault(route_key(r.route), {})  # a form's schema is the browser's: not judged
        for t in [*offered(r), *r.setup_tools]:  # a setup step's call is checked against the catalog too
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
    app_tools = sorted({name for p in (probes or {}).values() for name in p.outlived})
    return suite_yaml(base_url, settle_ms, used, settle, app_tools), catalog, starters


APP_TOOLS_NOTE = (
    "  # app_tools: init's probe saw these stay registered after a call moved the page to another route.",
    "  # Every trial checks that no tool outlives its route, except these: keep the site's tools for every",
    "  # route here, and take out any that belongs to one route (its staying is then a failure).",
)


def suite_yaml(
    base_url: str, settle_ms: int, behaviours: list[str], settle: str = "evidence", app_tools: Sequence[str] = ()
) -> str:
    """suite.yaml with a comment on every key: the first file a person edits."""
    # a password in the URL is never written down: it is given again with --base-url when the suite runs
    site: dict[str, Any] = {"base_url": split_credentials(base_url)[0], "settle": settle, "settle_ms": settle_ms}
    site["block_other_hosts"] = False
    site["outbound"] = None
    if app_tools:
        site["app_tools"] = list(app_tools)
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
        *(APP_TOOLS_NOTE if app_tools else ()),
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
    return InitResult(folder, listing, starters, bool(setup), dict(probes or {}))


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
