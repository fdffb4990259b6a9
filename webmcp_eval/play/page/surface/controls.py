"""The page's controls that change its tool list: init's note of where tools appear or go after a click.

After a route's tools are read, its visible controls (buttons, links within the same document and hash
routes, toggles, tabs) are found in document order, at most ``CONTROLS_PER_PAGE`` of them. A link to
another document, one that opens another window or a download, a button that submits a form by POST
(a write) and a control off screen until it has the focus (a skip link) are never clicked. The others are
clicked one after another on the page just read, each after the last one settled (on evidence: a page where
nothing changes costs a click and a few milliseconds per control). A control whose click changed the tools,
navigated or could not be clicked there is tried again alone, in a throw-away context from the start route
(after the setup steps), and only what that click does there is noted. Requests other than GET, HEAD and
OPTIONS are answered with an error in every context here (a click explored is never a write to the site), and
so are images, fonts and media of other hosts.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Browser, BrowserContext, Page, Route
from playwright.async_api import Error as PlaywrightError

from webmcp_eval.play.browser.browser import http_credentials
from webmcp_eval.play.page.locate import locate
from webmcp_eval.play.page.surface.log import ShimLog
from webmcp_eval.play.page.surface.model import origin_of
from webmcp_eval.play.page.surface.reader import Surface
from webmcp_eval.play.page.toolhost import ToolHost
from webmcp_eval.suite.case import Locator, SetupStep

CONTROLS_PER_PAGE = 20  # controls clicked per page, at most (the first in document order)
CLICK_TIMEOUT_MS = 2_000  # a control that takes longer to become clickable is left alone
# after a click, the page is read once it settles on evidence, at most this long (a click that starts a request
# that never ends, an image of a host out of reach, costs this much, not the reading's whole settle window)
CLICK_SETTLE_MS = 1_000
BUDGET_S = 15.0  # a page's exploration stops clicking after this long; the note says how many were clicked
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
KEY = "__webmcpEvalControls"  # the page's controls as the last listing found them, by index

CONTROLS_JS = """([limit, key]) => {
  const sel = 'button, [role=button], input[type=button], input[type=submit], input[type=reset], input[type=image],'
    + ' input[type=checkbox], input[type=radio], [role=switch], [role=checkbox], [role=tab], [role=menuitem],'
    + ' summary, a[href]';
  const here = location.href.split('#')[0];
  const found = [], out = [];
  const clean = (s) => (s || '').replace(/\\s+/g, ' ').trim();
  for (const el of document.querySelectorAll(sel)) {
    if (out.length >= limit * 4) break;
    if (!el.getClientRects().length || getComputedStyle(el).visibility === 'hidden') continue;
    if (el.disabled || el.getAttribute('aria-disabled') === 'true') continue;
    const tag = el.tagName.toLowerCase(), type = (el.getAttribute('type') || '').toLowerCase();
    let role = el.getAttribute('role') || '';
    if (!role) role = tag === 'a' ? 'link' : tag === 'summary' ? '' : (type === 'checkbox' || type === 'radio') ? type
      : 'button';
    const text = clean(el.innerText);
    const label = el.labels && el.labels[0] ? clean(el.labels[0].innerText) : '';
    const name = clean(el.getAttribute('aria-label')) || label || text || clean(el.value) || clean(el.title);
    let skip = '';
    if (tag === 'a') {
      const href = el.href || '';
      if (el.target && el.target !== '_self') skip = 'opens another window';
      else if (el.hasAttribute('download')) skip = 'a download';
      else if (href.startsWith('javascript:')) skip = '';
      else if (href.split('#')[0] !== here) skip = 'a link to another document';
      else if (!href.includes('#')) skip = 'a link that reloads the page';  // no hash: a new document all the same
    }
    const form = el.form || null;
    const submits = form && ((tag === 'button' && (type === '' || type === 'submit'))
      || (tag === 'input' && (type === 'submit' || type === 'image')));
    if (submits && (form.getAttribute('method') || 'get').toLowerCase() === 'post') skip = 'submits a form (a write)';
    else if (submits && form.action.split('#')[0] !== here) skip = 'submits a form to another document';
    // a skip link: placed where no scroll reaches until it has the focus; a click cannot reach it (it would wait
    // out its time-out, then again in a fresh context)
    const box = el.getBoundingClientRect();
    if (!skip && (box.right + scrollX <= 0 || box.bottom + scrollY <= 0)) skip = 'off screen until it has the focus';
    out.push({index: found.length, role, name, text, skip});
    found.push(el);
  }
  Object.defineProperty(window, key, {value: found, configurable: true, enumerable: false});
  return out;
}"""
# is the element a locator found the control the listing found (or inside it, or holding it)?
SAME_JS = """(el, [key, i]) => { const c = (window[key] || [])[i]; return !!c && (c === el || c.contains(el)); }"""
# a turn of the page's event loop after a click: a hash route's hashchange (and a handler's next task) runs in it,
# before the settle asks whether anything is under way
TURN_JS = "() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)))"
ROLES = ("button", "link", "checkbox", "radio", "switch", "tab", "menuitem")


@dataclass
class ControlEffect:
    """A control whose click, from the start route, changed the set of registered tools."""

    target: dict[str, Any]  # the locator, as a case's setup step writes it
    step: str  # the same click as init's --step takes it
    adds: list[str] = field(default_factory=list)
    removes: list[str] = field(default_factory=list)
    hash: str = ""  # the hash route the click went to (#/scores): a --route of its own

    @property
    def shown(self) -> str:
        """The control as a person reads it: text=Start, role=button,name=Start."""
        return self.step.split(":", 1)[1] if self.step.startswith("click:") else json.dumps(self.target)


@dataclass
class ControlsRead:
    """What the exploration of one page's controls found."""

    effects: list[ControlEffect] = field(default_factory=list)
    clicked: int = 0  # controls clicked (at most CONTROLS_PER_PAGE)
    skipped: dict[str, int] = field(default_factory=dict)  # why a control was not clicked: how many
    ms: float = 0.0


