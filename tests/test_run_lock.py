"""The run directory's lock: taken atomically (its content whole before it is visible), so of two runs exactly one
plays; a stale lock of this host is taken over by itself, one of another host only with --break-lock."""

from __future__ import annotations

import json
import multiprocessing
import os
import socket
import types
from pathlib import Path
from typing import Any

import pytest
from eval_support import ROOT, cli

from webmcp_eval.rundir import lock as lock_module
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.rundir.lock import RunDirBusy, RunLock
from webmcp_eval.rundir.plan import make_plan, write_plan


def _lock_file(run_dir: Path, **content: Any) -> Path:
    path = RunDir(run_dir).lock
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), **content}), encoding="utf-8")
    return path


def test_a_second_run_that_comes_while_the_first_writes_its_lock_never_holds_it_too(tmp_path: Path, monkeypatch):
    """The moment a lock was visible without its content: a second process read it as stale, removed it and
    took the directory too (two to four holders at once)."""
    first, second = RunLock(tmp_path), RunLock(tmp_path)
    refused: list[str] = []
    came: list[bool] = []

    def dump_while_another_comes(obj: Any, f: Any, **kw: Any) -> None:
        if not came:
            came.append(True)
            try:
                second.acquire()  # the other run, at the worst moment: while the first writes its content
            except RunDirBusy as busy:
                refused.append(str(busy))
        json.dump(obj, f, **kw)

    monkeypatch.setattr(lock_module, "json", types.SimpleNamespace(dump=dump_while_another_comes, loads=json.loads))
    try:
        first.acquire()
    except RunDirBusy as busy:
        refused.append(str(busy))
    assert [first.held, second.held].count(True) == 1, refused
    assert len(refused) == 1 and "another webmcp-eval" in refused[0]
    holder = first if first.held else second
    assert json.loads(RunDir(tmp_path).lock.read_text("utf-8"))["token"] == holder.token


def _contend(run_dir: str, start: Any, tried: Any, won: Any) -> None:
    start.wait()
    lock = RunLock(Path(run_dir))
    try:
        lock.acquire()
    except RunDirBusy:
        tried.wait()
        return
    won.put(os.getpid())
    tried.wait()  # held until every process has tried
    lock.release()


def test_of_several_processes_that_start_at_once_exactly_one_holds_the_lock(tmp_path: Path):
    n = 6
    ctx = multiprocessing.get_context("fork")
    start, tried, won = ctx.Barrier(n), ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_contend, args=(str(tmp_path), start, tried, won)) for _ in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    winners = []
    while not won.empty():
        winners.append(won.get())
    assert len(winners) == 1 and all(p.exitcode == 0 for p in procs)
    assert not RunDir(tmp_path).lock.exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # no temporary lock file left


def test_a_lock_whose_pid_now_belongs_to_another_process_is_taken_over(tmp_path: Path):
    _lock_file(tmp_path, started="1")  # this PID, but a process started at another time: the PID was reused
    with RunLock(tmp_path) as lock:
        assert json.loads(RunDir(tmp_path).lock.read_text("utf-8"))["token"] == lock.token
    _lock_file(tmp_path, pid=2**31 + 5)  # no process can have it: stale, never an internal error
    with RunLock(tmp_path):
        pass


def test_a_live_lock_of_this_host_is_refused_and_a_folder_is_said(tmp_path: Path):
    with RunLock(tmp_path), pytest.raises(RunDirBusy, match=f"pid {os.getpid()}"):
        RunLock(tmp_path).acquire()
    RunDir(tmp_path / "d").lock.mkdir(parents=True)
    with pytest.raises(RunDirBusy, match="is a folder"):
        RunLock(tmp_path / "d").acquire()


def test_a_lock_of_another_host_says_how_to_take_it_over_and_break_lock_does(tmp_path: Path):
    _lock_file(tmp_path, host="build-7.example", pid=4242)
    with pytest.raises(RunDirBusy) as busy:
        RunLock(tmp_path).acquire()
    assert "pid 4242 on build-7.example, another host" in str(busy.value) and "--break-lock" in str(busy.value)
    assert json.loads(RunDir(tmp_path).lock.read_text("utf-8"))["host"] == "build-7.example"  # left as it was
    with RunLock(tmp_path, break_lock=True) as lock:
        assert json.loads(RunDir(tmp_path).lock.read_text("utf-8"))["token"] == lock.token
    assert not RunDir(tmp_path).lock.exists()


def test_release_leaves_a_lock_another_run_broke_and_took(tmp_path: Path):
    first = RunLock(tmp_path)
    first.acquire()
    with RunLock(tmp_path, break_lock=True) as second:
        first.release()  # the first run ends after the second broke its lock: the second's stays
        assert json.loads(RunDir(tmp_path).lock.read_text("utf-8"))["token"] == second.token


def test_run_resume_names_the_other_host_and_break_lock_is_an_option_of_run(tmp_path: Path):
    assert "--break-lock" in cli("run", "--help").stdout
    seed = tmp_path / "r1"
    plan = make_plan("r1", [("SEL-01", str(ROOT / "cases" / "SEL-01.yaml"))], 1, agent="reference", model=None,
                     evidence_kind="deterministic")  # fmt: skip
    write_plan(seed, plan)
    _lock_file(seed, host="build-7.example", pid=4242)
    refused = cli("run", "--resume", str(seed))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "build-7.example" in refused.stderr and "--break-lock" in refused.stderr
    assert not (seed / "trials").exists()
