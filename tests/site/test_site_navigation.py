"""Routes: tools follow the route, deep links, back/forward, isolation of worlds."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Browser, Error, expect

from webmcp_eval.site_under_test.server import SiteServer

if TYPE_CHECKING:
    from site_web import Web, World

pytestmark = pytest.mark.browser


def test_a_route_change_removes_the_route_tools(web: Web) -> None:
    web.goto("/events/evt-webmcp-intro")
    web.page.evaluate("window.__sameDocument = true")
    assert web.tool_names() == ["get_event_details", "save_event"]
    web.page.get_by_role("link", name="我的報名").click()
    web.wait_ready("/registrations")
    assert web.tool_names() == ["list_registrations", "prepare_cancellation"]
    with pytest.raises(Error, match='No WebMCP tool named "save_event"'):
        web.call("save_event")
    with pytest.raises(Error, match='No WebMCP tool named "get_event_details"'):
        web.call("get_event_details")
    assert web.page.evaluate("window.__sameDocument") is True  # pushState, not a page load


def test_deep_links_and_back_forward(web: Web) -> None:
    page = web.page
    web.goto("/events/evt-q4m8z1/register")
    expect(page.get_by_role("heading", level=1)).to_have_text("報名：Agent 工具設計進階實戰")
    assert web.tool_names() == ["get_event_details", "prepare_registration"]
    page.get_by_role("link", name="← 回活動資訊").click()
    web.wait_ready("/events/evt-q4m8z1")
    page.get_by_role("link", name="← 回活動列表").click()
    web.wait_ready("/events")
    assert web.tool_names() == ["get_event_details", "save_event", "search_events"]

    page.go_back()
    web.wait_ready("/events/evt-q4m8z1")
    expect(page.get_by_role("heading", level=1)).to_have_text("Agent 工具設計進階實戰")
    assert web.call("get_event_details")["data"]["event"]["id"] == "evt-q4m8z1"
    page.go_back()
    web.wait_ready("/events/evt-q4m8z1/register")
    assert web.tool_names() == ["get_event_details", "prepare_registration"]
    page.go_forward()
    web.wait_ready("/events/evt-q4m8z1")
    assert web.tool_names() == ["get_event_details", "save_event"]


def test_a_search_deep_link_and_the_human_form(web: Web) -> None:
    web.goto("/events?city=taipei&price=free&level=beginner")
    page = web.page
    expect(page.locator("#result-list article")).to_have_count(3)
    expect(page.get_by_label("城市")).to_have_value("taipei")
    page.get_by_label("關鍵字").fill("WebMCP")
    page.get_by_label("城市").select_option("")
    page.get_by_label("費用").select_option("")
    page.get_by_label("程度").select_option("")
    page.get_by_role("button", name="搜尋").click()
    expect(page.locator("#result-count")).to_have_text("共 5 場活動")
    assert page.url.endswith("/events?query=WebMCP")
    page.get_by_role("link", name="WebMCP 線上問答").click()
    web.wait_ready("/events/evt-o2d5v8")
    page.go_back()
    web.wait_ready("/events")
    expect(page.locator("#result-count")).to_have_text("共 5 場活動")


def test_an_unknown_event_page(web: Web) -> None:
    web.goto("/events/evt-nope")
    expect(web.page.get_by_role("heading", level=1)).to_have_text("找不到這個活動")
    assert web.tool_names() == []


def test_two_worlds_at_once_do_not_see_each_other(
    browser: Browser, site: SiteServer, new_world: Callable[[], World]
) -> None:
    from site_web import Web, join_world

    worlds = [new_world(), new_world()]
    contexts = [browser.new_context() for _ in worlds]
    try:
        webs = []
        for context, world in zip(contexts, worlds, strict=True):
            join_world(context, site, world)
            webs.append(Web(context.new_page(), site, world))
        a, b = webs
        a.goto("/events/evt-webmcp-intro")
        b.goto("/events/evt-webmcp-intro")
        a.call("save_event")
        a.goto("/registrations")
        b.goto("/registrations")
        a.world.change("cancel_registration", registrationId="reg-h8k1")
        assert a.call("list_registrations")["data"]["count"] == 2
        assert b.call("list_registrations")["data"]["count"] == 3
        assert b.world.state()["saved"] == []
        assert a.world.state()["saved"] == [{"seq": 1, "eventId": "evt-webmcp-intro"}]
        b.goto("/events/evt-webmcp-intro")
        expect(b.page.get_by_role("button", name="收藏")).to_have_attribute("aria-pressed", "false")
    finally:
        for context in contexts:
            context.close()
