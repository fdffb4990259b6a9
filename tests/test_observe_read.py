"""The page's UI read in one evaluate (webmcp_eval/play/page/observe.py READ_JS) gives what Playwright's own four reads
give: count, is_visible, inner_text and input_value, element by element, on a real page. One page load."""

from __future__ import annotations

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page

from webmcp_eval.play.page.observe import READ_JS

pytestmark = pytest.mark.browser

PAGE = """<!doctype html><html><body>
<button id="shown">確認報名</button>
<button id="none" style="display:none">none</button>
<button id="hidden" style="visibility:hidden">hidden</button>
<button id="empty" style="width:0;height:0;padding:0;border:0;overflow:hidden">empty</button>
<button id="clear" style="opacity:0">clear</button>
<div id="contents" style="display:contents"><span>inside contents</span></div>
<div id="contents-empty" style="display:contents"></div>
<details id="closed"><summary>summary</summary><p id="folded">folded away</p></details>
<label id="wrapping">總金額 <input id="total" value="1200"></label>
<label for="note" id="for-label">備註</label><textarea id="note">  a note  </textarea>
<select id="seats"><option>1</option><option selected>2</option></select>
<div id="plain">  plain text  <b>bold</b></div>
<div class="twice">one</div><div class="twice">two</div>
<svg id="vector" width="10" height="10"><text>svg</text></svg>
<input id="checkbox" type="checkbox" checked>
<label for="city">城市</label><select id="city"><option value="taipei">台北</option>
<option value="kaohsiung" selected>高雄</option></select>
<fieldset id="level"><legend>程度</legend><label><input type="radio" name="l" value="beginner"> 入門</label>
<label><input type="radio" name="l" value="advanced" checked> 進階</label></fieldset>
<div role="group" id="tags"><label><input type="checkbox" value="a" checked> 甲</label>
<label><input type="checkbox" value="b"> 乙</label><label><input type="checkbox" value="c" checked> 丙</label></div>
</body></html>"""

SELECTORS = [
    "#shown", "#none", "#hidden", "#empty", "#clear", "#contents", "#contents-empty", "#folded", "#wrapping",
    "#total", "#for-label", "#note", "#seats", "#plain", ".twice", "#vector", "#checkbox", "#nothing",
]  # fmt: skip


def playwright_reads(page: Page, selector: str) -> dict:
    """What observe.py read before: four calls, each a round trip."""
    loc = page.locator(selector)
    count = loc.count()
    found: dict = {"count": count, "visible": count > 0 and loc.first.is_visible()}
    if not count:
        return found
    try:
        found["text"] = loc.first.inner_text(timeout=2000)
    except PlaywrightError:
        return {**found, "error": True}
    try:
        found["value"] = loc.first.input_value(timeout=2000)
    except PlaywrightError:
        found["value"] = None
    return found


def test_one_read_gives_what_playwrights_four_reads_give(page: Page) -> None:
    page.set_content(PAGE)
    for selector in SELECTORS:
        one = page.locator(selector).evaluate_all(READ_JS)
        if "error" in one:
            one["error"] = True
        theirs = playwright_reads(page, selector)
        if selector == "#seats":  # a select reads as a person sees it: its chosen option, not every option
            theirs["text"] = "2"
        assert one == theirs, selector
    # and the rules are not vacuous here: each kind of answer occurs
    reads = {s: page.locator(s).evaluate_all(READ_JS) for s in SELECTORS}
    assert reads["#none"]["visible"] is False and reads["#shown"]["visible"] is True
    assert reads["#contents"]["visible"] is True and reads["#contents-empty"]["visible"] is False
    assert reads["#wrapping"]["value"] == "1200" and reads["#plain"]["value"] is None
    assert reads[".twice"]["count"] == 2 and reads["#nothing"] == {"count": 0, "visible": False}
    assert "error" in reads["#vector"]


def test_a_choice_reads_as_a_person_sees_it_its_label_as_text_its_value_as_value(page: Page) -> None:
    page.set_content(PAGE)
    city = page.get_by_label("城市").evaluate_all(READ_JS)
    assert (city["text"], city["value"]) == ("高雄", "kaohsiung")
    level = page.get_by_role("group", name="程度").evaluate_all(READ_JS)
    assert (level["text"], level["value"]) == ("進階", "advanced")
    tags = page.locator("#tags").evaluate_all(READ_JS)
    assert (tags["text"], tags["value"]) == ("甲, 丙", "a, c")
