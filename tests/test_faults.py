"""Faults by their cause: a renderer, browser or Playwright driver killed with SIGKILL under a trial is
``infrastructure`` (named in the reason, retried by --retries, the browser or driver started again), and a
site that answers 5xx during a trial is the site's fault, never the agent's."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest
from runner_support import in_thread
from static_server import StaticSite
from test_static_site import shop_cases

from runner.agents.reference import ReferenceAgent
from runner.play.run.run import RunOptions, run_suite


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


def _victims(what: str) -> list[int]:
    procs = _descendants(os.getpid())
    if what == "driver":
        return [p for p, cmd in procs if "run-driver" in cmd]
    if what == "renderer":
        return [p for p, cmd in procs if "--type=renderer" in cmd]
    return [p for p, cmd in procs if "chrom" in cmd and "--type=" not in cmd and not cmd.startswith("/bin/sh")]


class KillOnce(ReferenceAgent):
    """The reference agent, but the first time it plays a victim trial it kills (-9) a process under it."""

    done: set[str] = set()

    def __init__(self, victims: dict[str, str]) -> None:
        super().__init__()
        self.victims, self.trial_id = victims, ""

    def start_trial(self, trial_id: str) -> None:
        super().start_trial(trial_id)
        self.trial_id = trial_id

    async def turn(self, step, host) -> str:  # noqa: ANN001
        what = self.victims.get(self.trial_id)
        if what and self.trial_id not in KillOnce.done:
            KillOnce.done.add(self.trial_id)
            pids = _victims(what)
            assert pids, f"no {what} process to kill"
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            await asyncio.sleep(0.5)  # the kill lands before the agent goes on
        return await super().turn(step, host)


@pytest.mark.browser
def test_a_killed_renderer_browser_or_driver_is_infrastructure_named_retried_and_relaunched(
    tmp_path: Path, static_shop: StaticSite
):
    cases = shop_cases()
    victims = {"SHOP-01.t1": "renderer", "SHOP-02.t1": "browser", "SHOP-03.t1": "driver"}
    options = RunOptions(
        out_root=tmp_path,
        run_id="kills",
        base_url=static_shop.url,
        site_config=static_shop.config(),
        agent_factory=lambda: KillOnce(victims),
        retries=1,
        screenshots="off",
    )
    traces = in_thread(asyncio.run, run_suite([cases["SHOP-01"], cases["SHOP-02"], cases["SHOP-03"]], options)).traces
    named = {"SHOP-01": "the page crashed", "SHOP-02": "connection to the browser was lost", "SHOP-03": "driver"}
    for trace in traces:
        assert trace.verdict == "passed" and trace.attempt == 2, (trace.trial_id, trace.verdict_reason)
        (first,) = trace.earlier_attempts
        assert first.kind == "infrastructure" and named[trace.case_id] in first.reason, (trace.case_id, first.reason)
        assert "check that the site is running" not in first.reason
