"""The ``webmcp`` fixture's object: the WebMCP side of one test's page, through Playwright's sync API.

It puts on the page's context what a trial's context gets (webmcp_eval/play/browser/session.py):
the shim as an init script, its events through an exposed binding, and the
DevTools WebMCP domain as the second witness. Every frame counts: the shim runs
in each, its events say which frame sent them, and ``tools()`` lists each
frame's tools. ``call`` goes through the page as the runner's tool host does
(the browser's native WebMCP, else the shim's polyfill); the shim logs it, so
``calls()`` holds every call the page ran, whoever made it. With the proxy on,
``writes()`` and ``outbound()`` are what it counted for this test alone.

Its parts by concept: this module sets the page up and holds its tools, calls, mocks and network;
``page_audit.py`` the audit's engine on the page (surface, lint, smoke, contract); ``page_assertions.py``
the assertion helpers.
"""

from __future__ import annotations

import contextlib
import json
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import BrowserContext, CDPSession, Frame, Page
from playwright.sync_api import Error as PlaywrightError

from webmcp_eval.play.page.devtools_tools import DevToolsTools
from webmcp_eval.play.page.surface.blocking import Blocking, face, run
from webmcp_eval.play.page.surface.log import (
    CallEvent,
    ErrorEvent,
    RefusedEvent,
    RegisterErrorEvent,
    RegisterEvent,
    ResultEvent,
    ShimEvent,
    ShimLog,
    UnregisterEvent,
    sent_reports,
)
from webmcp_eval.play.page.surface.model import Tool
from webmcp_eval.play.page.surface.reader import (
    BINDING,
    CALL_TIMEOUT_MS,
    SHIM_JS,
    Answer,
    Surface,
    first_line,
)
from webmcp_eval.play.page.witness import compare_witness
from webmcp_eval.proxies.models import RequestRecord, TrialNetwork
from webmcp_eval.pytest_plugin.expect import renamed
from webmcp_eval.pytest_plugin.mocks import MockWarning, PageMocks, write_recording
from webmcp_eval.pytest_plugin.page_assertions import PageAssertions, as_matchable
from webmcp_eval.pytest_plugin.page_audit import PageAudit
from webmcp_eval.pytest_plugin.reporting import CallCoverage, TestEvidence, call_coverage, properties
from webmcp_eval.trace import ToolCall, WitnessRecord

__all__ = ["CALL_TIMEOUT_MS", "NoProxy", "PageWebMCP", "ToolCallError", "as_matchable"]
# Before the proxy's account is read: the page's requests have ended and none began, nor a call ended, for
# this long. A tool may fire a write and forget it (fetch without await): it reaches the proxy after the call.
NETWORK_QUIET_S = 0.3
NETWORK_WAIT_S = 5.0  # at most, for a page whose requests never end (a long poll, a stream)


class ToolCallError(Exception):
    """A tool call through the page failed: no such tool in any frame, or its execute threw."""

    __module__ = "webmcp_eval.pytest"  # where a test imports it from, and how pytest's report names it


class NoProxy(RuntimeError):
    """writes()/outbound() on a test that has no proxy."""

    __module__ = "webmcp_eval.pytest"


