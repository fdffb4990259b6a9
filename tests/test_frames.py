"""Frames are first-class: a frame's document is never a route of the top page.

The frames test site (tests/frames_site/) has a top page with its own tools,
a same-origin frame with allow="tools" that registers lookup_item, and a
widget from another origin, once with allow="tools" and once without (the
browser refuses that registration). A top-page case whose agent does
everything right must pass; a frame that keeps its tool after its own route
change must fail the stale check, named by its frame.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from eval_support import cli, in_thread, run_on_demo
from frames_server import CASES, FramesSite

from webmcp_eval.agents.reference import ReferenceAgent
from webmcp_eval.play.run.settings import RunSettings
from webmcp_eval.report.html import render_html
from webmcp_eval.suite.case import Case
from webmcp_eval.suite.loader import LoadedCase, load_cases
from webmcp_eval.trace import Trace

pytestmark = pytest.mark.browser


def frames_cases() -> dict[str, LoadedCase]:
    loaded, problems = load_cases([CASES])
    assert not problems, problems
    return {lc.case.id: lc for lc in loaded}


def _variant(case_id: str, new_id: str, **changes: Any) -> LoadedCase:
    original = frames_cases()[case_id]
    data = {**original.case.model_dump(mode="json", exclude_defaults=True), "id": new_id, **changes}
    return LoadedCase(Case.model_validate(data), original.file, original.lines)


def play_frames(tmp_path: Path, site: FramesSite, cases: list[LoadedCase], **kw: Any) -> dict[str, Trace]:
    options = RunSettings(
        out_root=tmp_path,
        run_id="frames",
        base_url=site.url,
        site_config=site.config(),
        agent_factory=ReferenceAgent,
        **kw,
    )
    return {t.case_id: t for t in in_thread(asyncio.run, run_on_demo(cases, options)).traces}


@pytest.fixture(scope="module")
def frames_run(tmp_path_factory: pytest.TempPathFactory, frames: FramesSite) -> dict[str, Trace]:
    """The site's own cases and one that must fail: the items frame keeps its tool after its route change."""
    stale = frames_cases()["FRAMES-02"].case.model_dump(mode="json", exclude_defaults=True)["steps"]
    stale[0]["plan"].append({"call": "lookup_item", "args": {"id": "item-1"}})  # the frame's stale handler, called
    cases = [
        *frames_cases().values(),
        _variant("FRAMES-02", "FRAMES-12", start_route="/?break=frame-stale", steps=stale),
    ]
    # four trials in parallel: each mostly waits for its frames' tools; no test here looks at a screenshot
    return play_frames(tmp_path_factory.mktemp("frames"), frames, cases, workers=4, screenshots="off")


def _status(trace: Trace, assertion_id: str) -> tuple[str, str]:
    found = next(a for a in trace.assertions if a.id == assertion_id)
    return found.status, found.why


def test_a_top_page_case_passes_beside_frames_that_register_tools(frames_run, frames):
    trace = frames_run["FRAMES-01"]
    assert trace.verdict == "passed", trace.verdict_reason
    assert _status(trace, "calls.stale")[0] == "passed"
    assert trace.steps[0].stale_registrations == []
    assert sorted(trace.steps[0].catalog[:4]) == ["find_items", "open_item_details", "read_reviews", "request_quote"]
    assert sorted(trace.steps[0].catalog[4:]) == ["lookup_item", "widget_status"]  # the frames' tools, after
    # every registration says its frame: the top page's, the same-origin frame's, the widget's
    refused = {(r.document, r.instance) for r in trace.registrations if r.type == "register_error"}
    registered = {
        r.tool_name: r for r in trace.registrations if r.type == "register" and (r.document, r.instance) not in refused
    }
    top = registered["find_items"].frame
    assert top is not None and (top.top, top.same_origin, top.url) == (True, True, frames.url)
    item = registered["lookup_item"]
    assert item.route == "/frame.html" and item.frame is not None
    assert (item.frame.top, item.frame.same_origin, item.frame.allow, item.frame.origin) == (
        False,
        True,
        "tools",
        frames.url.rstrip("/"),
    )
    widget = registered["widget_status"].frame
    assert widget is not None and (widget.top, widget.same_origin, widget.origin) == (False, False, frames.other_origin)
    assert widget.allow == "tools"  # read from the parent: the cross-origin frame cannot read its own element
    assert widget.tools_allowed is True


