"""What a trial leaves beside its trace: a screenshot and Playwright's own trace.zip.

``--screenshot`` says which screenshots are taken (pytest-playwright's names):
``on`` takes every trial's with the rest of the page's evidence, ``off`` none,
``only-on-failure`` only that of a trial that did not pass, taken once the
verdict is known and before the page closes; a passing trial does not pay for
one no report will show. A page that crashed or closed gives none.

``--trace`` says which trace.zip to keep: ``off`` records none, ``on`` keeps
every trial's, ``retain-on-failure`` keeps only those of trials that did not
pass, decided at teardown once the verdict is known (as pytest-playwright does).
A kept zip has its secrets redacted first; one that cannot be cleaned is dropped.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError

from webmcp_eval.proxies.files import write_atomic
from webmcp_eval.rundir.layout import RunDir


def artifact_name(trial_id: str, attempt: int) -> str:
    """A retried trial's screenshot and trace.zip are named for their attempt: no attempt overwrites another's."""
    return trial_id if attempt == 1 else f"{trial_id}.a{attempt}"


class Tracing(Protocol):
    """The trial page's side of Playwright tracing (webmcp_eval/play/browser/session.py TrialPage)."""

    async def stop_tracing(self, path: str | None) -> bool: ...


@dataclass
class Artifacts:
    out_dir: Path  # the run directory; paths in the trace are relative to its trials/
    name: str  # artifact_name(): the files' stem
    screenshots: str = "on"  # on, off or only-on-failure (--screenshot)
    playwright_trace: str = "off"  # off, on or retain-on-failure (--trace)

    async def screenshot(self, page: Page) -> str | None:
        """With ``on``: the viewport as the steps left it, taken with the rest of the page's evidence."""
        if self.screenshots != "on":
            return None
        return await self._screenshot(page)

    async def finish_screenshot(self, page: Page, verdict: str | None) -> str | None:
        """With ``only-on-failure``: the viewport of a trial that did not pass, once its verdict is known."""
        if self.screenshots != "only-on-failure" or verdict == "passed":
            return None
        return await self._screenshot(page)

    async def _screenshot(self, page: Page) -> str | None:
        """The viewport, what a person sees; its path from the trace, or None when none was taken."""
        shot = RunDir(self.out_dir).screenshot(self.name)
        try:
            data = await page.screenshot(timeout=10_000)
        except PlaywrightError:
            return None
        write_atomic(shot, data)  # a temporary name renamed: a full disk leaves no half PNG
        return RunDir.link_from_trace(shot)

    async def start_tracing(self, context: BrowserContext, title: str) -> None:
        if self.playwright_trace != "off":
            await context.tracing.start(screenshots=True, snapshots=True, title=title)

    def keeps_trace(self, verdict: str | None) -> bool:
        return self.playwright_trace == "on" or (self.playwright_trace == "retain-on-failure" and verdict != "passed")

    async def finish_tracing(self, page: Tracing, verdict: str | None) -> str | None:
        """Stop tracing; keep the zip when the mode and verdict say so. Its path from the trace, or None."""
        if self.playwright_trace == "off":
            return None
        if not self.keeps_trace(verdict):
            await page.stop_tracing(None)
            return None
        path = RunDir(self.out_dir).playwright_trace(self.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        if await page.stop_tracing(str(path)) and await _redacted(path):
            return RunDir.link_from_trace(path)
        return None


async def _redacted(zip_path: Path) -> bool:
    """Secrets out of a kept trace.zip (the fixtures' rules); a zip that cannot be cleaned is not kept."""
    from webmcp_eval.play.browser.playwright_trace import redact_trace_zip

    try:
        await asyncio.to_thread(redact_trace_zip, zip_path)
        return True
    except Exception:  # a zip Playwright left broken: better none than one with cookies in it
        zip_path.unlink(missing_ok=True)
        return False
