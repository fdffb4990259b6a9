"""``--webmcp-chromium`` (ini ``webmcp_chromium``): pytest-playwright launches the Chromium with WebMCP.

Registered as a plugin at configure, after pytest-playwright, so its ``browser_type_launch_args`` stands over
theirs and starts from theirs; a conftest's own ``browser_type_launch_args`` still stands over this one.
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any], browser_name: str) -> dict[str, Any]:
    """pytest-playwright's launch arguments for Chromium, naming webmcp-eval's WebMCP Chromium and its flags."""
    if browser_name != "chromium":
        return browser_type_launch_args  # --browser firefox / webkit: as pytest-playwright launches them
    from webmcp_eval.play.browser.browser import ChromiumNotFound, find_chromium, launch_args

    args = [*browser_type_launch_args.get("args", []), *launch_args()]
    if browser_type_launch_args.get("channel"):  # --browser-channel chrome: that browser, with the flags
        return {**browser_type_launch_args, "args": args}
    # headless runs take the headless shell when it is installed, as `webmcp-eval run` does
    try:
        chromium = find_chromium(headless=browser_type_launch_args.get("headless", True)).path
    except ChromiumNotFound as err:  # what to install, as `webmcp-eval run` says it: no traceback of the plugin
        pytest.fail(f"--webmcp-chromium: {err}", pytrace=False)
    return {**browser_type_launch_args, "executable_path": chromium, "args": args}
