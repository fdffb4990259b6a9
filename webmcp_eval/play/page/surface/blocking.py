"""The engine over Playwright's sync API: how the pytest fixture runs the one async reader, not a copy of it.

A sync Playwright object is wrapped in ``Blocking``, which offers the async API's face: its
coroutine methods run at once (the sync call blocks, and Playwright delivers the page's
events meanwhile) and hand back an awaitable that is already done. An engine coroutine that
awaits only those never suspends, so ``run`` finishes it in one step, on the test's thread,
with no event loop. The engine waits through ``wait_for_timeout`` (never ``asyncio.sleep``) so
that it stays drivable so.
"""

from __future__ import annotations

from collections.abc import Coroutine, Generator
from typing import Any, TypeVar

T = TypeVar("T")

# The async API's coroutine methods the engine awaits; every other attribute is the same in both APIs.
AWAITED = {
    "evaluate",
    "tools",
    "call_tool",
    "frame_element",
    "get_attribute",
    "send",
    "new_cdp_session",
    "wait_for_timeout",
}


class _Done:
    """An awaitable whose value is already there."""

    def __init__(self, value: object) -> None:
        self.value = value

    def __await__(self) -> Generator[Any, None, Any]:
        return self.value
        yield  # a generator: await takes its return value without ever suspending


class Blocking:
    """The async face of one sync Playwright object (page, frame, element, DevTools session)."""

    def __init__(self, obj: Any, faces: dict[int, Blocking]) -> None:
        self.obj = obj
        self._faces = faces

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.obj, name)
        if name in AWAITED and callable(value):
            return lambda *args, **kwargs: _Done(self._face(value(*args, **kwargs)))
        if callable(value):
            return lambda *args, **kwargs: self._face(value(*args, **kwargs))
        return self._face(value)

    def _face(self, value: object) -> Any:
        return face(value, self._faces)


def face(value: object, faces: dict[int, Blocking]) -> Any:
    """The one face of a Playwright object (the same object each time: the engine compares frames by identity)."""
    if isinstance(value, list):
        return [face(v, faces) for v in value]
    if not type(value).__module__.startswith("playwright.sync_api"):
        return value
    found = faces.get(id(value))
    if found is None or found.obj is not value:
        found = faces[id(value)] = Blocking(value, faces)
    return found


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Finish an engine coroutine over blocking faces in one step; its value, or its exception."""
    try:
        coro.send(None)
    except StopIteration as done:
        value: T = done.value  # what the coroutine returned
        return value
    coro.close()
    raise RuntimeError("the page surface engine waited on something a blocking page cannot give")
