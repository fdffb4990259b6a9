"""In-page probes for what a person meets, beyond "the element exists".

``actionable``: can a person use this control? Playwright's ``is_visible``
says yes to a transparent or off-page button; a person would not find it.
``untrusted_rendering``: is untrusted text with markup in it shown as text, or
did the page make elements of it? Both only read the page.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Collection
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page

from webmcp_eval.data_file import strings_in
from webmcp_eval.kinds._probes import schemas_against_catalog as schemas_against_catalog  # read by the trial
from webmcp_eval.kinds._probes import untrusted_passages as untrusted_passages  # read by mutate
from webmcp_eval.trace import ActionableRecord, ConsistencyRecord, UntrustedText

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