def test_registrations_the_browser_refused_are_logged_with_its_error_and_their_frame(frames_run, frames):
    refused = {
        (r.tool_name, r.frame.same_origin if r.frame else None): r
        for r in frames_run["FRAMES-01"].registrations
        if r.type == "register_error"
    }
    assert set(refused) == {("broken_tool", True), ("widget_status", False)}
    assert "description" in (refused["broken_tool", True].error or "")
    denied = refused["widget_status", False]
    assert "NotAllowedError" in (denied.error or "") and "permissions policy" in (denied.error or "")
    assert denied.frame is not None and denied.frame.url == frames.other_origin + "/widget.html?denied"
    assert denied.frame.allow is None and denied.frame.tools_allowed is False  # no allow attribute on its element


def test_a_frames_own_route_change_is_judged_against_the_frames_route(frames_run, frames):
    fine = frames_run["FRAMES-02"]
    assert fine.verdict == "passed", fine.verdict_reason
    assert fine.steps[0].route_after == "/"  # the top page never moved

    stale = frames_run["FRAMES-12"]
    status, why = _status(stale, "calls.stale")
    assert status == "failed"
    assert why == (
        f"after step 0 on /: lookup_item (registered on /frame.html in the frame "
        f"{frames.url}frame.html?break=stale) is still registered; "
        f"call #1 lookup_item on /details.html in the frame {frames.url}details.html "
        "ran a handler registered on /frame.html"
    ), why
    assert [r.name for r in stale.steps[0].stale_registrations] == ["lookup_item"]


def test_a_frames_tools_are_called_in_their_frame_and_each_call_says_which(frames_run, frames, tmp_path):
    trace = frames_run["FRAMES-03"]
    assert trace.verdict == "passed", trace.verdict_reason
    item, widget = trace.calls
    assert item.route == "/" and item.frame is not None and item.frame.url == frames.url + "frame.html"
    assert widget.frame is not None and (widget.frame.origin, widget.frame.same_origin) == (frames.other_origin, False)
    assert _status(trace, "calls.stale")[0] == "passed"
    # DevTools saw the same-origin frame's call, its frame named. The cross-site widget runs in its own process
    # where the browser isolates sites (then out of the page session's view: unwitnessed), else in the page's.
    assert _status(trace, "calls.witness")[0] == "passed" and trace.witness.disagreements == []
    invoked = [(e.toolName, e.top) for e in trace.witness.events if e.event == "toolInvoked"]
    assert invoked[0] == ("lookup_item", False)
    first = next(e for e in trace.witness.events if e.event == "toolInvoked")
    assert first.frame_url == frames.url + "frame.html"
    unseen = [f"widget_status {{}} in the frame {frames.other_origin}/widget.html"]
    assert (invoked[1:], trace.witness.unwitnessed) in [([], unseen), ([("widget_status", False)], [])]
    html = render_html([trace], report_dir=tmp_path)
    assert f"/ · in the frame {frames.url}frame.html · instance" in html


