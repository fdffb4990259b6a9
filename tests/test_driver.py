"""Playwright's driver starts with Node's compile cache under the user's cache folder, unless the user chose
otherwise (webmcp_eval/play/browser/driver.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from eval_support import in_thread

from webmcp_eval.play.browser.driver import compile_cache_dir, playwright_driver

pytestmark = pytest.mark.browser  # a real driver process (no Chromium: the driver alone)


def _start_and_stop() -> str:
    async def run() -> str:
        async with playwright_driver() as p:
            return p.chromium.name

    return in_thread(asyncio.run, run())


def _cached_files(folder: Path) -> list[Path]:
    return [f for f in folder.rglob("*") if f.is_file()] if folder.exists() else []


def test_the_driver_keeps_its_compiled_modules_in_the_users_cache_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("NODE_COMPILE_CACHE", raising=False)
    monkeypatch.delenv("NODE_DISABLE_COMPILE_CACHE", raising=False)
    assert compile_cache_dir() == tmp_path / "cache" / "webmcp-eval" / "node-compile-cache"
    assert _start_and_stop() == "chromium"
    assert _cached_files(compile_cache_dir()), "the driver wrote no compiled module"


def test_a_users_own_choice_of_compile_cache_is_left_as_it_is(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("NODE_COMPILE_CACHE", str(tmp_path / "theirs"))
    monkeypatch.delenv("NODE_DISABLE_COMPILE_CACHE", raising=False)
    _start_and_stop()
    assert _cached_files(tmp_path / "theirs") and not _cached_files(compile_cache_dir())
    monkeypatch.delenv("NODE_COMPILE_CACHE")
    monkeypatch.setenv("NODE_DISABLE_COMPILE_CACHE", "1")
    _start_and_stop()
    assert not _cached_files(compile_cache_dir())


def test_a_cache_folder_that_cannot_be_written_only_means_no_cache(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    monkeypatch.delenv("NODE_COMPILE_CACHE", raising=False)
    monkeypatch.delenv("NODE_DISABLE_COMPILE_CACHE", raising=False)
    assert _start_and_stop() == "chromium"
