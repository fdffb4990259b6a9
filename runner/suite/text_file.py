"""Reading a user's text file (a case, suite.yaml, a site config, a catalog, an evals.json).

One rule for every file a user hands the runner, so each says the same thing the same way
when it cannot be read: no such file, a directory, unreadable, or not UTF-8 (with the line
where the bad byte is). The caller puts its own name for the file in front of the message.
"""

from __future__ import annotations

from pathlib import Path


class FileProblem(Exception):
    """Why a file's text cannot be had; ``line`` when the problem is at a place in the file."""

    def __init__(self, what: str, line: int | None = None) -> None:
        super().__init__(what)
        self.what, self.line = what, line

    def at(self, path: Path | str) -> str:
        """``path[:line]: what``, the one-line form every file error takes."""
        return f"{path}:{self.line}: {self.what}" if self.line else f"{path}: {self.what}"


def read_text(path: Path) -> str:
    """The file's text, decoded as UTF-8 (a byte-order mark dropped); FileProblem when it cannot be had."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise FileProblem("no such file") from None
    except IsADirectoryError:
        raise FileProblem("is a directory, not a file") from None
    except OSError as err:
        raise FileProblem(f"cannot read: {err.strerror or err}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise FileProblem(f"not UTF-8: {err.reason} at byte {err.start}; save it as UTF-8", line) from None
