"""What a page registers: its tools per route and per frame, read from the live page.

``webmcp-eval tools URL`` lists, per route, every tool with its description,
input schema, annotations (``readOnlyHint``, ``untrustedContentHint``,
``autosubmit``, …), whether it is imperative (``registerTool``) or
declarative (``<form toolname>``), and whether the browser's native WebMCP or
the shim's polyfill answered; the tools of each frame (``<iframe>``) of the
page are listed apart, with the frame's origin and ``allow`` attribute, and so
are the registrations the browser refused, with its error. ``read_catalog``
builds ``cases/catalog.json`` from the same reading: ``validate`` checks case
files against that file without a browser, and a test compares it with what
the live demo site registers, so the two cannot drift.

The reading itself is the page surface engine's (webmcp_eval/play/page/surface/discover.py);
this module is its views: the text and JSON listings.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from webmcp_eval.play.page.surface.discover import RouteTools, list_tools, read_catalog
from webmcp_eval.play.page.surface.model import Frame, Refused, Tool
from webmcp_eval.report.sanitise import json_text, terminal

__all__ = ["DEMO_ROUTES", "DISCOVERY_SETTLE_MS", "RouteTools", "list_tools", "read_catalog_sync", "tools_json"]

# Reading a site once (tools, init) waits longer for quiet than a trial's default: tools registered after a
# fetch or a timer are common, and a tool missed here is missing from the listing and from init's suite.
DISCOVERY_SETTLE_MS = 1000

# route pattern -> a concrete path of the demo site that shows it
DEMO_ROUTES = {
    "/events": "/events",
    "/events/{id}": "/events/evt-webmcp-intro",
    "/events/{id}/register": "/events/evt-webmcp-intro/register",
    "/registrations": "/registrations",
}


def _tool_json(t: Tool) -> dict[str, Any]:
    return {
        "name": t.name,
        "description": t.description,
        "input_schema": t.input_schema,
        "annotations": t.annotations,
        "kind": t.kind,
        "schema_derived": t.schema_derived,
        "source": t.source.as_dict() if t.source else None,  # where it was registered (script:line:col, or form)
        "bounds": t.bounds,  # what the reader changed to bring it within bounds (play/page/surface/bounds.py)
    }


def _refused_json(r: Refused) -> dict[str, Any]:
    return {"name": r.name, "error": r.error, "kind": r.kind}


def _frame_json(f: Frame) -> dict[str, Any]:
    return {
        "url": f.url,
        "origin": f.origin,
        "top": f.main,
        "same_origin": f.same_origin,
        "allow": f.allow,
        "tools_allowed": f.tools_allowed,
        "tools": [_tool_json(t) for t in f.tools],
        "refused": [_refused_json(r) for r in f.refused],
        "error": f.error,
    }


def _route_json(r: RouteTools) -> dict[str, Any]:
    return {
        "route": r.route,
        "url": r.url,
        "path": r.path,
        "tools": [_tool_json(t) for t in r.tools],
        "error": r.error,
        "refused": [_refused_json(x) for x in r.refused],
        "frames": [_frame_json(f) for f in r.child_frames],
    }


def tools_json(listing: list[RouteTools]) -> str:
    # the site's control characters as JSON escapes: the same text to a parser, inert on a terminal
    return json_text(json.dumps({"routes": [_route_json(r) for r in listing]}, indent=2, ensure_ascii=False)) + "\n"


def tools_text(listing: list[RouteTools]) -> str:
    """For people: per route each tool, its kind, hints, description and input; then each frame's."""
    lines: list[str] = []
    for r in listing:
        if r.error:
            lines.append(f"{r.url}: could not open the page: {r.error}")
            continue
        children = r.child_frames
        in_frames = sum(len(f.tools) for f in children)
        more = f"; {in_frames} more in {len(children)} frame(s), listed apart below" if children else ""
        lines.append(f"{r.url} ({r.path} WebMCP): {len(r.tools)} tool(s){more}")
        if not r.tools:
            lines.append("  no tools registered within the wait (try --settle-ms for tools that come late)")
        lines += _tool_lines(r.tools, r.refused, "  ")
        for f in children:
            lines.append(f"  frame {f.url} ({_frame_terms(f)}): {len(f.tools)} tool(s)")
            if f.error and not f.refused:
                lines.append(f"      could not list its tools: {f.error}")
            lines += _tool_lines(f.tools, f.refused, "    ")
    # each line one line: a line break in the site's text (a description's "\n::error::...", which a CI log reads as
    # an annotation of its own) is shown as \n, as every control character is
    return "\n".join(terminal(line) for line in lines) + "\n"


def _frame_terms(frame: Frame) -> str:
    origin = "same origin" if frame.same_origin else f"cross-origin: {frame.origin}" if frame.origin else "cross-origin"
    allow = f'allow="{frame.allow}"' if frame.allow is not None else "no allow attribute"
    policy = "; its permissions policy does not allow tools" if frame.tools_allowed is False else ""
    return f"{origin}, {allow}{policy}"


def _tool_lines(tools: list[Tool], refused: list[Refused], indent: str) -> list[str]:
    lines = []
    for t in tools:
        hints = [k for k, v in sorted(t.annotations.items()) if v is True]
        lines.append(f"{indent}{t.name}  [{t.kind}{', ' + ', '.join(hints) if hints else ''}]")
        if t.source:
            lines.append(f"{indent}    registered at {t.source}")
        if t.description:
            lines.append(f"{indent}    {t.description}")
        lines.append(f"{indent}    input: {json.dumps(t.input_schema, ensure_ascii=False, sort_keys=True)}")
        lines += [f"{indent}    bounded: {note}" for note in t.bounds]
    for x in refused:
        name = x.name if isinstance(x.name, str) else json.dumps(x.name)
        lines.append(f"{indent}REFUSED {name}  [{x.kind}]: the browser refused its registration: {x.error}")
    return lines


def read_catalog_sync(base_url: str, routes: dict[str, str] | None = None) -> dict[str, Any]:
    return asyncio.run(read_catalog(base_url, routes or DEMO_ROUTES))
