"""Record and replay through the real proxy; each test gets a fresh origin and proxy (it may stop the origin)."""

from __future__ import annotations

import json
import ssl
from pathlib import Path

import httpx
from proxy_helpers import CSRF_TOKEN, PNG, SESSION_COOKIE_VALUE, Stack, new_trial_id, self_signed_tls, start_origin

from webmcp_eval.proxies import TRIAL_HEADER, FaultSpec, Fixture, NetworkProxy, load_fixture
from webmcp_eval.proxies.addon import REPLAY_MISS_STATUS


def record(stack: Stack, client_for, play) -> Fixture:
    trial = new_trial_id()
    stack.proxy.begin_trial(
        trial, mode="record", fixture=Fixture(case_id="CASE-01", site_revision="rev-1", base_url=stack.origin.url)
    )
    play(client_for(stack.proxy, trial))
    net = stack.proxy.end_trial(trial)
    assert net.fixture is not None and net.mode == "record"
    return net.fixture


def replay(stack: Stack, client_for, fixture: Fixture, play):
    trial = new_trial_id()
    stack.proxy.begin_trial(trial, mode="replay", fixture=fixture)
    result = play(client_for(stack.proxy, trial))
    return result, stack.proxy.end_trial(trial)


def session_flow(client: httpx.Client, base: str) -> list[httpx.Response]:
    """What the site's pages do: read the session, send its CSRF token back on a write."""
    session = client.get(f"{base}/api/session")
    token = session.json()["csrfToken"]
    saved = client.post(f"{base}/api/saved", json={"eventId": "evt-1", "note": "台北"}, headers={"X-CSRF-Token": token})
    return [
        session,
        saved,
        client.get(f"{base}/logo.png"),
        client.get(f"{base}/notes.txt"),
        client.get(f"{base}/api/events?city=taipei&level=beginner"),
    ]


def test_record_then_replay_with_the_origin_stopped_gives_the_same_answers(stack: Stack, client_for, tmp_path: Path):
    base = stack.origin.url
    live: list[httpx.Response] = []
    fixture = record(stack, client_for, lambda c: live.extend(session_flow(c, base)))
    assert [r.status_code for r in live] == [200, 200, 200, 200, 200]
    assert fixture.case_id == "CASE-01" and fixture.site_revision == "rev-1" and fixture.recorded_at.endswith("Z")
    assert [e.key for e in fixture.entries] == [
        "GET /api/session",
        'POST /api/saved {"eventId":"evt-1","note":"台北"}',
        "GET /logo.png",
        "GET /notes.txt",
        "GET /api/events?city=taipei&level=beginner",
    ]

    path = fixture.save(tmp_path / "CASE-01.yaml")
    stack.origin.stop()
    hits_before = len(stack.origin.hits)
    replayed, net = replay(stack, client_for, load_fixture(path), lambda c: session_flow(c, base))

    assert [r.status_code for r in replayed] == [r.status_code for r in live]
    session, saved, logo, notes, events = replayed
    assert session.json() == {**live[0].json(), "csrfToken": "<redacted>"}  # the redacted token round-trips
    assert saved.json() == live[1].json()
    assert logo.content == PNG and logo.headers["content-type"] == "image/png"
    assert notes.text == live[3].text and events.json() == live[4].json()
    assert net.replay_misses == [] and [r.replay for r in net.requests] == ["hit"] * 5
    assert net.write_counts == {"POST /api/saved": 1}  # counting works in replay too
    assert len(stack.origin.hits) == hits_before


def test_replay_never_contacts_the_origin_even_when_it_is_up(stack: Stack, client_for):
    base = stack.origin.url
    fixture = record(stack, client_for, lambda c: session_flow(c, base))
    before = len(stack.origin.hits)
    replay(stack, client_for, fixture, lambda c: session_flow(c, base))
    assert len(stack.origin.hits) == before


