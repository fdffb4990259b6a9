"""The surface an audit judges, and what it finds.

A site's *surface* is what its pages offer agents: per page, per frame, each
tool (name, description, input schema, annotations, imperative or
declarative), the declarative forms and their fields, the registrations the
browser refused, and the timeline of registrations. That model is the page
surface engine's (webmcp_eval/play/page/surface/model.py), imported here under the
same names; rules read it and nothing else, so they are plain functions that
need no browser.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

# The surface itself is the page surface engine's model: one class per concept for every front end.
from webmcp_eval.play.page.surface.model import FormField, Frame, PageSurface, Refused, Source, TimelineEvent, Tool

__all__ = [
    "SEVERITIES",
    "Finding",
    "FormField",
    "Frame",
    "PageSurface",
    "Refused",
    "Severity",
    "Source",
    "TimelineEvent",
    "Tool",
]

Severity = Literal["error", "warning", "note"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "note")


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