# opens a throw-away context at the start route (after the setup steps): its page and tool host, or None
Opener = Callable[[], Awaitable[tuple[BrowserContext, Page, ToolHost] | None]]


async def refuse_writes(context: BrowserContext, origin: str) -> None:
    """Every request that could write (not GET, HEAD, OPTIONS) answered with an error, in this context; and every
    image, font or media file of another origin than the page's (none registers a tool, and one of a host out
    of reach would hold each click's settle to its bound)."""

    async def gate(route: Route) -> None:
        request = route.request
        elsewhere = request.resource_type in ("image", "font", "media") and origin_of(request.url) != origin
        if request.method.upper() in SAFE_METHODS and not elsewhere:
            await route.fallback()
        else:
            await route.abort("accessdenied")

    await context.route("**/*", gate)


def click_step(target: dict[str, Any]) -> str:
    """The click as init's --step takes it (short when its values allow, else a YAML flow mapping)."""
    values = [str(v) for v in target.values()]
    if all("," not in v and "=" not in v and v == v.strip() and v for v in values):
        return "click:" + ",".join(f"{k}={v}" for k, v in target.items())
    return json.dumps({"action": "click", "target": target}, ensure_ascii=False)


async def _targets(page: Page) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The page's controls a step can name, in document order (at most CONTROLS_PER_PAGE), and the skipped."""
    listed: list[dict[str, Any]] = await page.evaluate(CONTROLS_JS, [CONTROLS_PER_PAGE, KEY])
    skipped: dict[str, int] = {}
    targets: list[dict[str, Any]] = []
    for c in listed:
        if c["skip"]:
            skipped[c["skip"]] = skipped.get(c["skip"], 0) + 1
            continue
        if len(targets) >= CONTROLS_PER_PAGE:
            skipped["over the page's bound"] = skipped.get("over the page's bound", 0) + 1
            continue
        target = await _named(page, c)
        if target is None:
            skipped["no name a step can give"] = skipped.get("no name a step can give", 0) + 1
        elif target not in targets:
            targets.append(target)
    return targets, skipped