def test_a_replay_miss_answers_599_is_recorded_and_never_reaches_the_origin(stack: Stack, client_for):
    base = stack.origin.url
    fixture = record(stack, client_for, lambda c: c.get(f"{base}/api/events"))
    before = len(stack.origin.hits)

    def play(client: httpx.Client) -> list[httpx.Response]:
        return [
            client.get(f"{base}/api/events?city=kaohsiung"),
            client.post(f"{base}/api/saved", json={"eventId": "evt-9", "csrfToken": "live-secret-value"}),
        ]

    (read, write), net = replay(stack, client_for, fixture, play)
    assert read.status_code == write.status_code == REPLAY_MISS_STATUS
    assert "webmcp-eval replay miss" in read.json()["message"]
    assert read.headers["x-webmcp-eval"] == "replay-miss"
    assert [(m.method, m.url) for m in net.replay_misses] == [
        ("GET", f"{base}/api/events?city=kaohsiung"),
        ("POST", f"{base}/api/saved"),
    ]
    assert net.replay_misses[1].body == '{"csrfToken":"<redacted>","eventId":"evt-9"}'
    assert "never recorded" in net.replay_misses[0].summary
    assert len(stack.origin.hits) == before


def test_identical_keys_answer_in_recorded_order_reads_repeat_writes_miss(stack: Stack, client_for):
    url = f"{stack.origin.url}/api/items"

    def play_live(client: httpx.Client) -> None:
        for response in (
            client.get(url),
            client.post(url, json={"x": 1}),
            client.get(url),
            client.post(url, json={"x": 1}),
        ):
            response.raise_for_status()

    fixture = record(stack, client_for, play_live)
    recorded_n = [e.response.body["n"] for e in fixture.entries]  # the origin's counter: every answer distinct
    get_1, post_1, get_2, post_2 = recorded_n

    def play_replay(client: httpx.Client) -> list[httpx.Response]:
        # Another global order than the recording: keys, not call order, decide.
        return [
            client.get(url),
            client.get(url),
            client.get(url),
            client.post(url, json={"x": 1}),
            client.post(url, json={"x": 1}),
            client.post(url, json={"x": 1}),
        ]

    answers, net = replay(stack, client_for, fixture, play_replay)
    statuses = [a.status_code for a in answers]
    assert statuses == [200, 200, 200, 200, 200, REPLAY_MISS_STATUS]
    assert [a.json()["n"] for a in answers[:5]] == [get_1, get_2, get_2, post_1, post_2]
    assert len(net.replay_misses) == 1 and "recorded 2 time(s); this is call 3" in net.replay_misses[0].summary


def test_keys_are_canonical_json_key_order_and_query_order_do_not_matter(stack: Stack, client_for):
    base = stack.origin.url

    def play_live(client: httpx.Client) -> None:
        client.get(f"{base}/api/search?b=2&a=1")
        client.post(
            f"{base}/api/filter",
            content=b'{"b": 1, "a": {"d": 1, "c": 2}}',
            headers={"Content-Type": "application/json"},
        )

    fixture = record(stack, client_for, play_live)
    assert [e.key for e in fixture.entries] == ["GET /api/search?a=1&b=2", 'POST /api/filter {"a":{"c":2,"d":1},"b":1}']

    def play_replay(client: httpx.Client) -> list[httpx.Response]:
        return [
            client.get(f"{base}/api/search?a=1&b=2"),
            client.post(
                f"{base}/api/filter", content=b'{"a":{"c":2,"d":1},"b":1}', headers={"Content-Type": "application/json"}
            ),
            client.post(f"{base}/api/filter", json={"a": {"c": 2, "d": 1}, "b": 2}),
        ]  # another value: a miss

    answers, net = replay(stack, client_for, fixture, play_replay)
    assert [a.status_code for a in answers] == [200, 200, REPLAY_MISS_STATUS]
    assert answers[0].json()["query"] == {"b": "2", "a": "1"}  # the recorded answer, byte for byte
    assert len(net.replay_misses) == 1


