"""``webmcp-eval --version``: the package's version, Playwright's, and the Chromium a run would take."""

from __future__ import annotations

import argparse
import re
import subprocess
from collections.abc import Sequence
from importlib import metadata
from typing import Any

from webmcp_eval import __version__

VERSION_RE = re.compile(r"\b\d+\.\d+\.\d+\.\d+\b")  # Chromium states four parts: 156.0.8078.114


def playwright_version() -> str:
    try:
        return metadata.version("playwright")
    except metadata.PackageNotFoundError:
        return "not installed"


def chromium_version(path: str) -> str | None:
    """The version a Chromium binary states (``--version``, a fraction of a second), or None."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    found = VERSION_RE.search(out.stdout)
    return found.group(0) if found else None


def chromium_line() -> str:
    """Which Chromium headless and headed runs take (webmcp_eval/play/browser/browser.py decides), with versions."""
    # Playwright's driver and the browser module load only for --version, never for a command's start
    from playwright.sync_api import sync_playwright

    from webmcp_eval.play.browser.browser import ChromiumNotFound, find_chromium

    try:
        with sync_playwright() as p:
            headless = find_chromium(browser_type=p.chromium, headless=True)
            headed = find_chromium(browser_type=p.chromium)
    except ChromiumNotFound:
        return "chromium: not found (docs/browser.md says what to install)"
    except Exception as err:  # Playwright's driver could not start: say so, the other lines still hold
        return f"chromium: not looked up ({type(err).__name__}: {str(err).strip().splitlines()[0] if str(err) else ''})"
    choices = [(headless, "headless runs"), (headed, "--headed")] if headless != headed else [(headed, "")]
    return "; ".join(
        f"chromium {chromium_version(c.path) or 'version unknown'} ({c.path}, {c.source}{', ' + use if use else ''})"
        for c, use in choices
    )


def version_text() -> str:
    return "\n".join((f"webmcp-eval {__version__}", f"playwright {playwright_version()}", chromium_line()))


class VersionAction(argparse.Action):
    """--version: printed on stdout, exit 0, before any command is asked for."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        print(version_text(), flush=True)
        parser.exit(0)
