"""Files written whole or not at all: what every record, fixture, trace and report goes through.

It sits in the lowest package so the proxy (fixtures) and the runner (traces,
reports) share one routine without either importing the other's layer.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path


def _umask() -> int:
    """The process's umask, read once at import (setting it to read it back is not safe once threads run)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


UMASK = _umask()


class NotRegularFile(OSError):
    """The path names a device, a pipe or a folder: a report is never written over one."""


def regular_target(path: Path) -> Path:
    """The file a write lands in: a symlink's target (written through, the link kept); never a device node,
    a pipe or a folder (replacing /dev/null or /dev/full with a report would break the machine)."""
    path = Path(path)
    if path.is_symlink():
        path = path.resolve()
    if path.exists() and not path.is_file():
        raise NotRegularFile(errno.EINVAL, "not a regular file (a device, a pipe or a folder)", str(path))
    return path


def file_mode(path: Path) -> int:
    """The mode a file written at path gets: the file's own when it exists (a mode its owner chose stays),
    else what ``open()`` gives a new file (0644 under the usual umask). mkstemp's 0600 is for secrets, and
    nothing written through here holds one: fixtures, traces and cassettes are redacted before they are
    written (webmcp_eval/proxies/redaction.py)."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return 0o666 & ~UMASK


def write_atomic(path: Path, text: str | bytes | Iterable[str]) -> None:
    """Write a file so that readers see the old content or the new, never half (through a symlink, over
    regular files only), with the mode ``file_mode`` says. ``text``: the content, or its parts in order (a long
    report written as it is rendered, never held whole)."""
    path = regular_target(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, file_mode(path))
        with os.fdopen(fd, "wb") as f:
            for part in [text] if isinstance(text, str | bytes) else text:
                f.write(part.encode("utf-8") if isinstance(part, str) else part)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
