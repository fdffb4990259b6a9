"""Attribution, counting and the outbound guard, with real HTTP through the proxy."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest
from proxy_helpers import OriginServer, new_trial_id, start_origin

from webmcp_eval.proxies import TRIAL_HEADER, NetworkProxy, ProxyError
from webmcp_eval.proxies.trial_state import TrialSite


def test_counts_every_request_in_order_and_mutations_by_method_and_path(proxy, origin, client_for):
    trial = new_trial_id()
    proxy.begin_trial(trial)
    client = client_for(proxy, trial)
    client.get(f"{origin.url}/api/events?city=taipei")
    client.post(f"{origin.url}/api/events/e1/save", json={})
    client.post(f"{origin.url}/api/events/e1/save", json={})
    client.put(f"{origin.url}/api/profile", json={"name": "A"})
    client.delete(f"{origin.url}/api/saved/e1")
    client.patch(f"{origin.url}/api/profile", json={"name": "B"})
    client.head(f"{origin.url}/api/events")
    net = proxy.end_trial(trial)

    assert [(r.method, r.path) for r in net.requests] == [
        ("GET", "/api/events"),
        ("POST", "/api/events/e1/save"),
        ("POST", "/api/events/e1/save"),
        ("PUT", "/api/profile"),
        ("DELETE", "/api/saved/e1"),
        ("PATCH", "/api/profile"),
        ("HEAD", "/api/events"),
    ]
    first = net.requests[0]
    assert (first.host, first.port, first.query, first.status) == (
        "127.0.0.1",
        origin.server.server_port,
        "city=taipei",
        200,
    )
    assert all(r.duration_ms is not None and r.duration_ms >= 0 for r in net.requests)
    assert [r.seq for r in net.requests] == sorted(r.seq for r in net.requests)
    assert net.write_counts == {
        "POST /api/events/e1/save": 2,
        "PUT /api/profile": 1,
        "DELETE /api/saved/e1": 1,
        "PATCH /api/profile": 1,
    }
    assert [m.method for m in net.writes] == ["POST", "POST", "PUT", "DELETE", "PATCH"]
    assert net.blocked == [] and net.faults_fired == [] and net.replay_misses == [] and net.fixture is None
    json.dumps(net.model_dump(mode="json"))  # what a trace stores


def test_ignore_paths_are_counted_as_requests_but_never_as_mutations(proxy, origin, client_for):
    trial = new_trial_id()
    proxy.begin_trial(trial)
    client = client_for(proxy, trial)
    client.post(f"{origin.url}/__test__/reset", json={"seed": "default"})
    client.post(f"{origin.url}/api/saved", json={}, headers={"X-CSRF-Token": "x"})
    net = proxy.end_trial(trial)
    assert len(net.requests) == 2
    assert net.write_counts == {"POST /api/saved": 1}


def test_custom_write_methods_and_ignore_paths(origin, client_for):
    # A second proxy may only run after the module's one is gone; this one never starts.
    unstarted = NetworkProxy(site_origins=[origin.url], write_methods=("post",), ignore_paths=["/internal/"])
    with pytest.raises(ProxyError, match="has not started"):
        _ = unstarted.url
    addon = unstarted.addon
    assert addon._is_write("POST", addon.primary_origin, "/api/x")
    assert not addon._is_write("DELETE", addon.primary_origin, "/api/x")
    assert not addon._is_write("POST", addon.primary_origin, "/internal/reset")
    assert addon._is_write("POST", "http://127.0.0.1:1", "/api/x")  # a write that leaves for another host
    assert addon._is_write("POST", "http://127.0.0.1:1", "/internal/x")  # ignore_paths are the site's own
    assert not addon._is_write("GET", "http://127.0.0.1:1", "/api/x")


def test_trial_header_is_stripped_before_the_origin(proxy, origin, client_for):
    trial = new_trial_id()
    proxy.begin_trial(trial)
    before = len(origin.hits)
    client_for(proxy, trial).get(f"{origin.url}/api/whatever")
    proxy.end_trial(trial)
    hit = origin.hits[before]
    assert hit.path == "/api/whatever"
    assert TRIAL_HEADER.lower() not in {name.lower() for name in hit.headers}


def test_two_concurrent_trials_never_mix(proxy, origin, client_for):
    a, b = new_trial_id(), new_trial_id()
    proxy.begin_trial(a)
    proxy.begin_trial(b)
    clients = {a: client_for(proxy, a), b: client_for(proxy, b)}
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def play(trial: str, path: str) -> None:
        try:
            start.wait()
            for i in range(25):
                clients[trial].post(f"{origin.url}{path}", json={"i": i})
                clients[trial].get(f"{origin.url}{path}")
        except BaseException as err:  # surfaced below
            errors.append(err)

    threads = [threading.Thread(target=play, args=(a, "/api/a")), threading.Thread(target=play, args=(b, "/api/b"))]
    for t in threads:
        t.start()
    mid = proxy.snapshot(a)  # reading counters while the trial runs is fine
    for t in threads:
        t.join()
    assert not errors
    net_a, net_b = proxy.end_trial(a), proxy.end_trial(b)
    assert len(mid.requests) <= 50
    assert {r.path for r in net_a.requests} == {"/api/a"} and len(net_a.requests) == 50
    assert {r.path for r in net_b.requests} == {"/api/b"} and len(net_b.requests) == 50
    assert net_a.write_counts == {"POST /api/a": 25} and net_b.write_counts == {"POST /api/b": 25}
    assert {r.trial for r in net_a.requests} == {a}


def test_snapshot_does_not_end_and_end_trial_forgets(proxy, origin, client_for):
    trial = new_trial_id()
    proxy.begin_trial(trial)
    client = client_for(proxy, trial)
    client.post(f"{origin.url}/api/one", json={})
    first = proxy.snapshot(trial)
    client.post(f"{origin.url}/api/two", json={})
    assert len(first.writes) == 1  # a snapshot is a copy, not a live view
    assert len(proxy.snapshot(trial).writes) == 2
    client.get(f"{origin.url}/api/three")
    assert proxy.so_far(trial) == (3, ["POST /api/one", "POST /api/two"])  # what a tool call reads around itself
    assert len(proxy.end_trial(trial).writes) == 2
    with pytest.raises(KeyError):
        proxy.end_trial(trial)
    with pytest.raises(ValueError, match="already begun"):
        proxy.begin_trial("dup")
        proxy.begin_trial("dup")
    proxy.end_trial("dup")


def test_unattributed_and_unknown_trials_count_under_the_empty_trial(proxy, origin, client_for):
    proxy.end_trial("")  # empties the shared bucket
    client_for(proxy, None).post(f"{origin.url}/api/anon", json={})
    client_for(proxy, "never-begun").post(f"{origin.url}/api/unknown", json={})
    net = proxy.end_trial("")
    assert net.write_counts == {"POST /api/anon": 1, "POST /api/unknown": 1}
    assert {r.trial for r in net.requests} == {""}


def test_outbound_guard_blocks_other_hosts_and_records_them(proxy, origin, outsider: OriginServer, client_for):
    trial = new_trial_id()
    proxy.begin_trial(trial)
    client = client_for(proxy, trial)
    answer = client.post(f"{outsider.url}/collect?u=1", json={"leak": True})
    anonymous = client_for(proxy, None).get(f"{outsider.url}/pixel.gif")
    net = proxy.end_trial(trial)

    assert answer.status_code == 403 and answer.headers["x-webmcp-eval"] == "blocked"
    assert anonymous.status_code == 403
    assert outsider.count() == 0  # never forwarded, not even unattributed traffic
    assert [(b.trial, b.method, b.url) for b in net.blocked] == [(trial, "POST", f"{outsider.url}/collect?u=1")]
    assert net.requests[0].blocked and net.requests[0].outbound and net.requests[0].status == 403
    assert net.writes == []  # blocked: it never reached the other host
    assert any(b.url.endswith("/pixel.gif") for b in proxy.snapshot("").blocked)


def test_allowed_hosts_pass_through(proxy, allowed: OriginServer, client_for):
    trial = new_trial_id()
    proxy.begin_trial(trial)
    answer = client_for(proxy, trial).post(f"{allowed.url}/api/analytics", json={})
    net = proxy.end_trial(trial)
    assert answer.status_code == 200 and allowed.count("POST", "/api/analytics") == 1
    assert net.blocked == [] and net.requests[0].outbound
    # it reached the other host: a write like any other, keyed by that host
    port = allowed.server.server_port
    assert [m.url for m in net.writes] == [f"{allowed.url}/api/analytics"]
    assert net.write_counts == {f"POST //127.0.0.1:{port}/api/analytics": 1}


def test_records_for_traces_hold_no_query_secrets(proxy, origin, client_for):
    trial = new_trial_id()
    proxy.begin_trial(trial)
    client_for(proxy, trial).post(f"{origin.url}/api/hook?api_key=ak-9f8e7d6c5b4a&x=1", json={})
    net = proxy.end_trial(trial)
    assert "ak-9f8e7d6c5b4a" not in net.model_dump_json()
    assert net.writes[0].query == "api_key=%3Credacted%3E&x=1"
    assert origin.hits[-1].path == "/api/hook?api_key=ak-9f8e7d6c5b4a&x=1"  # upstream gets the real request


def test_a_cors_preflight_only_the_trial_header_caused_is_answered_by_the_proxy(proxy, allowed, client_for):
    """A web font from another host is a simple CORS request: our header must not cost it a preflight."""
    client = client_for(proxy, None)
    before = len(allowed.hits)
    asked = {"Origin": "http://site.example", "Access-Control-Request-Method": "GET"}
    ours = client.options(
        f"{allowed.url}/font.woff2", headers={**asked, "Access-Control-Request-Headers": TRIAL_HEADER.lower()}
    )
    assert ours.status_code == 204 and ours.headers["x-webmcp-eval"] == "preflight"
    assert ours.headers["access-control-allow-origin"] == "http://site.example"
    assert TRIAL_HEADER.lower() in ours.headers["access-control-allow-headers"].lower()
    assert len(allowed.hits) == before  # the other host never saw a preflight it was never meant to get

    # the page's own preflight goes to the host, without our header in it
    theirs = client.options(
        f"{allowed.url}/api/x", headers={**asked, "Access-Control-Request-Headers": f"content-type, {TRIAL_HEADER}"}
    )
    assert theirs.status_code != 204 or theirs.headers.get("x-webmcp-eval") != "preflight"
    hit = allowed.hits[-1]
    assert hit.method == "OPTIONS"
    assert {k.lower(): v for k, v in hit.headers.items()}["access-control-request-headers"] == "content-type"

    # a preflight without our header is the page's business alone
    client.options(f"{allowed.url}/api/y", headers={**asked, "Access-Control-Request-Headers": "x-custom"})
    assert {k.lower(): v for k, v in allowed.hits[-1].headers.items()}["access-control-request-headers"] == "x-custom"


@pytest.fixture
def own_site() -> Iterator[OriginServer]:
    """A site that is not the proxy's: a pytest test's own page."""
    server = start_origin()
    yield server
    server.stop()


def test_a_trial_of_its_own_site_learns_it_from_its_first_page(proxy, origin, own_site: OriginServer, client_for):
    """A pytest test's trial: its site is the origin of its first top-level page, not the proxy's."""
    trial = new_trial_id()
    proxy.begin_trial(trial, site=TrialSite([], [f"127.0.0.1:{origin.server.server_port}"]))
    client = client_for(proxy, trial)
    page = {"sec-fetch-dest": "document", "accept": "text/html"}
    client.get(f"{own_site.url}/shop/", headers=page)  # its first page: its site
    client.post(f"{own_site.url}/shop/cart", json={})
    client.get(f"{origin.url}/font.css", headers={"sec-fetch-dest": "style"})
    client.get(f"{origin.url}/elsewhere/", headers=page)  # a later page does not move the site
    net = proxy.end_trial(trial)
    assert [(r.port, r.path, r.outbound, r.blocked) for r in net.requests] == [
        (own_site.server.server_port, "/shop/", False, False),
        (own_site.server.server_port, "/shop/cart", False, False),
        (origin.server.server_port, "/font.css", True, False),  # the proxy's site is another host to this trial
        (origin.server.server_port, "/elsewhere/", True, False),
    ]
    assert net.write_counts == {"POST /shop/cart": 1}  # a write to its own site, keyed without a host
    assert own_site.count() == 2


def test_a_trial_that_learns_nothing_from_a_fetch_keeps_every_host_other(proxy, own_site: OriginServer, client_for):
    trial = new_trial_id()
    proxy.begin_trial(trial, site=TrialSite([], []))
    client = client_for(proxy, trial)
    client.get(f"{own_site.url}/data.json", headers={"sec-fetch-dest": "empty"})  # not a page: no site learnt
    client.get(f"{own_site.url}/page/", headers={"sec-fetch-dest": "iframe", "accept": "text/html"})  # nor a frame
    net = proxy.end_trial(trial)
    assert [(r.path, r.outbound, r.blocked) for r in net.requests] == [
        ("/data.json", True, True),
        ("/page/", True, True),
    ]
    assert own_site.count() == 0  # blocked: its own allow list is empty
