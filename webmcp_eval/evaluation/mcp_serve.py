"""``webmcp-eval mcp``: one page of the site, opened in a real browser, served over MCP.

The bridge (webmcp_eval/agents/mcp_bridge.py) turns the page's tool host into an MCP
server; this module opens the browser and the page for it, and keeps the
shim's log with the witness beside it, as a trace would.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from webmcp_eval.agents.mcp_bridge import PageBridge, require_mcp
from webmcp_eval.play.browser.session import BrowserSession
from webmcp_eval.play.page.witness import compare_witness
from webmcp_eval.report.sanitise import terminal
from webmcp_eval.trace import write_atomic

if TYPE_CHECKING:
    from webmcp_eval.play.browser.session import TrialPage
    from webmcp_eval.trace import ToolCall


async def serve_page(
    base_url: str,
    route: str,
    transport: str,
    host: str = "127.0.0.1",
    port: int = 8765,
    chromium: str | None = None,
    log_path: str | None = None,
    allow_hosts: Sequence[str] = (),
) -> int:
    """Open the page, serve its catalog over MCP until the client goes (stdio) or Ctrl-C (HTTP)."""
    require_mcp()

    def note(text: str) -> None:  # stdout is the MCP channel in stdio mode: everything else goes to stderr
        print(terminal(text), file=sys.stderr, flush=True)  # one line, the site's control characters shown

    def on_call(record: ToolCall) -> None:
        outcome = record.error or json.dumps(record.result, ensure_ascii=False)[:200]
        note(f"call #{record.index} {record.tool}({json.dumps(record.args, ensure_ascii=False)}) → {outcome}")
        if log_path:  # after every call: a client may end the process without waiting for it to close
            _write_log(Path(log_path), tp)

    clock = time.monotonic()
    async with BrowserSession(headless=True, chromium=chromium) as session:
        tp = await session.open_trial("mcp", base_url, world_cookie=None, clock_start=clock)
        try:
            await tp.page.goto(route, wait_until="load")
            await tp.host.wait_for_tools()
            bridge = PageBridge(tp.host, on_call=on_call)
            names = bridge.current_names()
            note(f"webmcp-eval mcp: {base_url.rstrip('/')}{route}, {len(names)} tool(s): {', '.join(names) or 'none'}")
            if transport == "stdio":
                await bridge.serve_stdio()
            else:
                stop = asyncio.Event()
                for sig in (signal.SIGINT, signal.SIGTERM):
                    asyncio.get_running_loop().add_signal_handler(sig, stop.set)
                async with bridge.serve_http(host, port, allow_hosts) as url:
                    note(f"MCP (streamable HTTP) at {url}")
                    await stop.wait()
        finally:
            if log_path:
                _write_log(Path(log_path), tp)
            await tp.close()
    return 0


def _write_log(path: Path, tp: TrialPage) -> None:
    """The shim's log and the witness, as the trace would hold them."""
    events = [e.reported() for e in tp.log.events]
    data = {
        "shim_events": events,
        "calls": [c.model_dump() for c in tp.host.calls],
        "witness": compare_witness(tp.log.events, tp.cdp_events, tp.cdp is not None).model_dump(),
    }
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
