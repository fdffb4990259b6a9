"""What the page shows after the steps: the UI a case expects, its confirmation point, ARIA, a screenshot.

These only read the page, so they run together. Headed, the confirmation point
holds for the person at the screen (runner/play/watcher.py), so the rest waits
for it; a press during the hold falls in a human window and is the person's.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from runner.judge import probes
from runner.play.artifacts import Artifacts
from runner.play.human_windows import HumanWindows
from runner.play.locate import locate
from runner.play.toolhost import ShimLog
from runner.play.watcher import Watcher
from runner.suite.case import Expectations, Locator
from runner.trace import ConfirmationRecord, HumanClick, Trace, UiObservation, UntrustedText


@dataclass
class PageObserver:
    page: Page
    log: ShimLog
    humans: HumanWindows
    artifacts: Artifacts
    watcher: Watcher | None = None  # headed: the hold at the confirmation point

    async def observe(self, expect: Expectations, trace: Trace) -> None:
        """Fill the trace's UI record, confirmation and untrusted rendering from the page as it is now."""
        trace.ui.url = self.page.url
        observations = asyncio.gather(*(self.target(exp.target) for exp in expect.ui))
        confirmation = expect.confirmation
        if self.watcher is not None:
            trace.ui.observations = list(await observations)
            if confirmation:
                trace.confirmation = await self.confirmation(confirmation.control, trace.trial_id)
            if expect.untrusted:
                trace.untrusted_rendering = await self.untrusted(trace.calls)
            await asyncio.gather(self._aria(trace), self._screenshot(trace))
            return
        parts = [observations, self._aria(trace), self._screenshot(trace)]
        if confirmation:
            parts.append(self._confirmation(confirmation.control, trace))
        if expect.untrusted:
            parts.append(self._untrusted(trace))
        results = await asyncio.gather(*parts)
        trace.ui.observations = list(results[0])

    async def target(self, target: Locator) -> UiObservation:
        """Count, visibility, text and value of one expected element; an error says why it could not be read."""
        loc = locate(self.page, target)
        obs = UiObservation(target=target.describe())
        try:
            obs.count = count = await loc.count()
            first = loc.first
            obs.visible = count > 0 and await first.is_visible()
            if count:
                obs.text = (await first.inner_text(timeout=2000)).strip()
                # not an input: it raises at once; an input on a loaded machine may need more than 0.5 s
                with contextlib.suppress(PlaywrightError):
                    obs.value = await first.input_value(timeout=2000)
        except PlaywrightError as err:
            obs.error = f"could not observe {target.describe()}: {str(err).splitlines()[0]}"
        return obs

    async def confirmation(self, control: Locator, trial_id: str) -> ConfirmationRecord:
        """The confirmation control: there, visible, actionable, and who pressed it (the human or the agent)."""
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
            if event.get("type") != "click" or name not in event.get("text", ""):
                continue
            human = self.humans.by_human(i, event)
            if human:
                rec.human_clicks.append(HumanClick(seq=event.get("seq"), text=event.get("text")))
            rec.pressed_by_human |= human
            rec.pressed_by_agent |= not human
        return rec

    async def untrusted(self, calls: list[Any]) -> list[UntrustedText] | None:
        """Elements the page made of untrusted tool results with markup in them."""
        texts = probes.untrusted_texts(calls, self.log.of_type("register"))
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

    async def _confirmation(self, control: Locator, trace: Trace) -> None:
        trace.confirmation = await self.confirmation(control, trace.trial_id)

    async def _untrusted(self, trace: Trace) -> None:
        trace.untrusted_rendering = await self.untrusted(trace.calls)

    async def _aria(self, trace: Trace) -> None:
        snapshot = await self.aria()
        if snapshot is not None:
            trace.ui.aria_snapshot = snapshot

    async def _screenshot(self, trace: Trace) -> None:
        shot = await self.artifacts.screenshot(self.page)
        if shot is not None:
            trace.ui.screenshot = shot
