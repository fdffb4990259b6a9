"""The flags Chromium is launched with (webmcp_eval/play/browser/browser.py).

Chromium reads only the last ``--enable-features`` it is given, and Playwright
passes its own before ours: the WebMCP flag must carry Playwright's features too,
or it switches them off unseen (the screenshot surface, no account lookups).
"""

from __future__ import annotations

import re
from pathlib import Path

import playwright

from webmcp_eval.play.browser import browser
from webmcp_eval.play.browser.browser import BASE_ARGS, launch_args

DRIVER_BUNDLE = Path(playwright.__file__).parent / "driver" / "package" / "lib" / "coreBundle.js"


def _playwright_enabled_features() -> set[str]:
    """What this Playwright's driver passes in its own --enable-features (read from the driver's code)."""
    assert DRIVER_BUNDLE.is_file(), (
        f"Playwright's driver moved: find where it lists its enabled features ({DRIVER_BUNDLE})"
    )
    code = DRIVER_BUNDLE.read_text(encoding="utf-8")
    block = re.search(r"enabledFeatures = \(\) => \[(.*?)\]\.filter\(Boolean\)", code, re.DOTALL)
    assert block, "Playwright's driver no longer lists enabledFeatures as it did: look for its --enable-features"
    return set(re.findall(r'"([A-Za-z0-9]+)"', block.group(1)))


def _our_enabled_features() -> set[str]:
    (flag,) = [a for a in launch_args() if a.startswith("--enable-features=")]  # one: a second would win alone
    return set(flag.removeprefix("--enable-features=").split(","))


def test_the_webmcp_flag_keeps_every_feature_playwright_enables():
    features = _playwright_enabled_features()
    assert features, "found none: the pattern above no longer reads Playwright's list"
    assert features <= _our_enabled_features(), (
        f"add to PLAYWRIGHT_FEATURES: {sorted(features - _our_enabled_features())}"
    )
    assert "WebMCP" in _our_enabled_features()


def test_no_flag_of_ours_replaces_playwrights_disabled_features():
    # a --disable-features of ours would switch Playwright's list back on (it disables phoning home, paint holding)
    assert not [a for a in (*BASE_ARGS, *launch_args(True)) if a.startswith("--disable-features")]


def test_a_headless_run_takes_the_headless_shell_and_a_headed_one_the_full_chromium(monkeypatch, tmp_path):
    shell = "/usr/bin/chromium-headless-shell"
    installed = {"chromium-headless-shell": shell, "/usr/bin/chromium": "/usr/bin/chromium"}
    monkeypatch.setattr(browser.shutil, "which", installed.get)
    monkeypatch.delenv(browser.ENV_VAR, raising=False)
    assert browser.find_chromium(headless=True).path == shell
    assert browser.find_chromium(headless=False).path == "/usr/bin/chromium"
    assert browser.find_chromium().path == "/usr/bin/chromium"  # pytest-playwright's and any caller's default
    mine = tmp_path / "chrome"
    mine.write_text("")
    assert browser.find_chromium(str(mine), headless=True).path == str(mine)  # an explicit choice wins
    del installed["chromium-headless-shell"]
    assert browser.find_chromium(headless=True).path == "/usr/bin/chromium"  # without the shell, the full one
