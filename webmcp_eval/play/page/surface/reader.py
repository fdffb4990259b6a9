"""Reading a live page into the surface model, and calling its tools: the one reader every front end uses.

Each frame's tools come from the browser itself (``frame.webmcp.tools()``, the native listing;
a child frame whose listing never answers is read from DevTools, ``devtools_tools.py``), or
from the shim's polyfill where the browser has no WebMCP. The shim's log fills in what the
listing lacks: the page's own annotations, which tools are declarative forms, the refused
registrations and the timeline. A call's answer is what the browser returned; the shim's
report of it adds the instance, document and frame that ran it, never another answer.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, Unpack

from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame as PwFrame
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from webmcp_eval.play.page.devtools_tools import DevToolsCallError, HungFrames
from webmcp_eval.play.page.surface.bounds import Bounded, bound_answer, bound_schema, valid_json, valid_text
from webmcp_eval.play.page.surface.log import (
    CallEvent,
    DescribedEvent,
    ErrorEvent,
    RefusedEvent,
    RegisterEvent,
    ResultEvent,
    ShimEvent,
    ShimLog,
    UnregisterEvent,
)
from webmcp_eval.play.page.surface.model import (
    FormControl,
    FormField,
    Frame,
    PageForm,
    Refused,
    Source,
    TimelineEvent,
    Tool,
    one_spelling,
    origin_of,
)
from webmcp_eval.trace import WebMCPPath

SHIM_JS = (Path(__file__).parent.parent / "shim.js").read_text(encoding="utf-8")
BINDING = "__webmcpEvalReport"
# A child frame that does not answer its listing in this long (still loading, hung) offers no tools this time.
FRAME_LIST_TIMEOUT_MS = 3000
CALL_TIMEOUT_MS = 15_000
WAITS_FOR_PERSON = "waits for a person to submit the form (it has no toolautosubmit)"

# Every form of a frame, read once for every front end (PageForm): its tool attributes, each control an agent
# could fill (not buttons, not hidden) as the audit's form rules read it, and its named elements (and passwords)
# as the browser makes them a declarative tool's fields. ``__webmcpEvalIssues``: Chrome's issue codes, tagged on
# the nodes by the audit (audit/forms.py) before it reads the forms.
FORMS_JS = """() => [...document.forms].map(f => {
  const skip = ['submit', 'button', 'reset', 'image', 'hidden'];
  const controls = [...f.elements].filter(e =>
    ['INPUT', 'SELECT', 'TEXTAREA'].includes(e.tagName) && !skip.includes((e.type || '').toLowerCase()));
  const labelled = (e) => !!(e.labels && e.labels.length);
  const issues = (e) => [...(e.__webmcpEvalIssues || [])];
  return {
    toolname: f.getAttribute('toolname'),
    tooldescription: f.getAttribute('tooldescription'),
    autosubmit: f.hasAttribute('toolautosubmit'),
    id: f.id || f.getAttribute('name') || '',
    issues: issues(f),
    controls: controls.map(e => ({
      name: e.getAttribute('name') || '', id: e.id || '', type: (e.type || e.tagName).toLowerCase(),
      required: !!e.required, description: e.getAttribute('toolparamdescription'), labelled: labelled(e),
      issues: issues(e),
    })),
    selector: f.id ? `form#${CSS.escape(f.id)}` : `form[toolname="${CSS.escape(f.getAttribute('toolname') || '')}"]`,
    fields: [...f.elements].filter(e => e.name || e.type === 'password').map(e => ({
      name: e.name || '', type: (e.type || e.tagName).toLowerCase(), autocomplete: e.getAttribute('autocomplete') || '',
      filled: ['checkbox', 'radio'].includes(e.type) ? e.checked : !!e.value,
    })),
  };
})"""
POLYFILL_LISTING_JS = "window.__webmcpEval ? window.__webmcpEval.tools() : []"
POLYFILL_CALL_JS = "([n, a]) => window.__webmcpEval.call(n, a)"


class ListingTimeouts(TypedDict, total=False):
    """How long a frame's tool listing may take (read_frame's own defaults where not given)."""

    timeout_ms: float
    top_timeout_ms: float | None


@dataclass
class LoadClock:
    """The top page's load event: by its own clock (epoch ms, as the shim's ``t``), else the host's."""

    load_epoch_ms: float | None
    host_t: float

    def after_load(self, event: ShimEvent) -> float:
        """When an event happened, in ms after the load event: by the page's own clock (the shim stamps every
        event with it), so a busy runner that hears of it late does not make a tool look late."""
        page_t = event.t
        host_t = event.host_t  # the log's clock
        if self.load_epoch_ms is not None and isinstance(page_t, int | float):
            return round(page_t - self.load_epoch_ms, 1)
        return round((host_t - self.host_t) * 1000, 1)


