"""A page's tool surface: per frame, each tool, the registrations the browser refused, the timeline.

Plain data: the audit's rules, the ``tools`` listing and the fixture read this and nothing
else. A tool's annotations are kept in one spelling (``readOnlyHint``, ``untrustedContentHint``,
``consequentialHint``: the page's own words) whichever of the browser or the page said them;
what the page itself passed stays in ``page_annotations``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

# The browser's names for the annotations (its listing) -> the names a page registers them with.
NATIVE_ANNOTATIONS = {
    "readOnly": "readOnlyHint",
    "untrustedContent": "untrustedContentHint",
    "consequential": "consequentialHint",
}


def one_spelling(annotations: Any) -> dict[str, Any]:
    """Annotations in the page's spelling, without the ones nobody set."""
    if not isinstance(annotations, dict):
        return {}
    named: dict[str, Any] = annotations
    return {NATIVE_ANNOTATIONS.get(k, k): v for k, v in named.items() if v is not None}


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") else url


@dataclass
class FormField:
    name: str
    type: str  # the input's type ("password", "text", ...), or the tag for select/textarea
    autocomplete: str = ""
    filled: bool = False  # it holds a value before any call (a selected option, a value attribute): a call that
    # leaves it out submits that value


@dataclass
class FormControl:
    """A control of a form an agent could fill (input, select, textarea; not a button, not hidden), as the
    audit's form rules read it."""

    name: str  # its name attribute ("" : none, so it is no parameter)
    id: str
    type: str
    required: bool = False
    description: str | None = None  # its toolparamdescription (None: no such attribute)
    labelled: bool = False  # a <label> tied to it (for= or around it): Chrome reads no ARIA label
    issues: list[str] = field(default_factory=list)  # Chrome's issue codes on it (FormModelContext*)

    @property
    def what(self) -> str:
        return f"#{self.id}" if self.id else f"a {self.type} field"


@dataclass
class PageForm:
    """One form of a frame: its WebMCP attributes (a ``<form toolname>`` is a declarative tool), the controls an
    agent could fill and the fields the browser makes its parameters. Read once per frame (reader.py
    ``read_forms_of``): the tools' reading and the audit's form rules read this."""

    frame: str  # the URL of the frame that holds it
    toolname: str | None  # None: no toolname attribute, so no tool
    tooldescription: str | None
    autosubmit: bool = False
    id: str = ""  # its id, else its name attribute
    controls: list[FormControl] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)  # Chrome's issue codes on the form itself
    chrome: bool = False  # Chrome's issues were read for its frame: they are the findings
    selector: str = ""  # the form as a CSS selector (where a declarative tool was declared)
    fields: list[FormField] = field(default_factory=list)  # its named elements (and passwords): the tool's fields
    bounds: list[str] = field(default_factory=list)  # what was changed to bring it within bounds (bounds.py)

    @property
    def label(self) -> str:
        if self.toolname:
            return f"form tool {self.toolname}"
        if self.id:
            return f"form #{self.id}"
        names = sorted({c.name for c in self.controls if c.name})
        return f"a form with fields {', '.join(names[:4])}" if names else "a form"

    @property
    def tool_like(self) -> bool:
        """It carries WebMCP attributes: its author meant it as a tool."""
        return (
            self.tooldescription is not None or self.autosubmit or any(c.description is not None for c in self.controls)
        )


@dataclass
class Source:
    """Where a tool was registered: the script (URL, 1-based line and column) that called registerTool, or the
    selector of the <form toolname> that declares it."""

    url: str = ""  # the script's URL ("" when the stack named none: an eval, a script the page built)
    line: int | None = None
    column: int | None = None
    selector: str = ""  # a declarative tool's form, as a CSS selector

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in (("url", self.url), ("line", self.line), ("column", self.column),
                                  ("selector", self.selector)) if v not in ("", None)}  # fmt: skip

    def __str__(self) -> str:
        if self.selector:
            return self.selector
        where = self.url or "a script without a URL"
        return f"{where}:{self.line}:{self.column}" if self.line is not None else where


