"""Each frame's tools as the DevTools WebMCP domain reports them, and calls through that domain.

Chromium 156 now and then never answers ``getTools()`` in a child frame (docs/browser.md,
"A frame whose tool listing never answers"): the frame's tools are registered, DevTools
lists and invokes them, but the page-side listing, and with it Playwright's
``frame.webmcp``, waits for good. The tool host and the pytest plugin then list and call
that frame's tools here: still the browser's own registry and its own invocation, never
the shim's copy.

The bookkeeping is plain data fed with the domain's events; sending is the caller's (the
runner's CDP session is async, the plugin's sync).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class DevToolsCallError(Exception):
    """The tool's invocation through DevTools ended in an error, or was cancelled."""


@dataclass
class DevToolsTools:
    """Each frame's live tools by DevTools frame id, and the answers of invocations, from the domain's events."""

    by_frame: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    responses: dict[str, dict[str, Any]] = field(default_factory=dict)

    def witness(self, event: str, params: dict[str, Any]) -> None:
        """Feed one WebMCP domain event (``toolsAdded``, ``toolsRemoved``, ``toolResponded``, ...)."""
        if event == "toolsAdded":
            for tool in params.get("tools") or []:
                self.by_frame.setdefault(tool.get("frameId", ""), {})[tool.get("name", "")] = tool
        elif event == "toolsRemoved":
            for tool in params.get("tools") or []:
                frame = self.by_frame.get(tool.get("frameId", ""), {})
                if frame.get(tool.get("name", ""), {}).get("toolId") == tool.get("toolId"):
                    frame.pop(tool.get("name", ""))
        elif event == "toolResponded" and params.get("invocationId"):
            self.responses[params["invocationId"]] = params

    def listing(self, frame_id: str) -> list[dict[str, Any]]:
        """The frame's tools in the shape of Playwright's ``frame.webmcp.tools()``."""
        return [_as_listed(tool) for tool in self.by_frame.get(frame_id, {}).values()]

    def invoke_params(self, frame_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """``WebMCP.invokeTool``'s parameters: the registration DevTools listed, else the name."""
        tool_id = self.by_frame.get(frame_id, {}).get(name, {}).get("toolId")
        return {"frameId": frame_id, "input": args, **({"toolId": tool_id} if tool_id else {"toolName": name})}


def _as_listed(tool: dict[str, Any]) -> dict[str, Any]:
    annotations = {k: v for k, v in (tool.get("annotations") or {}).items() if v}
    return {
        "name": tool.get("name", ""),
        "description": tool.get("description") or "",
        **({"inputSchema": tool["inputSchema"]} if tool.get("inputSchema") is not None else {}),
        **({"annotations": annotations} if annotations else {}),
    }


def answer(response: dict[str, Any]) -> Any:
    """What the invocation returned, or DevToolsCallError with the browser's words."""
    if response.get("status") == "Completed":
        return response.get("output")
    why = response.get("errorText") or (response.get("exception") or {}).get("description") or response.get("status")
    raise DevToolsCallError(str(why).splitlines()[0] if why else "the invocation failed")


def frame_path(frame: Any) -> list[tuple[str, str]]:
    """(name, URL without fragment) of each frame from the top page down to ``frame`` (a Playwright Frame)."""
    path = []
    while frame is not None:
        path.append((frame.name or "", frame.url.split("#", 1)[0]))
        frame = frame.parent_frame
    return path[::-1]


def find_frame_id(tree: dict[str, Any], path: list[tuple[str, str]]) -> str | None:
    """The DevTools id of the frame at ``path`` in ``Page.getFrameTree``'s tree; None when it is not
    there or two frames fit (same name and URL under one parent): never a guess."""
    nodes = [tree]
    found: dict[str, Any] | None = None
    for name, url in path:
        fits = [n for n in nodes if n["frame"].get("name", "") == name and n["frame"].get("url", "") == url]
        if len(fits) != 1:
            return None
        found = fits[0]
        nodes = found.get("childFrames") or []
    return found["frame"]["id"] if found else None