@dataclass
class Answer:
    """One call as the browser answered it."""

    result: Any = None
    error: str | None = None
    timed_out: bool = False
    via: str | None = None  # "devtools": through the DevTools domain, the frame's own listing having hung
    ms: float = 0.0
    # a form without toolautosubmit, filled and waiting for a person to submit it: its own outcome, not a timeout
    waits_for_person: bool = False
    navigated_to: str | None = None  # the call took its frame to another document (a form's action): its URL
    size: int = 0  # the answer's bytes as JSON, as the site sent it (before bounds.py's cap)
    bounds: list[str] | None = None  # what was changed to bring the answer within bounds (bounds.py)


def tool_from(raw: dict[str, Any], registration: RegisterEvent | None, form: PageForm | None) -> Tool:
    """A tool as the browser lists it, with what the shim saw the page register and the form it is, if one;
    its strings and schema within bounds (bounds.py: the shim's events are bounded as they arrive)."""
    bounded = Bounded()
    raw = {
        "name": valid_text(str(raw.get("name") or ""), "the name", bounded),
        "description": valid_text(str(raw.get("description") or ""), "the description", bounded),
        "inputSchema": bound_schema(raw.get("inputSchema"), bounded),
        "annotations": valid_json(raw.get("annotations"), "the annotations", bounded),
    }
    for note in form.bounds if form else []:  # the form was brought within bounds as it was read
        bounded.add(note)
    page = registration.annotations if registration else None
    annotations = {**one_spelling(raw.get("annotations")), **one_spelling(page)}
    declarative = form is not None or bool(registration and registration.declarative)
    if form and form.autosubmit:
        annotations["autosubmit"] = True
    kind = "declarative" if declarative else "imperative" if registration else "unknown"
    return Tool(
        name=raw.get("name", ""),
        description=raw.get("description") or "",
        input_schema=raw.get("inputSchema"),
        annotations=annotations,
        kind=kind,
        fields=list(form.fields) if form else [],
        page_annotations=page,
        schema_derived=declarative,  # a form's schema is built by the browser from its controls
        source=source_of(registration, form),
        bounds=bounded.notes,
    )


def _name(raw: dict[str, Any]) -> str:
    """A listed tool's name as the shim's log and the tool keep it (valid Unicode)."""
    return valid_text(str(raw.get("name") or ""))


def source_of(registration: DescribedEvent | None, form: PageForm | None) -> Source | None:
    """Where the tool was registered: its form's selector, else the script the shim saw call registerTool."""
    if form and form.selector:
        return Source(selector=form.selector)
    found = registration.source if registration else None
    if isinstance(found, dict):
        line, column = found.get("line"), found.get("column")
        return Source(
            str(found.get("url") or ""),
            line if isinstance(line, int) else None,
            column if isinstance(column, int) else None,
        )
    return Source() if registration and not registration.declarative else None


def parse_forms(frame_url: str, raw: list[dict[str, Any]], chrome: bool = False) -> list[PageForm]:
    """FORMS_JS's reading of a frame's forms as the model, each within bounds (bounds.py)."""
    out = []
    for found in raw:
        bounded = Bounded()
        f = valid_json(found, "the form", bounded)
        out.append(
            PageForm(
                frame_url,
                f.get("toolname"),
                f.get("tooldescription"),
                bool(f.get("autosubmit")),
                str(f.get("id") or ""),
                [FormControl(**c) for c in f.get("controls") or []],
                list(f.get("issues") or []),
                chrome,
                str(f.get("selector") or ""),
                [FormField(**field) for field in f.get("fields") or []],
                bounded.notes,
            )
        )
    return out


async def read_forms_of(frame: PwFrame, chrome: bool = False) -> list[PageForm]:
    """Every form of a frame (PlaywrightError: the frame would not answer); chrome: Chrome's issues were tagged on
    its nodes first (audit/forms.py)."""
    return parse_forms(frame.url, await frame.evaluate(FORMS_JS), chrome)


