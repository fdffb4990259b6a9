"""The site's HTTP API and control API, without a browser."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
from eval_support import in_thread

from webmcp_eval.site_under_test.app import create_app, source_revision
from webmcp_eval.site_under_test.seeds import EVENTS
from webmcp_eval.site_under_test.server import SiteServer

if TYPE_CHECKING:
    from site_web import World


@pytest.fixture
def api(http: Callable[..., httpx.Client], world: World) -> httpx.Client:
    """A client with its own session in the test's world; X-CSRF-Token preset."""
    client = http(cookies={"wmcp_world": world.name})
    client.headers["X-CSRF-Token"] = client.get("/api/session").json()["csrfToken"]
    return client


@pytest.fixture
def plain_site(tmp_path: Path) -> Iterator[SiteServer]:
    """A site outside test mode (its own data dir)."""
    with SiteServer(test_mode=False, data_dir=tmp_path) as server:
        yield server


def ids(response: httpx.Response) -> list[str]:
    return [event["id"] for event in response.json()["events"]]


def assert_contract_error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status
    body = response.json()
    assert body == {
        "status": "error",
        "code": code,
        "message": body["message"],
        "retryable": code == "TEMPORARILY_UNAVAILABLE",
        "data": None,
    }


def test_version_is_a_stable_source_hash(site: SiteServer, control: httpx.Client) -> None:
    body = control.get("/api/version").json()
    assert body["name"] == "webmcp-eval demo site"
    assert re.fullmatch(r"[0-9a-f]{12}", body["revision"])
    assert body["revision"] == source_revision()  # same sources → same revision after a restart


def test_revision_comes_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBMCP_SITE_REVISION", "rev-0000008")
    assert create_app(test_mode=False, data_dir=tmp_path).state.revision == "rev-0000008"
    assert create_app(test_mode=False, data_dir=tmp_path, revision="given").state.revision == "given"


def test_session_cookie_is_httponly_lax_and_sitewide(http: Callable[..., httpx.Client], world: World) -> None:
    response = http(cookies={"wmcp_world": world.name}).get("/api/session")
    cookie = response.headers["set-cookie"]
    assert cookie.startswith("wmcp_session=")
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Path=/" in cookie
    body = response.json()
    assert body["user"] == {"name": "測試讀者", "email": "reader@example.com"}
    assert body["expired"] is False and body["breaks"] == []


def test_pages_create_a_session_and_share_one_document(http: Callable[..., httpx.Client], world: World) -> None:
    for path in ["/events", "/events/evt-a7k2p9", "/events/evt-a7k2p9/register", "/registrations"]:
        response = http(cookies={"wmcp_world": world.name}).get(path)
        assert response.status_code == 200
        assert '<html lang="zh-Hant">' in response.text
        assert "wmcp_session=" in response.headers["set-cookie"]
    assert world.state()["sessions"]["count"] == 4
    home = http().get("/")
    assert home.status_code == 302 and home.headers["location"] == "/events"


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"city": "taipei", "price": "free", "level": "beginner"}, ["evt-a7k2p9", "evt-webmcp-intro", "evt-m3x8q1"]),
        ({"query": "Agent", "city": "kaohsiung", "price": "paid", "level": "advanced"}, ["evt-q4m8z1"]),
        ({"query": "ignore previous INSTRUCTIONS"}, ["evt-x9inj3"]),
        ({"city": "online", "level": "advanced"}, []),
    ],
)
def test_search_filters_exactly_in_start_order(api: httpx.Client, params: dict, expected: list) -> None:
    response = api.get("/api/events", params=params)
    assert response.status_code == 200
    assert ids(response) == expected
    assert response.json()["count"] == len(expected)


def test_search_webmcp_finds_five_events_in_four_cities(api: httpx.Client) -> None:
    events = api.get("/api/events", params={"query": "WebMCP"}).json()["events"]
    assert len(events) == 5
    assert {e["city"] for e in events} == {"taipei", "taichung", "kaohsiung", "online"}
    starts = [e["startsAt"] for e in events]
    assert starts == sorted(starts)


