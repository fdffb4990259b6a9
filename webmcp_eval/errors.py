"""The errors a user sees, the outcome a command ends with, and the exit codes of both.

A command's core returns an ``Outcome`` (its exit code, and what a caller may read of its work) or raises one of
these errors, and never prints its own last line: ``webmcp-eval`` (webmcp_eval/cli) catches
``EvalError``, prints its message as one line on stderr and exits with the code the error carries. The pytest
plugin, the benchmarks and the tests call the same cores and read the same exceptions.

This module imports nothing of the project, so every layer (suite, rundir, play, audit) may derive its own
errors from these without an import cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

EXIT_OK, EXIT_FAILED, EXIT_INVALID, EXIT_NOT_RUN, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


@dataclass(frozen=True)
class Outcome:
    """How a command that did its work ended: the exit code it ends with (0 passed, 1 failed, 3 not run, 130
    interrupted). A command with more to tell its caller (a run directory, the verdict changes) returns a subclass."""

    exit_code: int


class EvalError(Exception):
    """An error a user sees: its message is the one line they read, ``exit_code`` the code the command ends with.

    ``named``: the line starts with ``webmcp-eval COMMAND:`` (a mistake on the command line); otherwise the message
    names the file, flag or URL it is about itself."""

    exit_code: int = EXIT_INVALID
    named: bool = False

    def __init__(self, *args: object, exit_code: int | None = None, named: bool | None = None) -> None:
        super().__init__(*args)
        if exit_code is not None:
            self.exit_code = exit_code
        if named is not None:
            self.named = named

    def line(self, command: str) -> str:
        """The one line ``webmcp-eval COMMAND`` prints for this error (a line break in it is printed escaped)."""
        return f"webmcp-eval {command}: {self}" if self.named else str(self)


class UsageError(EvalError):
    """A mistake on the command line: one line on stderr that says what to do, exit 2."""

    named = True


class InvalidInput(EvalError):
    """Input that cannot be used (a case file, a suite, a run directory, a config file, a flag's value): exit 2.
    The message says where (file:line: field, or the flag) and what to do."""


class CannotRun(EvalError):
    """Nothing wrong with the input, but the command could not do its work (no Chromium, the site could not be
    opened, the disk is full): exit 3."""

    exit_code = EXIT_NOT_RUN
