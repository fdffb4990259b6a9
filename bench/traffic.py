"""Counting what a trial costs in messages and in each process's CPU (used by runner_overhead.py).

Three counts that do not depend on how busy the machine is:

- runner <-> driver: every Playwright protocol message this process sends to
  Playwright's driver (commands) and receives from it (answers and events),
  counted in this process by wrapping the client's connection;
- driver <-> browser: every Chrome DevTools Protocol message between the driver
  and Chromium, from the driver's own protocol log (``DEBUG=pw:protocol``,
  written to ``DEBUG_FILE``): commands sent, answers and events received, and
  which events they were;
- the CPU seconds of each process below this one, by kind (the browser
  process, its renderers, GPU and utility processes, Playwright's driver),
  sampled from /proc, and this process's own (the runner, proxy and sites).

A trial's phases come from the runner's own phase marks, stamped with the wall
clock, so each message falls in the phase that was running when it was sent
(one worker: the phases of two trials never overlap).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from playwright._impl import connection as _connection
from playwright.async_api import Browser, BrowserContext

from webmcp_eval.play.run import trial as trial_module

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PHASES = ("context", "goto", "tools", "steps", "observe", "finish")


@dataclass
class Traffic:
    """Every message of one pass, each with its wall-clock time."""

    to_driver: list[float] = field(default_factory=list)  # commands this process sent
    from_driver: list[float] = field(default_factory=list)  # answers and events it received
    cdp_sent: list[float] = field(default_factory=list)
    cdp_commands: list[str] = field(default_factory=list)  # the method of each, in order
    cdp_answers: list[float] = field(default_factory=list)
    cdp_events: list[tuple[float, str]] = field(default_factory=list)  # (time, method)
    marks: list[tuple[str, float]] = field(default_factory=list)  # the trials' phase boundaries (runner modes)


@contextmanager
def driver_messages(traffic: Traffic) -> Iterator[None]:
    """Count the Playwright protocol messages between this process and the driver."""
    send, dispatch = _connection.Connection.send_message_to_server, _connection.Connection.dispatch

    def counted_send(self: Any, *args: Any, **kwargs: Any) -> Any:
        traffic.to_driver.append(time.time())
        return send(self, *args, **kwargs)

    def counted_dispatch(self: Any, msg: Any) -> Any:
        traffic.from_driver.append(time.time())
        return dispatch(self, msg)

    _connection.Connection.send_message_to_server = counted_send  # type: ignore[method-assign]
    _connection.Connection.dispatch = counted_dispatch  # type: ignore[method-assign]
    try:
        yield
    finally:
        _connection.Connection.send_message_to_server = send  # type: ignore[method-assign]
        _connection.Connection.dispatch = dispatch  # type: ignore[method-assign]


@contextmanager
def devtools_log(traffic: Traffic, directory: Path) -> Iterator[None]:
    """The driver's CDP log for the block: a driver started inside it writes every message to a file."""
    log = directory / "pw-protocol.log"
    saved = {k: os.environ.get(k) for k in ("DEBUG", "DEBUG_FILE")}
    os.environ["DEBUG"], os.environ["DEBUG_FILE"] = "pw:protocol", str(log)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        if log.exists():
            _read_devtools_log(log, traffic)


def _read_devtools_log(log: Path, traffic: Traffic) -> None:
    """Lines like ``2026-01-01T00:00:00.000Z pw:protocol SEND ► {...}`` (or ``◀ RECV``)."""
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        stamp, _, rest = line.partition(" pw:protocol ")
        if not rest:
            continue
        try:
            at = datetime.fromisoformat(stamp.strip().replace("Z", "+00:00")).timestamp()
        except ValueError:
            continue
        body = rest.split(" ", 2)[-1]
        try:
            message = json.loads(body)
        except ValueError:
            message = {}
        if rest.startswith("SEND"):
            traffic.cdp_sent.append(at)
            traffic.cdp_commands.append(str(message.get("method")))
            continue
        if not message:
            continue
        if "id" in message:
            traffic.cdp_answers.append(at)
        else:
            traffic.cdp_events.append((at, str(message.get("method"))))