@pytest.mark.parametrize("params", [{"city": "paris"}, {"level": "expert"}, {"sort": "title"}])
def test_search_refuses_bad_parameters(api: httpx.Client, params: dict) -> None:
    assert_contract_error(api.get("/api/events", params=params), 400, "INVALID_ARGUMENT")


def test_unknown_ids_answer_not_found(api: httpx.Client) -> None:
    assert_contract_error(api.get("/api/events/evt-nope"), 404, "NOT_FOUND")
    assert_contract_error(api.post("/api/saved", json={"eventId": "evt-nope"}), 404, "NOT_FOUND")
    assert_contract_error(api.post("/api/registrations/reg-nope/cancel"), 404, "NOT_FOUND")
    assert_contract_error(api.get("/api/nothing-here"), 404, "NOT_FOUND")


@pytest.mark.parametrize("body", ['{"eventId": "evt-a7k2p9", "extra": 1}', "{}", '{"eventId": 7}', "not json", "[1]"])
def test_bad_bodies_are_invalid_arguments(api: httpx.Client, world: World, body: str) -> None:
    response = api.post("/api/saved", content=body, headers={"Content-Type": "application/json"})
    assert_contract_error(response, 400, "INVALID_ARGUMENT")
    assert "Traceback" not in response.text and "pydantic" not in response.text
    assert world.state()["saved"] == []


@pytest.mark.parametrize("token", [None, "wrong-token"])
def test_a_post_without_the_csrf_token_is_refused(api: httpx.Client, world: World, token: str | None) -> None:
    del api.headers["X-CSRF-Token"]
    headers = {"X-CSRF-Token": token} if token else {}
    before = world.state()
    assert_contract_error(api.post("/api/saved", json={"eventId": "evt-a7k2p9"}, headers=headers), 403, "FORBIDDEN")
    key = {"Idempotency-Key": "key-csrf-test-1", **headers}
    body = {"eventId": "evt-a7k2p9", "name": "測試讀者", "email": "reader@example.com"}
    assert_contract_error(api.post("/api/registrations", json=body, headers=key), 403, "FORBIDDEN")
    assert_contract_error(api.post("/api/registrations/reg-h8k1/cancel", headers=headers), 403, "FORBIDDEN")
    assert world.state() == before


def test_save_is_idempotent(api: httpx.Client, world: World) -> None:
    first = api.post("/api/saved", json={"eventId": "evt-a7k2p9"}).json()
    second = api.post("/api/saved", json={"eventId": "evt-a7k2p9"}).json()
    assert (first["alreadySaved"], second["alreadySaved"]) == (False, True)
    assert world.state()["saved"] == [{"seq": 1, "eventId": "evt-a7k2p9"}]
    assert api.get("/api/saved").json() == {"eventIds": ["evt-a7k2p9"]}
    assert api.get("/api/events/evt-a7k2p9").json()["event"]["saved"] is True


def test_registration_is_idempotent_per_key(api: httpx.Client, world: World) -> None:
    body = {"eventId": "evt-webmcp-intro", "name": "測試讀者", "email": "reader@example.com"}
    headers = {"Idempotency-Key": "key-0123456789"}
    first = api.post("/api/registrations", json=body, headers=headers)
    again = api.post("/api/registrations", json=body, headers=headers)
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["registration"]["id"] == again.json()["registration"]["id"]
    assert again.json()["replayed"] is True
    assert world.event("evt-webmcp-intro")["seatsLeft"] == 11
    assert len(world.active_registrations()) == 4
    # A new key for the same event is a second registration: refused.
    other = api.post("/api/registrations", json=body, headers={"Idempotency-Key": "key-another-one"})
    assert_contract_error(other, 409, "CONFLICT")


def test_registration_needs_a_key_and_a_valid_email(api: httpx.Client, world: World) -> None:
    body = {"eventId": "evt-webmcp-intro", "name": "測試讀者", "email": "reader@example.com"}
    assert_contract_error(api.post("/api/registrations", json=body), 400, "INVALID_ARGUMENT")
    bad = body | {"email": "not-an-email"}
    response = api.post("/api/registrations", json=bad, headers={"Idempotency-Key": "key-0123456789"})
    assert_contract_error(response, 400, "INVALID_ARGUMENT")
    assert len(world.active_registrations()) == 3


