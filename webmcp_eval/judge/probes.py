"""In-page probes for what a person meets, beyond "the element exists".

``actionable``: can a person use this control? Playwright's ``is_visible``
says yes to a transparent or off-page button; a person would not find it.
``untrusted_rendering``: is untrusted text with markup in it shown as text, or
did the page make elements of it? Both only read the page.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page

from webmcp_eval.data_file import strings_in
from webmcp_eval.suite.validate import SuiteCatalog
from webmcp_eval.trace import ActionableRecord, ConsistencyRecord, RegistrationEvent, UntrustedText

MARKUP = re.compile(r"<[a-zA-Z!/]")

_ACTIONABLE_JS = """
el => {
  const style = getComputedStyle(el);
  let opacity = 1;
  for (let n = el; n && n.nodeType === 1; n = n.parentElement) {
    opacity *= parseFloat(getComputedStyle(n).opacity || "1");
  }
  const r = el.getBoundingClientRect();
  const doc = document.documentElement;
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  const inViewport = x >= 0 && y >= 0 && x < innerWidth && y < innerHeight;
  // off the page: no scrolling brings it into view
  const reachable = r.right + scrollX > 0 && r.bottom + scrollY > 0
    && r.left + scrollX < doc.scrollWidth && r.top + scrollY < doc.scrollHeight;
  const top = inViewport ? document.elementFromPoint(x, y) : null;
  const form = el.form || null;
  const submit = !!form && (el.type === "submit" || (el.tagName === "INPUT" && el.type === "image"));
  const dialog = el.closest("dialog[open], [role=dialog], [role=alertdialog]");
  return {
    enabled: !(el.disabled || el.getAttribute("aria-disabled") === "true" || el.closest("fieldset[disabled], [inert]")),
    opacity: Math.round(opacity * 100) / 100,
    hidden_by_style: style.visibility !== "visible" || style.display === "none",
    size: [Math.round(r.width), Math.round(r.height)],
    pointer_events: style.pointerEvents,
    reachable,
    covered: inViewport ? !(top && (top === el || el.contains(top))) : null,
    name: (el.getAttribute("aria-label") || el.innerText || el.value || "").trim(),
    submits_form: submit,
    in_open_dialog: !!dialog && (dialog.tagName !== "DIALOG" || dialog.open),
  };
}
"""

# Where the untrusted text is shown, did the page make elements of its markup? The place is found by the
# text's plain words (its longest run of text outside tags): the element holding them. Any element there of
# a tag the markup has counts, whatever attributes a sanitiser left it (an <img> kept without its onerror is
# still an image the person sees); so does one anywhere with every attribute the markup gave it.
_RENDERING_JS = """
texts => texts.map((text) => {
  const parsed = new DOMParser().parseFromString(text, "text/html");  // inert: nothing loads or runs
  const made = [];
  const describe = (el) => el.localName + [...el.attributes].map(a => `[${a.name}="${a.value}"]`).join("");
  const tags = new Set([...parsed.body.querySelectorAll("*")].map(el => el.localName));
  for (const el of parsed.body.querySelectorAll("*")) {
    let selector = el.localName;
    for (const a of el.attributes) selector += `[${CSS.escape(a.name)}="${CSS.escape(a.value)}"]`;
    try { if (document.querySelector(selector)) made.push(selector); } catch (e) { /* not a selector */ }
  }
  const words = [...parsed.body.childNodes].filter(n => n.nodeType === 3).map(n => n.data.trim())
    .sort((a, b) => b.length - a.length)[0] || "";
  const places = [];
  if (words.length >= 4) {
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.data.includes(words) && n.parentElement && !places.includes(n.parentElement)) places.push(n.parentElement);
    }
  }
  for (const place of places) {
    for (const el of place.querySelectorAll("*")) {
      const found = `${describe(place)} > ${describe(el)}`;
      if (tags.has(el.localName) && !made.includes(found)) made.push(found);
    }
  }
  const tag = (text.match(/<[a-zA-Z!/][^<>]*>?/) || [""])[0];
  return { text: text.length > 160 ? text.slice(0, 160) + "…" : text, elements: made,
           shown_as_text: !!tag && document.body.innerText.includes(tag) };
})
"""


# What the page shows for a tool's answer (expect.consistency): a count element's number, or a list's items.
_PAGE_SIDE_JS = """
([selector, attribute, many]) => {
  const text = (el) => (el.innerText || el.textContent || "").trim();
  if (many) return { items: [...document.querySelectorAll(selector)].map(text) };
  const el = document.querySelector(selector);
  if (!el) return { error: `no element matches ${selector}` };
  const raw = String((attribute ? el.getAttribute(attribute) : text(el)) || "");
  const found = raw.match(/\\d+/);
  if (found) return { count: Number(found[0]) };
  const shown = (attribute ? attribute + "=" : "") + JSON.stringify(raw.slice(0, 60));
  return { error: `${selector} shows no number (${shown})` };
}
"""


async def page_side(
    page: Page, call: int, tool: str, selector: str, attribute: str | None, many: bool
) -> ConsistencyRecord:
    """The page's count (the selector's attribute, else its text's first number) or items right after a call."""
    record = ConsistencyRecord(call=call, tool=tool, selector=selector)
    try:
        found = await page.evaluate(_PAGE_SIDE_JS, [selector, attribute, many])
    except PlaywrightError as err:
        record.error = f"the page could not be read: {str(err).splitlines()[0] if str(err) else type(err).__name__}"
        return record
    record.count, record.items, record.error = found.get("count"), found.get("items"), found.get("error")
    return record


