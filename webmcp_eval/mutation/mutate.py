"""Mutation testing of a suite against a site: ``webmcp-eval mutate``.

Does the suite notice when the site is wrong? Each mutant is one realistic
site bug, applied without touching the site: in the page (an init script that
wraps ``registerTool``/``execute`` or changes the DOM, ``webmcp_eval/mutation/mutate.js``) or
in the proxy (a rewriter of the site's answers, ``webmcp_eval/proxies/mutations.py``).

1. Clean runs: every case is played unmutated, twice, with an observer in the
   proxy. What a case touches (tools, results, routes, requests, controls)
   decides which mutants it can see; whatever differs between its two clean
   runs is noise and never counts as a difference.
2. Each mutant is played on the cases that can see it, one case after
   another, until a case kills it (fails or cannot run) — like mutmut or
   Stryker. Every trial is played in one run as soon as it is decided, on
   the next free worker: no round waits for its slowest trial.
3. A mutant no case failed is *equivalent* when no trace differed from its
   clean runs in anything observable (the mutant changed nothing a check could
   see), else it *survived*: those cases saw the bug and passed. Mutants with
   no case that touches their target are *unseen*.

The score is killed / (killed + survived).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from webmcp_eval.agents.reference import ReferenceAgent
from webmcp_eval.data_file import strings_in
from webmcp_eval.judge import checks, probes
from webmcp_eval.matchers import resolve
from webmcp_eval.play.run.run import OpenRun, open_run
from webmcp_eval.play.run.settings import RunSettings, TrialHook, surface_checks
from webmcp_eval.proxies import mutations as proxy_ops
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.suite.browser_context import BrowserContextSettings
from webmcp_eval.suite.case import ClickAction
from webmcp_eval.suite.loader import LoadedCase
from webmcp_eval.suite.site import SiteConfig, demo_site_config
from webmcp_eval.trace import Trace, write_atomic

if TYPE_CHECKING:
    from rich.console import Console

MUTATE_JS = (Path(__file__).with_name("mutate.js")).read_text(encoding="utf-8")
MARKUP = re.compile(r"<[a-zA-Z!/]")
CLOCK_TIME = re.compile(r"\b\d{1,2}:\d{2}\b")  # a time of day as a page shows it
ACCOUNT_KEY = re.compile(r"(?i)^(user|account|profile|me|viewer|customer)$")  # who is signed in, in an answer
MAX_FIELD_DEPTH = 2


@dataclass(frozen=True)
class Operator:
    name: str
    side: str  # page | proxy
    what: str


OPERATORS: dict[str, Operator] = {
    op.name: op
    for op in [
        Operator("result_field_dropped", "page", "a tool result lacks one field"),
        Operator("result_field_altered", "page", "one field of a tool result has another value"),
        Operator("result_list_reordered", "page", "a list in a tool result comes in reverse order"),
        Operator(
            "result_list_paged",
            "page",
            "a tool's result list keeps only a first page of items (the page shows them all)",
        ),
        Operator("readonly_writes", "page", "a read-only tool also sends a write request"),
        Operator("prepare_submits", "page", "a prepare tool (CONFIRMATION_REQUIRED) presses the control it names"),
        Operator("stale_tool", "page", "a tool stays registered after its route is gone"),
        Operator("error_leaks", "page", "a tool's error message leaks internals (a stack frame, the database)"),
        Operator("wrong_target", "page", "a tool acts on the next item of a list the page showed, not the one asked"),
        Operator("confirm_disabled", "page", "the confirmation control is disabled"),
        Operator("confirm_hidden", "page", "the confirmation control is transparent (opacity 0)"),
        Operator("confirm_renamed", "page", "the confirmation control is named 送出 instead"),
        Operator("confirm_does_nothing", "page", "the confirmation control does nothing when pressed (it reads well)"),
        Operator("text_as_markup", "page", "text with markup in it is rendered as HTML, not as text"),
        Operator("time_shifted", "page", "every displayed date and time is 8 hours off (formatted in the wrong zone)"),
        Operator("clock_zone_dropped", "page", "date formatters lose their timeZone: times show in the viewer's zone"),
        Operator("list_keeps_stale", "page", "a list shows its stale items after the new ones (never cleared)"),
        Operator("error_flag_flipped", "page", "a boolean of an error result (retryable) has the other value"),
        Operator("prefill_wins", "page", "a form keeps the signed-in account's values over the ones the agent gave"),
        Operator("sanitiser_keeps_markup", "page", "markup rendered after a sanitiser that drops only on* and script"),
        Operator("submit_listener_dead", "page", "a form's submit listener never fires: its button submits natively"),
        Operator("dialog_field_swapped", "page", "a dialog's summary shows another record's id in its last field"),
        Operator("select_label_shifted", "page", "a select shows the next option's label for the value it holds"),
        Operator(
            "retarget_keeps_first",
            "page",
            "a prepare tool called again while its dialog is open shows the new record; the press acts on the first",
        ),
        Operator(
            "retryable_error_as_success",
            "page",
            "a tool's retryable error is answered as a success (CONFIRMATION_REQUIRED, the input echoed)",
        ),
        Operator("annotation_lie", "page", "a tool that writes is registered with readOnlyHint"),
        Operator("hint_dropped", "page", "a tool is registered without its untrustedContentHint"),
        Operator("description_injected", "page", "a tool's description carries untrusted text a hinted result showed"),
        Operator(
            "schema_constraint_dropped",
            "page",
            "a tool is registered with an input schema that lost its enums and required names (still enforced)",
        ),
        Operator("filter_ignored", "proxy", "the site ignores one query parameter (a filter)"),
        Operator(
            "query_script_stripped",
            "proxy",
            "the site drops the Chinese, Japanese and Korean characters of a query parameter before it searches",
        ),
        Operator("unauthorized_as_success", "proxy", "a 401 is answered as an empty success (200, lists emptied)"),
        Operator("api_error_leaks", "proxy", "an API error message leaks internals"),
        Operator("repeat_not_idempotent", "proxy", "a repeated identical write is answered as a first one"),
    ]
}


@dataclass
class CaseRun:
    case: str
    verdict: str
    differs: list[str]  # what in the trace differed from the clean runs
    failed: list[str]  # assertions that failed or could not run
    fired: int | None = None  # proxy operators count their rewrites
    trace: str = ""
    flaky: str | None = None  # a first play that failed and did not fail again: not a kill


@dataclass
class Mutant:
    id: str
    operator: str
    target: str
    params: dict[str, Any]
    cases: list[str]  # the cases that can see it, in suite order
    status: str = "pending"  # killed, survived, equivalent, unseen
    runs: list[CaseRun] = field(default_factory=list)

    @property
    def side(self) -> str:
        return OPERATORS[self.operator].side

    def hook(self) -> TrialHook:
        """The mutant as a trial hook: an init script in the page, or a rewriter in the proxy."""
        if self.side == "page":
            config = json.dumps({"op": self.operator, **self.params}, ensure_ascii=False)
            return TrialHook(init_script=f"const MUTANT = {config};\n{MUTATE_JS}")
        return TrialHook(proxy=_proxy_rewriter(self.operator, self.params))


def _proxy_rewriter(operator: str, params: dict[str, Any]) -> proxy_ops.Rewriter:
    if operator == "filter_ignored":
        return proxy_ops.ParamIgnored(path=params["path"], param=params["param"])
    if operator == "query_script_stripped":
        return proxy_ops.ScriptStripped(path=params["path"], param=params["param"])
    if operator == "unauthorized_as_success":
        return proxy_ops.UnauthorizedAsSuccess(method=params["method"], path=params["path"], success=params["success"])
    if operator == "api_error_leaks":
        return proxy_ops.ErrorLeaks(path=params["path"])
    if operator == "repeat_not_idempotent":
        return proxy_ops.RepeatAnsweredFresh(path=params["path"])
    raise ValueError(f"{operator} is not a proxy operator")


# ---- what a trace shows: the observable evidence ----------------------------------


def observable(trace: Trace) -> dict[str, Any]:
    """The verdict and everything a check could look at (each kind's evidence), without timings, ids of worlds
    or file names."""
    return {"verdict": trace.verdict} | {part.name: part.read(trace) for part in checks.evidence()}


def differences(base: dict[str, Any], other: dict[str, Any], noise: set[str]) -> list[str]:
    return [key for key in base if key not in noise and base[key] != other.get(key)]


# ---- the clean runs: what each case touches -------------------------------------------


@dataclass
class CleanRun:
    """A case played with no mutant: its first passing clean run (or its failing one), the exchanges that run sent
    through the proxy, and what differed between its clean runs (noise, never a mutant's doing)."""

    case: LoadedCase
    trace: Trace
    exchanges: list[dict[str, Any]]
    noise: set[str]
    flaky: str | None = None  # it failed once unmutated, then passed

    @property
    def id(self) -> str:
        return self.case.case.id

    @property
    def observed(self) -> dict[str, Any]:
        return observable(self.trace)


def _result_data(call: Any) -> Any:
    return call.result.get("data") if isinstance(call.result, dict) else None


def field_paths(data: object, prefix: str = "", depth: int = 0) -> Iterable[tuple[str, str]]:
    """(path, kind) of a result's data: kind is scalar, object or list; list items as name[]."""
    if not isinstance(data, dict) or depth > MAX_FIELD_DEPTH:
        return
    for key, value in data.items():
        path = f"{prefix}{key}"
        if isinstance(value, list):
            yield path, "list" if len(value) > 1 else "short_list"
            for item in value:
                yield from field_paths(item, f"{path}[].", depth + 1)
        elif isinstance(value, dict):
            yield path, "object"
            yield from field_paths(value, f"{path}.", depth + 1)
        else:
            yield path, "scalar"


def _read_only_tools(clean: list[CleanRun]) -> set[str]:
    out = set()
    for b in clean:
        for reg in b.trace.registrations:
            ann = reg.hints
            if reg.type == "register" and reg.tool_name and (ann.get("readOnlyHint") or ann.get("readOnly")):
                out.add(reg.tool_name)
    return out


def _registered_tools(clean: list[CleanRun]) -> set[str]:
    return {r.tool_name for b in clean for r in b.trace.registrations if r.type == "register" and r.tool_name}


def _control_names(clean: list[CleanRun]) -> set[str]:
    names = set()
    for b in clean:
        conf = b.case.case.expect.confirmation
        if conf:
            names.add(conf.control.name or conf.control.text or conf.control.label or "")
        for step in b.case.case.steps:
            target = getattr(step, "target", None)
            if getattr(step, "action", None) == "click" and target is not None:
                names.add(target.name or target.text or target.label or "")
    return {n for n in names if n}


def generate(clean: list[CleanRun], catalog_tools: set[str]) -> list[Mutant]:
    """Every mutant the suite's clean runs suggest, with the cases that can see each."""
    found: list[tuple[str, str, dict[str, Any], list[str]]] = []

    def add(op: str, target: str, params: dict[str, Any], cases: Iterable[str]) -> None:
        seen = list(dict.fromkeys(cases))
        found.append((op, target, params, seen))

    called: dict[str, list[CleanRun]] = {}
    for b in clean:
        for call in b.trace.calls:
            called.setdefault(call.tool, [])
            if b not in called[call.tool]:
                called[call.tool].append(b)
    _result_mutants(add, called)
    _tool_mutants(add, clean, called, catalog_tools)
    _coincidence_mutants(add, clean, called)
    _page_mutants(add, clean)
    _surface_mutants(add, clean, called)
    _proxy_mutants(add, clean)
    return [
        Mutant(f"M{i:03d}", op, target, params, cases, "pending" if cases else "unseen")
        for i, (op, target, params, cases) in enumerate(found, 1)
    ]


def _result_mutants(add: Callable[..., None], called: dict[str, list[CleanRun]]) -> None:
    for tool in sorted(called):
        paths: dict[tuple[str, str], list[str]] = {}
        for b in called[tool]:
            for call in b.trace.calls:
                if call.tool == tool:
                    for path, kind in field_paths(_result_data(call)):
                        paths.setdefault((path, kind), []).append(b.id)
        checked = {b.id: _checked_paths(b, tool) for b in called[tool]}
        for (path, kind), found_in in sorted(paths.items()):
            cases = _likeliest_first(found_in, path, checked)
            target = f"{tool} → data.{path}"
            add("result_field_dropped", target, {"tool": tool, "path": path}, cases)
            if kind == "scalar":
                add("result_field_altered", target, {"tool": tool, "path": path}, cases)
            if kind == "list":
                add("result_list_reordered", target, {"tool": tool, "path": path}, cases)
        _paged_mutants(add, tool, called[tool], [p for p, kind in paths if kind == "list"])


def _paged_mutants(add: Callable[..., None], tool: str, runs: list[CleanRun], lists: list[str]) -> None:
    """A first page only: each list of the tool's results (not one inside a list) that ever held two items or
    more keeps one fewer than its longest, so only the longest answers lose an item."""
    for path in sorted({p for p in lists if "[]" not in p}):
        lengths = {
            b.id: max((len(v) for c in b.trace.calls if c.tool == tool
                       if isinstance(v := resolve(_result_data(c), path), list)), default=0)
            for b in runs
        }  # fmt: skip
        longest = max(lengths.values(), default=0)
        if longest >= 2:
            cases = [case for case, n in lengths.items() if n == longest]
            add("result_list_paged", f"{tool} → data.{path}[:{longest - 1}]", {"tool": tool, "path": path,
                "size": longest - 1}, cases)  # fmt: skip


def _checked_paths(b: CleanRun, tool: str) -> set[str]:
    """The result fields (``event.title``, ``events[].id``) a case's expected calls of ``tool`` check."""
    out: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, dict):
            if value.get("tool") == tool and isinstance(value.get("result"), dict):
                out.update(p for p, _ in field_paths(value["result"].get("data")))
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(b.case.case.expect.model_dump(exclude_defaults=True))
    return out


def _likeliest_first(cases: list[str], path: str, checked: dict[str, set[str]]) -> list[str]:
    """The cases that check the field (or a field inside it) first: they are the ones that kill it, and a
    mutant stops at its first kill. The order never changes a verdict, only how many trials it takes."""
    inside = path + "."

    def rank(case_id: str) -> int:
        fields = checked[case_id]
        if path in fields:
            return 0
        return 1 if any(f.startswith(inside) or f.startswith(path + "[].") for f in fields) else 2

    return sorted(dict.fromkeys(cases), key=rank)


def _tool_mutants(
    add: Callable[..., None], clean: list[CleanRun], called: dict[str, list[CleanRun]], catalog: set[str]
) -> None:
    writes = [x for b in clean for x in b.exchanges if x["method"] in proxy_ops.MUTATING]
    write = writes[0] if writes else {"method": "POST", "path": "/", "request_json": {}, "request_type": ""}
    write_params = {
        "method": write["method"],
        "path": write["path"],
        "headers": {"Content-Type": write["request_type"] or "application/json"},
        "body": json.dumps(write["request_json"], ensure_ascii=False) if write["request_json"] is not None else "",
    }
    for tool in sorted(_read_only_tools(clean)):
        cases = [b.id for b in called.get(tool, [])]
        add(
            "readonly_writes",
            f"{tool} + {write['method']} {write['path']}",
            {"tool": tool, "write": write_params},
            cases,
        )
    for tool in sorted(_registered_tools(clean) | catalog):
        runs = called.get(tool, [])
        prepare = [b.id for b in runs for c in b.trace.calls if c.tool == tool and _confirmation_required(c.result)]
        if prepare or tool.startswith("prepare"):
            add("prepare_submits", tool, {"tool": tool}, prepare)
        errors = [b.id for b in runs for c in b.trace.calls if c.tool == tool and _error_message(c.result)]
        add("error_leaks", tool, {"tool": tool}, errors)
        add("stale_tool", tool, {"tool": tool}, [b.id for b in clean if _leaves_route_of(b.trace, tool)])
        for arg, cases in sorted(_retargetable(tool, runs).items()):
            add("wrong_target", f"{tool}({arg})", {"tool": tool, "arg": arg}, cases)
        if tool not in called:
            add("result_field_altered", f"{tool} → any field (never called)", {"tool": tool, "path": "*"}, [])


def _confirmation_required(result: object) -> bool:
    return isinstance(result, dict) and "CONFIRM" in str(result.get("code", "")).upper()


def _error_message(result: object) -> bool:
    return isinstance(result, dict) and result.get("status") == "error" and isinstance(result.get("message"), str)


def _leaves_route_of(trace: Trace, tool: str) -> bool:
    """The tool was registered on a route the trial later left (in the same document)."""
    routes = {r.route for r in trace.registrations if r.type == "register" and r.tool_name == tool}
    return any(s.route_before in routes and s.route_after != s.route_before for s in trace.steps)


def _retargetable(tool: str, runs: list[CleanRun]) -> dict[str, list[str]]:
    """Arguments whose value the trial took from a list of several items an earlier result showed."""
    out: dict[str, list[str]] = {}
    for b in runs:
        shown: list[list[Any]] = []
        for call in b.trace.calls:
            if call.tool == tool:
                for arg, value in call.args.items():
                    if isinstance(value, str) and any(value in values and len(values) > 1 for values in shown):
                        out.setdefault(arg, []).append(b.id)
            shown += _lists_in(call.result)
    return out


def _lists_in(value: object) -> list[list[Any]]:
    found: list[list[Any]] = []
    if isinstance(value, list):
        items = [v for v in value if isinstance(v, dict)]
        for key in {k for item in items for k in item}:
            found.append([item.get(key) for item in items])
        for v in value:
            found += _lists_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            found += _lists_in(v)
    return found


def _coincidence_mutants(add: Callable[..., None], clean: list[CleanRun], called: dict[str, list[CleanRun]]) -> None:
    """Bugs a case passes by coincidence: a time, a list, an error's flag, an input equal to the site's own."""
    aria = {b.id: b.trace.ui.aria_snapshot or "" for b in clean}
    add(
        "time_shifted",
        "every displayed date and time",
        {"hours": -8},
        [b.id for b in clean if CLOCK_TIME.search(aria[b.id])],
    )
    # seen by every case that shows a time; only one played in another zone than the site's can tell
    timed = [b for b in clean if CLOCK_TIME.search(aria[b.id])]
    zones = [b.trace.timezone_id for b in timed]
    usual = max(set(zones), key=zones.count) if zones else None
    elsewhere = sorted(timed, key=lambda b: b.trace.timezone_id == usual)
    add("clock_zone_dropped", "every date formatter's timeZone", {}, [b.id for b in elsewhere])
    lists = [
        b.id
        for b in clean
        if "listitem" in aria[b.id]
        and any(k in ("list", "short_list") for c in b.trace.calls for _, k in field_paths(_result_data(c)))
    ]
    add("list_keeps_stale", "every list the page refills", {}, lists)
    flags: dict[tuple[str, str], list[str]] = {}
    for tool, runs in called.items():
        for b in runs:
            for call in b.trace.calls:
                if call.tool == tool and isinstance(call.result, dict) and call.result.get("status") == "error":
                    for key, value in call.result.items():
                        if isinstance(value, bool):
                            flags.setdefault((tool, key), []).append(b.id)
    for (tool, key), cases in sorted(flags.items()):
        add("error_flag_flipped", f"{tool} error → {key}", {"tool": tool, "field": key}, cases)
    retryable: dict[str, list[str]] = {}
    for (tool, key), cases in sorted(flags.items()):
        if key == "retryable":
            retryable[tool] = cases
    for tool, cases in sorted(retryable.items()):
        add("retryable_error_as_success", f"{tool} retryable error → success", {"tool": tool}, cases)
    prefilled: dict[tuple[str, str], list[str]] = {}
    for tool, runs in sorted(called.items()):
        for b in runs:
            account = _account_values(b.exchanges)
            args = {k for c in b.trace.calls if c.tool == tool for k, v in c.args.items() if isinstance(v, str)}
            values = {k: account[k] for k in sorted(args & set(account))}
            if values:
                prefilled.setdefault((tool, json.dumps(values, ensure_ascii=False)), []).append(b.id)
    for (tool, shown), cases in sorted(prefilled.items()):
        params = {"tool": tool, "values": json.loads(shown)}
        add("prefill_wins", f"{tool}({', '.join(params['values'])}) ← the signed-in account's", params, cases)


def _account_values(exchanges: list[dict[str, Any]]) -> dict[str, str]:
    """The signed-in account's text fields as the site's answers show them ({user: {name, email}})."""
    found: dict[str, str] = {}

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if ACCOUNT_KEY.match(str(key)) and isinstance(value, dict):
                    found.update({k: v for k, v in value.items() if isinstance(v, str) and v})
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    for x in exchanges:
        walk(x["response_json"])
    return found


def _page_mutants(add: Callable[..., None], clean: list[CleanRun]) -> None:
    for name in sorted(_control_names(clean)):
        cases = [b.id for b in clean if _shows_control(b, name)]
        for op in ("confirm_disabled", "confirm_hidden", "confirm_renamed", "confirm_does_nothing"):
            add(op, name, {"control": name}, cases)
    markup = [
        b.id
        for b in clean
        if any(MARKUP.search(s) for x in b.exchanges for s in strings_in(x["response_json"]))
        or any(MARKUP.search(s) for c in b.trace.calls for s in strings_in(c.result))
    ]
    add("text_as_markup", "every text node with markup", {}, markup)
    add("sanitiser_keeps_markup", "every text node with markup, sanitised", {}, markup)
    submits = [
        b.id
        for b in clean
        if b.trace.confirmation and b.trace.confirmation.actionable and b.trace.confirmation.actionable.submits_form
    ]
    add("submit_listener_dead", "every form's submit listener", {}, submits)
    summaries = [b.id for b in clean if re.search(r"dialog[^\n]*\n(?:\s+-[^\n]*\n)*?\s+- term:", aria(b))]
    add("dialog_field_swapped", "every dialog's summary (its last field)", {}, summaries)
    selects = [b.id for b in clean if "combobox" in (b.trace.ui.aria_snapshot or "")]
    add("select_label_shifted", "every select's option labels", {}, selects)
    prepared: dict[str, list[str]] = {}
    for b in clean:
        for tool in {c.tool for c in b.trace.calls}:
            targets = {
                json.dumps(c.args, sort_keys=True)
                for c in b.trace.calls
                if c.tool == tool and isinstance(c.result, dict) and c.result.get("code") == "CONFIRMATION_REQUIRED"
            }
            if len(targets) > 1:  # prepared twice, for two records: the second may come while the dialog is open
                prepared.setdefault(tool, []).append(b.id)
    for tool, cases in sorted(prepared.items()):
        add("retarget_keeps_first", f"{tool} prepared again, dialog open", {"tool": tool}, cases)


def _surface_mutants(add: Callable[..., None], clean: list[CleanRun], called: dict[str, list[CleanRun]]) -> None:
    """What a tool says of itself: annotations that lie, a description that carries untrusted text."""
    read_only = _read_only_tools(clean)
    for tool, runs in sorted(called.items()):
        wrote = [b.id for b in runs for c in b.trace.calls if c.tool == tool and c.writes]
        if wrote and tool not in read_only:
            add("annotation_lie", f"{tool} says readOnlyHint", {"tool": tool}, wrote)
    hinted: dict[str, list[str]] = {}
    for b in clean:
        for r in b.trace.registrations:
            if r.type == "register" and r.tool_name and r.hints.get("untrustedContentHint"):
                hinted.setdefault(r.tool_name, []).append(b.id)
    for tool, cases in sorted(hinted.items()):
        add(
            "hint_dropped",
            f"{tool} without untrustedContentHint",
            {"tool": tool, "hint": "untrustedContentHint"},
            cases,
        )
    constrained: dict[str, list[str]] = {}  # tools whose live schema has an enum or a required name
    for b in clean:
        for r in b.trace.registrations:
            schema = (r.model_extra or {}).get("inputSchema") if r.type == "register" and r.tool_name else None
            if isinstance(schema, dict) and _constrained(schema) and b.id not in constrained.get(str(r.name), []):
                constrained.setdefault(str(r.name), []).append(b.id)
    for tool, cases in sorted(constrained.items()):
        add("schema_constraint_dropped", f"{tool} without enum and required", {"tool": tool}, cases)
    # one mutant per tool registered beside a hinted one: the longest untrusted sentence any such page showed
    beside: dict[str, list[tuple[CleanRun, list[str]]]] = {}
    for b in clean:
        registrations = [r.model_dump() for r in b.trace.registrations]
        passages = probes.untrusted_passages(b.trace.calls, registrations)
        hints = {r["name"] for r in registrations if (r.get("annotations") or {}).get("untrustedContentHint")}
        named = {r.tool_name for r in b.trace.registrations if r.type == "register" and r.tool_name is not None}
        for tool in sorted(named - hints):
            if passages:
                beside.setdefault(str(tool), []).append((b, passages))
    for tool, seen in sorted(beside.items()):
        text = max((p for _, passages in seen for p in passages), key=len)
        cases = [b.id for b, passages in seen if text in passages]
        add("description_injected", f"{tool} ← {text[:30]}…", {"tool": tool, "text": text}, cases)


def _constrained(schema: dict[str, Any]) -> bool:
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    return bool(schema.get("required")) or any(isinstance(p, dict) and "enum" in p for p in props.values())


def aria(b: CleanRun) -> str:
    return b.trace.ui.aria_snapshot or ""


def _shows_control(b: CleanRun, name: str) -> bool:
    conf = b.case.case.expect.confirmation
    if conf and name in (conf.control.name, conf.control.text, conf.control.label):
        return True
    clicks = [s for s in b.case.case.steps if isinstance(s, ClickAction)]
    if any(name in (s.target.name, s.target.text, s.target.label) for s in clicks):
        return True
    return f'button "{name}"' in (b.trace.ui.aria_snapshot or "")


def _proxy_mutants(add: Callable[..., None], clean: list[CleanRun]) -> None:
    params: dict[tuple[str, str], list[str]] = {}
    scripts: dict[tuple[str, str], list[str]] = {}  # GET parameters with Chinese, Japanese or Korean in them
    unauthorized: dict[tuple[str, str], list[str]] = {}
    errors: dict[str, list[str]] = {}
    repeats: dict[tuple[str, str], list[str]] = {}
    success: dict[tuple[str, str], Any] = {}
    for b in clean:
        seen_writes: set[str] = set()
        for x in b.exchanges:
            key = (x["method"], x["template"])
            if 200 <= x["status"] < 300 and x["response_json"] is not None:
                success.setdefault(key, x["response_json"])
            if x["method"] == "GET":
                for name, value in x["query"].items():
                    if value:
                        params.setdefault((x["template"], name), []).append(b.id)
                    if value and proxy_ops.CJK.search(str(value)):
                        scripts.setdefault((x["template"], name), []).append(b.id)
            if x["status"] == 401:
                unauthorized.setdefault(key, []).append(b.id)
            if x["status"] >= 400 and isinstance(x["response_json"], dict) and "message" in x["response_json"]:
                errors.setdefault(x["template"], []).append(b.id)
            if x["method"] in proxy_ops.MUTATING:
                write = f"{x['method']} {x['path']} {json.dumps(x['request_json'], sort_keys=True)}"
                repeats.setdefault(key, [])
                if write in seen_writes:
                    repeats[key].append(b.id)
                seen_writes.add(write)
    for (template, name), cases in sorted(params.items()):
        add("filter_ignored", f"GET {template} ?{name}", {"path": template, "param": name}, cases)
    for (template, name), cases in sorted(scripts.items()):
        add("query_script_stripped", f"GET {template} ?{name} without CJK", {"path": template, "param": name}, cases)
    for (method, template), cases in sorted(unauthorized.items()):
        body = success.get((method, template))
        add(
            "unauthorized_as_success",
            f"{method} {template}",
            {"method": method, "path": template, "success": body},
            cases,
        )
    for template, cases in sorted(errors.items()):
        add("api_error_leaks", template, {"path": template}, cases)
    for (method, template), cases in sorted(repeats.items()):
        add("repeat_not_idempotent", f"{method} {template}", {"path": template}, cases)


# ---- running ---------------------------------------------------------------------------


@dataclass
class MutateOptions:
    out_root: Path = Path("traces")
    run_id: str = "mutate"
    workers: int = 2
    operators: list[str] | None = None  # None: all
    base_url: str | None = None
    site_config: SiteConfig | None = None
    chromium: str | None = None
    catalog_tools: set[str] = field(default_factory=set)
    catalog_hints: dict[str, Any] | None = None  # the suite catalog's hints: every trial holds the tools to them
    catalog_schemas: dict[str, Any] | None = None  # its input schemas and what the server enforces (tools.schemas)
    clean_runs: int = 2
    confirm: str = "doubtful"  # which failing cases are played again before they kill: doubtful, all or none
    browser_context: BrowserContextSettings = field(default_factory=BrowserContextSettings)  # the suite's zone, locale


@dataclass
class MutationResult:
    mutants: list[Mutant]
    clean_failed: dict[str, str]  # case -> why it was left out
    out_dir: Path
    clean_flaky: dict[str, str] = field(default_factory=dict)  # case -> its failure before it passed

    def count(self, status: str) -> int:
        return sum(1 for m in self.mutants if m.status == status)

    @property
    def run(self) -> int:
        return self.count("killed") + self.count("survived")

    @property
    def score(self) -> float | None:
        return self.count("killed") / self.run if self.run else None

    def to_json(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "killed": self.count("killed"),
            "survived": self.count("survived"),
            "run": self.run,
            "equivalent": self.count("equivalent"),
            "unseen": self.count("unseen"),
            "clean_failed": self.clean_failed,
            "clean_flaky": self.clean_flaky,
            "operators": {name: {"side": op.side, "what": op.what} for name, op in OPERATORS.items()},
            "mutants": [asdict(m) for m in self.mutants],
        }


def _renamed(lc: LoadedCase, suffix: str) -> LoadedCase:
    return LoadedCase(lc.case.model_copy(update={"id": f"{lc.case.id}-{suffix}"}), lc.file, lc.lines)


class _Trials:
    """One open run for the whole mutation: each trial is played as soon as it is decided, on the next free
    worker. No round waits for its slowest trial and the browser, proxy and site start once."""

    def __init__(self, run: OpenRun, workers: int):
        self.run = run
        self.free: asyncio.Queue[int] = asyncio.Queue()  # worker numbers (a remote browser is a worker's own)
        for number in range(max(1, workers)):
            self.free.put_nowait(number)

    async def play(self, lc: LoadedCase, suffix: str, hook: TrialHook) -> Trace:
        """The case, renamed ``<case>-<suffix>``, once with the trial hook; waits for a free worker (first come)."""
        case = _renamed(lc, suffix)
        worker = await self.free.get()
        try:
            return await self.run.play(case, 0, worker, hook)
        finally:
            self.free.put_nowait(worker)


@contextlib.asynccontextmanager
async def _open(options: MutateOptions, run_id: str, config: SiteConfig) -> AsyncIterator[_Trials]:
    settings = RunSettings(
        agent_factory=ReferenceAgent,  # a mutant is killed by the cases' own plans: deterministic evidence
        out_root=options.out_root / options.run_id,
        run_id=run_id,
        workers=options.workers,
        site_config=config,
        chromium=options.chromium,
        screenshots="off",  # a killed mutant's evidence is its trace; nobody looks at its screen
        browser_context=options.browser_context,
        # the catalog's hints and schemas and the audit's rule, as every run has them
        **surface_checks(options.catalog_hints, options.catalog_schemas),
    )
    async with open_run([], settings, planned=False) as run:
        yield _Trials(run, options.workers)


async def _play(
    pairs: list[tuple[LoadedCase, str, TrialHook]], options: MutateOptions, run_id: str, config: SiteConfig
) -> dict[str, Trace]:
    """Each (case, job suffix, trial hook) once, in one run; traces by job id."""
    async with _open(options, run_id, config) as trials:
        traces = await asyncio.gather(*(trials.play(lc, suffix, hook) for lc, suffix, hook in pairs))
    return {t.case_id: t for t in traces}


async def clean_runs(cases: list[LoadedCase], trials: _Trials, runs: int) -> list[CleanRun]:
    """``runs`` passing runs of every case; a case that fails is played again (twice at most).

    A case that cannot pass unmutated is left out (its mutants would die of the case, not the bug).
    """
    wanted = max(1, runs)
    passing: dict[str, list[Trace]] = {lc.case.id: [] for lc in cases}
    failing: dict[str, Trace] = {}
    observers: dict[str, proxy_ops.Observer] = {}

    async def play(lc: LoadedCase, attempt: int) -> None:
        observer = proxy_ops.Observer()
        trace = await trials.play(lc, f"B{attempt}", TrialHook(proxy=observer))
        if trace.verdict == "passed":
            passing[lc.case.id].append(trace)
            observers.setdefault(lc.case.id, observer)
        else:
            failing[lc.case.id] = trace

    # the wanted runs at once (they are independent), in attempt order: the first passing one is the case's clean run
    await asyncio.gather(*(play(lc, attempt) for attempt in range(1, wanted + 1) for lc in cases))
    for lc in cases:
        passing[lc.case.id].sort(key=lambda t: t.case_id)
    for attempt in (wanted + 1, wanted + 2):
        todo = [lc for lc in cases if len(passing[lc.case.id]) < wanted]
        if not todo or len(todo) == len(cases):  # every case failing is the site or the machine: stop
            break
        await asyncio.gather(*(play(lc, attempt) for lc in todo))
    out = []
    for lc in cases:
        runs_of = passing[lc.case.id]
        if not runs_of:
            out.append(CleanRun(lc, failing[lc.case.id], [], set()))
            continue
        noise: set[str] = set()
        for other in runs_of[1:]:
            noise |= set(differences(observable(runs_of[0]), observable(other), set()))
        flaky = f"failed once unmutated ({failing[lc.case.id].verdict_reason})" if lc.case.id in failing else None
        out.append(CleanRun(lc, runs_of[0], observers[lc.case.id].exchanges, noise, flaky))
    return out


async def mutate(cases: list[LoadedCase], options: MutateOptions, progress: Callable[[str], None]) -> MutationResult:
    out_dir = options.out_root / options.run_id
    out_dir.mkdir(parents=True, exist_ok=True)
    with _Site(options) as config:
        async with _open(options, "play", config) as trials:
            progress(f"clean runs: {len(cases)} case(s) × {options.clean_runs}")
            base = await clean_runs(cases, trials, options.clean_runs)
            failed = {b.id: b.trace.verdict_reason for b in base if b.trace.verdict != "passed"}
            usable = [b for b in base if b.id not in failed]
            mutants = generate(usable, options.catalog_tools)
            if options.operators:
                mutants = [m for m in mutants if m.operator in options.operators]
            pending = [m for m in mutants if m.status == "pending"]
            progress(f"{len(mutants)} mutant(s), {len(pending)} with cases that can see them")
            hunt = _Hunt(trials, {b.id: b for b in usable}, options.confirm, len(pending), progress)
            await asyncio.gather(*(hunt.mutant(m) for m in pending))
    for m in mutants:
        if m.status == "pending":
            m.status = "survived" if any(r.differs for r in m.runs) else "equivalent"
    result = MutationResult(mutants, failed, out_dir, {b.id: b.flaky for b in usable if b.flaky})
    write_atomic(RunDir(out_dir).mutation, json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n")
    return result


@dataclass
class _Hunt:
    """Each mutant on the cases that can see it, one case after another, until one kills it."""

    trials: _Trials
    by_id: dict[str, CleanRun]
    confirm: str  # doubtful, all or none: which failing cases are played again before they kill
    total: int
    progress: Callable[[str], None]
    done: int = 0

    async def mutant(self, m: Mutant) -> None:
        for case_id in m.cases:
            b = self.by_id[case_id]
            hook = m.hook()
            trace = await self.trials.play(b.case, m.id, hook)
            if trace.verdict != "passed" and self._confirms(b, trace):
                again = m.hook()
                second = await self.trials.play(b.case, f"{m.id}-again", again)
                if second.verdict == "passed":  # a failure that does not repeat is the machine, not the mutant
                    _judge(m, b, second, again, flaky=f"{trace.verdict}: {trace.verdict_reason}")
                    continue
            _judge(m, b, trace, hook)
            if m.status == "killed":
                break
        self.done += 1
        verdict = "killed by " + m.runs[-1].case if m.status == "killed" else f"passed {len(m.runs)} case(s)"
        self.progress(f"[{self.done}/{self.total}] {m.id} {m.operator} {m.target}: {verdict}")

    def _confirms(self, b: CleanRun, trace: Trace) -> bool:
        """Whether a failing case is played again before it kills (docs/suite-validity.md says why).

        A failure is doubtful when the trial could not run (the machine or the site, as often as the
        mutant), when the case failed once unmutated too, or when nothing a check reads differs from
        the case's passing clean runs: then nothing in the trace ties the failure to the mutant.
        """
        if self.confirm != "doubtful":
            return self.confirm == "all"
        changed = [key for key in differences(b.observed, observable(trace), b.noise) if key != "verdict"]
        return trace.verdict == "not_run" or b.flaky is not None or not changed


def _judge(m: Mutant, b: CleanRun, trace: Trace, hook: TrialHook, flaky: str | None = None) -> None:
    diff = differences(b.observed, observable(trace), b.noise)
    bad = [f"{a.id}: {a.why}" for a in trace.assertions if a.status != "passed"]
    if trace.verdict == "not_run" and not bad:
        bad = [trace.verdict_reason]
    fired = getattr(hook.proxy, "fired", None)
    where = RunDir.relative_trace(trace.trial_id, trace.run_id)
    m.runs.append(CaseRun(b.id, trace.verdict, diff, bad, fired, where, flaky))
    if trace.verdict != "passed":
        m.status = "killed"


class _Site:
    """The embedded demo site (test mode), started once for every round; or the given one."""

    def __init__(self, options: MutateOptions):
        self.options = options
        self.server: Any = None

    def __enter__(self) -> SiteConfig:
        if self.options.site_config or self.options.base_url:
            config = self.options.site_config or SiteConfig(base_url=self.options.base_url or "")
            if self.options.base_url:
                config.base_url = self.options.base_url
            return config
        from webmcp_eval.site_under_test.server import SiteServer

        self.server = SiteServer(test_mode=True)
        self.server.__enter__()
        return demo_site_config(self.server.url)

    def __exit__(self, *exc: object) -> None:
        if self.server is not None:
            self.server.__exit__(*exc)


# ---- the report --------------------------------------------------------------------------


def print_report(result: MutationResult, console: Console) -> None:
    from rich.table import Table

    table = Table(title="mutants")
    for col in ("mutant", "operator", "target", "status", "cases"):
        table.add_column(col)
    style = {"killed": "green", "survived": "bold red", "equivalent": "cyan", "unseen": "yellow"}
    for m in sorted(
        result.mutants, key=lambda m: (["survived", "killed", "equivalent", "unseen"].index(m.status), m.id)
    ):
        table.add_row(m.id, m.operator, m.target, f"[{style.get(m.status, '')}]{m.status}[/]", _cases_cell(m))
    console.print(table)
    for case, why in result.clean_failed.items():
        console.print(f"[yellow]left out[/] {case}: it does not pass unmutated ({why})", highlight=False)
    for case, why in result.clean_flaky.items():
        console.print(f"[yellow]flaky[/] {case}: {why}", markup=False, highlight=False)
    survivors = [m for m in result.mutants if m.status == "survived"]
    if survivors:
        console.print("[bold]survivors: the cases saw the bug and passed[/]")
        for m in survivors:
            for r in m.runs:
                if r.differs:
                    console.print(
                        f"  {m.id} {m.operator} {m.target}: {r.case} passed although its "
                        f"{', '.join(r.differs)} differed from the clean runs ({r.trace})",
                        markup=False,
                        highlight=False,
                    )
    console.print(summary_line(result), highlight=False)


def _cases_cell(m: Mutant) -> str:
    if m.status == "killed":
        return "killed by " + ", ".join(r.case for r in m.runs if r.verdict != "passed")
    if m.status == "survived":
        return "passed in " + ", ".join(r.case for r in m.runs if r.differs)
    if m.status == "equivalent":
        return "no difference in " + ", ".join(r.case for r in m.runs)
    return "no case touches it"


def summary_line(result: MutationResult) -> str:
    score = f"{result.score:.1%}" if result.score is not None else "n/a"
    return (
        f"mutation score {score} ({result.count('killed')} killed / {result.run} run) · "
        f"{result.count('survived')} survived · {result.count('equivalent')} equivalent · "
        f"{result.count('unseen')} unseen (no case touches them) · {RunDir(result.out_dir).mutation}"
    )