@contextmanager
def phase_marks(traffic: Traffic) -> Iterator[None]:
    """Stamp each trial's phase boundaries: its start, the runner's own marks, the steps' end, its end."""
    trial = trial_module.Trial
    run, collect, timer = trial.run, trial._collect, trial._phase_timer

    async def marked_run(self: Any) -> Any:
        traffic.marks.append(("start", time.time()))
        try:
            return await run(self)
        finally:
            traffic.marks.append(("end", time.time()))

    async def marked_collect(self: Any, before: Any) -> Any:
        traffic.marks.append(("steps_end", time.time()))
        return await collect(self, before)

    def marked_timer(self: Any) -> Any:
        mark = timer(self)

        def stamped(name: str) -> None:
            mark(name)
            traffic.marks.append((name, time.time()))

        return stamped

    trial.run, trial._collect, trial._phase_timer = marked_run, marked_collect, marked_timer  # type: ignore[method-assign]
    try:
        yield
    finally:
        trial.run, trial._collect, trial._phase_timer = run, collect, timer  # type: ignore[method-assign]


# the mark that ends each phase; a phase runs from the previous mark to its own
_PHASE_ENDS = {
    "context_ms": "context",
    "goto_ms": "goto",
    "tools_ms": "tools",
    "steps_end": "steps",
    "observe_ms": "observe",
    "end": "finish",
}


def phase_of(traffic: Traffic) -> list[tuple[float, float, str]]:
    """(from, to, phase) intervals of every trial."""
    spans, last = [], None
    for name, at in traffic.marks:
        if name == "start":
            last = at
            continue
        phase = _PHASE_ENDS.get(name)
        if phase and last is not None:
            spans.append((last, at, phase))
            last = at
    return spans


def per_phase(times: list[float], spans: list[tuple[float, float, str]]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for at in times:
        phase = next((p for start, end, p in spans if start <= at <= end), "between")
        counts[phase] += 1
    return counts


# -- CPU per process --------------------------------------------------------------


def process_kind(pid: int) -> str:
    """What a process below this one is, from its command line."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return "gone"
    if not argv[0]:
        return "gone"  # exiting (a zombie has no command line)
    text = b" ".join(argv).decode(errors="replace")
    if "run-driver" in text or argv[0].endswith(b"node"):
        return "driver"
    for kind in ("renderer", "gpu-process", "utility", "zygote"):
        if f"--type={kind}" in text:
            return kind.removesuffix("-process")
    if "chrom" in argv[0].decode(errors="replace").lower():
        return "browser"
    return "other"


def _children(root: int) -> list[int]:
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        parents.setdefault(parent, []).append(int(entry))
    found, todo = [], list(parents.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(parents.get(pid, []))
    return found


def _cpu_ticks(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime
    except (OSError, IndexError, ValueError):
        return None


@contextmanager
def cpu_by_process(every_s: float = 0.2) -> Iterator[Counter[str]]:
    """CPU seconds of each kind of process below this one during the block, and 'runner' for this one.

    Read from /proc just before each browser context and each browser closes (their renderers and the
    browser's processes end right after), and every every_s in between. A process's last moments after
    the read are missed, so the sums are a lower bound: the bench prints them beside the kernel's exact
    total of every child."""
    result: Counter[str] = Counter()
    seen: dict[int, tuple[str, int]] = {}
    lock = threading.Lock()
    stop = threading.Event()

    def sample() -> None:
        with lock:
            for pid in _children(os.getpid()):
                ticks = _cpu_ticks(pid)
                if ticks is None:
                    continue
                # read every time: a fresh fork shows its parent's command line until it execs;
                # an exiting one shows none, and keeps the kind it had
                kind = process_kind(pid)
                if kind == "gone":
                    kind = seen.get(pid, ("other", 0))[0]
                seen[pid] = (kind, ticks)

    def every() -> None:
        while not stop.wait(every_s):
            sample()

    closes = {cls: cls.close for cls in (BrowserContext, Browser)}

    def sampled(close: Any) -> Any:
        async def close_after_a_read(self: Any, *args: Any, **kwargs: Any) -> Any:
            sample()
            return await close(self, *args, **kwargs)

        return close_after_a_read

    for cls, close in closes.items():
        cls.close = sampled(close)  # type: ignore[method-assign]
    before = os.times()
    sampler = threading.Thread(target=every, daemon=True)
    sampler.start()
    try:
        yield result
    finally:
        stop.set()
        sampler.join()
        for cls, close in closes.items():
            cls.close = close  # type: ignore[method-assign]
        after = os.times()
        for kind, ticks in seen.values():
            result[kind] += ticks / CLOCK_TICKS
        result["runner"] = (after.user - before.user) + (after.system - before.system)