@pytest.fixture(scope="module")
def frames_listing(frames: FramesSite, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`tools` (JSON and text) and `init` on the frames page, as a user runs them."""
    here = tmp_path_factory.mktemp("frames-init")
    # the page and its frames (loaded by the load event) register on no timer: the evidence wait reads them, and
    # the quiet window after it needs no more than 300 ms
    quiet = ("--settle-ms", "300")
    listed = cli("tools", frames.url, "--json", *quiet)
    assert listed.returncode == 0, listed.stderr
    return {
        "json": json.loads(listed.stdout)["routes"][0],
        "text": cli("tools", frames.url, *quiet),
        "init": cli("init", "--base-url", frames.url, *quiet, "-o", "frames-suite", cwd=here),
        "folder": here / "frames-suite",
    }


def test_tools_lists_each_frames_tools_apart_and_keeps_the_top_pages_annotations_and_kinds(frames_listing, frames):
    page = frames_listing["json"]
    tools = {t["name"]: t for t in page["tools"]}
    assert set(tools) == {"find_items", "read_reviews", "open_item_details", "request_quote"}  # no frame's tool
    assert tools["find_items"]["annotations"] == {"readOnlyHint": True}
    assert tools["read_reviews"]["annotations"] == {"readOnlyHint": True, "untrustedContentHint": True}
    assert tools["open_item_details"]["annotations"] == {} and tools["open_item_details"]["kind"] == "imperative"
    assert tools["request_quote"]["kind"] == "declarative" and tools["request_quote"]["annotations"] == {
        "autosubmit": True
    }
    by_url = {f["url"]: f for f in page["frames"]}
    assert set(by_url) == {
        frames.url + "frame.html",
        frames.other_origin + "/widget.html",
        frames.other_origin + "/widget.html?denied",
    }
    same = by_url[frames.url + "frame.html"]
    assert (same["same_origin"], same["allow"], same["tools_allowed"]) == (True, "tools", True)
    assert [(t["name"], t["kind"], t["annotations"]) for t in same["tools"]] == [
        ("lookup_item", "imperative", {"readOnlyHint": True})
    ]
    widget = by_url[frames.other_origin + "/widget.html"]
    assert (widget["same_origin"], widget["allow"], widget["origin"]) == (False, "tools", frames.other_origin)
    assert [t["name"] for t in widget["tools"]] == ["widget_status"]


def test_tools_shows_the_registrations_the_browser_refused_with_its_error(frames_listing, frames):
    page = frames_listing["json"]
    assert [(x["name"], x["kind"]) for x in page["refused"]] == [("broken_tool", "imperative")]
    assert "'description'" in page["refused"][0]["error"]
    denied = next(f for f in page["frames"] if f["url"].endswith("?denied"))
    assert (denied["tools"], denied["allow"], denied["tools_allowed"]) == ([], None, False)
    assert [x["name"] for x in denied["refused"]] == ["widget_status"]
    assert "NotAllowedError" in denied["refused"][0]["error"]

    text = frames_listing["text"]
    assert text.returncode == 0, text.stderr
    assert f"{frames.url} (native WebMCP): 4 tool(s); 2 more in 3 frame(s), listed apart below" in text.stdout
    assert "  request_quote  [declarative, autosubmit]" in text.stdout
    assert "  REFUSED broken_tool  [imperative]: the browser refused its registration: TypeError:" in text.stdout
    assert f'  frame {frames.url}frame.html (same origin, allow="tools"): 1 tool(s)\n    lookup_item  [' in text.stdout
    assert (
        f"  frame {frames.other_origin}/widget.html?denied (cross-origin: {frames.other_origin}, no allow "
        "attribute; its permissions policy does not allow tools): 0 tool(s)\n    REFUSED widget_status"
    ) in text.stdout


def test_init_writes_the_top_pages_tools_and_lists_each_frames_apart(frames_listing, frames):
    out = frames_listing["init"]
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"read {frames.url}: 4 tool(s) (native WebMCP)" in out.stdout
    assert "  refused by the browser: broken_tool: TypeError:" in out.stdout
    assert f"  frame {frames.url}frame.html (same origin, allow='tools'): 1 tool(s): lookup_item" in out.stdout
    catalog = json.loads((frames_listing["folder"] / "catalog.json").read_text(encoding="utf-8"))
    # an agent is offered the frames' tools too (called in their frame): the catalog and starters have them
    assert list(catalog["routes"]["/"])[4:] == ["lookup_item", "widget_status"]
    assert set(catalog["routes"]["/"]) >= {"find_items", "read_reviews", "open_item_details", "request_quote"}
    # the top page's tools are called by init's probe (each a positive starter, a boundary one beside each that may
    # write); a frame's read-only tools get their starter from the schema
    assert "8 starter case(s) (6 positive: call their tool, 2 boundary: do not call theirs)" in out.stdout
    assert "lookup_item.yaml: lookup_item: called with valid arguments" in out.stdout
    assert "passes 0 of 6 positive starter(s) (goal 0)" in out.stdout


def test_validate_live_checks_calls_of_a_frames_tools_against_what_the_frames_register(frames):
    out = cli("validate", str(CASES), "--live", frames.url)
    assert out.returncode == 0, out.stdout + out.stderr  # FRAMES-03 calls lookup_item and widget_status, in frames
    assert "3 case(s) valid" in out.stdout
