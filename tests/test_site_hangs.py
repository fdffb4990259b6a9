"""A site that hangs on one API a tool depends on: the trial is not_run for the site's failure, never failed
for the agent's. The page's own time-out (an AbortController after 1.5 s) answers the tool with an error, as a
careful page does; the proxy saw the request open for that long without an answer. The same page whose API
answers passes, and one whose API answers wrong at once fails: the rule fires on a hang only."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from eval_support import cli

pytestmark = pytest.mark.browser

PAGE = b"""<!doctype html><html><head><meta charset="utf-8"><title>Stock</title></head><body><h1>Stock</h1>
<script>
document.modelContext.registerTool({
  name: "get_stock", description: "Whether the tea is in stock.",
  inputSchema: {type: "object", properties: {}}, annotations: {readOnlyHint: true},
  execute: async () => {
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), 1500);  // the page's own time-out
    try {
      const answer = await (await fetch("/api/stock", {signal: stop.signal})).json();
      return {status: "ok", data: answer};
    } catch (err) {
      return {status: "error", message: "the shop did not answer in time"};
    } finally {
      clearTimeout(timer);
    }
  },
});
</script></body></html>"""

CASE = """id: HANG-01
behaviour: selection
title: whether the tea is in stock
start_route: /
steps:
  - user: Is the tea in stock?
    plan: [{call: get_stock}]
    reply: It is.
expect:
  calls:
    expected: [{tool: get_stock, result: {status: ok, data: {in_stock: true}}}]
"""


class _Shop(BaseHTTPRequestHandler):
    mode = "answers"
    release = threading.Event()

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path.startswith("/api/stock"):
            if _Shop.mode == "hangs":
                _Shop.release.wait(20)  # until the test ends: the site hangs on this one API
                return
            body = json.dumps({"in_stock": _Shop.mode == "answers"}).encode()
            kind = "application/json"
        else:
            body, kind = PAGE, "text/html; charset=utf-8"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def shop() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Shop)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    _Shop.release.set()
    server.shutdown()


@pytest.mark.parametrize(
    ("mode", "verdict", "kind"),
    [("hangs", "not_run", "infrastructure"), ("answers", "passed", None), ("answers wrong", "failed", None)],
)
def test_a_hang_on_a_tools_request_is_the_sites_failure_and_only_a_hang(
    tmp_path: Path, shop: str, mode: str, verdict: str, kind: str | None
) -> None:
    _Shop.mode = mode
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "HANG-01.yaml").write_text(CASE)
    (suite / "suite.yaml").write_text("min_cases_per_behaviour: 1\n")
    out = cli("run", str(suite), "--base-url", shop, "--out", str(tmp_path / "runs"), "--run-id", "r")
    trace = json.loads((tmp_path / "runs" / "r" / "trials" / "HANG-01.t1.json").read_text())
    assert trace["verdict"] == verdict, (trace["verdict_reason"], out.stdout)
    assert trace.get("not_run_kind") == kind
    if mode == "hangs":
        assert "the site did not answer GET /api/stock, a request a tool call made" in trace["verdict_reason"]
