"""Files written whole or not at all: what every record, fixture, trace and report goes through.

It sits in the lowest package so the proxy (fixtures) and the runner (traces,
reports) share one routine without either importing the other's layer.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path


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


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write a file so that readers see the old content or the new, never half (through a symlink, over
    regular files only)."""
    path = regular_target(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8") if isinstance(text, str) else text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
