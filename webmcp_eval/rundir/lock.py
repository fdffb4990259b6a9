"""A run directory is one run's: an exclusive lock while a run or a resume plays into it.

``<run dir>/.lock`` holds the playing process's PID, host, start time and a token of its own. It is taken
atomically: the content is written to a temporary file of this process first (created with ``O_EXCL``), which is
then hard-linked to ``.lock``; the link fails when the lock exists, so no process ever sees a lock without its
content, and of two that try at once exactly one holds it. A second run (the same ``--out`` and run id, or two
``--resume`` of one run) finds it and stops with one line instead of overwriting the first one's plan and traces.

A lock of this host whose process is gone (killed with -9), or whose PID now belongs to another process (started
at another time), is stale: it is moved aside and the link tried again, so a killed run can always be resumed; a
lock moved aside that is not the one judged stale (another process took the directory meanwhile) is put back. A
lock of another host cannot be judged from here: the message says whose it is and how to take it over
(``--break-lock``, when no run plays there).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
from pathlib import Path
from typing import TypedDict

from webmcp_eval.errors import UsageError
from webmcp_eval.rundir.layout import RunDir

ATTEMPTS = 5  # a stale lock moved aside and the link tried again, at most this often


class RunDirBusy(UsageError, RuntimeError):
    """Another process plays into this run directory; the message names it."""


class LockHolder(TypedDict):
    pid: int
    host: str
    started: str  # the process's start time as the system counts it ("" where it is not known)
    token: str


def _start_time(pid: int) -> str:
    """When process pid started (Linux: clock ticks since boot, /proc/PID/stat field 22); "" when not known."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return ""
    fields = stat.rsplit(")", 1)[-1].split()  # after the command name, which may hold spaces and parentheses
    return fields[19] if len(fields) > 19 else ""


def _alive(pid: int, started: str) -> bool:
    """Whether the process that wrote the lock still runs: its PID exists and (when both are known) started
    when the lock says, so a PID the system gave to another process since does not count."""
    if pid <= 0:  # 0 and negative PIDs name process groups, never the process that wrote a lock
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, owned by someone else
        pass
    except (OverflowError, ValueError):  # no process can have this PID
        return False
    now = _start_time(pid)
    return not (started and now and now != started)


def _holder(path: Path) -> tuple[LockHolder | None, str]:
    """Who holds the lock (None: nobody can, it does not say), and its text as read."""
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        held = json.loads(text)
        holder: LockHolder = {
            "pid": int(held["pid"]),
            "host": str(held["host"]),
            "started": str(held.get("started") or ""),
            "token": str(held.get("token") or ""),
        }
    except (ValueError, KeyError, TypeError, AttributeError):
        return None, text
    return holder, text


class RunLock:
    """``with RunLock(run_dir):`` holds the run directory for this process; RunDirBusy when another does.
    ``break_lock``: the user says no run plays there: whatever lock is there is taken over."""

    def __init__(self, run_dir: Path, *, break_lock: bool = False) -> None:
        self.path = RunDir(run_dir).lock
        self.break_lock = break_lock
        self.held = False
        self.token = secrets.token_hex(8)

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.is_dir():
            raise RunDirBusy(f"{self.path.parent}: its lock {self.path} is a folder: remove it if no run plays there")
        temp = self._written()
        try:
            for _ in range(ATTEMPTS):
                try:
                    os.link(temp, self.path)  # atomic: fails when a lock is there, never shows a half-written one
                except FileExistsError:
                    self._take_over_if_stale()
                    continue
                self.held = True
                return
        finally:
            temp.unlink(missing_ok=True)
        raise RunDirBusy(f"{self.path.parent}: its lock {self.path} cannot be taken; remove it if no run plays there")

    def _written(self) -> Path:
        """This process's lock content, whole, in a file of its own (created exclusively) beside the lock."""
        temp = self.path.with_name(f"{self.path.name}.{os.getpid()}.{self.token}")
        content = {"pid": os.getpid(), "host": socket.gethostname(), "started": _start_time(os.getpid()),
                   "token": self.token}  # fmt: skip
        fd = os.open(temp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(content, f)
            f.flush()
            os.fsync(f.fileno())
        return temp

    def _take_over_if_stale(self) -> None:
        """Move a stale lock aside (then the caller links again); RunDirBusy when it is held."""
        try:
            holder, text = _holder(self.path)
        except FileNotFoundError:
            return  # released meanwhile: link again
        except OSError as err:
            raise RunDirBusy(f"{self.path.parent}: its lock {self.path} cannot be read ({err.strerror})") from None
        if holder is not None and not self.break_lock:
            self._refuse_if_held(holder)
        aside = self.path.with_name(f"{self.path.name}.stale.{os.getpid()}.{self.token}")
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return  # another process moved it first
        try:
            moved = aside.read_text(encoding="utf-8", errors="replace")
            if moved != text:  # not the lock judged stale: another process took the directory meanwhile
                with contextlib.suppress(FileExistsError):
                    os.link(aside, self.path)
        finally:
            aside.unlink(missing_ok=True)

    def _refuse_if_held(self, holder: LockHolder) -> None:
        here = socket.gethostname()
        who = f"pid {holder['pid']} on {holder['host']}"
        if holder["host"] != here:
            raise RunDirBusy(
                f"{self.path.parent}: its lock is held by {who}, another host: whether that run still plays cannot "
                f"be told from {here}; if it does not, take the directory over with --break-lock (or give another "
                "--run-id)"
            )
        if _alive(holder["pid"], holder["started"]):
            raise RunDirBusy(
                f"{self.path.parent}: another webmcp-eval ({who}) is playing into this run directory; wait for it, "
                "or give another --run-id"
            )

    def release(self) -> None:
        if self.held:
            with contextlib.suppress(OSError):
                holder, _ = _holder(self.path)
                if holder is not None and holder["token"] == self.token:  # still ours: not broken by another run
                    self.path.unlink(missing_ok=True)
            self.held = False

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
