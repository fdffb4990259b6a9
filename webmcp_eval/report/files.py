"""Where an output may be written, checked before any work: every command's file views (reports, pages,
schemas) go through here, so a mistake is one line and exit 2 before a browser starts, never a half-written
file, a blocked pipe or an input replaced by an output."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from webmcp_eval.errors import UsageError


def check_writable_file(path: Path, flag: str) -> None:
    """The file can be written: missing folders are made when it is (as pytest's --junitxml does), so the
    nearest folder that exists must take new entries; a file in the way is refused."""
    if path.is_dir():
        raise UsageError(f"{flag} {path}: is a directory; give a file path")
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise UsageError(f"{flag} {path}: {ancestor} is a file, not a directory; give a path in a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: its directory {ancestor} is not writable; give a writable path")


def check_outputs(outputs: Sequence[tuple[str, Path | None]], inputs: Sequence[Path | None] = ()) -> None:
    """Every output a command will write, checked before any work (one line, exit 2): writable, a regular file
    where one exists (never a pipe, a device or a folder: a report would block on a pipe or replace /dev/null),
    no two outputs the same file, and none of them a file the command reads (a login file, a contract, a
    trace)."""
    seen: dict[Path, str] = {}
    read = {p.resolve() for p in inputs if p is not None}  # one name per file: symlinks and '..' resolved
    for flag, path in outputs:
        if path is None or discarded(path):
            continue
        check_writable_file(path, flag)
        if path.exists() and not path.resolve().is_file():
            raise UsageError(f"{flag} {path}: not a regular file (a pipe or a device); give a file path")
        key = path.resolve()
        if key in read:
            raise UsageError(f"{flag} {path}: the command reads that file; give another path for the output")
        if key in seen:
            raise UsageError(f"{flag} {path}: also the file of {seen[key]}; give each output a path of its own")
        seen[key] = flag


def discarded(path: Path) -> bool:
    """The output is os.devnull: the user asked for no file (``--html /dev/null``), so nothing is written."""
    return str(path) == os.devnull
