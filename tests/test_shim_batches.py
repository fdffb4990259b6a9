"""The shim reports the events of one task of the page in one binding call (shim.js emit), in order: a page
that registers thirty tools as its script runs costs one report, not thirty, and a later task's event comes
in a report of its own, after them."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from eval_support import in_thread
from playwright.async_api import async_playwright

from webmcp_eval.play.browser.browser import find_chromium, launch_args
from webmcp_eval.play.browser.session import TrialPage
from webmcp_eval.play.page.toolhost import ShimLog

pytestmark = pytest.mark.browser

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Thirty tools</title></head><body>
<script>
const mc = document.modelContext || navigator.modelContext;
const tool = (name) => ({name, description: 'Tool ' + name + ' of the page.',
  inputSchema: {type: 'object', properties: {}}, execute: async () => ({ok: true})});
for (let i = 0; i < 30; i++) mc.registerTool(tool('tool_' + i));
setTimeout(() => mc.registerTool(tool('later')), 50);
</script></body></html>
"""


class _Counted(ShimLog):
    """The runner's log, counting the binding calls that reach it."""

    def __init__(self) -> None:
        super().__init__()
        self.reports = 0

    def take(self, source: dict[str, Any], report: Any) -> None:
        self.reports += 1
        super().take(source, report)


def test_the_events_of_one_task_come_in_one_report_and_in_order(tmp_path):
    page_file = tmp_path / "thirty.html"
    page_file.write_text(PAGE, encoding="utf-8")

    async def play() -> _Counted:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=find_chromium(headless=True).path, args=launch_args())
            try:
                log = _Counted()
                tp = TrialPage(await browser.new_context(), log, time.monotonic(), settle="evidence")
                await tp.setup(page_file.as_uri(), None)
                await tp.page.goto(page_file.as_uri())
                await tp.host.wait_for_tools(["later"])
                return log
            finally:
                await browser.close()

    log = in_thread(asyncio.run, play())
    registered = [e.raw["name"] for e in log.events if e.kind == "register"]
    assert registered == [f"tool_{i}" for i in range(30)] + ["later"]
    assert log.events[0].kind == "loaded"
    assert log.reports <= 4, log.reports  # loaded, the thirty (with their page's task), later; 32 one by one
