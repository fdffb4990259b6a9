"""The shim's reports, in arrival order: which document each frame shows, and what each document registered.

The shim (``shim.js``) runs in every frame as an init script. Each event names its document;
the exposed binding tells which frame (Playwright's ``Frame``) that document is in, so a
frame's document is never taken for a new document of the top page.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any
from urllib.parse import urlsplit

from webmcp_eval.play.page.surface.bounds import bound_event


class ShimLog:
    """Events the shim reports through the exposed binding, in arrival order, each with the host's clock."""

    def __init__(self, read_allow: bool = True) -> None:
        # read_allow: read a cross-origin frame's allow attribute in a task as its events arrive; off under
        # Playwright's sync API (the fixture), whose loop must not make calls: the reader reads it when asked
        self.read_allow = read_allow
        self.events: list[dict[str, Any]] = []
        self.changed = asyncio.Event()
        self._frames: dict[object, Any] = {}  # document id (as the shim sent it) -> the Playwright Frame that shows it
        self._allow: dict[int, str | None] = {}  # id(frame) -> its element's allow attribute, read from outside
        self._tasks: set[asyncio.Task[None]] = set()

    def add(self, event: dict[str, Any], frame: Any = None) -> None:
        """Log one event; ``frame`` is the Playwright Frame it came from (the binding's source), when known.
        Its strings are made valid Unicode and a call's answer cut to its cap (bounds.py), as the reader's are."""
        event = bound_event(event) if isinstance(event, dict) else {"type": "unknown"}
        event["host_t"] = time.monotonic()
        document = event.get("document")
        if frame is not None and document is not None:
            self._frames.setdefault(document, frame)
            self._fill_allow(event, frame)
        self.events.append(event)
        self.changed.set()

    def _fill_allow(self, event: dict[str, Any], frame: Any) -> None:
        """A cross-origin frame cannot read its own element: its allow attribute is read from the parent."""
        info = event.get("frame")
        if not self.read_allow or not isinstance(info, dict) or info.get("top") or "allow" in info:
            return
        if id(frame) in self._allow:
            info["allow"] = self._allow[id(frame)]
            return
        with contextlib.suppress(RuntimeError):  # no running loop (a test's log): left unknown
            task = asyncio.get_running_loop().create_task(self._read_allow(frame))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _read_allow(self, frame: Any) -> None:
        try:
            element = await frame.frame_element()
            allow = await element.get_attribute("allow")
        except Exception:  # the frame went away first: its allow stays unknown
            return
        self._allow[id(frame)] = allow
        for e in self.events:
            info = e.get("frame")
            if isinstance(info, dict) and "allow" not in info and self._frames.get(e.get("document")) is frame:
                info["allow"] = allow

    def of_type(self, *types: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") in types]

    def native(self) -> bool | None:
        loaded = [e for e in self.of_type("loaded") if is_top(e)]
        return loaded[-1].get("native") if loaded else None

    def top_loaded(self) -> dict[str, Any] | None:
        """The top page's latest ``loaded`` event: its current document."""
        return next((e for e in reversed(self.of_type("loaded")) if is_top(e)), None)

    def current_documents(self) -> list[str]:
        """The documents the page shows now: the top page's, then each of its frames' latest.

        A frame's document counts when it loaded after the top page's and its
        frame is still attached; a frame that navigated shows only its latest.
        """
        top = self.top_loaded()
        if top is None:
            return []
        latest: dict[Any, str] = {}
        after = False
        for e in self.of_type("loaded"):
            after = after or e is top
            if not after or e is top:
                continue
            frame = self._frames.get(e["document"])
            if frame is not None and frame.is_detached():
                continue
            latest[id(frame) if frame is not None else e["document"]] = e["document"]
        return [top["document"], *latest.values()]

    def active_registrations(self, *, top_only: bool = False) -> list[dict[str, Any]]:
        """Registrations of the documents shown now (the top page's alone with top_only), never withdrawn."""
        documents = self.current_documents()
        return self.registrations(set(documents[:1] if top_only else documents))[0]

    def registrations(self, documents: set[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The live registrations of these documents (registered, never withdrawn) and the refused ones.

        The one reading of "what a document registered": every front end asks here.
        """
        live: dict[tuple[str, Any], dict[str, Any]] = {}
        refused: list[dict[str, Any]] = []
        for e in self.events:
            if e.get("document") not in documents:
                continue
            key = (e["document"], e.get("instance"))
            if e["type"] == "register":
                live[key] = e
            elif e["type"] in ("unregister", "register_error"):
                live.pop(key, None)
                if e["type"] == "register_error":
                    refused.append(e)
        return list(live.values()), refused

    def events_of(self, frame: Any) -> list[dict[str, Any]]:
        """The events of the documents a Playwright Frame showed, in order."""
        return [e for e in self.events if self._frames.get(e.get("document")) is frame]

    def document_in(self, frame: Any) -> str | None:
        """The document a Playwright Frame shows now, as the shim in it reported (None: no shim there)."""
        current = self.current_documents()
        return next((d for d in reversed(current) if self._frames.get(d) is frame), None)

    def frame_route(self, document: str) -> str | None:
        """The path a frame's document is at now (same-document navigations included); None: unknown."""
        frame = self._frames.get(document)
        if frame is None:
            return None
        return urlsplit(frame.url).path or "/"

    def stale_registrations(self, top_route: str) -> list[dict[str, Any]]:
        """Registrations still active after their own frame left the route they were registered on.

        A frame's tools are held against the frame's route, never the top page's:
        a frame's document is not a route of the top page.
        """
        out = []
        for r in self.active_registrations():
            now = top_route if is_top(r) else self.frame_route(r["document"])
            if now is not None and r.get("route") != now:
                out.append(r)
        return out


def is_top(event: dict[str, Any]) -> bool:
    """Whether a shim event came from the top page (events before frames were logged did)."""
    info = event.get("frame")
    return not isinstance(info, dict) or info.get("top", True) is not False
