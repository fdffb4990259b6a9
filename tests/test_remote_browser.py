"""Remote browsers: a Playwright browser server (--connect) and a running Chromium (--connect-over-cdp).

Both are started by the test on loopback. A seed case played through each must pass with the same
evidence as a local browser: the native WebMCP path, the shim's log, the DevTools witness and the
proxy's counts. A wrong endpoint is one line and exit 2, and leaves no run directory behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from eval_support import cli, play

from webmcp_eval.play.browser.browser import find_chromium, launch_args
from webmcp_eval.trace import Trace


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _stop_group(proc: subprocess.Popen) -> None:
    """Stop the process and every child it started (its own process group), then reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=20)


def _started(proc: subprocess.Popen, pattern: str, what: str) -> str:
    """The first match of pattern in the process's output (it prints its endpoint when ready)."""
    deadline = time.monotonic() + 60
    assert proc.stdout
    seen = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            break
        seen.append(line)
        found = re.search(pattern, line)
        if found:
            return found.group(0)
    _stop_group(proc)
    raise AssertionError(f"{what} did not start: {''.join(seen)[-2000:]}")


browser = pytest.mark.browser


@pytest.fixture(scope="module")
def browser_server() -> Iterator[str]:
    """`playwright run-server` on loopback; --unsafe lets the runner's launch flags (WebMCP) through."""
    port = _free_port()
    cmd = [sys.executable, "-m", "playwright", "run-server", "--host", "127.0.0.1", "--port", str(port), "--unsafe"]
    # its own process group: the Python entry point runs Playwright's node driver as a child
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        yield _started(proc, r"ws://\S+", "the browser server")
    finally:
        _stop_group(proc)


@pytest.fixture(scope="module")
def cdp_chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Chromium started as a user would: a DevTools port and the WebMCP flag (launch_args)."""
    profile = tmp_path_factory.mktemp("cdp-profile")
    cmd = [
        find_chromium().path,
        "--headless",
        "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0",
        f"--user-data-dir={profile}",
        *launch_args(),
        "about:blank",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        ws = _started(proc, r"ws://127\.0\.0\.1:\d+", "Chromium")
        yield ws.replace("ws://", "http://")
    finally:
        _stop_group(proc)


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Trace:
    (trace,) = play(tmp_path_factory.mktemp("local"), ("SEL-01",))
    return trace


def _evidence(t: Trace) -> dict:
    """What must not depend on where the browser runs."""
    return {
        "verdict": t.verdict,
        "assertions": [(a.id, a.status) for a in t.assertions],
        "webmcp_path": t.webmcp_path,
        "shim": [(r.type, r.name) for r in t.registrations],
        "witness": (t.witness.available, [e.event for e in t.witness.events], t.witness.disagreements),
        "calls": [(c.tool, c.args) for c in t.calls],
        "network": (t.network.available, t.network.write_counts, t.network.outbound),
    }


@browser
def test_a_seed_case_through_a_browser_server_has_the_local_evidence(tmp_path, browser_server, local):
    # the browser is told the proxy's address by the name it would use on another machine
    options = {"connect": browser_server, "chromium": find_chromium().path, "proxy_advertise": "localhost"}
    (trace,) = play(tmp_path, ("SEL-01",), workers=2, **options)
    run = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert run["proxy"].startswith("http://localhost:") and run["browser"]["source"] == f"server {browser_server}"
    assert trace.verdict == "passed", trace.verdict_reason
    assert trace.webmcp_path == "native" and trace.witness.available and trace.witness.events
    assert trace.network.requests > 0 and trace.registrations
    assert trace.browser["source"] == f"server {browser_server}"
    assert _evidence(trace) == _evidence(local)


@browser
def test_a_seed_case_in_a_chromium_over_cdp_has_the_local_evidence(tmp_path, cdp_chromium, local):
    (trace,) = play(tmp_path, ("SEL-01",), connect_over_cdp=cdp_chromium)
    assert trace.verdict == "passed", trace.verdict_reason
    assert trace.browser["source"] == "cdp" and trace.network.requests > 0  # the proxy saw the page's traffic
    assert _evidence(trace) == _evidence(local)


@browser
def test_a_wrong_endpoint_is_one_line_and_exit_2_with_nothing_left(tmp_path: Path):
    closed = _free_port()
    for flag, url in (("--connect", f"ws://127.0.0.1:{closed}/"), ("--connect-over-cdp", f"http://127.0.0.1:{closed}")):
        out = cli("run", "SEL-01", flag, url, "--out", str(tmp_path), "--run-id", "x")
        assert out.returncode == 2, out.stdout + out.stderr
        assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
        assert out.stderr.startswith(f"{flag} {url}: cannot "), out.stderr
        assert not (tmp_path / "x").exists()
    bad = cli("run", "SEL-01", "--connect", "http://127.0.0.1:1/")
    assert bad.returncode == 2 and "not a browser server endpoint" in bad.stderr
    both = cli("run", "SEL-01", "--connect", "ws://a:1/", "--connect-over-cdp", "http://a:1")
    assert both.returncode == 2 and "give one" in both.stderr


def test_the_proxy_address_the_browser_is_told():
    from webmcp_eval.proxies import NetworkProxy

    for listen, advertise, url in (
        ("127.0.0.1", None, "http://127.0.0.1:8080"),
        ("0.0.0.0", None, "http://127.0.0.1:8080"),
        ("0.0.0.0", "runner.internal", "http://runner.internal:8080"),
        ("::", "::1", "http://[::1]:8080"),
    ):
        proxy = NetworkProxy(site_origins=["http://127.0.0.1:1"], listen_host=listen, advertise_host=advertise)
        proxy.port = 8080  # as if started: the address is what a browser on another machine dials
        assert proxy.url == url
