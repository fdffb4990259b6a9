"""The proxy's account of a trial as the trace keeps it (play/evidence/network_evidence.py), from proxy records."""

from __future__ import annotations

from typing import Any

from webmcp_eval.play.evidence.network_evidence import network_record, site_stopped_answering, unanswered_site_requests
from webmcp_eval.proxies.models import BlockedRequest, RequestRecord, TrialNetwork

SITE = "http://127.0.0.1:8123"


def request(seq: int, **kw: Any) -> RequestRecord:
    fields: dict[str, Any] = dict(
        seq=seq, trial="X-01.t1", method="GET", url=f"{SITE}/api", host="127.0.0.1", port=8123, path="/api"
    )
    return RequestRecord(**(fields | kw))


def test_the_record_counts_requests_and_keeps_mutations_outbound_and_blocked() -> None:
    saved = request(2, method="POST", path="/api/saved", status=201, write=True)
    leak = request(3, url="https://tracker.example/p", host="tracker.example", port=443, path="/p", outbound=True)
    net = TrialNetwork(
        trial_id="X-01.t1",
        requests=[request(1, status=200), saved, leak],
        writes=[saved],
        write_counts={"POST /api/saved": 1},
        blocked=[BlockedRequest(trial="X-01.t1", method="GET", url="https://tracker.example/p", reason="other host")],
    )
    rec = network_record(net, outbound_expected=0)
    assert rec.requests == 3 and rec.write_counts == {"POST /api/saved": 1} and rec.outbound_expected == 0
    assert rec.model_dump()["writes"][0]["path"] == "/api/saved"
    (outbound,) = rec.model_dump()["outbound"]
    assert list(outbound) == [
        "method",
        "url",
        "host",
        "port",
        "path",
        "status",
        "blocked",
        "write",
        "outbound",
        "error",
    ]
    assert outbound["host"] == "tracker.example"
    assert rec.model_dump()["blocked"][0]["reason"] == "other host"


def test_only_site_requests_that_got_no_answer_mean_the_site_went_away() -> None:
    lost = request(1, error="connection refused")
    net = TrialNetwork(
        trial_id="X-01.t1",
        requests=[
            request(0, status=200),  # answered
            lost,
            request(2, error="dropped", fault="drop"),  # the case's own fault
            request(3, error="blocked", blocked=True),
            request(4, error="timeout", host="cdn.example", port=443, outbound=True),  # another host
            request(5, error="Client disconnected."),  # the browser gave it up (its page closed)
        ],
    )
    assert unanswered_site_requests(net, SITE) == [lost]
    assert unanswered_site_requests(TrialNetwork(trial_id="X-01.t1", requests=[request(0, status=200)]), SITE) == []


def test_a_base_url_without_a_port_means_the_schemes_port() -> None:
    lost = request(1, host="site.test", port=80, error="reset")
    assert unanswered_site_requests(TrialNetwork(trial_id="t", requests=[lost]), "http://site.test/app/") == [lost]


def test_the_reason_names_the_count_and_the_first_lost_request() -> None:
    assert site_stopped_answering([], SITE) is None
    why = site_stopped_answering([request(1, method="POST", path="/api/book", error="connection reset")] * 2, SITE)
    assert why == (
        "the site stopped answering during the trial: 2 request(s) to it got no answer "
        f"(first: POST /api/book: connection reset); check that the site is running at {SITE}"
    )