def test_secrets_never_reach_a_saved_fixture(stack: Stack, client_for, tmp_path: Path):
    base = stack.origin.url
    bearer = "sk-live-0123456789abcdef"
    api_key = "key-9a8b7c6d5e4f3a2b"

    def play(client: httpx.Client) -> None:
        token = client.get(f"{base}/api/session").json()["csrfToken"]  # sets the session cookie
        client.post(
            f"{base}/api/saved", json={"eventId": "e1", "password": "pw-s3cret-value"}, headers={"X-CSRF-Token": token}
        )
        client.get(
            f"{base}/api/whoami?api_key={api_key}", headers={"Authorization": f"Bearer {bearer}", "X-Api-Key": api_key}
        )

    fixture = record(stack, client_for, play)
    for name in ("fixture.yaml", "fixture.json"):
        text = fixture.save(tmp_path / name).read_text(encoding="utf-8")
        for secret in (
            SESSION_COOKIE_VALUE,
            CSRF_TOKEN,
            bearer,
            api_key,
            "pw-s3cret-value",
            "hunter2-hunter2",
            "ak-1234567890abcdef",
        ):
            assert secret not in text, f"{secret} leaked into {name}"
        assert "<redacted>" in text
    session, saved, whoami = fixture.entries
    assert session.response.headers["set-cookie"] == "sess=REDACTED; HttpOnly; Path=/"
    assert saved.request.headers["cookie"] == "sess=REDACTED"
    assert saved.request.headers["x-csrf-token"] == "<redacted>"
    assert whoami.request.headers["authorization"] == whoami.request.headers["x-api-key"] == "<redacted>"
    assert whoami.response.body["cookieHeader"] == "sess=<redacted>"  # caught by value, not by field name
    assert "date" not in session.response.headers and "server" not in session.response.headers
    assert "server-timing" not in session.response.headers


def test_faults_apply_in_replay_without_consuming_the_fixture(stack: Stack, client_for):
    url = f"{stack.origin.url}/api/events/e1"
    fixture = record(stack, client_for, lambda c: c.get(url))
    trial = new_trial_id()
    stack.proxy.begin_trial(trial, mode="replay", fixture=fixture)
    stack.proxy.arm_fault(trial, FaultSpec(method="GET", path="/api/events/*", status=503))
    client = client_for(stack.proxy, trial)
    assert [client.get(url).status_code, client.get(url).status_code] == [503, 200]
    net = stack.proxy.end_trial(trial)
    assert [r.replay for r in net.requests] == [None, "hit"] and len(net.faults_fired) == 1


def test_record_mode_asks_for_complete_answers(stack: Stack, client_for):
    url = f"{stack.origin.url}/api/events"
    record(stack, client_for, lambda c: c.get(url, headers={"If-None-Match": '"abc"'}))
    assert "If-None-Match" not in stack.origin.hits[-1].headers  # a 304 would replay as an empty page


def test_fixture_in_a_trace_is_json(stack: Stack, client_for):
    fixture = record(stack, client_for, lambda c: c.get(f"{stack.origin.url}/logo.png"))
    data = json.loads(fixture.model_dump_json())
    assert data["entries"][0]["response"]["encoding"] == "base64"


def test_https_upstream_records_and_replays_with_mitmproxys_own_ca(tmp_path: Path):
    """A deployed site over HTTPS: the client trusts mitmproxy's CA (as the runner's browser ignores
    HTTPS errors), the proxy accepts the origin's self-signed certificate (ssl_insecure)."""
    origin = start_origin(tls=self_signed_tls(tmp_path))
    confdir = tmp_path / "mitmproxy"
    try:
        with NetworkProxy(site_origins=[origin.url], ssl_insecure=True, confdir=str(confdir)) as proxy:
            trust = ssl.create_default_context(cafile=str(confdir / "mitmproxy-ca-cert.pem"))

            def client(trial: str) -> httpx.Client:
                return httpx.Client(proxy=proxy.url, verify=trust, trust_env=False, headers={TRIAL_HEADER: trial})

            proxy.begin_trial("rec", mode="record")
            with client("rec") as c:
                live = c.post(f"{origin.url}/api/items", json={"x": 1})
            recorded = proxy.end_trial("rec")
            assert live.status_code == 200 and recorded.write_counts == {"POST /api/items": 1}
            assert recorded.fixture is not None and recorded.fixture.entries[0].key == 'POST /api/items {"x":1}'
            assert recorded.fixture.base_url == origin.url

            origin.stop()
            proxy.begin_trial("rep", mode="replay", fixture=recorded.fixture)
            with client("rep") as c:
                again = c.post(f"{origin.url}/api/items", json={"x": 1})
            assert again.json() == live.json() and proxy.end_trial("rep").replay_misses == []
    finally:
        origin.stop()
