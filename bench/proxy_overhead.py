"""Benchmark (not a test): what the proxy costs per request.

N sequential GETs (one keep-alive httpx client) to a local server:

  direct  — straight to the server;
  live    — through NetworkProxy, counting only;
  record  — through NetworkProxy, saving every answer;
  replay  — through NetworkProxy, answered from the recorded fixture (server idle).

Prints requests per second and median / p95 latency for each.

Usage: .venv/bin/python bench/proxy_overhead.py [-n 300]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from webmcp_eval.proxies import TRIAL_HEADER, NetworkProxy  # noqa: E402


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hits = 0

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        Handler.hits += 1
        body = json.dumps(
            {"path": self.path, "events": [{"id": f"evt-{i}", "title": "WebMCP 入門"} for i in range(5)]},
            ensure_ascii=False,
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def run(client: httpx.Client, base: str, n: int) -> tuple[float, list[float]]:
    """(total seconds, per-request milliseconds) for n GETs over 10 distinct URLs."""
    latencies = []
    started = time.perf_counter()
    for i in range(n):
        t0 = time.perf_counter()
        client.get(f"{base}/api/events?city=taipei&page={i % 10}").raise_for_status()
        latencies.append((time.perf_counter() - t0) * 1000)
    return time.perf_counter() - started, latencies


def row(name: str, total: float, latencies: list[float]) -> str:
    p95 = statistics.quantiles(latencies, n=20)[-1]
    return f"{name:<8} {len(latencies) / total:>9.0f} {statistics.median(latencies):>11.2f} {p95:>9.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=300, help="requests per mode (default 300)")
    n = parser.parse_args().n

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    rows = []
    try:
        with httpx.Client(trust_env=False) as direct:
            run(direct, base, 20)  # warm-up
            rows.append(row("direct", *run(direct, base, n)))
        with NetworkProxy(site_origins=[base]) as proxy:

            def through(trial: str) -> httpx.Client:
                return httpx.Client(proxy=proxy.url, headers={TRIAL_HEADER: trial}, trust_env=False)

            proxy.begin_trial("warm")
            with through("warm") as client:
                run(client, base, 20)
            proxy.end_trial("warm")
            for mode in ("live", "record"):
                proxy.begin_trial(mode, mode=mode)
                with through(mode) as client:
                    rows.append(row(mode, *run(client, base, n)))
                net = proxy.end_trial(mode)
                assert len(net.requests) == n
            fixture = net.fixture
            hits_before = Handler.hits
            proxy.begin_trial("replay", mode="replay", fixture=fixture)
            with through("replay") as client:
                rows.append(row("replay", *run(client, base, n)))
            assert not proxy.end_trial("replay").replay_misses and Handler.hits == hits_before
    finally:
        server.shutdown()
    print(f"{n} sequential GETs, one keep-alive client, local server")
    print(f"{'mode':<8} {'req/s':>9} {'median ms':>11} {'p95 ms':>9}")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
