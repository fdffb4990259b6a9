"""Faults by their cause: a renderer, browser or Playwright driver killed with SIGKILL under a trial is
``infrastructure`` (named in the reason, retried by --retries, the browser or driver started again), and a
site that answers 5xx during a trial is the site's fault, never the agent's."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from eval_support import ROOT, SEED_CONTEXT, BreaksOnce, cli, in_thread, run_on_demo, suite_cases

from webmcp_eval.agents.reference import ReferenceAgent
from webmcp_eval.play.run.settings import RunSettings
from webmcp_eval.site_under_test.server import TEMP_PREFIX, temp_data_dir


def _descendants(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of every process under pid, read from /proc."""
    children: dict[int, list[int]] = {}
    lines: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            lines[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append((child, lines.get(child, "")))
            todo.append(child)
    return found


def _leads_session(pid: int) -> bool:
    """The process was started in a session of its own (the runner starts its Playwright driver so)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return int(stat.rsplit(")", 1)[1].split()[3]) == pid


def _victims(what: str) -> list[int]:
    """The runner's own processes of that kind: its driver (in a session of its own) or what runs under it.
    Never the test process's other drivers and browsers (pytest-playwright's, another fixture's): killed, they
    would break later tests and leave asyncio's "Future exception was never retrieved" at the session's end."""
    drivers = [p for p, cmd in _descendants(os.getpid()) if "run-driver" in cmd and _leads_session(p)]
    if what == "driver":
        return drivers
    procs = [found for driver in drivers for found in _descendants(driver)]
    if what == "renderer":
        return [p for p, cmd in procs if "--type=renderer" in cmd]
    return [p for p, cmd in procs if "chrom" in cmd and "--type=" not in cmd and not cmd.startswith("/bin/sh")]


class KillOnce(BreaksOnce):
    """The first time it plays a victim trial it kills (-9) a process under it."""

    done: set[str] = set()

    async def breaks(self, what: str, host) -> None:  # noqa: ANN001
        pids = _victims(what)
        assert pids, f"no {what} process to kill"
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        await asyncio.sleep(0.5)  # the kill lands before the agent goes on


@pytest.mark.browser
def test_a_killed_renderer_browser_or_driver_is_infrastructure_named_retried_and_relaunched(tmp_path: Path):
    # three read-only seed cases on the embedded demo site: its tools settle in 0.1 s (the static shop's in 1 s)
    victims = {"SEL-01.t1": "renderer", "SEL-02.t1": "browser", "ARG-01.t1": "driver"}
    options = RunSettings(
        out_root=tmp_path,
        run_id="kills",
        agent_factory=lambda: KillOnce(victims),
        retries=1,
        screenshots="off",
        browser_context=SEED_CONTEXT,
    )
    traces = in_thread(asyncio.run, run_on_demo(suite_cases("SEL-01", "SEL-02", "ARG-01"), options)).traces
    named = {"SEL-01": "the page crashed", "SEL-02": "connection to the browser was lost", "ARG-01": "driver"}
    for trace in traces:
        assert trace.verdict == "passed" and trace.attempt == 2, (trace.trial_id, trace.verdict_reason)
        (first,) = trace.earlier_attempts
        assert first.kind == "infrastructure" and named[trace.case_id] in first.reason, (trace.case_id, first.reason)
        assert "check that the site is running" not in first.reason


DRIVER_KILLED = """
import asyncio, os, signal
from pathlib import Path
from webmcp_eval.play.browser.session import BrowserSession

async def main():
    async with BrowserSession(headless=True) as session:
        for entry in Path("/proc").iterdir():
            try:  # another process of the machine may end while it is read
                if not (entry.name.isdigit() and b"run-driver" in (entry / "cmdline").read_bytes()):
                    continue
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
                os.kill(int(entry.name), signal.SIGKILL)
        await asyncio.sleep(0.5)
        await session.ensure_browser(0)  # a new driver, and a browser through it
        assert session.driver_alive()

asyncio.run(main())
print("relaunched")
"""


@pytest.mark.browser
def test_a_killed_driver_leaves_no_stray_future_error_when_the_process_ends() -> None:
    """asyncio prints "Future exception was never retrieved" at exit for the error Playwright's transport set
    when its driver died; the session takes that error, so a run's output ends with the run's own words."""
    done = subprocess.run([sys.executable, "-c", DRIVER_KILLED], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0 and done.stdout == "relaunched\n", done.stderr
    assert "never retrieved" not in done.stderr and "Connection closed" not in done.stderr, done.stderr


@pytest.mark.browser
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL], ids=["TERM", "HUP", "KILL"])
def test_a_run_ended_by_a_signal_keeps_its_traces_and_leaves_no_temp_folder(tmp_path, signum):
    """SIGTERM (CI runners, `timeout`) and SIGHUP end a run as Ctrl-C does: a partial report, exit 128 + N, the
    site's temp folder and the lock removed; after SIGKILL nothing can clean up, so the next run removes them."""

    cmd = [
        sys.executable,
        "-m",
        "webmcp_eval.cli",
        "run",
        "SEL-01",
        "--trials",
        "3",
        "--out",
        str(tmp_path),
        "--run-id",
        "r",
    ]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"}, start_new_session=True,
    )  # fmt: skip
    assert proc.stdout and proc.stderr
    for line in proc.stdout:  # the first trial is done: the run is under way
        if re.match(r"\[\s*[12]/3\]", line):
            break
    temp = list(Path(tempfile.gettempdir()).glob(f"{TEMP_PREFIX}{proc.pid}-*"))
    assert temp, "the embedded site's data folder is named for its process"
    os.kill(proc.pid, signum)  # to the runner alone, as `timeout` and CI runners send it
    proc.wait(timeout=120)
    run = tmp_path / "r"
    assert list((run / "trials").glob("*.json")), "the finished trial's trace is kept"
    if signum == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL and temp[0].exists()
        temp_data_dir()  # the next run's site: a folder of a process that is gone is removed
        assert not temp[0].exists()
        return
    err = proc.stderr.read()
    assert proc.returncode == 128 + signum, err
    assert f"webmcp-eval run --resume {run}" in err and "interrupted" in err
    assert (run / "summary.json").is_file() and (run / "junit.xml").is_file()  # the partial report
    assert not temp[0].exists() and not (run / ".lock").exists()


