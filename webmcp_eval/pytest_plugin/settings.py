"""The plugin's settings: each option on the command line, else its ini value of the same name, else the default.

Kept apart from plugin.py so the suite items and the fixture read them without importing the plugin back.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, Literal
from urllib.parse import urlsplit

import pytest

EXPECT_TIMEOUT_MS = 5000  # as Playwright's expect


def whole_number(high: int) -> Callable[[str], int]:  # an argparse type
    """An argparse type: a whole number from 1 to ``high`` (a typo of a few zeros is a usage error, never a
    collection that stalls), with a one-line reason when not."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not 1 <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is out of range: give a whole number from 1 to {high}")
        return value

    return parse


trials_count = whole_number(1000)  # as webmcp-eval run --trials
timeout_ms = whole_number(600_000)  # ten minutes


def base_url_of(config: pytest.Config) -> str | None:
    """pytest-playwright's --base-url (or its base_url ini value): your tests' site, never the suite's."""
    try:
        return config.getoption("base_url", None) or config.getini("base_url") or None
    except ValueError:  # no plugin declares base_url
        return None


def bare_base_url(config: pytest.Config) -> tuple[str | None, tuple[str, str] | None]:
    """(--base-url without user:password@, the credentials taken out of it): the browser sends them as HTTP
    authentication, and no URL the plugin keeps or shows carries them (as ``webmcp-eval run`` takes them)."""
    from webmcp_eval.suite.site import split_credentials

    base_url = base_url_of(config)
    return split_credentials(base_url) if base_url else (None, None)


# Every option has an ini value of the same name (``webmcp_proxy = true`` under [pytest]); the command line wins.
# (--webmcp-update-contracts has none: it is a one-off.)
INI: dict[str, tuple[Literal["bool", "linelist", "string"], str]] = {
    "webmcp_proxy": ("bool", "route every test that uses the webmcp fixture through the counting proxy"),
    "webmcp_chromium": ("bool", "pytest-playwright launches webmcp-eval's Chromium with WebMCP (no conftest code)"),
    "webmcp_allow_host": ("linelist", "hosts (or globs) the proxy lets the page reach besides the site and loopback"),
    "webmcp_suite": ("string", "a webmcp-eval suite folder to collect as test items"),
    "webmcp_suite_base_url": ("string", "the suite's site (default: its suite.yaml's, else the embedded demo site)"),
    "webmcp_trials": ("string", "trials per case of the suite (default 1)"),
    "webmcp_out": ("string", "where the suite's run directory goes (default traces)"),
    "webmcp_expect_timeout": ("string", "how long expect(webmcp) retries, in ms (default 5000, as Playwright's)"),
}


def setting(config: pytest.Config, name: str) -> Any:
    """The command line's value, else the ini file's, else the default; a bad ini value is a usage error."""
    given = config.getoption(name, None)
    if name == "webmcp_allow_host":
        return [*config.getini(name), *given]
    if given not in (None, False):
        return given
    ini = config.getini(name)
    if name in ("webmcp_proxy", "webmcp_chromium"):
        return bool(ini)
    if name in ("webmcp_trials", "webmcp_expect_timeout"):
        default = 1 if name == "webmcp_trials" else EXPECT_TIMEOUT_MS
        try:
            parse = trials_count if name == "webmcp_trials" else timeout_ms
            return parse(ini) if ini else default
        except argparse.ArgumentTypeError as err:
            raise pytest.UsageError(f"ini {name}: {err}") from None
    value = ini or ("traces" if name == "webmcp_out" else None)
    if name == "webmcp_suite_base_url" and value:
        _check_url(value, "ini webmcp_suite_base_url")
    return value


def http_url(text: str) -> str:
    """An option's type: an http(s) URL with a host."""
    try:
        return _check_url(text, None)
    except pytest.UsageError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _check_url(text: str, where: str | None) -> str:
    from webmcp_eval.suite.site import page_url_problem, shown_url

    problem = page_url_problem(text)
    if problem or urlsplit(text).scheme not in ("http", "https"):
        said = f"{where}: " if where else ""
        raise pytest.UsageError(f"{said}{shown_url(text)!r} is not a URL like http://127.0.0.1:8000/ ({problem})")
    return text