def test_a_full_event_refuses_registration(api: httpx.Client, world: World) -> None:
    world.change("update_event", eventId="evt-f8b3y7", fields={"seatsLeft": 0})
    body = {"eventId": "evt-f8b3y7", "name": "測試讀者", "email": "reader@example.com"}
    response = api.post("/api/registrations", json=body, headers={"Idempotency-Key": "key-0123456789"})
    assert_contract_error(response, 409, "CONFLICT")


def test_repeated_cancel_restores_the_seat_once(api: httpx.Client, world: World) -> None:
    seats = world.event("evt-q4m8z1")["seatsLeft"]
    first = api.post("/api/registrations/reg-h8k1/cancel").json()
    second = api.post("/api/registrations/reg-h8k1/cancel").json()
    assert (first["alreadyCancelled"], second["alreadyCancelled"]) == (False, True)
    assert world.event("evt-q4m8z1")["seatsLeft"] == seats + 1
    assert [r["id"] for r in api.get("/api/registrations").json()["registrations"]] == ["reg-r2v6", "reg-z5n3"]


def test_registrations_are_listed_by_event_start(api: httpx.Client) -> None:
    registrations = api.get("/api/registrations").json()["registrations"]
    assert [r["id"] for r in registrations] == ["reg-h8k1", "reg-r2v6", "reg-z5n3"]
    assert registrations[0] | {"venue": None} == {
        "id": "reg-h8k1",
        "eventId": "evt-q4m8z1",
        "title": "Agent 工具設計進階實戰",
        "startsAt": "2027-01-16T13:30+08:00",
        "city": "kaohsiung",
        "venue": None,
        "status": "active",
    }


def test_an_expired_session_writes_nothing(api: httpx.Client, world: World) -> None:
    world.expire_sessions()
    before = world.state()
    assert before["sessions"]["expired"] == [True]
    assert_contract_error(api.post("/api/saved", json={"eventId": "evt-a7k2p9"}), 401, "SESSION_EXPIRED")
    body = {"eventId": "evt-a7k2p9", "name": "測試讀者", "email": "reader@example.com"}
    response = api.post("/api/registrations", json=body, headers={"Idempotency-Key": "key-0123456789"})
    assert_contract_error(response, 401, "SESSION_EXPIRED")
    assert_contract_error(api.post("/api/registrations/reg-h8k1/cancel"), 401, "SESSION_EXPIRED")
    assert_contract_error(api.get("/api/registrations"), 401, "SESSION_EXPIRED")
    assert_contract_error(api.get("/api/saved"), 401, "SESSION_EXPIRED")
    assert api.get("/api/session").json()["expired"] is True  # it stays expired
    assert api.get("/api/events").status_code == 200  # the public catalogue still reads
    assert world.state() == before


def test_state_is_canonical_and_has_no_secrets(api: httpx.Client, control: httpx.Client, world: World) -> None:
    api.post("/api/saved", json={"eventId": "evt-a7k2p9"})
    text = control.get("/__test__/state", params={"world": world.name}).text
    state = json.loads(text)
    assert text == json.dumps(state, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert api.headers["X-CSRF-Token"] not in text
    assert api.cookies["wmcp_session"] not in text
    assert state["sessions"] == {"count": 1, "expired": [False]}
    assert set(state) == {"world", "seed", "breaks", "user", "events", "registrations", "saved", "sessions"}


def test_change_ops(world: World) -> None:
    new_id = world.change("add_registration", eventId="evt-o2d5v8")["registrationId"]
    assert new_id.startswith("reg-") and new_id in world.active_registrations()
    assert world.event("evt-o2d5v8")["seatsLeft"] == 142
    world.change("cancel_registration", registrationId="reg-h8k1")
    assert "reg-h8k1" not in world.active_registrations()
    event = world.change("update_event", eventId="evt-a7k2p9", fields={"title": "新標題", "seatsLeft": 3})
    assert (event["event"]["title"], event["event"]["seatsLeft"]) == ("新標題", 3)


@pytest.mark.parametrize(
    "body",
    [
        {"op": "drop_tables"},
        {"op": "update_event", "eventId": "evt-a7k2p9", "fields": {"capacity": 1}},
        {"op": "cancel_registration"},
    ],
)
def test_bad_change_ops_are_refused(control: httpx.Client, world: World, body: dict) -> None:
    before = world.state()
    assert_contract_error(control.post("/__test__/change", json={"world": world.name, **body}), 400, "INVALID_ARGUMENT")
    assert world.state() == before


def test_reset_checks_names_seeds_and_breaks(control: httpx.Client, http: Callable[..., httpx.Client]) -> None:
    for body in [{"world": "../etc"}, {"world": "ok", "seed": "nope"}, {"world": "ok", "breaks": ["nope"]}]:
        assert_contract_error(control.post("/__test__/reset", json=body), 400, "INVALID_ARGUMENT")
    response = http(cookies={"wmcp_world": "bad name!"}).get("/api/events")
    assert_contract_error(response, 400, "INVALID_ARGUMENT")


def test_seed_empty_has_no_registrations(world: World) -> None:
    world.reset(seed="empty")
    state = world.state()
    assert state["seed"] == "empty" and state["registrations"] == [] and len(state["events"]) == len(EVENTS)


def test_worlds_reset_and_read_concurrently(new_world: Callable[[], World]) -> None:
    worlds = [new_world() for _ in range(6)]

    def churn(index: int) -> list[str]:
        world = worlds[index]
        for _ in range(5):
            world.reset(seed="empty" if index % 2 else "default")
            world.change("add_registration", eventId="evt-o2d5v8")
        return world.active_registrations()

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(churn, range(6)))
    for index, active in enumerate(results):
        assert len(active) == (1 if index % 2 else 4)


