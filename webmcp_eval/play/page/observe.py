"""What the page shows after the steps: what each kind of the case reads of it (the UI it expects, its
confirmation point, untrusted rendering: the kind's ``observe``, webmcp_eval/kinds/), ARIA, a screenshot.

These only read the page, so they run together. Headed, the confirmation point
holds for the person at the screen (webmcp_eval/play/page/watcher.py), so the rest waits
for it; a press during the hold falls in a human window and is the person's.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from webmcp_eval.judge import probes
from webmcp_eval.kinds import blocks
from webmcp_eval.play.browser.artifacts import Artifacts
from webmcp_eval.play.page.human_windows import HumanWindows
from webmcp_eval.play.page.locate import locate
from webmcp_eval.play.page.surface.log import ClickEvent, RegisterEvent
from webmcp_eval.play.page.toolhost import ShimLog
from webmcp_eval.play.page.watcher import Watcher
from webmcp_eval.suite.case import Expectations, Locator
from webmcp_eval.trace import ConfirmationRecord, HumanClick, Trace, UiObservation, UntrustedText

# What Playwright's count(), and of the first element is_visible(), inner_text() and input_value() give,
# read at once: visible as Playwright has it (checkVisibility, visibility: visible, a box that is not
# empty; display: contents by its children), innerText of an HTML element only, the value of the
# input, textarea or select it is or is the label of (Playwright's follow-label). A choice reads as a
# person sees it: a select's text is its chosen option's label (not every option's), a group of radios
# or checkboxes (fieldset, radiogroup, group) has the checked ones' labels as text, their values as value.
READ_JS = """
(els, withPairs) => {
  const textVisible = t => { const r = document.createRange(); r.selectNode(t);
                             const b = r.getBoundingClientRect(); return b.width > 0 && b.height > 0; };
  const visible = el => {
    const style = getComputedStyle(el);
    if (style.display === "contents") {
      for (let c = el.firstChild; c; c = c.nextSibling) {
        if ((c.nodeType === 1 && visible(c)) || (c.nodeType === 3 && textVisible(c))) return true;
      }
      return false;
    }
    if (el.checkVisibility && !el.checkVisibility()) return false;
    if (style.visibility !== "visible") return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const control = el => {
    const own = "input, textarea, select";
    const kept = "a, input, textarea, button, select, "
      + "[role=link], [role=button], [role=checkbox], [role=switch], [role=radio]";
    if (!el.matches(own) && !el.isContentEditable) {
      el = el.closest("button, [role=button], [role=checkbox], [role=radio]") || el;
    }
    if (!el.matches(kept) && !el.isContentEditable) {
      const label = el.closest("label");
      if (label && label.control) el = label.control;
    }
    return el.matches(own) ? el : null;
  };
  const first = els[0];
  if (!first) return { count: 0, visible: false };
  const found = { count: els.length, visible: visible(first) };
  if (first.namespaceURI !== "http://www.w3.org/1999/xhtml") return { ...found, error: "Node is not an HTMLElement" };
  if (withPairs) {  // a summary read whole: each label with its value, as the person reads them in order
    const pairs = [];
    for (const dt of first.querySelectorAll("dt")) {
      const values = [];
      for (let n = dt.nextElementSibling; n && n.localName === "dd"; n = n.nextElementSibling) {
        values.push(n.innerText.trim());
      }
      pairs.push([dt.innerText.trim(), values.join(" ")]);
    }
    for (const row of first.querySelectorAll("tr")) {
      const th = row.querySelector("th"), td = row.querySelector("td");
      if (th && td) pairs.push([th.innerText.trim(), td.innerText.trim()]);
    }
    found.pairs = pairs;
  }
  const input = control(first);
  // what a person reads of a choice: a select's chosen option(s), a group's checked box(es), by label
  if (input && input.tagName === "SELECT") {
    const chosen = [...input.selectedOptions];
    return { ...found, text: chosen.map(o => o.label).join(", "), value: input.value };
  }
  const choices = first.matches("fieldset, [role=radiogroup], [role=group]")
    ? [...first.querySelectorAll("input[type=radio], input[type=checkbox]")] : [];
  if (choices.length) {
    const checked = choices.filter(c => c.checked);
    const label = c => ((c.labels && c.labels[0]) || c.closest("label") || c).innerText.trim();
    return { ...found, text: checked.map(label).join(", "), value: checked.map(c => c.value).join(", ") };
  }
  return { ...found, text: first.innerText, value: input ? input.value : null };
}
"""


async def warm(page: Page) -> None:
    """Have Playwright make its injected scripts in the document shown now (its utility world's, which the ARIA
    snapshot takes, and the page's own, which READ_JS runs in), each some 20-40 ms the first time in a document.
    Called while the last step settles (a wait mostly idle), so that the reads after it find them made; it reads
    and changes nothing of the page."""
    with contextlib.suppress(PlaywrightError):
        body = page.locator("body")
        await asyncio.gather(body.count(), body.evaluate_all("els => els.length"))


@dataclass
class PageObserver:
    page: Page
    log: ShimLog
    humans: HumanWindows
    artifacts: Artifacts
    watcher: Watcher | None = None  # headed: the hold at the confirmation point

    async def observe(self, expect: Expectations, trace: Trace) -> None:
        """Fill the trace's UI record, and what each kind of the case reads of the page (its ``observe``: the
        UI it expects, its confirmation point, untrusted rendering), from the page as it is now."""
        trace.ui.url = self.page.url
        reads = [kind.observe(value, self, trace) for kind, value in blocks(expect) if kind.observe is not None]
        if self.watcher is not None:  # headed: one after another (the confirmation point holds), then the rest
            for read in reads:
                await read
            await asyncio.gather(self._aria(trace), self._screenshot(trace))
            return
        await asyncio.gather(*reads, self._aria(trace), self._screenshot(trace))

    async def target(self, target: Locator, pairs: bool = False) -> UiObservation:
        """Count, visibility, text and value of one expected element; an error says why it could not be read.

        One read of the page (the elements as they are at one moment), where count, is_visible,
        inner_text and input_value were four round trips through the driver; READ_JS gives what each
        of those gives (tests/test_observe_read.py holds it to them on a real page)."""
        obs = UiObservation(target=target.describe())
        try:
            found = await locate(self.page, target).evaluate_all(READ_JS, pairs)
        except PlaywrightError as err:
            obs.error = f"could not observe {target.describe()}: {str(err).splitlines()[0]}"
            return obs
        obs.count, obs.visible = found["count"], found["visible"]
        if found.get("error"):
            obs.error = f"could not observe {target.describe()}: {found['error']}"
        elif obs.count:
            obs.text = found["text"].strip()
            if found.get("pairs") is not None:
                obs.pairs = found["pairs"]
            if found.get("value") is not None:  # a form control's; the trace leaves it out of anything else
                obs.value = found["value"]
        return obs

    async def confirmation(
        self, control: Locator, trial_id: str, at_press: ConfirmationRecord | None = None
    ) -> ConfirmationRecord:
        """The confirmation control: there, visible, actionable, and who pressed it (the human or the agent).

        ``at_press``: the control as it was read just before a scripted human press (the press may close its
        dialog or replace its form); only who pressed it is read now."""
        if at_press is not None:
            rec = at_press.model_copy(update={"pressed_by_human": False, "pressed_by_agent": False, "human_clicks": []})
        else:
            obs = await self.target(control)
            rec = ConfirmationRecord(
                control=control.describe(), found=bool(obs.count), visible=bool(obs.visible), error=obs.error
            )
            if rec.found:  # before a headed hold outlines it
                rec.actionable = await probes.actionable(locate(self.page, control).first)
            if self.watcher is not None and rec.visible:
                await self._hold_for_human(control, trial_id)
        name = (control.name or control.text or control.label or "").strip()
        for i, event in enumerate(self.log.events):
            if not isinstance(event, ClickEvent) or name not in (event.text or ""):
                continue
            human = self.humans.by_human(i, event)
            if human:
                rec.human_clicks.append(HumanClick(seq=event.seq, text=event.text))
            rec.pressed_by_human |= human
            rec.pressed_by_agent |= not human
        return rec

    async def untrusted(self, calls: list[Any]) -> list[UntrustedText] | None:
        """Elements the page made of untrusted tool results with markup in them."""
        texts = probes.untrusted_texts(calls, {r.name for r in self.log.of_type(RegisterEvent) if r.untrusted_content})
        return await probes.untrusted_rendering(self.page, texts)

    async def aria(self) -> str | None:
        with contextlib.suppress(PlaywrightError):
            return await self.page.locator("body").aria_snapshot(timeout=5000)
        return None

    async def _hold_for_human(self, control: Locator, trial_id: str) -> None:
        """Headed: show the stop. Highlight the final control and wait for the person."""
        assert self.watcher is not None
        async with self.humans.human():  # begins before the cue, so a quick press is inside the window
            target = locate(self.page, control).first
            with contextlib.suppress(PlaywrightError):
                await target.evaluate(
                    "el => { el.style.outline = '4px solid #e5484d'; el.style.outlineOffset = '3px'; }"
                )
                await target.scroll_into_view_if_needed()
            await self.watcher.hold(trial_id, control.describe())

    async def _aria(self, trace: Trace) -> None:
        snapshot = await self.aria()
        if snapshot is not None:
            trace.ui.aria_snapshot = snapshot

    async def _screenshot(self, trace: Trace) -> None:
        shot = await self.artifacts.screenshot(self.page)
        if shot is not None:
            trace.ui.screenshot = shot
