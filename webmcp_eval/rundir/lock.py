"""A run directory is one run's: an exclusive lock while a run or a resume plays into it.

``<run dir>/.lock`` is created exclusively and holds the playing process's PID and host. A second run
(the same ``--out`` and run id, or two ``--resume`` of one run) finds it and stops with one line
instead of overwriting the first one's plan and traces. A lock whose process is gone (killed with -9)
is stale: it is taken over, so a killed run can always be resumed.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import TypedDict

from webmcp_eval.errors import UsageError
from webmcp_eval.rundir.layout import RunDir


class RunDirBusy(UsageError, RuntimeError):
    """Another process plays into this run directory; the message names it."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, owned by someone else
        return True
    return True


class LockHolder(TypedDict):
    pid: int
    host: str


def _holder(path: Path) -> LockHolder | None:
    """Who holds the lock, or None when the lock is stale (its process is gone) or unreadable."""
    try:
        held = json.loads(path.read_text(encoding="utf-8"))
        pid, host = int(held["pid"]), str(held["host"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if host == socket.gethostname() and not _alive(pid):
        return None
    return {"pid": pid, "host": host}


class RunLock:
    """``with RunLock(run_dir):`` holds the run directory for this process; RunDirBusy when another does."""

    def __init__(self, run_dir: Path) -> None:
        self.path = RunDir(run_dir).lock
        self.held = False

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(3):  # a stale lock is removed and the exclusive create tried again
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                holder = _holder(self.path)
                if holder is not None:
                    raise RunDirBusy(
                        f"{self.path.parent}: another webmcp-eval (pid {holder['pid']} on {holder['host']}) is "
                        "playing into this run directory; wait for it, or give another --run-id"
                    ) from None
                self.path.unlink(missing_ok=True)  # stale: its process was killed
                continue
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"pid": os.getpid(), "host": socket.gethostname()}, f)
            self.held = True
            return
        raise RunDirBusy(f"{self.path.parent}: its lock {self.path} cannot be taken; remove it if no run plays there")

    def release(self) -> None:
        if self.held:
            self.path.unlink(missing_ok=True)
            self.held = False

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
