"""init's exploration never clicks a control placed where no scroll reaches (a skip link until it has the focus):
a click cannot reach it, and trying cost the click's time-out twice (on the page, then alone in a fresh context),
some 5 s a page on the demo site. A control far down the page is reached by scrolling and still clicked."""

from __future__ import annotations

import asyncio

import pytest
from eval_support import in_thread

from webmcp_eval.play.page.surface.discover import list_tools

pytestmark = pytest.mark.browser

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Skip links</title></head>
<body>
  <a href="#main" id="skip" style="position:absolute; left:-999px">Skip to the content</a>
  <a href="#main" id="above" style="position:absolute; top:-999px">Skip above</a>
  <main id="main"><h1>Table</h1><button id="deal">Deal</button></main>
  <div style="height:3000px"></div>
  <button id="low">Fold</button>
  <script>
    const mc = document.modelContext || navigator.modelContext;
    const tool = (name) => ({name, description: 'A tool of the table: ' + name,
      inputSchema: {type: 'object', properties: {}}, execute: async () => ({ok: true})});
    mc.registerTool(tool('read_table'));
    const once = (id, name) => document.getElementById(id).addEventListener('click', (e) => {
      e.preventDefault(); mc.registerTool(tool(name)); }, {once: true});
    once('skip', 'skipped_tool'); once('above', 'above_tool'); once('deal', 'deal_cards'); once('low', 'fold_hand');
  </script>
</body></html>
"""


def test_controls_off_screen_are_never_clicked_and_one_far_down_the_page_is(tmp_path):
    page = tmp_path / "table.html"
    page.write_text(PAGE, encoding="utf-8")
    [read] = in_thread(asyncio.run, list_tools(page.as_uri(), settle_ms=100, explore=True))
    assert read.error is None, read.error
    assert [t.name for t in read.tools] == ["read_table"]
    assert read.controls is not None
    assert read.controls.skipped == {"off screen until it has the focus": 2}
    assert read.controls.clicked == 2
    assert sorted(added for e in read.controls.effects for added in e.adds) == ["deal_cards", "fold_hand"]
