"""What every command's arguments share: the parser that fails in one line, and the argument types."""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeAlias, TypeVar
from urllib.parse import urlsplit

from webmcp_eval.errors import EXIT_INVALID
from webmcp_eval.play.run.shard import parse_shard
from webmcp_eval.report.reporters import OUTPUTS
from webmcp_eval.rundir.plan import ShardError
from webmcp_eval.suite.browser_context import check_timezone

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Number = TypeVar("Number", int, float)
Request = TypeVar("Request", bound="DataclassInstance")


def request_of(kind: type[Request], args: argparse.Namespace, **given: Any) -> Request:
    """A command's request (a frozen dataclass of evaluation/) from its parsed arguments: each field from the
    argument of its name (a list as a tuple), a field whose default is itself a request built the same way from the
    same arguments; ``given`` wins. A field with no argument of its name, or one not given (None), keeps its
    default."""
    values: dict[str, Any] = {}
    for f in dataclasses.fields(kind):
        if f.name in given:
            values[f.name] = given[f.name]
        elif "from_args" in f.metadata:  # a value of several arguments (a role's model: ModelFlags.config_of)
            values[f.name] = f.metadata["from_args"](args)
        elif isinstance(f.default_factory, type) and dataclasses.is_dataclass(f.default_factory):
            values[f.name] = request_of(f.default_factory, args)
        elif getattr(args, f.name, None) is not None:  # None: not given, the request's default holds
            value = getattr(args, f.name)
            values[f.name] = tuple(value) if isinstance(value, list) else value
    return kind(**values)


class Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line that says what to do (exit 2), not the whole usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_INVALID, f"{self.prog}: {message} (see {self.prog} --help)\n")


Subcommands: TypeAlias = "argparse._SubParsersAction[Parser]"  # what Parser.add_subparsers gives


class DeprecatedSpelling(argparse.Action):
    """An option's old spelling, kept for one release: it stores as the new one does and says, once
    per use on stderr, which spelling to use instead. It is left out of --help."""

    def __init__(self, option_strings: list[str], dest: str, *, instead: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, **kwargs)
        self.instead = instead

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        print(f"webmcp-eval: {option_string} is deprecated: use {self.instead}", file=sys.stderr)
        setattr(namespace, self.dest, self.const if self.nargs == 0 else values)  # a switch: its const


def number_type(
    kind: Callable[[str], Number], low: float, high: float | None = None, *, above: bool = False
) -> Callable[[str], Number]:
    """An argparse type: a number from low (exclusive when above) to high, with a one-line reason when not."""
    bound = f"greater than {low:g}" if above else f"at least {low:g}"
    if high is not None:
        bound = f"from {low:g} to {high:g}"
    word = "a whole number" if kind is int else "a number"

    def parse(text: str) -> Number:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {word}") from None
        if value != value or value < low or (above and value == low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{text} is out of range: give {word} {bound}")
        return value

    return parse


# Every number a user types has an upper bound too: a typo of a few zeros is one line and exit 2, never a
# plan of a hundred million trials that stalls the run before its first trial.
POSITIVE = number_type(int, 1, 1_000_000)


TRIALS = number_type(int, 1, 1000)  # trials per case


WORKERS = number_type(int, 1, 64)  # trials in parallel


PERCENT = number_type(float, 0, 100)


SHARE = number_type(float, 0, 1)  # a rate or probability, 0 to 1


NON_NEGATIVE = number_type(int, 0, 1_000_000)


SEED = number_type(int, 0, 2**32 - 1)


RETRIES = number_type(int, 0, 10)


PORT = number_type(int, 0, 65535)


MILLISECONDS = number_type(float, 0, 3_600_000)  # at most an hour


SETTLE_MS = number_type(int, 0, 120_000)  # a quiet time, as audit --watch-ms


DAYS = number_type(float, 0, 36_500)


SECONDS = number_type(float, 0, 86_400, above=True)


def regex_type(text: str) -> str:
    try:
        re.compile(text)
    except re.error as err:
        raise argparse.ArgumentTypeError(f"{text!r} is not a valid regular expression ({err})") from None
    return text


def timezone_type(text: str) -> str:
    """An IANA time zone the browser takes (the one validator of webmcp_eval/suite/browser_context.py)."""
    try:
        return check_timezone(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def run_id_type(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", text) or text in (".", ".."):
        raise argparse.ArgumentTypeError(f"{text!r}: use up to 100 letters, digits, '.', '_' or '-'")
    return text


def _url_type(schemes: tuple[str, ...], what: str, like: str) -> Callable[[str], str]:
    """An argparse type: a URL with one of these schemes and a host; ``what`` names it in the reason."""

    def parse(text: str) -> str:
        try:
            parts = urlsplit(text)
            parts.port  # noqa: B018 - raises ValueError when the port is out of range
        except ValueError as err:
            raise argparse.ArgumentTypeError(f"{text!r} is not a usable {what} ({err})") from None
        if parts.scheme not in schemes or not parts.hostname:
            raise argparse.ArgumentTypeError(f"{text!r} is not {like}")
        return text

    return parse


# http(s)://host[:port][/path]: the site to run against
base_url_type = _url_type(("http", "https"), "URL", "a URL like http://127.0.0.1:8000")
# ws(s)://host:port/path of a Playwright browser server
ws_endpoint_type = _url_type(("ws", "wss"), "endpoint", "a browser server endpoint like ws://127.0.0.1:3000/")
# http(s)://host:port of a Chromium's DevTools (or its ws:// browser endpoint)
cdp_endpoint_type = _url_type(("http", "https", "ws", "wss"), "URL", "a DevTools endpoint like http://127.0.0.1:9222")


def shard_type(text: str) -> tuple[int, int]:
    try:
        return parse_shard(text)
    except ShardError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def add_output_flags(parser: argparse.ArgumentParser) -> None:
    """A flag per file view of the results (report/reporters.py OUTPUTS): --json, --junit, --html, --markdown.

    run, report and rejudge take them all; each file is checked before any work (evaluation/reporting.py
    ReportFiles.check)."""
    for o in OUTPUTS:
        parser.add_argument(o.flag, dest=o.name, metavar="FILE", help=o.help)


def add_history_flags(parser: argparse.ArgumentParser) -> None:
    """--history DIR / --no-history: where the HTML report's trend finds the earlier runs, or no trend."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--history",
        metavar="DIR",
        help="the HTML report's trend: the earlier runs of the same cases are the run folders in DIR "
        "(default: the folder the run directory is in; the last 10 are shown)",
    )
    group.add_argument("--no-history", action="store_true", help="no trend section in the HTML report")


LABELS_SERIES_HELP = (
    "people's labels of rubric criteria, shown as a human-label series of their own "
    "(default: labels.json beside the cases, when there is one)"
)