async def _named(page: Page, control: dict[str, Any]) -> dict[str, Any] | None:
    """A locator that finds this control first: its text, else its role and name; None when neither does."""
    tries = []
    if control["text"] and len(control["text"]) <= 60:
        tries.append({"text": control["text"]})
    if control["role"] in ROLES and control["name"] and len(control["name"]) <= 60:
        tries.append({"role": control["role"], "name": control["name"]})
    for target in tries:
        found = locate(page, Locator.model_validate(target)).first
        try:
            if await found.count() and await found.evaluate(SAME_JS, [KEY, control["index"]], timeout=1000):
                return target
        except PlaywrightError:
            continue
    return None


async def _names(host: ToolHost, ignore: set[str]) -> set[str]:
    return {t.name for t in await host.catalog()} - ignore


async def _click(page: Page, host: ToolHost, target: dict[str, Any], ignore: set[str]) -> set[str] | None:
    """Click the control and read the tools once the page settles; None: not clickable, or it left the document."""
    document = host.log.top_loaded()
    found = locate(page, Locator.model_validate(target)).first
    try:
        if not await found.count():
            return None
        await found.click(timeout=CLICK_TIMEOUT_MS)
        await page.evaluate(TURN_JS)
        await host.wait_for_tools(timeout_ms=CLICK_SETTLE_MS, settle_ms=CLICK_SETTLE_MS // 2)
        if host.log.top_loaded() is not document:
            return None  # another document: a navigation, not a change of this page's tools
        return await _names(host, ignore)
    except (PlaywrightError, TimeoutError):
        return None


async def explore_controls(page: Page, host: ToolHost, open_fresh: Opener, ignore: set[str]) -> ControlsRead:
    """The page's controls that change its tools (ignore: tools that come after a bare timer, whenever they come).

    page and host: the route just read, at its start state; they are used up (clicked through)."""
    started = time.monotonic()
    host.settle = "evidence"
    targets, skipped = await _targets(page)
    read = ControlsRead(skipped=skipped)
    chain: tuple[Page, ToolHost] | None = (page, host)
    opened: list[BrowserContext] = []
    try:
        for target in targets:
            if time.monotonic() - started > BUDGET_S:
                read.skipped["over the time bound"] = len(targets) - read.clicked
                break
            if chain is None:
                fresh = await open_fresh()
                if fresh is None:
                    break
                opened.append(fresh[0])
                chain = fresh[1], fresh[2]
            read.clicked += 1
            before = await _names(chain[1], ignore)
            after = await _click(chain[0], chain[1], target, ignore)
            if after == before:
                continue
            chain = None  # the page changed: the next control starts from the start route again
            effect = await _alone(open_fresh, target, ignore)
            if effect is not None:
                read.effects.append(effect)
    finally:
        for context in opened:
            await context.close()
    read.ms = round((time.monotonic() - started) * 1000, 1)
    return read


async def _alone(open_fresh: Opener, target: dict[str, Any], ignore: set[str]) -> ControlEffect | None:
    """The click alone, in a throw-away context from the start route: what it changes there, or None."""
    fresh = await open_fresh()
    if fresh is None:
        return None
    context, page, host = fresh
    start = page.url
    try:
        before = await _names(host, ignore)
        after = await _click(page, host, target, ignore)
        went = page.url.partition("#")[2]
    finally:
        await context.close()
    if after is None or after == before:
        return None
    hashed = "#" + went if went and went != start.partition("#")[2] else ""
    return ControlEffect(target, click_step(target), sorted(after - before), sorted(before - after), hashed)


async def open_start(
    browser: Browser,
    url: str,
    settle_ms: int,
    credentials: tuple[str, str] | None,
    setup: list[SetupStep],
    perform: Callable[[Page, ToolHost], Awaitable[None]],
) -> tuple[BrowserContext, Page, ToolHost] | None:
    """A throw-away context at the route (writes refused), settled, after the setup steps; None if it fails."""
    context = await browser.new_context(http_credentials=http_credentials(credentials))
    try:
        await refuse_writes(context, origin_of(url))
        log = ShimLog()
        await Surface.install(context, log)
        page = await context.new_page()
        host = ToolHost(page, log, 0.0, settle_ms=settle_ms, settle="evidence")
        await page.goto(url, wait_until="load", timeout=30_000)
        await host.wait_for_tools()
        if setup:
            await perform(page, host)
        return context, page, host
    except Exception:  # the start route failed to open this time: no fresh try, nothing noted
        await context.close()
        return None
