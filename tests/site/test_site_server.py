"""Starting and stopping the site: the CLI and SiteServer."""

from __future__ import annotations

import re
import select
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from webmcp_eval.site_under_test.server import SiteServer

URL_LINE = re.compile(r"^webmcp-eval demo site: (http://127\.0\.0\.1:(\d+))/events( \(test mode\))?$")


def _first_line(proc: subprocess.Popen[str], timeout: float = 20.0) -> str:
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "the site printed nothing"
    assert proc.stdout is not None
    return proc.stdout.readline().strip()


def _cli() -> list[str]:
    script = Path(sys.executable).with_name("webmcp-eval")
    return [str(script)] if script.exists() else [shutil.which("webmcp-eval") or "webmcp-eval"]


@pytest.mark.parametrize(
    ("command", "test_mode"),
    [
        ([*_cli(), "site", "--port", "0"], False),
        ([sys.executable, "-m", "webmcp_eval.site_under_test", "--port", "0", "--test-mode"], True),
    ],
    ids=["webmcp-eval site", "python -m webmcp_eval.site_under_test"],
)
def test_the_command_prints_its_url_and_serves(command: list[str], test_mode: bool, tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [*command, "--data-dir", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        match = URL_LINE.match(_first_line(proc))
        assert match, "unexpected start-up line"
        assert bool(match.group(3)) == test_mode
        base = match.group(1)
        assert int(match.group(2)) > 0
        assert httpx.get(base + "/api/version").json()["name"] == "webmcp-eval demo site"
        assert httpx.get(base + "/events").status_code == 200
        state = httpx.get(base + "/__test__/state", params={"world": "main"})
        assert state.status_code == (200 if test_mode else 404)
    finally:
        proc.send_signal(signal.SIGINT)  # what Ctrl-C does
        out, err = proc.communicate(timeout=15)
    assert proc.returncode == 0, err
    assert "stopped" in out
    assert "Traceback" not in err


def test_site_server_runs_in_a_thread_and_stops() -> None:
    with SiteServer(test_mode=False) as site:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", site.url)
        assert httpx.get(site.url + "/api/session").json()["breaks"] == []
        data_dir = site.data_dir
    assert not data_dir.exists()  # its temp data dir is gone
    with pytest.raises(httpx.ConnectError):
        httpx.get(site.url + "/api/version", timeout=2)
