"""What the kinds judge of a trial's tool surface and of its confirmation control, from the trace alone.

The page is read by webmcp_eval/judge/probes.py (in the browser); these read what it recorded: whether the
examination of a control says all a judgement needs and what stops a person using it (``expect.confirmation``),
each live tool's hints and input schema against the suite's catalog, and untrusted text a tool's description
carries (``expect.calls``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from webmcp_eval.data_file import strings_in
from webmcp_eval.matchers import route_pattern
from webmcp_eval.trace import ActionableRecord, RegistrationEvent

_NEEDED = (
    "enabled",
    "opacity",
    "hidden_by_style",
    "size",
    "pointer_events",
    "reachable",
    "name",
    "submits_form",
    "in_open_dialog",
)


def unread(found: ActionableRecord) -> list[str]:
    """The facts a judgement needs that the examination did not record (an older or broken trace).

    ``covered`` may be None (outside the viewport: nothing covers it), so it is not among them.
    """
    return [name for name in _NEEDED if getattr(found, name) is None]


def problems(found: ActionableRecord, expected_name: str | None) -> list[str]:
    """Why a person could not use the control (empty: they could). Call :func:`unread` first."""
    out = []
    if not found.enabled:
        out.append("disabled")
    opacity, size = found.opacity if found.opacity is not None else 1, found.size or [1, 1]
    if found.hidden_by_style or opacity < 0.1 or 0 in size:
        out.append(f"not visible to the eye (opacity {found.opacity}, size {found.size})")
    if found.pointer_events == "none":
        out.append("does not take clicks (pointer-events: none)")
    if not found.reachable:
        out.append("off the page: no scrolling reaches it")
    if found.covered:
        out.append("covered by another element")
    name = found.name or ""
    if not name or (expected_name and expected_name not in name):
        out.append(f"named {name!r}" + (f", not {expected_name!r}" if expected_name else ""))
    if not (found.submits_form or found.in_open_dialog):
        out.append("neither the submit control of its form nor a control of the open dialog")
    return out


# The hints a catalog records and a live registration is held to (absent is false).
HINTS = ("readOnlyHint", "untrustedContentHint", "destructiveHint", "idempotentHint", "openWorldHint")


def hints_against_catalog(
    registrations: list[RegistrationEvent], catalog: dict[str, dict[str, Any]] | None
) -> tuple[list[str], int]:
    """(differences, registrations compared): each live tool's hints against those the suite's catalog gives
    it on its route (``{route pattern: {tool: {hint: value}}}``); a tool or route the catalog lacks is left out."""
    if not catalog:
        return [], 0
    problems, compared = [], 0
    for reg in registrations:
        pattern = route_pattern(catalog, reg.route or "") if reg.type == "register" else None
        expected = catalog.get(pattern or "", {}).get(reg.tool_name or "")
        if expected is None:
            continue
        compared += 1
        live = reg.hints
        differ = [h for h in HINTS if bool(live.get(h)) != bool(expected.get(h))]
        if differ:
            said = ", ".join(f"{h} {bool(live.get(h))} (the catalog: {bool(expected.get(h))})" for h in differ)
            problems.append(f"{reg.tool_name} on {reg.route}: {said}")
    return problems, compared


def schemas_against_catalog(
    registrations: list[RegistrationEvent], catalog: dict[str, Any] | None
) -> tuple[list[str], list[str], int]:
    """(losses the server enforces, other drift, registrations compared): each live tool's ``inputSchema``
    against the one the suite's catalog gives it on its route (``{"routes": ..., "enforced": ...}``,
    ``SuiteCatalog.schema_surface``). A loss is a constraint the agent is no longer told (a property, its
    ``enum`` or ``type``, a ``required`` name); one on an argument the catalog marks enforced fails the
    trial, since the server still refuses what the live schema now allows. A form's tool (no schema of its
    own: the browser builds it) and a tool or route the catalog lacks are left out."""
    if not catalog or not catalog.get("routes"):
        return [], [], 0
    routes: dict[str, dict[str, Any]] = catalog["routes"]  # checked when the catalog was read (SuiteCatalog)
    enforced: dict[str, dict[str, list[str]]] = catalog.get("enforced") or {}
    losses: list[str] = []
    drift: list[str] = []
    seen: set[str] = set()
    compared = 0
    for reg in registrations:
        live = (reg.model_extra or {}).get("inputSchema") if reg.type == "register" else None
        pattern = route_pattern(routes, reg.route or "") if isinstance(live, dict) else None
        expected = routes.get(pattern or "", {}).get(reg.tool_name or "")
        if not isinstance(live, dict) or pattern is None or not isinstance(expected, dict):
            continue
        compared += 1
        key = json.dumps([reg.tool_name, pattern, live], sort_keys=True)
        if key in seen:
            continue  # the same schema registered again (another visit of the route)
        seen.add(key)
        held = set(enforced.get(pattern, {}).get(reg.tool_name or "", []))
        for argument, what in schema_differences(expected, live):
            line = f"{reg.tool_name} on {reg.route}: {what}"
            if argument in held and what.startswith("lost"):
                losses.append(line + " (the catalog says the server enforces it)")
            elif line not in drift:
                drift.append(line)
    return losses, drift, compared


def schema_differences(expected: dict[str, Any], live: dict[str, Any]) -> list[tuple[str, str]]:
    """(argument, what differs) between a catalog schema and a live one: properties added or removed, and
    each kept property's type, enum and required-ness. A difference that tells the agent less starts "lost"."""
    found: list[tuple[str, str]] = []
    want, have = expected.get("properties") or {}, live.get("properties") or {}
    want_required, have_required = set(expected.get("required") or []), set(live.get("required") or [])
    for name in sorted(set(want) | set(have)):
        if name not in have:
            found.append((name, f"lost property {name!r}"))
            continue
        if name not in want:
            found.append((name, f"added property {name!r} (not in the catalog)"))
            continue
        a, b = want[name] if isinstance(want[name], dict) else {}, have[name] if isinstance(have[name], dict) else {}
        if a.get("type") != b.get("type"):
            verb = "lost" if a.get("type") is not None else "added"
            found.append((name, f"{verb} type of {name!r}: {b.get('type')} (the catalog: {a.get('type')})"))
        if "enum" in a and "enum" not in b:
            found.append((name, f"lost enum of {name!r} (the catalog: {a['enum']})"))
        elif "enum" in b and "enum" in a and set(map(str, b["enum"])) - set(map(str, a["enum"])):
            wider = sorted(set(map(str, b["enum"])) - set(map(str, a["enum"])))
            found.append((name, f"lost enum values of {name!r}: it allows {wider} (the catalog does not)"))
        elif "enum" in b and b.get("enum") != a.get("enum"):
            found.append((name, f"enum of {name!r} is {b['enum']} (the catalog: {a.get('enum')})"))
        if name in want_required and name not in have_required:
            found.append((name, f"lost required {name!r}"))
        elif name in have_required and name not in want_required:
            found.append((name, f"added required {name!r} (not in the catalog)"))
    return found