@dataclass(repr=False)
class PageWebMCP(PageAudit, PageAssertions):
    page: Page
    _account: Callable[[], TrialNetwork] | None = None  # the proxy's account of this test, when it has one
    _update_contracts: bool = False  # --webmcp-update-contracts: assert_contract writes instead of comparing
    _log: ShimLog = field(
        default_factory=lambda: ShimLog(read_allow=False)
    )  # the shim's events, in arrival order, each with frame_url
    _cdp_events: list[dict[str, Any]] = field(default_factory=list)
    _cdp: CDPSession | None = None
    _top_frame_id: str | None = None
    _load_t: float | None = None  # the page's latest load event (host clock): the audit's timeline counts from it
    _script_errors: list[str] = field(default_factory=list)  # the page's uncaught exceptions
    _in_flight: set[int] = field(default_factory=set)  # the page's requests not yet ended
    _network_t: float = 0.0  # when a request last began or ended, or a call ended (host clock)
    _faces: dict[int, Blocking] = field(default_factory=dict)  # the engine's async face of each sync object
    _surface: Surface | None = None  # the page surface engine, over those faces
    _answers: dict[tuple[Any, Any], Answer] = field(default_factory=dict)  # (document, callId) -> the browser's
    # mocks, recordings and the test's report (webmcp_eval/pytest_plugin/mocks.py, reporting.py)
    _mocks: PageMocks | None = None
    _calls_from: int = 0  # clear_calls(): calls() reads the shim's events from here on
    _epoch_ms: float = field(default_factory=lambda: time.time() * 1000)  # calls' started_ms count from here
    _evidence: TestEvidence = field(default_factory=TestEvidence)  # lint and smoke findings, for the report
    _warned: set[str] = field(default_factory=set)  # names mock() has warned of, once each

    @property
    def _events(self) -> list[ShimEvent]:
        return self._log.events

    @property
    def _surface_engine(self) -> Surface:
        if self._surface is None:
            self._surface = Surface(face(self.page, self._faces), self._log)
        return self._surface

    @property
    def _devtools(self) -> DevToolsTools:
        """DevTools' account of each frame's tools: how a frame whose own listing never answers is listed and
        called (webmcp_eval/play/page/devtools_tools.py says why)."""
        return self._surface_engine.hung.tools

    def __repr__(self) -> str:
        return (
            f"<webmcp of {self.page.url}: {len(self._events)} shim event(s), proxy {'on' if self._account else 'off'}>"
        )

    # ---- setup -----------------------------------------------------------------------

    def _install(self) -> PageWebMCP:
        """Shim, binding and witness on the page's context: in place for the page's next navigation."""
        context: BrowserContext = self.page.context
        context.expose_binding(BINDING, self._report)
        context.add_init_script(SHIM_JS)
        if self.page.url not in ("", "about:blank"):
            self._adopt()
        self.page.on("load", lambda _page: setattr(self, "_load_t", time.monotonic()))
        self.page.on("pageerror", lambda err: self._script_errors.append(first_line(err)))
        self.page.on("request", lambda request: self._request(request, True))
        self.page.on("requestfinished", lambda request: self._request(request, False))
        self.page.on("requestfailed", lambda request: self._request(request, False))
        with contextlib.suppress(PlaywrightError):  # a browser without the DevTools WebMCP domain: no witness
            cdp = context.new_cdp_session(self.page)
            for name in ("toolsAdded", "toolsRemoved", "toolInvoked", "toolResponded"):
                cdp.on(f"WebMCP.{name}", lambda params, name=name: self._witnessed(name, params))
            cdp.send("WebMCP.enable")
            # DevTools names each event's frame: the top page's frame id tells its calls from a frame's
            self._top_frame_id = cdp.send("Page.getFrameTree")["frameTree"]["frame"]["id"]
            self._cdp = cdp
            self._surface_engine.hung.follow(face(cdp, self._faces))
        return self

    def _adopt(self) -> None:
        """The fixture was asked for after the page had navigated: the shim joins each frame's document as it is.
        Its tools are listed and called from now on; what it registered before is not in ``registrations()``,
        and calls of those tools (registered unseen) are not in ``calls()``. The next document is seen whole."""
        for frame in self.page.frames:
            with contextlib.suppress(PlaywrightError):  # a frame going away: its next document gets the init script
                frame.evaluate(SHIM_JS)

    def _request(self, request: Any, began: bool) -> None:
        (self._in_flight.add if began else self._in_flight.discard)(id(request))
        self._network_t = time.monotonic()

    def _network_settled(self) -> None:
        """Until the page's requests have ended and the network has been quiet for NETWORK_QUIET_S."""
        deadline = time.monotonic() + NETWORK_WAIT_S
        while time.monotonic() < deadline:
            if not self._in_flight and time.monotonic() - self._network_t >= NETWORK_QUIET_S:
                return
            self.page.wait_for_timeout(25)  # the sync API delivers the page's request events while it waits

    def _report(self, source: dict[str, Any], sent: Any) -> None:
        for event in sent_reports(sent):
            if isinstance(event, dict):
                self._log_event(source.get("frame"), event)

    def _log_event(self, frame: Frame | None, event: dict[str, Any]) -> None:
        event["host_t"] = time.monotonic()
        event["_frame"] = frame  # the sync API hands out one object per frame: the events of a frame are told by it
        event["frame_url"] = frame.url if frame else ""
        event["frame_name"] = frame.name if frame else ""
        event["main_frame"] = frame is None or frame.parent_frame is None
        self._log.add(event, face(frame, self._faces) if frame is not None else None)

    def _witnessed(self, name: str, params: dict[str, Any]) -> None:
        """As a trial records it (webmcp_eval/play/browser/session.py), so the comparison with the shim is the same."""
        self._devtools.witness(name, params)
        slim = {k: v for k, v in params.items() if k not in ("stackTrace", "frameId")}
        frame_id = params.get("frameId") or next((t.get("frameId") for t in params.get("tools") or []), None)
        if frame_id is not None:
            slim["frame_id"], slim["top"] = frame_id, frame_id == self._top_frame_id
        if "tools" in slim:
            slim["tools"] = [t.get("name") for t in slim["tools"]]
        if isinstance(slim.get("input"), str):
            with contextlib.suppress(ValueError):
                slim["input"] = json.loads(slim["input"])
        self._cdp_events.append({**slim, "event": name})

    # ---- what the page offers ----------------------------------------------------------

    def tools(self) -> list[Tool]:
        """Every frame's tools right now, the main frame's first."""
        return [tool for _, tools in run(self._surface_engine.listed()) for tool in tools]

    def tool(self, name: str) -> Tool:
        __tracebackhide__ = True
        found = next((t for t in self.tools() if t.name == name), None)
        if found is None:
            raise LookupError(f"no tool {name!r} on the page; it lists: {self._names() or 'none'}")
        return found

    def _names(self) -> str:
        return ", ".join(sorted({t.name for t in self.tools()}))

    def wait_for_tools(self, *names: str, timeout_ms: float = 15_000) -> list[Tool]:
        """Wait until every named tool is listed by some frame (any tool, without names); then the tools."""
        __tracebackhide__ = True
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            tools = self.tools()
            listed = {t.name for t in tools}
            if (set(names) <= listed) if names else listed:
                return tools
            if time.monotonic() >= deadline:
                wanted = ", ".join(names) if names else "any tool"
                shown = ", ".join(sorted(listed)) or "none"
                raise TimeoutError(f"waited {timeout_ms / 1000:.0f}s for {wanted}; the page lists: {shown}")
            self.page.wait_for_timeout(50)  # lets the page run and its registrations arrive

    # ---- calls ---------------------------------------------------------------------------

    def _frame_of(self, name: str, frame_url: str | None = None) -> Any:
        """The frame (its engine face) that lists the tool, the top page's first."""
        for frame, tools in run(self._surface_engine.listed()):
            if any(t.name == name for t in tools) and frame_url in (None, frame.url):
                return frame
        return None

    def _call(self, name: str, args: dict[str, Any], timeout_ms: float, frame_url: str | None = None) -> Answer:
        """One call through the engine, waited for until the shim has logged it; None when no frame lists it."""
        frame = self._frame_of(name, frame_url)
        if frame is None:
            raise LookupError(name)
        seen = len(self._log.events)
        answer = run(self._surface_engine.call(frame, name, args, timeout_ms))
        # a tool registered before the shim came (the fixture asked for late) is never logged: no wait for it
        logged = any(isinstance(e, RegisterEvent) and e.name == name for e in self._log.events)
        returned = time.monotonic()
        start, end = self._surface_engine.call_events(seen, name)
        while not (start and (isinstance(start, RefusedEvent) or end)):
            # the shim's report comes through the binding a moment after; a call the browser refused before the
            # tool's execute ran (its arguments) is never logged: a failed call waits for its start briefly
            wait_s = 0.05 if not logged else 5 if answer.error is None or start is not None else 0.5
            if time.monotonic() - returned >= wait_s:
                break
            self.page.wait_for_timeout(10)
            start, end = self._surface_engine.call_events(seen, name)
        if answer.error is not None and isinstance(end, ErrorEvent) and end.error:
            # the browser words a throwing execute its own way ("UnknownError: Tool was executed but the
            # invocation failed"); the shim logged the tool's own words (a mock's error, a replay's miss)
            answer.error = str(end.error)
        if start is not None:
            self._answers[(start.document, start.call_id)] = answer
        self._network_t = time.monotonic()  # what the call set off may start a moment after it returned
        return answer

    def call(self, name: str, args: dict[str, Any] | None = None) -> Any:
        """Call a tool through the page, in the frame that lists it; its result, or ToolCallError in the tool's own
        words (what its execute threw, a mock's error, a replay's miss)."""
        __tracebackhide__ = True  # pytest shows the test's line, not the plugin's
        args = dict(args or {})
        try:
            answer = self._call(name, args, CALL_TIMEOUT_MS)
        except LookupError:
            raise ToolCallError(f"no tool {name!r} on the page; it lists: {self._names() or 'none'}") from None
        if answer.error is not None:
            raise ToolCallError(f"{name}({json.dumps(args, ensure_ascii=False)}): {answer.error}")
        return answer.result

    def _answer(self, call: CallEvent) -> ResultEvent | ErrorEvent | None:
        key = (call.frame_url, call.document, call.call_id)
        return next(
            (
                e
                for e in self._events
                if isinstance(e, ResultEvent | ErrorEvent) and (e.frame_url, e.document, e.call_id) == key
            ),
            None,
        )

    def calls(self) -> list[ToolCall]:
        """Every tool call the page ran (or refused, on a withdrawn tool), in order, with its result or error."""
        out: list[ToolCall] = []
        for e in self._events[self._calls_from :]:
            if not isinstance(e, CallEvent | RefusedEvent):
                continue
            answer = self._answer(e) if isinstance(e, CallEvent) else None
            error = answer.error if isinstance(answer, ErrorEvent) else None
            result = answer.result if isinstance(answer, ResultEvent) else None
            browser = self._answers.get((e.document, e.call_id))
            if browser is not None:  # a call made here: its answer is the browser's, the shim's log only its view
                result, error = browser.result, browser.error
            if isinstance(e, RefusedEvent):
                error = "refused: the tool is no longer registered on this page"
            out.append(
                ToolCall(
                    index=len(out),
                    step=0,
                    tool=e.name or "",
                    args=e.args or {},
                    result=result,
                    error=error,
                    refused=isinstance(e, RefusedEvent),
                    route=e.route or "",
                    instance=e.instance,
                    document=e.document,
                    # the shim's clock is the page's (epoch ms): since this fixture began, and the call's own time
                    started_ms=round(max(0.0, float(e.t) - self._epoch_ms), 1) if e.t else 0.0,
                    duration_ms=round(float((answer.ms if answer else None) or 0), 1),
                )
            )
        return out

    def registrations(self) -> list[dict[str, Any]]:
        """The shim's log of registrations and withdrawals, every frame's, in order."""
        keep = ("type", "name", "instance", "route", "document", "declarative", "annotations", "error", "frame_url")
        return [e.reported(*keep) for e in self._log.of_type(RegisterEvent, UnregisterEvent, RegisterErrorEvent)]

    def witness(self) -> WitnessRecord:
        """The DevTools WebMCP domain's view of the calls against the shim's (``disagreements`` lists the gaps)."""
        return compare_witness(self._events, self._cdp_events, self._cdp is not None)

    # ---- mocks, recordings, coverage, the report ------------------------------------------

    def mock(self, name: str, result: object = None, *, error: str | None = None) -> None:
        """From now on ``name`` answers ``result`` (or, a callable, what it returns for the call's arguments;
        or throws ``error``) instead of running its own execute, whoever calls it, in this page and the next.
        A name the page lists only as a ``<form toolname>``, or does not list, warns once (``MockWarning``)."""
        __tracebackhide__ = True
        if self._mocks is None:
            self._mocks = PageMocks(self.page)
        self._mocks.set(name, result, error)
        self._warn_unmockable([name])

    def _warn_unmockable(self, names: Sequence[str]) -> None:
        """One MockWarning per name (and test) that no mock can answer on the page as it is now: a form's tool
        (the browser fills and submits the form), or a name no frame lists. Before the first page nothing is
        said: a document opened later may register the name."""
        names = [n for n in names if n not in self._warned]
        if not names or self.page.url in ("", "about:blank"):
            return
        tools = self.tools()
        for name in names:
            kinds = {t.kind for t in tools if t.name == name}
            if kinds == {"declarative"}:
                why = "is a <form toolname> tool: the browser's form answers its calls, not the mock"
            elif not kinds:
                listed = ", ".join(sorted({t.name for t in tools})) or "none"
                why = f"is no tool of the page (it lists: {listed}): it answers only if a later document registers it"
            else:
                continue
            self._warned.add(name)
            warnings.warn(f"webmcp.mock({name!r}) {why}", MockWarning, stacklevel=3)

    def unmock(self, name: str) -> None:
        """``name`` runs its own execute again."""
        if self._mocks is not None:
            self._mocks.unset(name)

    def unmock_all(self) -> None:
        if self._mocks is not None:
            self._mocks.unset(None)

    def record(self, path: str | Path) -> Path:
        """Write the calls so far to ``path`` as a recording ``replay`` takes (as a trial's trace holds them)."""
        return write_recording(path, self.calls())

    def replay(self, path: str | Path) -> list[str]:
        """Mock every tool of the recording at ``path`` (``record``'s file, or a trial's trace) with its recorded
        answers: the same arguments get the recorded result; others fail, saying so. The tools' names."""
        __tracebackhide__ = True
        if self._mocks is None:
            self._mocks = PageMocks(self.page)
        names = self._mocks.replay(path)
        self._warn_unmockable(names)
        return names

    def clear_calls(self) -> None:
        """Forget the calls so far: ``calls()`` and the call assertions see only the calls made after this."""
        self._calls_from = len(self._events)

    def coverage(self) -> CallCoverage:
        """Which of the page's tools (every frame's, now) the calls so far touched, with their parameters."""
        return call_coverage(self.calls(), self.tools())

    def _report_properties(self) -> list[tuple[str, str]]:
        """The test's calls, coverage, lint and smoke findings for its report (read from the shim's log: the
        page is not asked, whatever state the test left it in)."""
        registered = {e.name: e for e in self._log.of_type(RegisterEvent) if e.name}
        tools = [_Registered(name, e.input_schema) for name, e in registered.items()]
        return properties(self.calls(), self._evidence, call_coverage(self.calls(), tools) if tools else None)

    # ---- the network (the proxy) ---------------------------------------------------------

    def _network(self) -> TrialNetwork:
        __tracebackhide__ = True  # a test without a proxy: the test's line, not a traceback into the plugin
        if self._account is None:
            raise NoProxy(
                "this test has no proxy: run pytest with --webmcp-proxy, "
                "or mark the test @pytest.mark.webmcp(proxy=True)"
            )
        self._network_settled()
        return self._account()

    def writes(self) -> list[RequestRecord]:
        """Writes (POST, PUT, PATCH, DELETE) the page sent during this test, to its site or any other host."""
        __tracebackhide__ = True
        return list(self._network().writes)

    def mutations(self) -> list[RequestRecord]:
        """``writes()``'s old name, kept for one release."""
        __tracebackhide__ = True
        renamed("webmcp.mutations()", "webmcp.writes()")
        return self.writes()

    def outbound(self) -> list[RequestRecord]:
        """Requests of this test to another host than its site's (its first page's origin, and --base-url's)."""
        __tracebackhide__ = True
        return [r for r in self._network().requests if r.outbound]


@dataclass
class _Registered:
    """A tool as the shim logged its registration (name and schema), for the report's coverage."""

    name: str
    input_schema: Any
