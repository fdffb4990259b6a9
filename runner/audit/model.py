"""The surface an audit judges, and what it finds.

A site's *surface* is what its pages offer agents: per page, per frame, each
tool (name, description, input schema, annotations, imperative or
declarative), the declarative forms and their fields, the registrations the
browser refused, and the timeline of registrations. Rules read this model and
nothing else, so they are plain functions that need no browser.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "note"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "note")


@dataclass
class FormField:
    name: str
    type: str  # the input's type ("password", "text", ...), or the tag for select/textarea
    autocomplete: str = ""


@dataclass
class Tool:
    name: str
    description: str
    input_schema: Any
    annotations: dict[str, Any] = field(default_factory=dict)
    kind: str = "imperative"  # "imperative" (registerTool) or "declarative" (<form toolname>)
    fields: list[FormField] = field(default_factory=list)  # a declarative tool's form fields

    @property
    def read_only(self) -> bool:
        """Either spelling of the hint: the native listing says readOnly, pages write readOnlyHint."""
        return bool(self.annotations.get("readOnly") or self.annotations.get("readOnlyHint"))

    @property
    def autosubmit(self) -> bool:
        return bool(self.annotations.get("autosubmit"))


@dataclass
class Refused:
    """A registration the page tried and the browser refused, with the browser's error."""

    name: str
    error: str
    kind: str = "imperative"


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

    def tools(self) -> list[tuple[Frame, Tool]]:
        return [(f, t) for f in self.frames for t in f.tools]

    def tool_count(self) -> int:
        return sum(len(f.tools) for f in self.frames)


@dataclass
class Finding:
    rule: str
    severity: Severity
    message: str
    page: str = ""
    frame: str = ""  # the frame's URL ("" when the finding is about the whole page)
    tool: str | None = None
    pointer: str = ""  # a JSON pointer into the tool's declaration (/description, /inputSchema/properties/q)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
