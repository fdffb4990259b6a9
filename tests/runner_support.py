"""Helpers for tests that play the real runner (real Chromium, site and proxy)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from runner.agents.reference import ReferenceAgent
from runner.play.run import RunOptions, run_suite, select_cases
from runner.suite.folder import read_suite_config
from runner.suite.loader import load_cases
from runner.trace import Trace

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "cases"
SEED_CONTEXT = read_suite_config(CASES / "suite.yaml").browser_context()  # Asia/Taipei, zh-TW


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """``webmcp-eval ARGS`` as a user runs it, in its own process (this checkout's code).

    The time-out is generous: on a loaded shared machine even an argparse error can take tens of seconds."""
    return subprocess.run(
        [sys.executable, "-m", "runner.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=900
    )


def in_thread(fn, *args):
    """Run fn in its own thread: pytest-playwright's sync API keeps an event loop in this one."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


def suite_cases(*ids: str, directory: Path = CASES):
    loaded, problems = load_cases([directory])
    assert not problems, problems
    return select_cases(loaded, list(ids), None, [])


def play(tmp_path: Path, ids: tuple[str, ...] = (), **kw) -> list[Trace]:
    kw.setdefault("agent_factory", ReferenceAgent)
    kw.setdefault("browser_context", SEED_CONTEXT)  # as `webmcp-eval run` plays the seed suite (its suite.yaml)
    options = RunOptions(out_root=tmp_path, run_id=kw.pop("run_id", "run"), **kw)
    return in_thread(asyncio.run, run_suite(suite_cases(*ids), options)).traces
