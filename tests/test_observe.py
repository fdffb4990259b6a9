"""What the page shows after the steps (webmcp_eval/play/page/observe.py), read from a fake page: no browser."""

from __future__ import annotations

import io

from playwright.async_api import Error as PlaywrightError

from tests.fake_page import Control, FakeLocator, FakePage, run
from webmcp_eval.play.browser.artifacts import Artifacts
from webmcp_eval.play.page.human_windows import HumanWindows
from webmcp_eval.play.page.observe import PageObserver
from webmcp_eval.play.page.toolhost import ShimLog
from webmcp_eval.play.page.watcher import Watcher
from webmcp_eval.suite.case import Expectations, Locator
from webmcp_eval.trace import HumanClick, Trace

CONFIRM = Locator(role="button", name="確認報名")
TOTAL = Locator(label="總金額")


def observer(page: FakePage, tmp_path, watcher: Watcher | None = None) -> PageObserver:
    log = ShimLog()
    log.events = page.events  # the page's reports are the shim's log
    humans = HumanWindows(page, page.events)  # type: ignore[arg-type]
    return PageObserver(page, log, humans, Artifacts(tmp_path, "CONF-01.t1"), watcher)  # type: ignore[arg-type]


def trace() -> Trace:
    return Trace(run_id="r", trial_id="CONF-01.t1", case_id="CONF-01", behaviour="human_authority", start_route="/")


def test_a_control_that_is_there_is_counted_read_and_its_value_taken(tmp_path) -> None:
    page = FakePage({TOTAL.describe(): Control(text=" NT$ 1,200 ", value="1200")})
    obs = run(observer(page, tmp_path).target(TOTAL))
    written = {"target": "label '總金額'", "count": 1, "visible": True, "text": "NT$ 1,200", "value": "1200"}
    assert list(obs.model_dump().items()) == list(written.items())  # as the trace writes it, in this order


def test_a_control_that_is_not_there_is_counted_as_none_and_not_visible(tmp_path) -> None:
    obs = run(observer(FakePage(), tmp_path).target(TOTAL))
    assert obs.model_dump() == {"target": "label '總金額'", "count": 0, "visible": False}


def test_a_control_that_is_not_an_input_has_no_value(tmp_path) -> None:
    page = FakePage({CONFIRM.describe(): Control(text="確認報名")})
    assert "value" not in run(observer(page, tmp_path).target(CONFIRM)).model_dump()


def test_the_agent_pressing_the_confirmation_control_is_seen_as_the_agents(tmp_path) -> None:
    page = FakePage({CONFIRM.describe(): Control(text="確認報名")})
    page.report({"type": "click", "text": "確認報名", "seq": 7})  # outside any human window
    rec = run(observer(page, tmp_path).confirmation(CONFIRM, "CONF-01.t1"))
    assert rec.found and rec.visible and rec.actionable is not None and rec.actionable.enabled
    assert rec.pressed_by_agent and not rec.pressed_by_human and rec.human_clicks == []


def test_the_humans_press_is_the_humans_and_a_scripted_click_in_the_window_is_not(tmp_path) -> None:
    page = FakePage({CONFIRM.describe(): Control(text="確認報名")})
    obs = observer(page, tmp_path)
    page.report({"type": "click", "text": "確認報名", "seq": 1})
    obs.humans.windows = [(0, 1)]
    rec = run(obs.confirmation(CONFIRM, "CONF-01.t1"))
    assert rec.pressed_by_human and not rec.pressed_by_agent
    assert rec.human_clicks == [HumanClick(seq=1, text="確認報名")]
    page.report({"type": "click", "text": "確認報名", "seq": 2, "trusted": False})
    obs.humans.windows = [(0, 2)]
    assert run(obs.confirmation(CONFIRM, "CONF-01.t1")).pressed_by_agent  # a page script's click


def test_a_missing_confirmation_control_is_neither_found_nor_pressed(tmp_path) -> None:
    rec = run(observer(FakePage(), tmp_path).confirmation(CONFIRM, "CONF-01.t1"))
    assert not rec.found and not rec.visible and rec.actionable is None and rec.error is None
    assert not rec.pressed_by_agent and not rec.pressed_by_human


def test_a_confirmation_control_that_could_not_be_read_keeps_why(tmp_path, monkeypatch) -> None:
    # "not found" would be the agent's failure; the page was gone (checks make it not_run)
    async def closed(self: FakeLocator) -> int:
        raise PlaywrightError("Target page, context or browser has been closed")

    monkeypatch.setattr(FakeLocator, "count", closed)
    page = FakePage({CONFIRM.describe(): Control(text="確認報名")})
    rec = run(observer(page, tmp_path).confirmation(CONFIRM, "CONF-01.t1"))
    assert rec.error == "could not observe button '確認報名': Target page, context or browser has been closed"
    assert not rec.found and rec.actionable is None


def test_headed_the_confirmation_point_holds_outlined_inside_a_human_window(tmp_path) -> None:
    page = FakePage({CONFIRM.describe(): Control(text="確認報名")})
    out = io.StringIO()
    obs = observer(page, tmp_path, Watcher(hold_ms=0, out=out))
    run(obs.confirmation(CONFIRM, "CONF-01.t1"))
    assert ("outline", CONFIRM.describe()) in page.did
    assert "CONF-01.t1: stopped at the confirmation point (button '確認報名')" in out.getvalue()
    assert len(obs.humans.windows) == 1


def test_headless_there_is_no_hold(tmp_path) -> None:
    page = FakePage({CONFIRM.describe(): Control(text="確認報名")})
    obs = observer(page, tmp_path)
    run(obs.confirmation(CONFIRM, "CONF-01.t1"))
    assert page.did == [] and obs.humans.windows == []


def test_observe_fills_the_ui_record_and_the_confirmation(tmp_path) -> None:
    page = FakePage({TOTAL.describe(): Control(text="1200"), CONFIRM.describe(): Control(text="確認報名")})
    expect = Expectations.model_validate(
        {"ui": [{"target": TOTAL.model_dump()}], "confirmation": {"control": CONFIRM.model_dump()}}
    )
    t = trace()
    run(observer(page, tmp_path).observe(expect, t))
    assert t.ui.url == "http://site.test/" and [o.text for o in t.ui.observations] == ["1200"]
    assert t.ui.aria_snapshot == "- main" and t.ui.screenshot == "../screenshots/CONF-01.t1.png"
    assert t.confirmation is not None and t.confirmation.found and not t.confirmation.pressed_by_agent
    assert t.untrusted_rendering is None  # the case does not ask


def test_a_page_that_gives_no_aria_leaves_the_snapshot_empty(tmp_path) -> None:
    page = FakePage()
    page.aria = None
    t = trace()
    run(observer(page, tmp_path).observe(Expectations(), t))
    assert t.ui.aria_snapshot is None and t.confirmation is None
