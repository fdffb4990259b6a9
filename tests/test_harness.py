"""The MCP bridge and external harnesses: the MCP SDK's own client against the live demo page.

- `webmcp-eval mcp` (stdio) lets the SDK's client list and call the page's tools; every call is in the shim log.
- The bridge over streamable HTTP re-announces the tool list when the page's catalog changes, and a call to a
  tool the page no longer offers is refused and recorded, not answered around the page.
- A scripted harness (tests/fake_harness.py, the SDK's client) run as the trial's agent passes SEL-01; the same
  harness misbehaving fails the right case: it writes (SEL-01), submits (CONF-01), calls a tool that is not in
  the catalog (SEL-02), calls the stale route-bound form (STALE-01).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from tests.eval_support import in_thread, play  # noqa: E402
from webmcp_eval.agents.harness import HarnessConfigError, make_harness_factory  # noqa: E402
from webmcp_eval.agents.mcp_bridge import PageBridge  # noqa: E402
from webmcp_eval.play.browser.session import BrowserSession  # noqa: E402

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parent.parent
HARNESS = f"{sys.executable} {ROOT / 'tests' / 'fake_harness.py'}"


def _text(result) -> dict:
    return json.loads("".join(c.text for c in result.content))


def test_the_mcp_command_serves_the_page_over_stdio_and_every_call_is_in_the_shim_log(site, tmp_path):
    log = tmp_path / "bridge-log.json"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "webmcp_eval.cli", "mcp", "--base-url", site.url, "--route", "/events", "--log", str(log)],
        cwd=str(ROOT),
    )

    async def use() -> tuple[list[str], dict]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            found = _text(await session.call_tool("search_events", {"city": "taipei", "price": "free"}))
            return names, found

    names, found = in_thread(asyncio.run, use())
    assert {"search_events", "get_event_details", "save_event"} <= set(names)
    assert found["status"] == "ok" and found["data"]["count"] >= 1
    deadline = time.monotonic() + 30  # the command writes its log as it closes
    while not log.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    data = json.loads(log.read_text(encoding="utf-8"))
    shim_calls = [e for e in data["shim_events"] if e["type"] == "call"]
    assert [(e["name"], e["args"]) for e in shim_calls] == [("search_events", {"city": "taipei", "price": "free"})]
    assert data["calls"][0]["tool"] == "search_events" and not data["calls"][0]["refused"]
    assert not data["witness"]["disagreements"]


def test_the_bridge_reannounces_a_changed_catalog_and_refuses_a_withdrawn_tool(site):
    async def use() -> dict:
        async with BrowserSession() as session:
            tp = await session.open_trial("bridge", site.url, world_cookie=None, clock_start=time.monotonic())
            await tp.page.goto("/events")
            await tp.host.wait_for_tools()
            bridge = PageBridge(tp.host)
            changed = asyncio.Event()

            async def on_message(message) -> None:
                if getattr(getattr(message, "root", None), "method", "") == "notifications/tools/list_changed":
                    changed.set()

            async with (
                bridge.serve_http() as url,
                streamable_http_client(url) as (read, write, _),
                ClientSession(read, write, message_handler=on_message) as client,
            ):
                await client.initialize()
                before = [t.name for t in (await client.list_tools()).tools]
                await tp.page.goto("/registrations")  # the user moves on: the page withdraws and registers
                await asyncio.wait_for(changed.wait(), timeout=30)
                after = [t.name for t in (await client.list_tools()).tools]
                stale = await client.call_tool("search_events", {"city": "taipei"})
            calls = [c.model_dump() for c in tp.host.calls]
            await tp.close()
            return {"before": before, "after": after, "stale": stale, "calls": calls}

    got = in_thread(asyncio.run, use())
    assert "search_events" in got["before"] and "list_registrations" in got["after"]
    assert "search_events" not in got["after"]
    assert got["stale"].isError and "not in the active catalog" in got["stale"].content[0].text
    assert got["calls"][-1]["tool"] == "search_events" and got["calls"][-1]["refused"]


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    return play(
        tmp_path_factory.mktemp("harness-good"),
        ("SEL-01", "CONF-01"),
        agent_factory=make_harness_factory(f"{HARNESS} {{prompt}} {{mcp_config}}"),
        workers=2,  # a harness step is a process of its own: two overlap their start-ups
    )


@pytest.fixture(scope="module")
def bad(tmp_path_factory):
    factory = make_harness_factory(f"{HARNESS} --bad writes,submits,made_up,stale {{prompt}} {{mcp_config}}")
    ids = ("SEL-01", "CONF-01", "SEL-02", "STALE-01")
    # two workers, as above; no test here looks at a screenshot, so the trials failing on purpose take none
    traces = play(tmp_path_factory.mktemp("harness-bad"), ids, agent_factory=factory, workers=2, screenshots="off")
    return {t.case_id: t for t in traces}


def test_a_harness_through_the_bridge_passes_sel01_and_conf01_with_every_call_witnessed(good):
    for trace in good:
        assert trace.verdict == "passed", trace.verdict_reason
        assert trace.evidence_kind == "agent" and trace.agent == "harness"
        assert trace.harness["version"] == "fake-harness 1.2.3" and trace.harness["name"] == "fake_harness.py"
        assert trace.model == "fake_harness.py fake-harness 1.2.3"
        assert trace.calls and all(c.instance is not None for c in trace.calls)  # the shim saw each call
        assert trace.witness.available and not trace.witness.disagreements
        assert trace.agent_log["steps"][0]["exit_code"] == 0


def _failed(trace) -> set[str]:
    return {a.id for a in trace.assertions if a.status == "failed"}


def test_a_harness_that_writes_when_it_should_only_search_fails_sel01(bad):
    trace = bad["SEL-01"]
    assert trace.verdict == "failed"
    assert {"calls.forbidden[0]", "network.writes[total]"} <= _failed(trace), _failed(trace)
    assert [m.method for m in trace.network.writes] == ["POST"]


def test_a_harness_that_submits_fails_conf01(bad):
    trace = bad["CONF-01"]
    assert trace.verdict == "failed"
    assert {"calls.catalog", "calls.exact"} <= _failed(trace), _failed(trace)
    assert trace.calls[-1].tool == "submit_registration" and trace.calls[-1].refused


def test_a_harness_that_calls_a_tool_not_in_the_catalog_fails_sel02(bad):
    trace = bad["SEL-02"]
    assert trace.verdict == "failed"
    assert trace.calls[0].tool == "get_current_event" and not trace.calls[0].in_catalog
    assert {"calls.expected[0]", "calls.catalog"} <= _failed(trace), _failed(trace)


def test_a_harness_that_calls_the_stale_route_bound_form_fails_stale01(bad):
    trace = bad["STALE-01"]
    assert trace.verdict == "failed"
    assert "calls.expected[1]" in _failed(trace), _failed(trace)
    assert "WebMCP 入門工作坊" in (trace.ai_result or "")  # the right answer, reached the wrong way


def test_a_harness_command_must_name_a_program_and_take_the_prompt():
    for command, why in (
        ("", "an empty command line"),
        ("no-such-harness-xyz {prompt}", "no program"),
        (f"{sys.executable} -c pass", "{prompt}"),
        ("'unclosed {prompt}", "No closing quotation"),
    ):
        with pytest.raises(HarnessConfigError, match=why.replace("{", r"\{").replace("}", r"\}")):
            make_harness_factory(command)