@dataclass
class Tool:
    name: str
    description: str
    input_schema: Any
    annotations: dict[str, Any] = field(default_factory=dict)  # one spelling (see the module's note)
    kind: str = "imperative"  # "imperative" (registerTool), "declarative" (<form toolname>), "unknown"
    fields: list[FormField] = field(default_factory=list)  # a declarative tool's form fields
    page_annotations: Any = None  # as the page passed them (None: the page passed none, or the shim did not see)
    # the browser built input_schema from the form's controls: the author wrote none of it
    schema_derived: bool = False
    frame_url: str = ""  # the document of the frame that lists it
    frame_name: str = ""  # that frame's name attribute ("" for the top page)
    source: Source | None = None  # where it was registered (None: the shim did not see the registration)
    bounds: list[str] = field(default_factory=list)  # what was changed to bring it within bounds (bounds.py)
    # who listed it ("native" or "polyfill"): the frame's ``path`` now; kept for ``Tool.path``'s one release
    _listed_by: str = field(default="native", init=False, repr=False, compare=False)

    @property
    def path(self) -> str:
        """The old name of its frame's ``path`` (who listed the tools), kept for one release with a warning."""
        warnings.warn(
            "Tool.path is deprecated: who listed the tools is its frame's path (webmcp.surface().frames[…].path)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self._listed_by

    @property
    def read_only(self) -> bool:
        return bool(self.annotations.get("readOnlyHint") or self.annotations.get("readOnly"))

    @property
    def untrusted_content(self) -> bool:
        return bool(self.annotations.get("untrustedContentHint") or self.annotations.get("untrustedContent"))

    @property
    def autosubmit(self) -> bool:
        return bool(self.annotations.get("autosubmit"))

    @property
    def waits_for_person(self) -> bool:
        """A form without toolautosubmit: a call fills it and waits for a person to submit it."""
        return self.kind == "declarative" and not self.autosubmit


@dataclass
class Refused:
    """A registration the page tried and the browser refused, with the browser's error."""

    name: Any  # as the page passed it
    error: str
    kind: str = "imperative"
    source: Source | None = None  # where the page tried to register it


@dataclass
class TimelineEvent:
    t_ms: float  # after the load event (negative: before it)
    type: str  # "register" or "unregister"
    name: str


@dataclass
class Frame:
    url: str
    origin: str
    main: bool = True
    same_origin: bool = True
    allow: str | None = None  # the <iframe allow> attribute (None for the top document)
    tools: list[Tool] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    events: list[TimelineEvent] = field(default_factory=list)
    error: str | None = None  # its tools could not be read
    tools_allowed: bool | None = None  # its permissions policy allows "tools" (None: the browser does not say)
    path: str = "native"  # who listed its tools: "native" (the browser's WebMCP) or "polyfill" (the shim's)

    @property
    def allows_tools(self) -> bool:
        return self.main or any(p.strip().split(" ")[0] == "tools" for p in (self.allow or "").split(";"))


@dataclass
class PageSurface:
    url: str
    frames: list[Frame] = field(default_factory=list)
    error: str | None = None  # the page could not be opened: no rule can judge it
    script_errors: list[str] = field(default_factory=list)  # uncaught exceptions of the page
    links: list[str] = field(default_factory=list)  # same-origin links, for the crawl
    load_ms: float | None = None  # from navigation start to the load event
    watched_ms: int = 0
    # when the setup steps (--step, --setup) began, in ms after the load event (None: none): a tool they bring
    # comes after them, not late
    setup_ms: float | None = None

    def tools(self) -> list[tuple[Frame, Tool]]:
        return [(f, t) for f in self.frames for t in f.tools]

    def tool_count(self) -> int:
        return sum(len(f.tools) for f in self.frames)
