"""Helpers for tests that play the real runner (real Chromium, site and proxy)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from webmcp_eval.agents.reference import ReferenceAgent
from webmcp_eval.evaluation.demo_site import with_demo_site
from webmcp_eval.play.run.run import RunResult, run_suite, select_cases
from webmcp_eval.play.run.settings import RunSettings, RunState
from webmcp_eval.suite.folder import read_suite_config
from webmcp_eval.suite.loader import LoadedCase, load_cases
from webmcp_eval.trace import Trace

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "cases"
SEED_CONTEXT = read_suite_config(CASES / "suite.yaml").browser_context()  # Asia/Taipei, zh-TW
_ONE_CLI_AT_A_TIME = threading.Lock()


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """``webmcp-eval ARGS`` in this process: ``webmcp_eval.cli.main`` in a thread of its own, in ``cwd``,
    its stdout and stderr captured; the exit code and output a user gets, without a new interpreter
    importing the whole runner for every call (most of the fast tier's time). ``cli_process`` is the
    real console script in a process of its own, for what only a process shows."""
    from webmcp_eval.cli import main

    out, err = io.StringIO(), io.StringIO()
    with _ONE_CLI_AT_A_TIME:  # the working folder and sys.stdout/stderr are the process's own
        here = Path.cwd()
        os.chdir(cwd)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = in_thread(_exit_code, main, list(args))
        finally:
            os.chdir(here)
    return subprocess.CompletedProcess(["webmcp-eval", *args], code, out.getvalue(), err.getvalue())


def _exit_code(entry, argv: list[str]) -> int:
    """The entry point's return value, or the code of a SystemExit raised past it (as the process would exit)."""
    try:
        return entry(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)


def cli_process(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """``webmcp-eval ARGS`` as a user runs it, in its own process (this checkout's code).

    The time-out is generous: on a loaded shared machine even an argparse error can take tens of seconds."""
    return subprocess.run(
        [sys.executable, "-m", "webmcp_eval.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=900
    )


def in_thread(fn, *args):
    """Run fn in its own thread: pytest-playwright's sync API keeps an event loop in this one."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


def run_on_demo(
    cases: list[LoadedCase],
    settings: RunSettings,
    state: RunState | None = None,
    on_trial: Callable[[Trace], None] | None = None,
) -> Coroutine[Any, Any, RunResult]:
    """run_suite as the commands hand it its state: the embedded demo site started where the settings name no site."""
    return run_suite(cases, settings, with_demo_site(state), on_trial)


def suite_cases(*ids: str, directory: Path = CASES):
    loaded, problems = load_cases([directory])
    assert not problems, problems
    return select_cases(loaded, list(ids), None, [])


def play(tmp_path: Path, ids: tuple[str, ...] = (), state: RunState | None = None, **settings) -> list[Trace]:
    """The seed suite's cases ``ids`` played with these settings (and state: fixtures, grader, test seam)."""
    settings.setdefault("agent_factory", ReferenceAgent)
    settings.setdefault("browser_context", SEED_CONTEXT)  # as `webmcp-eval run` plays the seed suite (its suite.yaml)
    chosen = RunSettings(out_root=tmp_path, run_id=settings.pop("run_id", "run"), **settings)
    return in_thread(asyncio.run, run_on_demo(suite_cases(*ids), chosen, state)).traces


class BreaksOnce(ReferenceAgent):
    """The reference agent, but the first time it plays a victim trial (``{trial_id: what}``) it breaks ``what``
    under it (``breaks``, each subclass's own), then plays on; each subclass keeps its own ``done`` set, so a
    retried trial plays unbroken."""

    done: set[str] = set()

    def __init__(self, victims: dict[str, str]) -> None:
        super().__init__()
        self.victims, self.trial_id = victims, ""

    def start_trial(self, trial_id: str) -> None:
        super().start_trial(trial_id)
        self.trial_id = trial_id

    async def breaks(self, what: str, host) -> None:  # noqa: ANN001
        raise NotImplementedError

    async def turn(self, step, host) -> str:  # noqa: ANN001
        what = self.victims.get(self.trial_id)
        if what and self.trial_id not in type(self).done:
            type(self).done.add(self.trial_id)
            await self.breaks(what, host)
        return await super().turn(step, host)
