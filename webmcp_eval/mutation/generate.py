"""Mutant generation: every mutant the suite's clean runs suggest, with the cases that can see each."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from webmcp_eval.data_file import strings_in
from webmcp_eval.judge import probes
from webmcp_eval.matchers import resolve
from webmcp_eval.mutation.evidence import CleanRun, _result_data, field_paths
from webmcp_eval.mutation.mutants import Mutant
from webmcp_eval.proxies import mutations as proxy_ops
from webmcp_eval.suite.case import ClickAction
from webmcp_eval.trace import Trace

MARKUP = re.compile(r"<[a-zA-Z!/]")
CLOCK_TIME = re.compile(r"\b\d{1,2}:\d{2}\b")  # a time of day as a page shows it
ACCOUNT_KEY = re.compile(r"(?i)^(user|account|profile|me|viewer|customer)$")  # who is signed in, in an answer


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