def _mounted_tmpfs(path: Path, size: str) -> bool:
    """A small tmpfs at path (root, where mounting is allowed): a disk that really fills up."""
    path.mkdir()
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)]).returncode == 0


@pytest.mark.browser
def test_a_full_disk_is_one_line_with_the_resume_command_and_leaves_no_half_file(tmp_path):
    disk = tmp_path / "disk"
    if os.geteuid() != 0 or not _mounted_tmpfs(disk, "160k"):
        pytest.skip("needs root and a tmpfs mount to fill a disk")
    try:
        out = cli("run", "SEL-01", "--trials", "4", "--screenshot", "on", "--out", str(disk), "--run-id", "r")
        lines = out.stderr.strip().splitlines()
        assert out.returncode == 3, out.stderr
        assert "No space left on device" in lines[-1] and f"webmcp-eval run --resume {disk / 'r'}" in lines[-1]
        assert "Traceback" not in out.stderr and "internal error" not in out.stderr
        assert not [p for p in disk.rglob("*") if p.name.endswith(".tmp")], "no temporary file is left"
        for shot in (disk / "r" / "screenshots").glob("*.png"):
            assert shot.read_bytes().endswith(b"IEND\xaeB`\x82"), f"{shot.name} is a whole PNG"
    finally:
        subprocess.run(["umount", str(disk)])


class BreaksTheSite(ReferenceAgent):
    """The reference agent, after the site's database has gone from under it (a site failing on its side)."""

    data_dir: Path

    async def turn(self, step, host) -> str:  # noqa: ANN001
        for db in self.data_dir.rglob("*"):
            if db.is_file():
                db.write_bytes(b"not a database")  # every request that reads it answers 500
        return await super().turn(step, host)


