"""Playwright's driver: the Node process every browser of a command goes through.

Each command (a run, ``tools``, ``init``'s reading and probe, the audit) starts one, and a test
session starts some two hundred. Most of a start is Node compiling Playwright's own modules, the
same files every time, so the driver starts with Node's compile cache on (``NODE_COMPILE_CACHE``,
kept under the user's cache folder): about a fifth less time and CPU per start (docs/speed.md,
"Playwright's driver"). A cache folder that cannot be written only means no cache; a
``NODE_COMPILE_CACHE`` (or ``NODE_DISABLE_COMPILE_CACHE``) of the user's own is left as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from playwright.async_api import Playwright, async_playwright

__all__ = ["compile_cache_dir", "playwright_driver", "start_driver"]


def compile_cache_dir() -> Path:
    """Where Node keeps the driver's compiled modules ($XDG_CACHE_HOME, else ~/.cache)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "webmcp-eval" / "node-compile-cache"


def _driver_env(env: dict[str, str] | None) -> dict[str, str]:
    env = dict(os.environ if env is None else env)
    if "NODE_COMPILE_CACHE" not in env and "NODE_DISABLE_COMPILE_CACHE" not in env:
        env["NODE_COMPILE_CACHE"] = str(compile_cache_dir())
    return env


@contextlib.contextmanager
def _spawned_as_wanted(own_session: bool) -> Iterator[None]:
    """Playwright spawns the driver with ``asyncio.create_subprocess_exec`` and no way to set its environment
    or its session, so the call is wrapped just while the driver starts.

    own_session: outside the terminal's process group. Ctrl-C in a terminal signals the whole foreground
    process group: a driver that dies with it takes the browser down under the running trials
    (TargetClosedError tracebacks and pages of browser logs). Apart, the driver lives on while the runner
    stops the trials and closes the browser in order.
    """
    spawn = asyncio.create_subprocess_exec

    async def spawn_driver(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
        kwargs["env"] = _driver_env(kwargs.get("env"))
        if own_session and os.name == "posix":
            kwargs.setdefault("start_new_session", True)
        return await spawn(*args, **kwargs)

    asyncio.create_subprocess_exec = spawn_driver
    try:
        yield
    finally:
        asyncio.create_subprocess_exec = spawn


async def start_driver(own_session: bool = False) -> tuple[Any, Playwright]:
    """A started driver and the context manager that stops it (``await cm.__aexit__(None, None, None)``)."""
    manager = async_playwright()
    with _spawned_as_wanted(own_session):
        return manager, await manager.__aenter__()


@contextlib.asynccontextmanager
async def playwright_driver(running: Playwright | None = None) -> AsyncIterator[Playwright]:
    """``async with async_playwright()``, with the driver started as above; with ``running``, that driver,
    left running (a command that reads a page and then probes it starts one driver, not two)."""
    if running is not None:
        yield running
        return
    manager, playwright = await start_driver()
    try:
        yield playwright
    finally:
        await manager.__aexit__(None, None, None)
