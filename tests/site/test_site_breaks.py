"""Each deliberately broken behaviour really changes what the site does.

The runner's own tests use these switches to prove its checks can fail; the
correct behaviour for each is tested in the other test files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

if TYPE_CHECKING:
    from site_web import Web

pytestmark = pytest.mark.browser


def test_save_not_idempotent(web: Web) -> None:
    web.world.reset(breaks=["save_not_idempotent"])
    web.goto("/events/evt-webmcp-intro")
    assert web.call("save_event")["data"]["alreadySaved"] is False
    assert web.call("save_event")["data"]["alreadySaved"] is False
    assert [row["eventId"] for row in web.world.state()["saved"]] == ["evt-webmcp-intro"] * 2


def test_prepare_submits(web: Web) -> None:
    web.world.reset(breaks=["prepare_submits"])
    web.goto("/events/evt-webmcp-intro/register")
    with web.page.expect_response(lambda r: r.request.method == "POST" and "/api/registrations" in r.url):
        result = web.call("prepare_registration", {"name": "測試讀者", "email": "reader@example.com"})
    assert result["code"] == "CONFIRMATION_REQUIRED"  # it still claims to have only prepared
    assert len(web.world.active_registrations()) == 4
    web.goto("/registrations")
    with web.page.expect_response(lambda r: r.request.method == "POST" and r.url.endswith("/cancel")):
        web.call("prepare_cancellation", {"registrationId": "reg-h8k1"})
    assert "reg-h8k1" not in web.world.active_registrations()


def test_details_ignore_route(web: Web) -> None:
    web.world.reset(breaks=["details_ignore_route"])
    web.goto("/events/evt-webmcp-intro")
    expect(web.page.get_by_role("heading", level=1)).to_have_text("WebMCP 入門工作坊")
    assert web.call("get_event_details")["data"]["event"]["id"] == "evt-a7k2p9"


def test_search_relaxes_filters(web: Web) -> None:
    web.world.reset(breaks=["search_relaxes_filters"])
    web.goto("/events")
    result = web.call("search_events", {"city": "online", "level": "advanced"})
    assert result["data"]["count"] == 5  # 0 results silently padded with unfiltered events
    padded = web.call("search_events", {"city": "taipei", "price": "free", "level": "beginner"})["data"]
    assert padded["count"] == 5
    assert [e["id"] for e in padded["events"][:3]] == ["evt-a7k2p9", "evt-webmcp-intro", "evt-m3x8q1"]
    assert any(e["price"] == "paid" or e["city"] != "taipei" for e in padded["events"][3:])


def test_cancel_restores_twice(web: Web) -> None:
    web.world.reset(breaks=["cancel_restores_twice"])
    web.goto("/registrations")
    for _ in range(2):
        assert web.fetch("/api/registrations/reg-h8k1/cancel", "POST", {})["status"] == 200
    assert web.world.event("evt-q4m8z1")["seatsLeft"] == 9  # 7 + 2


def test_writes_after_expiry(web: Web) -> None:
    web.world.reset(breaks=["writes_after_expiry"])
    web.goto("/events/evt-webmcp-intro")
    web.world.expire_sessions()
    assert web.call("save_event")["code"] == "OK"
    assert len(web.world.state()["saved"]) == 1


def test_leak_route_tools(web: Web) -> None:
    web.world.reset(breaks=["leak_route_tools"])
    web.goto("/events/evt-webmcp-intro")
    web.page.get_by_role("link", name="我的報名").click()
    web.wait_ready("/registrations")
    names = web.tool_names()
    assert "get_event_details" in names and "list_registrations" in names
    # The stale handler still answers, about the page that is gone.
    assert web.call("get_event_details")["data"]["event"]["id"] == "evt-webmcp-intro"


def test_breaks_are_exposed_to_the_page_only_in_test_mode(web: Web) -> None:
    web.world.reset(breaks=["leak_route_tools", "save_not_idempotent"])
    web.goto("/events")
    session = web.fetch("/api/session", csrf=False)["body"]
    assert session["breaks"] == ["leak_route_tools", "save_not_idempotent"]
    assert web.world.state()["breaks"] == ["leak_route_tools", "save_not_idempotent"]