def test_no_control_api_outside_test_mode(plain_site: SiteServer, transport: httpx.HTTPTransport) -> None:
    client = httpx.Client(base_url=plain_site.url, transport=transport)
    for method, path in [
        ("POST", "/__test__/reset"),
        ("GET", "/__test__/state?world=main"),
        ("POST", "/__test__/expire-session"),
        ("POST", "/__test__/change"),
    ]:
        response = client.request(method, path, json={"world": "main"})
        assert_contract_error(response, 404, "NOT_FOUND")
    # The world cookie is ignored and no breaks are exposed: one world, "main".
    client.cookies.set("wmcp_world", "elsewhere")
    assert client.get("/api/session").json()["breaks"] == []
    assert [p.name for p in plain_site.data_dir.iterdir()] == ["world-main.sqlite"]


def test_a_crash_answers_a_safe_500(plain_site: SiteServer, transport: httpx.HTTPTransport) -> None:
    def explode(name: str) -> None:
        raise RuntimeError("sqlite3.OperationalError: /secret/path/world.sqlite is locked")

    plain_site.app.state.store.world = explode
    response = httpx.Client(base_url=plain_site.url, transport=transport).get("/api/events")
    assert_contract_error(response, 500, "TEMPORARILY_UNAVAILABLE")
    assert "secret" not in response.text and "sqlite" not in response.text


def test_restart_replaces_an_expired_session(api: httpx.Client, world: World) -> None:
    world.expire_sessions()
    refused = api.post("/api/session/restart", headers={"X-CSRF-Token": "forged"})
    assert_contract_error(refused, 403, "FORBIDDEN")
    fresh = api.post("/api/session/restart")
    assert fresh.status_code == 200 and fresh.json()["expired"] is False
    api.headers["X-CSRF-Token"] = fresh.json()["csrfToken"]
    assert api.post("/api/saved", json={"eventId": "evt-a7k2p9"}).status_code == 200
    assert world.state()["sessions"] == {"count": 2, "expired": [True, False]}


def test_a_client_that_hangs_up_before_its_body_is_answered_by_nothing_and_raises_nothing(tmp_path: Path) -> None:
    """A runner stopped by Ctrl-C mid-request: the site neither raises nor logs a traceback."""
    import asyncio

    app = create_app(test_mode=True, data_dir=tmp_path)
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": "/__test__/reset", "raw_path": b"/__test__/reset", "query_string": b"", "root_path": "",
        "headers": [(b"content-type", b"application/json"), (b"host", b"127.0.0.1")],
        "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80),
    }  # fmt: skip
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    async def call() -> None:
        await app(scope, receive, send)

    in_thread(asyncio.run, call())  # its own event loop, whatever ran before in this process
    assert sent == []
