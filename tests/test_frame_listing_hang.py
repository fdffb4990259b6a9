"""A frame whose own tool listing never answers is listed and called through DevTools.

Chromium now and then leaves a child frame's getTools() unanswered for good
(docs/browser.md). Which frame, and when, cannot be chosen, so the browser tests
here make Playwright's listing and calls in the items frame time out as the hang does;
everything else is real: the frames site, the DevTools WebMCP domain's registry,
its invocation, the shim's and the witness's logs.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import playwright.async_api._generated as async_api
import playwright.sync_api._generated as sync_api
import pytest
from eval_support import cli, in_thread, run_on_demo
from frames_server import CASES, FramesSite
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from webmcp_eval.agents.reference import ReferenceAgent
from webmcp_eval.audit.engine import AuditOptions, audit
from webmcp_eval.play.page.devtools_tools import DevToolsCallError, DevToolsTools, answer, find_frame_id, frame_path
from webmcp_eval.play.run.settings import RunSettings
from webmcp_eval.suite.loader import load_cases

HUNG = "/frame.html"  # the frame whose listing is made to hang


def _added(frame: str, name: str, tool_id: str, **more: Any) -> dict[str, Any]:
    return {"tools": [{"frameId": frame, "name": name, "toolId": tool_id, "description": "d", **more}]}


# ---- the bookkeeping, without a browser -------------------------------------------------------------


def test_devtools_registry_follows_additions_removals_and_answers() -> None:
    tools = DevToolsTools()
    tools.witness("toolsAdded", _added("F1", "lookup", "t1", annotations={"readOnly": True, "debugging": False}))
    tools.witness("toolsAdded", _added("F2", "other", "t2", inputSchema={"type": "object"}))
    assert tools.listing("F1") == [{"name": "lookup", "description": "d", "annotations": {"readOnly": True}}]
    assert tools.invoke_params("F1", "lookup", {"id": 1}) == {"frameId": "F1", "input": {"id": 1}, "toolId": "t1"}
    assert tools.invoke_params("F1", "gone", {}) == {"frameId": "F1", "input": {}, "toolName": "gone"}
    # a removal of an older registration of the same name leaves the newer one listed
    tools.witness("toolsRemoved", {"tools": [{"frameId": "F1", "name": "lookup", "toolId": "t0"}]})
    assert [t["name"] for t in tools.listing("F1")] == ["lookup"]
    tools.witness("toolsRemoved", {"tools": [{"frameId": "F1", "name": "lookup", "toolId": "t1"}]})
    assert tools.listing("F1") == [] and tools.listing("F3") == []
    tools.witness("toolResponded", {"invocationId": "i1", "status": "Completed", "output": {"status": "ok"}})
    assert answer(tools.responses["i1"]) == {"status": "ok"}


def test_an_invocation_that_failed_is_an_error_with_the_browsers_words() -> None:
    with pytest.raises(DevToolsCallError, match="boom"):
        answer({"status": "Error", "errorText": "boom\nat line 3"})
    with pytest.raises(DevToolsCallError, match="Canceled"):
        answer({"status": "Canceled"})


def test_a_frame_is_found_by_its_path_and_never_guessed() -> None:
    top = SimpleNamespace(name="", url="http://s/#x", parent_frame=None)
    child = SimpleNamespace(name="items", url="http://s/frame.html", parent_frame=top)
    assert frame_path(child) == [("", "http://s/"), ("items", "http://s/frame.html")]

    def node(fid: str, url: str, name: str = "", *children: dict[str, Any]) -> dict[str, Any]:
        return {"frame": {"id": fid, "url": url, **({"name": name} if name else {})}, "childFrames": list(children)}

    tree = node("T", "http://s/", "", node("A", "http://s/frame.html", "items"), node("B", "http://s/w.html"))
    assert find_frame_id(tree, frame_path(child)) == "A"
    assert find_frame_id(tree, [("", "http://s/"), ("", "http://s/none.html")]) is None
    twins = node(
        "T", "http://s/", "", node("A", "http://s/frame.html", "items"), node("C", "http://s/frame.html", "items")
    )
    assert find_frame_id(twins, frame_path(child)) is None  # two frames fit: no guess


# ---- a trial: the runner's tool host ------------------------------------------------------------------


@pytest.fixture
def hung_async_listing(monkeypatch: pytest.MonkeyPatch) -> None:
    original = async_api.WebMCP.tools

    async def tools(self: Any, *, timeout: float | None = None) -> Any:
        if self._impl_obj._frame.url.split("?")[0].endswith(HUNG):
            raise PlaywrightTimeoutError(f"WebMCP.tools: Timeout {timeout}ms exceeded.")
        return await original(self, timeout=timeout)

    async def call_tool(self: Any, name: str, input: Any, *, timeout: float | None = None) -> Any:
        if self._impl_obj._frame.url.split("?")[0].endswith(HUNG):
            raise PlaywrightTimeoutError(f"WebMCP.callTool: Timeout {timeout}ms exceeded.")
        return await original_call(self, name, input, timeout=timeout)

    original_call = async_api.WebMCP.call_tool
    monkeypatch.setattr(async_api.WebMCP, "tools", tools)
    monkeypatch.setattr(async_api.WebMCP, "call_tool", call_tool)


@pytest.mark.browser
def test_a_trial_lists_and_calls_a_hung_frames_tool_through_devtools(
    hung_async_listing: None, frames: FramesSite, tmp_path: Path
) -> None:
    loaded, problems = load_cases([CASES])
    assert not problems, problems
    case = next(lc for lc in loaded if lc.case.id == "FRAMES-03")
    options = RunSettings(
        out_root=tmp_path, run_id="hung", base_url=frames.url, site_config=frames.config(), agent_factory=ReferenceAgent
    )
    (trace,) = in_thread(asyncio.run, run_on_demo([case], options)).traces
    assert trace.verdict == "passed", trace.verdict_reason
    lookup = trace.calls[0]
    assert (lookup.tool, lookup.via, lookup.error) == ("lookup_item", "devtools", None)
    assert lookup.result == {"status": "ok", "data": {"id": "item-2"}}
    assert lookup.frame is not None and lookup.frame.url == frames.url + "frame.html"  # the shim logged it there
    assert trace.calls[1].via is None  # the widget's listing answered: Playwright's path
    invoked = [e for e in trace.witness.events if e.event == "toolInvoked" and e.toolName == "lookup_item"]
    assert invoked and invoked[0].top is False
    assert trace.witness.disagreements == []
    assert "via" not in trace.calls[1].model_dump(mode="json")  # absent where the usual path was taken


@pytest.mark.browser
def test_tools_lists_a_hung_frames_tools_from_devtools(hung_async_listing: None, frames: FramesSite) -> None:
    listed = cli("tools", frames.url, "--json", "--settle-ms", "500")
    assert listed.returncode == 0, listed.stderr
    by_url = {f["url"]: f for f in json.loads(listed.stdout)["routes"][0]["frames"]}
    same = by_url[frames.url + "frame.html"]
    assert same["error"] is None
    assert [(t["name"], t["kind"], t["annotations"]) for t in same["tools"]] == [
        ("lookup_item", "imperative", {"readOnlyHint": True})
    ]


@pytest.mark.browser
def test_the_audit_reads_and_smoke_calls_a_hung_frames_tool_through_devtools(
    hung_async_listing: None, frames: FramesSite
) -> None:
    report = in_thread(asyncio.run, audit(AuditOptions(url=frames.url, watch_ms=300, smoke=True)))
    surface = report.pages[0].surface
    same = next(f for f in surface.frames if f.url == frames.url + "frame.html")
    (lookup,) = same.tools
    assert lookup.name == "lookup_item" and lookup.annotations == {"readOnlyHint": True}  # one spelling
    smoked = report.pages[0].calls[f"{frames.url}frame.html lookup_item"]
    assert smoked and not any(o.timed_out for o in smoked)
    assert all(o.error is None for o in smoked if o.input.valid)


# ---- the pytest plugin's webmcp fixture -------------------------------------------------------------


@pytest.fixture
def hung_sync_listing(monkeypatch: pytest.MonkeyPatch) -> None:
    original = sync_api.WebMCP.tools

    def tools(self: Any, *, timeout: float | None = None) -> Any:
        if self._impl_obj._frame.url.split("?")[0].endswith(HUNG):
            raise PlaywrightTimeoutError(f"WebMCP.tools: Timeout {timeout}ms exceeded.")
        return original(self, timeout=timeout)

    def call_tool(self: Any, name: str, input: Any, *, timeout: float | None = None) -> Any:
        if self._impl_obj._frame.url.split("?")[0].endswith(HUNG):
            raise PlaywrightTimeoutError(f"WebMCP.callTool: Timeout {timeout}ms exceeded.")
        return original_call(self, name, input, timeout=timeout)

    original_call = sync_api.WebMCP.call_tool
    monkeypatch.setattr(sync_api.WebMCP, "tools", tools)
    monkeypatch.setattr(sync_api.WebMCP, "call_tool", call_tool)


@pytest.mark.browser
def test_the_webmcp_fixture_lists_and_calls_a_hung_frames_tool_through_devtools(
    hung_sync_listing: None, page: Any, webmcp: Any, frames: FramesSite
) -> None:
    page.goto(frames.url)
    tools = {t.name: t for t in webmcp.wait_for_tools("find_items", "lookup_item")}
    assert tools["lookup_item"].frame_url == frames.url + "frame.html"
    assert tools["lookup_item"].read_only and tools["lookup_item"].description == "Look an item up by its id."
    assert list(webmcp._surface_engine.hung._frame_ids.values()), "the items frame was read through DevTools"
    assert webmcp.call("lookup_item", {"id": "item-1"}) == {"status": "ok", "data": {"id": "item-1"}}
    assert webmcp.call("find_items", {"q": "mug"})["status"] == "ok"  # the top page: Playwright's path
    assert [c.tool for c in webmcp.calls()] == ["lookup_item", "find_items"]
    # the audit's smoke calls in that frame go through DevTools too: answered, judged, no time-out
    findings = webmcp.smoke("lookup_item", smoke_timeout={"timeout_ms": 5000})
    assert [f.rule for f in findings if f.rule.startswith("smoke-timeout")] == []
    assert len(webmcp.calls()) > 2 and all(c.error is None for c in webmcp.calls() if c.args.get("id") == "item-1")
