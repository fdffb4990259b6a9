"""What every command prints and how it ends: the two consoles, one-line errors, exit codes."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType

from webmcp_eval.errors import UsageError
from webmcp_eval.report.sanitise import SafeConsole

# Wide enough for the report when output is a file or a CI log (rich would use 80).
console = SafeConsole(stderr=False, width=None if sys.stdout.isatty() else 160)


errors = SafeConsole(stderr=True, width=None if sys.stderr.isatty() else 160)


@contextlib.contextmanager
def ends_like_ctrl_c() -> Iterator[list[int]]:
    """SIGTERM and SIGHUP (what CI runners, ``timeout`` and a closed terminal send) end a command as Ctrl-C
    does: the trials stop, the traces written are kept, a partial report is written. The list says which
    signal came, so the exit code can be 128 + its number (143 for SIGTERM) rather than Ctrl-C's 130."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield received
        return

    def as_ctrl_c(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        on_int = signal.getsignal(signal.SIGINT)
        if callable(on_int):  # asyncio's own handler stops the running trials in order; else KeyboardInterrupt
            on_int(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt

    before = {s: signal.signal(s, as_ctrl_c) for s in (signal.SIGTERM, signal.SIGHUP)}
    # A shell starts a background job with SIGINT ignored; then asyncio installs no handler of its own, and a
    # KeyboardInterrupt raised straight from a signal handler can land where Python drops it (a weakref callback),
    # so the run went on. Ctrl-C's handler is put in place for the command's time, whatever it inherited.
    if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL):
        before[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield received
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def say(line: str) -> None:
    """One plain line on stderr, never wrapped, never read as markup."""
    errors.print(line, markup=False, highlight=False, soft_wrap=True)


def one_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


SHOWN_PROBLEMS = 20  # a file with a problem per element (a 50 MB array) must not flood the terminal


def report_problems(problems: Sequence[object]) -> None:
    for p in problems[:SHOWN_PROBLEMS]:
        say(str(p))
    if len(problems) > SHOWN_PROBLEMS:
        say(f"… and {len(problems) - SHOWN_PROBLEMS} more")
    errors.print(f"[bold red]{len(problems)} problem(s)[/]")


def check_writable_dir(path: Path, flag: str) -> None:
    """The directory exists (made now if need be) and takes files."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {path}: is a file, not a directory; give a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UsageError(
            f"{flag} {path}: cannot create it ({err.strerror or err}); give a writable directory"
        ) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: not writable; give a writable directory")