async def actionable(control: Locator) -> ActionableRecord | None:
    """What a person meets at this control; None when it cannot be read (gone, navigating)."""
    with contextlib.suppress(PlaywrightError):
        return ActionableRecord.model_validate(await control.evaluate(_ACTIONABLE_JS, timeout=10_000))
    return None


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


def untrusted_texts(calls: list[Any], untrusted: Collection[Any]) -> list[str]:
    """Strings with markup in the results of the tools marked untrustedContentHint (``untrusted``: their names)."""
    found: list[str] = []
    for call in calls:
        if call.tool in untrusted:
            for text in strings_in(call.result):
                if MARKUP.search(text) and text not in found:
                    found.append(text)
    return found


async def untrusted_rendering(page: Page, texts: list[str]) -> list[UntrustedText] | None:
    if not texts:
        return []
    with contextlib.suppress(PlaywrightError):
        return [UntrustedText.model_validate(found) for found in await page.evaluate(_RENDERING_JS, texts)]
    return None


# The hints a catalog records and a live registration is held to (absent is false).
HINTS = ("readOnlyHint", "untrustedContentHint", "destructiveHint", "idempotentHint", "openWorldHint")


def hints_against_catalog(
    registrations: list[RegistrationEvent], catalog: dict[str, dict[str, Any]] | None
) -> tuple[list[str], int]:
    """(differences, registrations compared): each live tool's hints against those the suite's catalog gives
    it on its route (``{route pattern: {tool: {hint: value}}}``); a tool or route the catalog lacks is left out."""
    if not catalog:
        return [], 0
    routes = SuiteCatalog({"routes": catalog}, "the suite's catalog")
    problems, compared = [], 0
    for reg in registrations:
        pattern = routes.route_pattern(reg.route or "") if reg.type == "register" else None
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
    routes = SuiteCatalog({"routes": catalog["routes"]}, "the suite's catalog")
    enforced: dict[str, dict[str, list[str]]] = catalog.get("enforced") or {}
    losses: list[str] = []
    drift: list[str] = []
    seen: set[str] = set()
    compared = 0
    for reg in registrations:
        live = (reg.model_extra or {}).get("inputSchema") if reg.type == "register" else None
        pattern = routes.route_pattern(reg.route or "") if isinstance(live, dict) else None
        expected = routes.routes.get(pattern or "", {}).get(reg.tool_name or "")
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
