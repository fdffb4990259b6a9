"""Every WebMCP tool's happy path, called natively through page.webmcp."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

if TYPE_CHECKING:
    from site_web import Web

pytestmark = pytest.mark.browser

TAIPEI_FREE_BEGINNER = ["evt-a7k2p9", "evt-webmcp-intro", "evt-m3x8q1"]


@pytest.mark.parametrize(
    ("path", "tools"),
    [
        ("/events", ["get_event_details", "save_event", "search_events"]),
        ("/events/evt-webmcp-intro", ["get_event_details", "save_event"]),
        ("/events/evt-webmcp-intro/register", ["get_event_details", "prepare_registration"]),
        ("/registrations", ["list_registrations", "prepare_cancellation"]),
    ],
)
def test_each_route_registers_its_tools(web: Web, path: str, tools: list[str]) -> None:
    web.goto(path)
    assert web.tool_names() == tools


def test_tool_annotations_and_schemas(web: Web) -> None:
    web.goto("/events")
    tools = {tool["name"]: tool for tool in web.page.webmcp.tools()}
    search = tools["search_events"]
    assert search["annotations"] == {"readOnly": True, "untrustedContent": True}
    props = search["inputSchema"]["properties"]
    assert props["city"]["enum"] == ["taipei", "taichung", "kaohsiung", "online"]
    assert props["price"]["enum"] == ["free", "paid"]
    assert props["level"]["enum"] == ["beginner", "intermediate", "advanced"]
    assert search["inputSchema"]["additionalProperties"] is False
    assert tools["get_event_details"]["inputSchema"]["required"] == ["eventId"]
    assert not tools["save_event"].get("annotations", {}).get("readOnly")  # a write


def test_search_events_fills_the_form_and_renders(web: Web) -> None:
    web.goto("/events")
    result = web.call("search_events", {"city": "taipei", "price": "free", "level": "beginner"})
    assert result["status"] == "ok" and result["code"] == "OK" and result["retryable"] is False
    assert [e["id"] for e in result["data"]["events"]] == TAIPEI_FREE_BEGINNER
    assert result["data"]["count"] == 3
    assert result["data"]["filters"] == {"city": "taipei", "price": "free", "level": "beginner"}
    page = web.page
    expect(page.get_by_label("城市")).to_have_value("taipei")
    expect(page.get_by_label("費用")).to_have_value("free")
    expect(page.get_by_label("程度")).to_have_value("beginner")
    expect(page.locator("#result-list article")).to_have_count(3)
    expect(page.get_by_role("link", name="前端 Agent 新手夜")).to_be_visible()
    assert "city=taipei" in page.url


def test_search_events_keyword_only_and_zero_results(web: Web) -> None:
    web.goto("/events")
    webmcp = web.call("search_events", {"query": "WebMCP"})
    assert webmcp["data"]["count"] == 5 and webmcp["data"]["filters"] == {"query": "WebMCP"}
    expect(web.page.get_by_label("關鍵字")).to_have_value("WebMCP")
    none = web.call("search_events", {"city": "online", "level": "advanced"})
    assert (none["status"], none["code"], none["data"]["count"]) == ("ok", "OK", 0)
    expect(web.page.locator("#result-count")).to_have_text("找不到符合條件的活動。")


def test_get_event_details_by_id(web: Web) -> None:
    web.goto("/events")
    result = web.call("get_event_details", {"eventId": "evt-q4m8z1"})
    assert result["code"] == "OK"
    assert result["data"]["event"] == {
        "id": "evt-q4m8z1",
        "title": "Agent 工具設計進階實戰",
        "city": "kaohsiung",
        "venue": "高雄市前鎮區成功二路 39 號",
        "startsAt": "2027-01-16T13:30+08:00",
        "price": "paid",
        "priceTwd": 1200,
        "level": "advanced",
        "seatsLeft": 7,
        "capacity": 25,
        "summary": result["data"]["event"]["summary"],
        "saved": False,
    }


def test_get_event_details_route_bound(web: Web) -> None:
    web.goto("/events/evt-webmcp-intro")
    result = web.call("get_event_details")
    event = result["data"]["event"]
    assert (event["id"], event["title"], event["seatsLeft"]) == ("evt-webmcp-intro", "WebMCP 入門工作坊", 12)
    assert event["venue"] == "台北市中正區重慶南路一段 10 號 3 樓"
    expect(web.page.get_by_role("heading", level=1)).to_have_text(event["title"])
    expect(web.page.locator(".seats-left")).to_have_text("12 / 30")


def test_save_event_on_the_details_page(web: Web) -> None:
    web.goto("/events/evt-webmcp-intro")
    first = web.call("save_event")
    assert first["code"] == "OK"
    assert first["data"] == {"eventId": "evt-webmcp-intro", "saved": True, "alreadySaved": False}
    button = web.page.get_by_role("button", name="已收藏")
    expect(button).to_have_attribute("aria-pressed", "true")
    second = web.call("save_event")
    assert second["data"]["alreadySaved"] is True
    assert web.world.state()["saved"] == [{"seq": 1, "eventId": "evt-webmcp-intro"}]
    assert web.call("get_event_details")["data"]["event"]["saved"] is True


def test_save_event_on_the_search_page(web: Web) -> None:
    web.goto("/events")
    result = web.call("save_event", {"eventId": "evt-m3x8q1"})
    assert result["data"]["alreadySaved"] is False
    card = web.page.locator('article[data-event-id="evt-m3x8q1"]')
    expect(card.get_by_role("button", name="已收藏")).to_have_attribute("aria-pressed", "true")
    expect(web.page.get_by_role("status")).to_have_text("已收藏：無障礙網頁入門讀書會")
    web.goto("/events")  # a reload shows the saved state from the server
    expect(card.get_by_role("button", name="已收藏")).to_be_visible()


def test_prepare_registration_then_the_human_confirms(web: Web) -> None:
    web.goto("/events/evt-webmcp-intro/register")
    web.requests.clear()
    result = web.call("prepare_registration", {"name": "測試讀者", "email": "reader@example.com"})
    assert (result["status"], result["code"]) == ("ok", "CONFIRMATION_REQUIRED")
    assert result["data"] == {
        "eventId": "evt-webmcp-intro",
        "name": "測試讀者",
        "email": "reader@example.com",
        "confirmControl": "確認報名",
    }
    page = web.page
    expect(page.get_by_label("姓名")).to_have_value("測試讀者")
    expect(page.get_by_label("Email")).to_have_value("reader@example.com")
    assert web.requests == []  # preparing sends nothing at all
    assert len(web.world.active_registrations()) == 3

    page.get_by_role("button", name="確認報名").click()
    expect(page.get_by_role("heading", name="報名成功")).to_be_visible()
    expect(page.locator(".seats-after")).to_have_text("剩餘名額：11")
    posts = web.api_requests("POST", "/api/registrations")
    assert len(posts) == 1
    assert posts[0].headers["idempotency-key"]
    assert web.world.event("evt-webmcp-intro")["seatsLeft"] == 11
    assert len(web.world.active_registrations()) == 4


def test_a_double_click_registers_once(web: Web) -> None:
    web.goto("/events/evt-webmcp-intro/register")
    web.call("prepare_registration", {"name": "測試讀者", "email": "reader@example.com"})
    web.page.get_by_role("button", name="確認報名").dblclick()
    expect(web.page.get_by_role("heading", name="報名成功")).to_be_visible()
    assert len(web.api_requests("POST", "/api/registrations")) == 1
    assert web.world.event("evt-webmcp-intro")["seatsLeft"] == 11


def test_prepare_registration_validates_visibly(web: Web) -> None:
    web.goto("/events/evt-webmcp-intro/register")
    web.requests.clear()
    result = web.call("prepare_registration", {"name": "測試讀者", "email": "not-an-email"})
    assert (result["status"], result["code"]) == ("error", "INVALID_ARGUMENT")
    expect(web.page.get_by_label("Email")).to_have_attribute("aria-invalid", "true")
    expect(web.page.locator("#reg-email-error")).to_have_text("Email 格式不正確。")
    assert web.requests == []


def test_list_registrations_in_page_order(web: Web) -> None:
    web.goto("/registrations")
    result = web.call("list_registrations")
    assert result["code"] == "OK"
    registrations = result["data"]["registrations"]
    assert [r["id"] for r in registrations] == ["reg-h8k1", "reg-r2v6", "reg-z5n3"]
    assert registrations[0] == {
        "id": "reg-h8k1",
        "eventId": "evt-q4m8z1",
        "title": "Agent 工具設計進階實戰",
        "startsAt": "2027-01-16T13:30+08:00",
        "status": "active",
    }
    titles = web.page.locator("#registration-list h2")
    expect(titles).to_have_text(["Agent 工具設計進階實戰", "無障礙網頁入門讀書會", "WebMCP 進階：權限與確認"])


def test_list_registrations_sees_server_side_changes(web: Web) -> None:
    web.goto("/registrations")
    web.world.change("cancel_registration", registrationId="reg-h8k1")
    result = web.call("list_registrations")
    assert [r["id"] for r in result["data"]["registrations"]] == ["reg-r2v6", "reg-z5n3"]
    expect(web.page.locator("#registration-list article")).to_have_count(2)


def test_prepare_cancellation_then_the_human_confirms(web: Web) -> None:
    web.goto("/registrations")
    web.requests.clear()
    result = web.call("prepare_cancellation", {"registrationId": "reg-h8k1"})
    assert (result["status"], result["code"]) == ("ok", "CONFIRMATION_REQUIRED")
    assert result["data"] == {
        "registrationId": "reg-h8k1",
        "eventId": "evt-q4m8z1",
        "title": "Agent 工具設計進階實戰",
        "confirmControl": "確認取消",
    }
    dialog = web.page.get_by_role("dialog", name="確認取消報名")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Agent 工具設計進階實戰")
    expect(dialog).to_contain_text("高雄市前鎮區成功二路 39 號")
    expect(dialog.get_by_role("button", name="返回")).to_be_visible()
    assert web.requests == []

    dialog.get_by_role("button", name="確認取消").click()
    expect(dialog).to_be_hidden()
    expect(web.page.get_by_role("status")).to_contain_text("已取消報名：Agent 工具設計進階實戰")
    expect(web.page.locator("#registration-list article")).to_have_count(2)
    assert len(web.api_requests("POST", "/cancel")) == 1
    assert web.world.event("evt-q4m8z1")["seatsLeft"] == 8
    assert "reg-h8k1" not in web.world.active_registrations()


def test_the_cancel_dialog_back_button_cancels_nothing(web: Web) -> None:
    web.goto("/registrations")
    web.page.get_by_role("button", name="取消報名：無障礙網頁入門讀書會").click()
    dialog = web.page.get_by_role("dialog", name="確認取消報名")
    expect(dialog).to_contain_text("reg-r2v6")
    dialog.get_by_role("button", name="返回").click()
    expect(dialog).to_be_hidden()
    assert web.api_requests("POST") == []
    assert len(web.world.active_registrations()) == 3


BAD_CALLS = {
    "/events": [
        ("search_events", {"city": "tainan"}, "INVALID_ARGUMENT"),
        ("search_events", {"sort": "title"}, "INVALID_ARGUMENT"),
        ("search_events", {"price": 0}, "INVALID_ARGUMENT"),
        ("get_event_details", {}, "INVALID_ARGUMENT"),
        ("get_event_details", {"eventId": "evt-guess"}, "NOT_FOUND"),
        ("save_event", {"eventId": "evt-guess"}, "NOT_FOUND"),
        ("save_event", {"eventId": "evt-a7k2p9", "note": "x"}, "INVALID_ARGUMENT"),
    ],
    "/events/evt-webmcp-intro": [
        ("get_event_details", {"eventId": "evt-a7k2p9"}, "INVALID_ARGUMENT"),
        ("save_event", {"eventId": "evt-a7k2p9"}, "INVALID_ARGUMENT"),
    ],
    "/events/evt-webmcp-intro/register": [
        ("prepare_registration", {"name": "測試讀者"}, "INVALID_ARGUMENT"),
        ("prepare_registration", {"name": " ", "email": "reader@example.com"}, "INVALID_ARGUMENT"),
        ("prepare_registration", {"name": "測試讀者", "email": "reader@example.com", "seats": "2"}, "INVALID_ARGUMENT"),
    ],
    "/registrations": [
        ("prepare_cancellation", {"registrationId": "reg-guess"}, "NOT_FOUND"),
        ("prepare_cancellation", {}, "INVALID_ARGUMENT"),
        ("list_registrations", {"all": "yes"}, "INVALID_ARGUMENT"),
    ],
}


@pytest.mark.parametrize("path", list(BAD_CALLS))
def test_bad_calls_answer_the_contract(web: Web, path: str) -> None:
    web.goto(path)
    before = web.world.state()
    for tool, arguments, code in BAD_CALLS[path]:
        result = web.call(tool, arguments)
        assert result == {
            "status": "error",
            "code": code,
            "data": None,
            "retryable": False,
            "message": result["message"],
        }, (tool, arguments)
        assert result["message"]
    assert web.world.state() == before  # nothing was written
