"""Connections through the proxy: what a page's requests cost in connections, counted, never timed."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from proxy_helpers import new_trial_id

from webmcp_eval.proxies import TRIAL_HEADER, NetworkProxy


class _OldServer(BaseHTTPRequestHandler):
    """An HTTP/1.0 origin, as Python's http.server is: it closes its connection after every answer."""

    protocol_version = "HTTP/1.0"
    connections = 0

    def setup(self) -> None:
        super().setup()
        type(self).connections += 1

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        body = f"file {self.path}".encode()
        self.send_response(404 if self.path == "/missing" else 200)
        self.send_header("Content-Type", "text/plain")
        if self.path != "/until-close":  # an answer whose end is the connection's end
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_HEAD(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()


@pytest.fixture(scope="module")
def old_origin() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _OldServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def old_proxy(old_origin: str) -> Iterator[NetworkProxy]:
    with NetworkProxy(site_origins=[old_origin]) as running:
        yield running


def test_an_origin_that_closes_after_each_answer_does_not_close_the_browsers_connection(old_proxy, old_origin):
    trial = new_trial_id()
    old_proxy.begin_trial(trial)
    before_proxy, before_origin = old_proxy.client_connections, _OldServer.connections
    paths = [f"/page-{i}.css" for i in range(8)] + ["/missing", "/until-close"]
    with httpx.Client(proxy=old_proxy.url, headers={TRIAL_HEADER: trial}, trust_env=False, timeout=10) as client:
        answers = [client.get(f"{old_origin}{path}") for path in paths]
        head = client.head(f"{old_origin}/page-0.css")
    net = old_proxy.end_trial(trial)

    # every answer arrives whole and unchanged, the one whose end was the origin's close included
    assert [(a.status_code, a.text) for a in answers] == [(404 if p == "/missing" else 200, f"file {p}") for p in paths]
    assert head.status_code == 200 and head.content == b""
    assert [r.status for r in net.requests] == [a.status_code for a in answers] + [200]
    # the origin closed each of its connections, as it asked ...
    assert _OldServer.connections - before_origin == len(paths) + 1
    # ... but the client's one connection to the proxy carried all of them (it was one per request)
    assert old_proxy.client_connections - before_proxy == 1


def test_a_client_that_asks_to_close_still_gets_its_connection_closed(old_proxy, old_origin):
    trial = new_trial_id()
    old_proxy.begin_trial(trial)
    before = old_proxy.client_connections
    with httpx.Client(
        proxy=old_proxy.url, headers={TRIAL_HEADER: trial, "Connection": "close"}, trust_env=False, timeout=10
    ) as client:
        texts = [client.get(f"{old_origin}/a{i}").text for i in range(3)]
    old_proxy.end_trial(trial)
    assert texts == ["file /a0", "file /a1", "file /a2"]
    assert old_proxy.client_connections - before == 3
