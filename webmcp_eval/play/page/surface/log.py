"""The shim's reports, in arrival order: which document each frame shows, and what each document registered.

The shim (``shim.js``) runs in every frame as an init script. Each event names its document;
the exposed binding tells which frame (Playwright's ``Frame``) that document is in, so a
frame's document is never taken for a new document of the top page. Each report is parsed here,
once, into its typed event (``RegisterEvent``, ``CallEvent``, ...); every reader outside this
package reads those, never the report's dict.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar
from urllib.parse import urlsplit

from webmcp_eval.play.page.surface.bounds import bound_event

# ---- the shim's events, typed --------------------------------------------------------------------------------
# One class per event type the shim reports (shim.js ``emit``); a type it does not know stays a plain ShimEvent.
# A value the page chose (a name, arguments, annotations, an answer) is kept as the page sent it (``Any``): a
# broken or hostile page may send anything, and the readers judge it. ``raw`` is the event as logged (its
# ``frame`` the same dict as the event's): a trace writes that, so it stays what the page reported.


@dataclass(kw_only=True, eq=False)
class ShimEvent:
    """One report of the shim: its type (``kind``), where and when it happened; any type, known or not."""

    kind: str  # the shim's "type": register, unregister, register_error, call, refused, result, error, ...
    raw: dict[str, Any] = field(repr=False)  # as logged, with the host's clock (host_t)
    host_t: float = 0.0  # when the host heard of it (time.monotonic)
    t: Any = None  # when it happened, by the page's clock (epoch ms)
    seq: Any = None  # its number in its document
    route: Any = None  # the path of its frame's document then
    document: Any = None  # which document sent it
    frame: dict[str, Any] | None = None  # which frame's document (top, url, allow, ...); None: the top page's
    frame_url: str | None = None  # the pytest fixture's: the URL of the frame that sent it

    @property
    def is_top(self) -> bool:
        """Whether it came from the top page (events before frames were logged did)."""
        return self.frame is None or self.frame.get("top", True) is not False

    def reported(self, *keys: str) -> dict[str, Any]:
        """The event as the page reported it, without the host's clock: what a trace keeps. With keys: only
        those the report has, in that order."""
        if keys:
            return {k: self.raw[k] for k in keys if k in self.raw}
        return {k: v for k, v in self.raw.items() if k != "host_t"}


@dataclass(kw_only=True, eq=False)
class ToolEvent(ShimEvent):
    """An event about one tool: its registration (instance) and the name the page gave it."""

    instance: Any = None  # the shim's number for the registration (per document)
    name: Any = None  # as the page passed it
    declarative: bool = False  # a form's tool (<form toolname>), not registerTool's


@dataclass(kw_only=True, eq=False)
class DescribedEvent(ToolEvent):
    """A registration the page tried: the tool as the page described it."""

    description: Any = None
    input_schema: Any = None  # None for a form: the browser builds it from the fields
    annotations: Any = None
    source: Any = None  # where registerTool was called: {url, line, column}, or None


@dataclass(kw_only=True, eq=False)
class RegisterEvent(DescribedEvent):
    """A tool registered (registerTool, or a <form toolname> the shim found)."""

    @property
    def untrusted_content(self) -> bool:
        """Registered with untrustedContentHint (the page's own spelling)."""
        return bool((self.annotations or {}).get("untrustedContentHint"))


@dataclass(kw_only=True, eq=False)
class RegisterErrorEvent(DescribedEvent):
    """A registration the browser refused: what the page passed, and the browser's error."""

    error: Any = None


@dataclass(kw_only=True, eq=False)
class UnregisterEvent(ToolEvent):
    """A registration withdrawn (its signal aborted, its form removed)."""


@dataclass(kw_only=True, eq=False)
class CallEvent(ToolEvent):
    """A call began: the tool's execute (or the form's fill) ran with these arguments."""

    call_id: Any = None
    args: Any = None
    mocked: bool = False


@dataclass(kw_only=True, eq=False)
class RefusedEvent(ToolEvent):
    """A call of a withdrawn registration, refused by the shim."""

    call_id: Any = None
    args: Any = None


@dataclass(kw_only=True, eq=False)
class ResultEvent(ToolEvent):
    call_id: Any = None
    result: Any = None
    ms: Any = None  # the tool's own time, by the page's clock
    submitted: Any = None  # a form's call: whether its submit went ahead


@dataclass(kw_only=True, eq=False)
class ErrorEvent(ToolEvent):
    call_id: Any = None
    error: Any = None  # the tool's own words (what its execute threw)
    ms: Any = None


@dataclass(kw_only=True, eq=False)
class ClickEvent(ShimEvent):
    trusted: Any = None  # False: a page script clicked, not a person
    tag: Any = None
    text: Any = None


@dataclass(kw_only=True, eq=False)
class MarkEvent(ShimEvent):
    label: Any = None


@dataclass(kw_only=True, eq=False)
class LoadedEvent(ShimEvent):
    native: Any = None  # the browser has WebMCP (False: the shim's polyfill lists and calls)


EVENT_TYPES: dict[str, type[ShimEvent]] = {
    "register": RegisterEvent,
    "register_error": RegisterErrorEvent,
    "unregister": UnregisterEvent,
    "call": CallEvent,
    "refused": RefusedEvent,
    "result": ResultEvent,
    "error": ErrorEvent,
    "click": ClickEvent,
    "mark": MarkEvent,
    "loaded": LoadedEvent,
}
_RAW_KEYS = {"input_schema": "inputSchema", "call_id": "callId"}  # the shim's spelling, where it differs
_FLAGS = ("declarative", "mocked")  # true or absent in the shim's reports
# Each class's fields and the report's key for each, worked out once: a page may report thousands of events
_EVENT_CLASSES: list[type[ShimEvent]] = [ShimEvent, *EVENT_TYPES.values()]
_FIELDS = {
    cls: tuple((f.name, _RAW_KEYS.get(f.name, f.name)) for f in fields(cls) if f.name not in ("kind", "raw"))
    for cls in _EVENT_CLASSES
}


def parse_event(raw: dict[str, Any]) -> ShimEvent:
    """One logged report as its typed event (an unknown type: a plain ShimEvent); raw is kept, never changed."""
    kind = raw.get("type")
    cls = EVENT_TYPES.get(kind, ShimEvent) if isinstance(kind, str) else ShimEvent
    values = {name: raw[key] for name, key in _FIELDS[cls] if key in raw}
    for flag in _FLAGS:
        if flag in values:
            values[flag] = bool(values[flag])
    if not isinstance(values.get("frame"), dict):
        values.pop("frame", None)
    if not isinstance(values.get("host_t"), int | float):
        values.pop("host_t", None)
    if not isinstance(values.get("frame_url"), str):
        values.pop("frame_url", None)
    return cls(kind=kind if isinstance(kind, str) else "", raw=raw, **values)


E = TypeVar("E", bound=ShimEvent)


def sent_reports(sent: Any) -> list[Any]:
    """The shim's events in one report, in order: its JSON text read (shim.js ``emit``; an array holds the events
    of one task of the page), or the object it sent where JSON could not write it; a text that is no JSON stays
    a text (an unknown event)."""
    if not isinstance(sent, str):
        return [sent]
    try:
        read = json.loads(sent)
    except (ValueError, RecursionError):
        return [sent]
    return read if isinstance(read, list) else [read]


class ShimLog:
    """Events the shim reports through the exposed binding, in arrival order, each with the host's clock."""

    def __init__(self, read_allow: bool = True) -> None:
        # read_allow: read a cross-origin frame's allow attribute in a task as its events arrive; off under
        # Playwright's sync API (the fixture), whose loop must not make calls: the reader reads it when asked
        self.read_allow = read_allow
        self.events: list[ShimEvent] = []
        self.changed = asyncio.Event()
        self._frames: dict[object, Any] = {}  # document id (as the shim sent it) -> the Playwright Frame that shows it
        self._allow: dict[int, str | None] = {}  # id(frame) -> its element's allow attribute, read from outside
        self._tasks: set[asyncio.Task[None]] = set()

    def add(self, report: dict[str, Any], frame: Any = None) -> ShimEvent:
        """Log one report as its typed event; ``frame`` is the Playwright Frame it came from (the binding's
        source), when known. Its strings are made valid Unicode and a call's answer cut to its cap (bounds.py),
        as the reader's are."""
        raw = bound_event(report) if isinstance(report, dict) else {"type": "unknown"}
        raw["host_t"] = time.monotonic()
        event = parse_event(raw)
        if frame is not None and event.document is not None:
            self._frames.setdefault(event.document, frame)
            self._fill_allow(event, frame)
        self.events.append(event)
        self.changed.set()
        return event

    def take(self, source: dict[str, Any], report: Any) -> None:
        """The shim's binding: log its report (its JSON text, see ``sent_reports``) and answer the page nothing.
        (Answering with the logged event, which is no value a page can take, made Playwright fail the binding call
        and format a traceback for every report: about 1 ms each, 3 s on a page of 3,000 tools.)"""
        frame = source.get("frame")
        for event in sent_reports(report):
            self.add(event, frame)

    def _fill_allow(self, event: ShimEvent, frame: Any) -> None:
        """A cross-origin frame cannot read its own element: its allow attribute is read from the parent."""
        info = event.frame
        if not self.read_allow or info is None or info.get("top") or "allow" in info:
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
            info = e.frame  # the logged report's own frame dict: the trace sees the allow too
            if info is not None and "allow" not in info and self._frames.get(e.document) is frame:
                info["allow"] = allow

    def of_type(self, *types: type[E]) -> list[E]:
        return [e for e in self.events if isinstance(e, types)]

    def registration_log(self) -> list[ShimEvent]:
        """What a trace keeps of the log (its ``registrations``): documents loaded, registrations made, withdrawn
        and refused, and calls refused on a withdrawn registration."""
        return self.of_type(LoadedEvent, RegisterEvent, UnregisterEvent, RegisterErrorEvent, RefusedEvent)

    def native(self) -> bool | None:
        loaded = [e for e in self.of_type(LoadedEvent) if e.is_top]
        native: bool | None = loaded[-1].native if loaded else None
        return native

    def top_loaded(self) -> LoadedEvent | None:
        """The top page's latest ``loaded`` event: its current document."""
        return next((e for e in reversed(self.of_type(LoadedEvent)) if e.is_top), None)

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
        for e in self.of_type(LoadedEvent):
            after = after or e is top
            if not after or e is top:
                continue
            frame = self._frames.get(e.document)
            if frame is not None and frame.is_detached():
                continue
            latest[id(frame) if frame is not None else e.document] = e.document
        return [top.document, *latest.values()]

    def active_registrations(self, *, top_only: bool = False) -> list[RegisterEvent]:
        """Registrations of the documents shown now (the top page's alone with top_only), never withdrawn."""
        documents = self.current_documents()
        return self.registrations(set(documents[:1] if top_only else documents))[0]

    def registrations(self, documents: set[str]) -> tuple[list[RegisterEvent], list[RegisterErrorEvent]]:
        """The live registrations of these documents (registered, never withdrawn) and the refused ones.

        The one reading of "what a document registered": every front end asks here.
        """
        live: dict[tuple[str, Any], RegisterEvent] = {}
        refused: list[RegisterErrorEvent] = []
        for e in self.events:
            if e.document not in documents or not isinstance(e, ToolEvent):
                continue
            key = (e.document, e.instance)
            if isinstance(e, RegisterEvent):
                live[key] = e
            elif isinstance(e, UnregisterEvent | RegisterErrorEvent):
                live.pop(key, None)
                if isinstance(e, RegisterErrorEvent):
                    refused.append(e)
        return list(live.values()), refused

    def events_of(self, frame: Any) -> list[ShimEvent]:
        """The events of the documents a Playwright Frame showed, in order."""
        return [e for e in self.events if self._frames.get(e.document) is frame]

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

    def stale_registrations(self, top_route: str) -> list[RegisterEvent]:
        """Registrations still active after their own frame left the route they were registered on.

        A frame's tools are held against the frame's route, never the top page's:
        a frame's document is not a route of the top page.
        """
        out = []
        for r in self.active_registrations():
            now = top_route if r.is_top else self.frame_route(r.document)
            if now is not None and r.route != now:
                out.append(r)
        return out