@pytest.mark.browser
def test_a_site_answering_500_mid_trial_is_the_sites_fault_not_the_agents(tmp_path):
    from eval_support import SEED_CONTEXT, suite_cases

    from webmcp_eval.site_under_test.server import SiteServer
    from webmcp_eval.suite.site import demo_site_config

    with SiteServer(test_mode=True, data_dir=tmp_path / "data") as server:
        BreaksTheSite.data_dir = tmp_path / "data"
        config = demo_site_config(server.url)
        config.hooks.state = None  # the site's API fails; no hook reads the state after
        options = RunSettings(
            out_root=tmp_path,
            run_id="r",
            base_url=server.url,
            site_config=config,
            agent_factory=BreaksTheSite,
            browser_context=SEED_CONTEXT,
            screenshots="off",
        )
        (trace,) = in_thread(asyncio.run, run_on_demo(suite_cases("SEL-01"), options)).traces
    assert trace.verdict == "not_run" and trace.not_run_kind == "infrastructure", trace.verdict_reason
    assert "the site answered 500 during the trial" in trace.verdict_reason


class FiresAPixel(ReferenceAgent):
    """The reference agent on a page whose analytics pixel the site answers 503 (outside any tool call); each
    trial's pixel has a path of its own (?its trial id), so trials played side by side each meet their own 503."""

    def start_trial(self, trial_id: str) -> None:
        super().start_trial(trial_id)
        self.pixel = pixel_of(trial_id)

    async def turn(self, step, host) -> str:  # noqa: ANN001
        status = await host.page.evaluate("pixel => fetch(pixel).then(r => r.status)", self.pixel)
        assert status == 503, status
        return await super().turn(step, host)


def pixel_of(trial_id: str) -> str:
    return f"/demo/pixel.gif?{trial_id}"


@pytest.mark.browser
def test_a_5xx_no_tool_call_made_is_a_warning_and_the_verdict_stands_on_the_evidence(tmp_path, static_shop):
    from test_static_site import _wrong_quantity, play_shop, shop_cases, variant

    wrong = variant("SHOP-01", "SHOP-11", _wrong_quantity)
    static_shop.fail_once.update({pixel_of("SHOP-01.t1"), pixel_of("SHOP-11.t1")})
    # one run, a worker per trial: each mostly waits on the shop's tools
    traces = play_shop(tmp_path, static_shop, [shop_cases()["SHOP-01"], wrong], agent_factory=FiresAPixel, workers=2)
    passing, failing = traces["SHOP-01"], traces["SHOP-11"]
    warning = "the site answered 503 to GET /demo/pixel.gif: not a request the trial depends on"
    # the pixel says nothing of the agent: the pass stays a pass, with the 503 shown beside it
    assert passing.verdict == "passed", passing.verdict_reason
    assert any(w.startswith(warning) for w in passing.warnings), passing.warnings
    # and the agent's own failure stays its failure (it was not_run, "the site's fault", before)
    assert failing.verdict == "failed" and failing.not_run_kind is None, failing.verdict_reason
    assert any(w.startswith(warning) for w in failing.warnings), failing.warnings


def _request(seq: int, path: str, status: int, method: str = "GET", fault: str | None = None):  # noqa: ANN202
    from webmcp_eval.proxies.models import RequestRecord

    return RequestRecord(
        seq=seq, trial="t", method=method, url=f"http://127.0.0.1:9/{path}", host="127.0.0.1", port=9,
        path=path, status=status, fault=fault,
    )  # fmt: skip


def test_a_5xx_is_on_the_trials_path_when_a_tool_call_or_an_expected_write_made_it_and_never_when_a_fault_did():
    from webmcp_eval.play.evidence.network_evidence import on_the_trials_path, site_server_errors
    from webmcp_eval.proxies.models import TrialNetwork

    requests = [
        _request(0, "/beacon", 501, "POST"),  # the page's own, before any call
        _request(1, "/api/events", 500),  # a tool call's
        _request(2, "/api/events", 500, fault="status 500"),  # the case's fault: its checks judge it
        _request(3, "/api/saved", 502, "POST"),  # a write the case expects, after the call
        _request(4, "/api/saved", 502, "DELETE"),  # another method: not expected
    ]
    net = TrialNetwork(trial_id="t", requests=requests)
    errors = site_server_errors(net, "http://127.0.0.1:9/")
    assert [r.seq for r in errors] == [0, 1, 3, 4]
    on_path = on_the_trials_path(errors, net, [(1, 3)], ["POST /api/sav*", "POST //cdn:1/x"])
    assert [r.seq for r in on_path] == [1, 3]
    assert on_the_trials_path(errors, net, [], []) == []