PASSAGE = re.compile(r"[^。.!?！？\n]{12,}")  # a sentence long enough not to be a common word
# a code, an id, a date or a URL part (TEMPORARILY_UNAVAILABLE, 2027-01-09T14:00+08:00): the site's vocabulary,
# which a description may well name, never the untrusted words of a person
TOKEN = re.compile(r"[\w.:+/=&?%#@-]+", re.ASCII)


def hinted_descriptions(registrations: Sequence[RegistrationEvent | Mapping[str, Any]]) -> dict[Any, str]:
    """The tools a trace's registration log registered with untrustedContentHint, each with its descriptions
    (the log as records, or as their dicts)."""
    own: dict[Any, str] = {}  # tool name (None: a registration without one) -> its descriptions
    for r in registrations:
        reg = r if isinstance(r, RegistrationEvent) else RegistrationEvent.model_validate(r)
        if reg.type == "register" and (reg.annotations or {}).get("untrustedContentHint"):
            own[reg.name] = own.get(reg.name, "") + str((reg.model_extra or {}).get("description") or "")
    return own


def untrusted_passages(calls: list[Any], registrations: Sequence[RegistrationEvent | Mapping[str, Any]]) -> list[str]:
    """The sentences (12 characters or more) of every string in the results of untrustedContentHint tools.

    A sentence the hinted tool's own description also says is the site's own words (a notice it repeats
    in its results), not the untrusted content."""
    own = hinted_descriptions(registrations)
    found: list[str] = []
    for call in calls:
        if call.tool in own:
            said = own[call.tool]
            for text in strings_in(call.result):
                for p in (p.strip() for p in PASSAGE.findall(text)):
                    if len(p) >= 12 and not TOKEN.fullmatch(p) and p not in found and p not in said:
                        found.append(p)
    return found


def carried_untrusted(registrations: list[RegistrationEvent], passages: list[str]) -> list[str]:
    """Each registered tool whose description or annotations hold one of the untrusted passages."""
    out = []
    for reg in registrations:
        if reg.type != "register":
            continue
        extra = reg.model_extra or {}
        text = f"{extra.get('description') or ''} {reg.annotations or ''}"
        hit = next((p for p in passages if p in text), None)
        if hit:
            where = f"{reg.tool_name} (registered on {reg.route})"
            line = f"{where} carries untrusted text in its description: {hit[:60]!r}"
            if line not in out:
                out.append(line)
    return out
