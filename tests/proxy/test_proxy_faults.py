"""Faults armed per trial: status, delay, drop, duplicate and lose_answer, each for exactly N requests."""

from __future__ import annotations

import time

import httpx
import pytest
from proxy_helpers import CSRF_TOKEN, new_trial_id
from pydantic import ValidationError

from webmcp_eval.proxies import FaultSpec


def test_status_fault_answers_the_next_n_matching_requests_without_the_origin(proxy, origin, client_for):
    trial = new_trial_id()
    proxy.begin_trial(trial)
    proxy.arm_fault(trial, FaultSpec(method="GET", path="/api/events/*", times=2, status=503))
    client = client_for(proxy, trial)
    before = origin.count("GET")
    other = client.get(f"{origin.url}/api/other")  # does not match: passes
    first = client.get(f"{origin.url}/api/events/e1")
    post = client.post(f"{origin.url}/api/events/e1", json={})  # wrong method: passes
    second = client.get(f"{origin.url}/api/events/e2?x=1")
    third = client.get(f"{origin.url}/api/events/e3")
    net = proxy.end_trial(trial)

    assert [r.status_code for r in (other, first, post, second, third)] == [200, 503, 200, 503, 200]
    assert first.json()["code"] == "INJECTED_FAULT" and first.headers["x-webmcp-eval"] == "fault"
    assert origin.count("GET") - before == 2  # /api/other and e3; the faulted two never left the proxy
    assert [(f.method, f.path, f.effect, f.left) for f in net.faults_fired] == [
        ("GET", "/api/events/e1", "status 503", 1),
        ("GET", "/api/events/e2", "status 503", 0),
    ]
    assert [r.fault for r in net.requests] == [None, "status 503", None, "status 503", None]


def test_faults_are_per_trial(proxy, origin, client_for):
    armed, other = new_trial_id(), new_trial_id()
    proxy.begin_trial(armed)
    proxy.begin_trial(other)
    proxy.arm_fault(armed, FaultSpec(path="/api/x", status=500))
    assert client_for(proxy, other).get(f"{origin.url}/api/x").status_code == 200
    assert client_for(proxy, armed).get(f"{origin.url}/api/x").status_code == 500
    assert proxy.end_trial(other).faults_fired == []
    assert len(proxy.end_trial(armed).faults_fired) == 1
    with pytest.raises(KeyError):
        proxy.arm_fault("no-such-trial", FaultSpec(path="/x", drop=True))


def test_delay_fault_delays_exactly_n_requests_then_forwards(proxy, origin, client_for):
    trial = new_trial_id()
    proxy.begin_trial(trial)
    proxy.arm_fault(trial, FaultSpec(path="/api/slow", times=2, delay_ms=300))
    client = client_for(proxy, trial)
    before = origin.count(path="/api/slow")
    started = time.monotonic()
    answers = [client.get(f"{origin.url}/api/slow") for _ in range(2)]
    delayed = time.monotonic() - started
    third = client.get(f"{origin.url}/api/slow")
    net = proxy.end_trial(trial)

    assert all(a.status_code == 200 for a in [*answers, third])
    assert delayed >= 0.55  # loose lower bound: two 300 ms delays
    assert origin.count(path="/api/slow") - before == 3  # delayed, not swallowed
    assert [f.effect for f in net.faults_fired] == ["delay 300ms", "delay 300ms"]
    assert net.requests[0].duration_ms >= 290 and net.requests[2].fault is None


def test_drop_fault_kills_the_connection_for_exactly_n_requests(proxy, origin, client_for):
    trial = new_trial_id()
    proxy.begin_trial(trial)
    proxy.arm_fault(trial, FaultSpec(method="POST", path="/api/saved", times=1, drop=True))
    client = client_for(proxy, trial, headers={"X-CSRF-Token": CSRF_TOKEN})
    before = origin.count("POST", "/api/saved")
    with pytest.raises(httpx.TransportError):
        client.post(f"{origin.url}/api/saved", json={"eventId": "e1"})
    retry = client.post(f"{origin.url}/api/saved", json={"eventId": "e1"})
    net = proxy.end_trial(trial)

    assert retry.status_code == 200
    assert origin.count("POST", "/api/saved") - before == 1  # the dropped one never arrived
    dropped = net.requests[0]
    assert dropped.status is None and dropped.error and dropped.fault == "drop"
    assert [f.effect for f in net.faults_fired] == ["drop"]
    assert net.write_counts == {"POST /api/saved": 2}  # the client did send two writes


def test_duplicate_fault_delivers_the_request_twice_and_counts_one_mutation(proxy, origin, client_for):
    trial = new_trial_id()
    proxy.begin_trial(trial)
    proxy.arm_fault(trial, FaultSpec(method="POST", path="/api/registrations/*/cancel", duplicate=True))
    client = client_for(proxy, trial)
    before = origin.count("POST", "/api/registrations/r1/cancel")
    answer = client.post(f"{origin.url}/api/registrations/r1/cancel", json={})
    net = proxy.end_trial(trial)

    assert origin.count("POST", "/api/registrations/r1/cancel") - before == 2
    original, duplicate = origin.hits[-2:]
    assert original.body == duplicate.body == b"{}"
    assert "x-webmcp-eval-trial" not in {k.lower() for k in duplicate.headers}
    assert answer.json()["n"] == len(origin.hits) - 1  # the client got the first delivery's answer
    assert net.write_counts == {"POST /api/registrations/r1/cancel": 1}  # the agent sent one
    assert [(f.effect, f.duplicate_status) for f in net.faults_fired] == [("duplicate", 200)]


def test_lose_answer_fault_lets_the_origin_act_and_answers_the_client_502(proxy, origin, client_for):
    trial = new_trial_id()
    proxy.begin_trial(trial)
    proxy.arm_fault(trial, FaultSpec(method="POST", path="/api/registrations/*/cancel", lose_answer=True))
    client = client_for(proxy, trial)
    before = origin.count("POST", "/api/registrations/r1/cancel")
    lost = client.post(f"{origin.url}/api/registrations/r1/cancel", json={})
    again = client.post(f"{origin.url}/api/registrations/r1/cancel", json={})
    net = proxy.end_trial(trial)

    assert origin.count("POST", "/api/registrations/r1/cancel") - before == 2  # the origin got both
    assert lost.status_code == 502 and lost.json()["code"] == "ANSWER_LOST"
    assert again.status_code == 200  # only the first: times 1
    assert net.write_counts == {"POST /api/registrations/r1/cancel": 2}
    assert [f.effect for f in net.faults_fired] == ["answer lost"]
    lost_record = [r for r in net.requests if r.fault][0]
    assert lost_record.status == 200 and not lost_record.error  # the origin answered; the page never saw it


def test_fault_spec_needs_exactly_one_effect():
    with pytest.raises(ValidationError, match="exactly one"):
        FaultSpec(path="/x")
    with pytest.raises(ValidationError, match="exactly one"):
        FaultSpec(path="/x", status=503, drop=True)
    with pytest.raises(ValidationError, match="exactly one"):
        FaultSpec(path="/x", duplicate=True, lose_answer=True)
    with pytest.raises(ValidationError):
        FaultSpec(path="/x", status=503, times=0)
    assert FaultSpec(path="/api/events/*", status=503).matches("get", "/api/events/e1")
    assert not FaultSpec(method="POST", path="/api/events/*", status=503).matches("GET", "/api/events/e1")