def first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


class Surface:
    """One page's surface, read live: its shim log, its frames' listings (DevTools for a hung one), its calls."""

    def __init__(self, page: Page, log: ShimLog, hung: HungFrames | None = None) -> None:
        self.page = page
        self.log = log
        self.hung = hung or HungFrames(page)

    @staticmethod
    async def install(context: BrowserContext, log: ShimLog) -> None:
        """The shim in every frame of the context's pages, reporting to log (before any page opens)."""
        await context.expose_binding(BINDING, log.take)
        await context.add_init_script(SHIM_JS)

    @property
    def path(self) -> WebMCPPath:
        native = self.log.native()
        return "native" if native else "shim" if native is False else "unknown"

    def key(self, frame: PwFrame) -> tuple[int, str | None]:
        """The frame and the document it shows now: a hung listing is remembered per document."""
        return id(frame), self.log.document_in(frame)

    async def listing(
        self, frame: PwFrame, timeout_ms: float = FRAME_LIST_TIMEOUT_MS, top_timeout_ms: float | None = None
    ) -> list[dict[str, Any]]:
        """The frame's own tools as the browser lists them (the shim's polyfill where it has no WebMCP)."""
        if self.log.native() is False:
            return list(await frame.evaluate(POLYFILL_LISTING_JS))
        return await self.hung.listing(frame, self.key(frame), timeout_ms, top_timeout_ms)

    async def listed(self) -> list[tuple[PwFrame, list[Tool]]]:
        """Each frame's listed tools, the top page first; a frame that cannot list (gone, not allowed) lists none."""
        out = []
        for frame in self.page.frames:
            try:
                raw = await self.listing(frame)
            except PlaywrightError:
                continue
            out.append((frame, self.tools_of(frame, raw, [])))
        return out

    def tools_of(self, frame: PwFrame, raw: list[dict[str, Any]], forms: list[PageForm]) -> list[Tool]:
        """The listed tools of a frame, each with the page's registration of it in that frame's document."""
        document = self.log.document_in(frame)
        live, _ = self.log.registrations({document} if document else set())
        registered = {r.name: r for r in live}
        by_form = {f.toolname: f for f in forms if f.toolname is not None}
        tools = [tool_from(t, registered.get(_name(t)), by_form.get(_name(t))) for t in raw]
        listed_by = "polyfill" if self.log.native() is False else "native"
        for tool in tools:
            tool.frame_url, tool.frame_name, tool._listed_by = frame.url, frame.name, listed_by
        return tools

    async def read_frame(
        self,
        frame: PwFrame,
        *,
        top_origin: str,
        clock: LoadClock | None = None,
        timeout_ms: float = FRAME_LIST_TIMEOUT_MS,
        top_timeout_ms: float | None = None,
    ) -> Frame:
        """One frame's surface: its tools, forms, refused registrations and (with a clock) its timeline."""
        main = frame.parent_frame is None
        document = self.log.document_in(frame)
        events = [e for e in self.log.events if document is not None and e.document == document]
        info: dict[str, Any] = next((e.frame for e in reversed(events) if e.frame is not None), {})
        out = Frame(
            url=frame.url, origin=origin_of(frame.url), main=main, same_origin=origin_of(frame.url) == top_origin
        )
        out.allow = None if main else await _allow_of(frame, info)
        out.tools_allowed = info.get("tools_allowed")
        out.path = "polyfill" if self.log.native() is False else "native"
        forms: list[PageForm] = []
        try:
            forms = [f for f in await read_forms_of(frame) if f.toolname is not None]  # the declarative tools
        except PlaywrightError as err:
            out.error = first_line(err)
        listed = True
        try:
            raw = await self.listing(frame, timeout_ms, top_timeout_ms)
        except PlaywrightError as err:  # a frame that may not list (its permissions policy), or that went away
            raw, listed, out.error = [], False, out.error or first_line(err)
        out.tools = self.tools_of(frame, raw, forms)
        _, refused = self.log.registrations({document} if document else set())
        out.refused = [
            Refused(
                e.name,
                e.error or "refused",
                "declarative" if e.declarative else "imperative",
                source_of(e, None),
            )
            for e in refused
        ]
        if listed and out.path == "native":
            names = {t.name for t in out.tools}
            for form in forms:
                if form.toolname not in names:
                    undescribed = not (form.tooldescription or "").strip()
                    why = "no tooldescription" if undescribed else "the browser did not list it"
                    out.refused.append(
                        Refused(form.toolname, f"form not registered by the browser ({why})", "declarative")
                    )
        if clock is not None:
            out.events = [
                TimelineEvent(clock.after_load(e), e.kind, e.name or "")
                for e in events
                if isinstance(e, RegisterEvent | UnregisterEvent)
            ]
        return out

    async def read_frames(self, clock: LoadClock | None = None, **listing: Unpack[ListingTimeouts]) -> list[Frame]:
        """Every frame's surface, the top page first (child frames with no document yet are left out)."""
        top = origin_of(self.page.url)
        out = []
        for frame in self.page.frames:
            if frame.is_detached() or (frame.url in ("", "about:blank") and frame.parent_frame is not None):
                continue
            out.append(await self.read_frame(frame, top_origin=top, clock=clock, **listing))
        return out

    async def call(
        self,
        frame: PwFrame,
        name: str,
        args: dict[str, Any],
        timeout_ms: float = CALL_TIMEOUT_MS,
        *,
        devtools: bool = False,
    ) -> Answer:
        """Call a tool in its frame as an agent host does; the answer as the browser returned it.

        devtools: through the DevTools WebMCP domain, whose answer follows a form's navigation (the next page's
        JSON-LD), where the page-side call ends with the document it was made in and answers null."""
        answer = Answer()
        since = len(self.log.events)
        hung = self.hung.frame_id(self.key(frame))
        if hung is None and devtools:
            hung = await self.hung.devtools_frame_id(frame)
        before = frame.url
        started = time.monotonic()
        try:
            if hung is not None:
                answer.via = "devtools"
                answer.result = await self.hung.call(hung, name, args, timeout_ms)
            elif self.log.native() is False:
                answer.result = await frame.evaluate(POLYFILL_CALL_JS, [name, args])
            else:  # bounded twice: a call whose own timeout never fires does not hang the caller
                call = frame.webmcp.call_tool(name, args, timeout=timeout_ms)
                bounded = asyncio.wait_for(call, timeout_ms / 1000 + 5) if asyncio.iscoroutine(call) else call
                answer.result = await bounded
        except TimeoutError:
            answer.error, answer.timed_out = f"Timeout {timeout_ms:.0f}ms exceeded.", True
        except PlaywrightTimeoutError as err:
            answer.error, answer.timed_out = first_line(err), True
        except (PlaywrightError, DevToolsCallError) as err:
            answer.error = first_line(err)
            answer.timed_out = "Timeout" in answer.error and "exceeded" in answer.error
        answer.ms = round((time.monotonic() - started) * 1000, 1)
        within = Bounded()  # the answer as the site sent it, within bounds (bounds.py)
        answer.result, answer.size = bound_answer(answer.result, within)
        answer.error = valid_text(answer.error, "the error", within) if answer.error is not None else None
        answer.bounds = within.notes or None
        if not frame.is_detached() and frame.url.split("#")[0] != before.split("#")[0]:
            answer.navigated_to = frame.url
        if answer.timed_out:
            start, end = self.call_events(since, name)
            if start is not None and start.declarative and end is None:  # filled, never submitted
                answer.error, answer.timed_out, answer.waits_for_person = WAITS_FOR_PERSON, False, True
        return answer

    def call_events(
        self, since: int, name: str
    ) -> tuple[CallEvent | RefusedEvent | None, ResultEvent | ErrorEvent | None]:
        """The shim's report of a call of name made after event ``since``: its start and its end, when logged."""
        start = next(
            (e for e in self.log.events[since:] if isinstance(e, CallEvent | RefusedEvent) and e.name == name), None
        )
        if start is None or isinstance(start, RefusedEvent):
            return start, None
        end = next(
            (
                e
                for e in self.log.events[since:]
                if isinstance(e, ResultEvent | ErrorEvent)
                and e.call_id == start.call_id
                and e.document == start.document
            ),
            None,
        )
        return start, end


async def _allow_of(frame: PwFrame, info: dict[str, Any]) -> str | None:
    """The frame element's allow attribute: as the shim read it, else read from the parent."""
    if "allow" in info:
        allow: str | None = info["allow"]
        return allow
    try:
        element = await frame.frame_element()
        return await element.get_attribute("allow")
    except PlaywrightError:
        return None
