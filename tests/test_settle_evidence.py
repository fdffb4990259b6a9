"""A step settles on evidence: real pages in Chromium, served on a free loopback port.

Each page registers a tool at load and a second one later, for a reason the
settle wait can see (a request still open, a document still being rendered),
or keeps changing its document for ever. The settle wait must wait for the
first two and stop the third at its cap (settle_ms), saying why in its record.
The debounce is raised in the tests that lean on timers, so that only a stall
of the browser far longer than any timer here could change what they see.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, async_playwright
from playwright.async_api import Error as PlaywrightError

from tests.eval_support import in_thread
from webmcp_eval.play.browser.browser import find_chromium, launch_args
from webmcp_eval.play.browser.session import TrialPage
from webmcp_eval.play.page import toolhost
from webmcp_eval.play.page.toolhost import SettleMode, ShimLog
from webmcp_eval.suite.site import SiteConfigError, load_site_config
from webmcp_eval.trace import SettleRecord, Trace

SLOW_S = 0.4  # the late request's answer: well past the 100 ms cap of a document still changing

_REGISTER = """
<script>
function register(name) {
  document.modelContext.registerTool({
    name, description: "A tool named " + name + ".", inputSchema: {type: "object", properties: {}},
    execute: async () => ({ ok: true }),
  });
}
register("first");
</script>
"""

PAGES = {
    # the second tool needs the answer of a request that is still open when the page has loaded
    "/late-request": _REGISTER
    + "<script>fetch('/slow').then((r) => r.text()).then(() => register('second'));</script>",
    # the second tool comes once a list is rendered, a row every few ms, 60 of them: no request, only the document
    "/late-registration": _REGISTER
    + """<ul id="list"></ul><script>
let rows = 0;
function row() {
  document.getElementById("list").append(Object.assign(document.createElement("li"), { textContent: "row " + rows }));
  if (++rows < 60) setTimeout(row, 10); else register("second");
}
row();
</script>""",
    "/one-tool": _REGISTER,
    "/no-tools": "<p>Thank you: your order is on its way.</p>",
    # a clock that never stops: the document changes every few ms
    "/restless": _REGISTER
    + """<p id="clock"></p><script>
setInterval(() => { document.getElementById("clock").textContent = String(performance.now()); }, 5);
</script>""",
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.path == "/slow":
            time.sleep(SLOW_S)
            body = b"done"
        elif self.path in PAGES:
            body = PAGES[self.path].encode()
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@contextlib.asynccontextmanager
async def _trial_page(
    url: str, settle_ms: int = 100, settle: SettleMode = "evidence"
) -> AsyncIterator[tuple[Browser, TrialPage]]:
    """A browser of its own and a page set up for url as a trial's (the shim and its binding); closed after."""
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_chromium(headless=True).path, args=launch_args())
        try:
            context = await browser.new_context()
            tp = TrialPage(context, ShimLog(), time.monotonic(), settle_ms=settle_ms, settle=settle)
            await tp.setup(url, None)
            yield browser, tp
        finally:
            await browser.close()


def _settle(url: str, settle: SettleMode, settle_ms: int) -> tuple[list[str], SettleRecord]:
    """Open url as a trial does, wait once for it to settle: the tools it offers then and the settle's record."""

    async def play() -> tuple[list[str], SettleRecord]:
        async with _trial_page(url, settle_ms, settle) as (_, tp):
            await tp.page.goto(url)
            await tp.host.wait_for_tools()
            tools = [t.name for t in await tp.host.catalog()]
            return tools, tp.host.settles[-1]

    return in_thread(asyncio.run, play())


@pytest.mark.browser
def test_a_request_still_open_is_waited_for(server: str) -> None:
    tools, settled = _settle(f"{server}/late-request", "evidence", 100)
    assert tools == ["first", "second"]
    assert settled.reason == "quiet" and "request" in settled.waited_for
    assert settled.ms >= 100  # longer than the cap of a changing document: the request kept it waiting


@pytest.mark.browser
def test_a_registration_after_rendering_is_waited_for_and_the_fixed_window_misses_it(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("webmcp_eval.play.page.toolhost.DEBOUNCE_S", 0.2)  # a row every 10 ms is "still changing"
    tools, settled = _settle(f"{server}/late-registration", "evidence", 5000)
    assert tools == ["first", "second"]
    assert settled.reason == "quiet" and "dom" in settled.waited_for

    # the old fixed window closes 100 ms after the first registration: the rows take 600 ms at least
    tools, settled = _settle(f"{server}/late-registration", "window", 100)
    assert tools == ["first"]
    assert settled.reason == "window" and "dom" not in settled.waited_for


@pytest.mark.browser
def test_a_page_that_keeps_changing_is_capped_at_settle_ms(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("webmcp_eval.play.page.toolhost.DEBOUNCE_S", 0.1)
    tools, settled = _settle(f"{server}/restless", "evidence", 400)
    assert tools == ["first"]
    assert settled.reason == "cap" and "dom" in settled.waited_for
    assert settled.ms >= 400


@pytest.mark.browser
def test_a_wait_on_a_page_whose_browser_is_gone_ends_with_its_error_not_at_its_cap(server: str) -> None:
    """A killed browser or driver used to keep the wait going to its deadline (5 s a trial), as if the page
    were between documents; the trial then failed on its next call all the same."""

    async def play() -> str:
        async with _trial_page(f"{server}/restless", settle_ms=3_000) as (browser, tp):
            await tp.page.goto(f"{server}/restless")
            waiting = asyncio.ensure_future(tp.host.wait_for_tools(timeout_ms=3_000))
            await asyncio.sleep(0.2)
            await browser.close()
            try:
                await waiting
            except PlaywrightError as err:
                return str(err)
            return f"settled: {tp.host.settles[-1]}"

    assert "closed" in in_thread(asyncio.run, play())


@pytest.mark.browser
def test_an_empty_catalog_is_waited_for_only_in_the_document_it_is_asked_in(server: str) -> None:
    """A page with no tools is given NO_TOOLS_GRACE_S to register some, unless the wait says in which document
    that grace applies (init's probe, which reads the page a call loaded but never its tools)."""

    async def play() -> list[SettleRecord]:
        async with _trial_page(f"{server}/one-tool") as (_, tp):
            await tp.page.goto(f"{server}/one-tool")
            await tp.host.wait_for_tools(["first"])
            first = tp.log.top_loaded()
            await tp.page.goto(f"{server}/no-tools")
            await tp.host.wait_for_tools(timeout_ms=500, grace_in=first)
            await tp.host.wait_for_tools(timeout_ms=500)
            return tp.host.settles[1:]

    elsewhere, anywhere = in_thread(asyncio.run, play())
    assert elsewhere.reason == "quiet" and "tools" not in elsewhere.waited_for, elsewhere
    assert anywhere.reason == "cap" and "tools" in anywhere.waited_for, anywhere


def test_settle_in_a_site_config_is_checked_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "site.yaml"
    path.write_text("settle_ms: 300\nsettle: sometimes\n")
    with pytest.raises(SiteConfigError, match=r"site\.yaml:2: settle: Input should be 'evidence' or 'window'"):
        load_site_config(path, "http://127.0.0.1:1/")
    path.write_text("settle: window\n")
    assert load_site_config(path, "http://127.0.0.1:1/").settle == "window"
    path.write_text("settle_ms: 300\n")
    assert load_site_config(path, "http://127.0.0.1:1/").settle == "evidence"


def test_a_trace_without_settles_still_reads_and_writes_back_without_them() -> None:
    old = {"run_id": "r", "trial_id": "t", "case_id": "c", "behaviour": "b", "start_route": "/"}
    trace = Trace.model_validate(old)
    assert trace.settles is None and "settles" not in trace.model_dump()
    trace.settles = [SettleRecord(step=0, route="/", reason="cap", waited_for=["dom"], ms=100)]
    again = Trace.model_validate_json(trace.model_dump_json())
    assert again.settles and again.settles[0].waited_for == ["dom"]


@pytest.mark.browser
def test_a_listing_is_read_again_once_the_page_shows_a_change(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Back-to-back catalog reads with no sign of a change between them read the page once; a registration the
    shim reported, or a read older than LISTING_REUSE_S, is read again. The age is raised to a minute here (and
    then set to 0) so that no stall of the machine decides what the test sees."""
    reads: list[int] = []

    async def play() -> list[list[str]]:
        async with _trial_page(f"{server}/one-tool") as (_, tp):
            read = tp.host._read_listings

            async def counted() -> list[tuple[Any, list[dict[str, Any]]]]:
                reads.append(1)
                return await read()

            tp.host._read_listings = counted  # type: ignore[method-assign]
            await tp.page.goto(f"{server}/one-tool")
            await tp.host.wait_for_tools(["first"])
            seen = [[t.name for t in await tp.host.catalog()], [t.name for t in await tp.host.catalog()]]
            assert len(reads) == 1, "nothing changed between the two reads: one read"
            await tp.page.evaluate("register('second')")
            await tp.host.wait_for_tools(["second"])
            seen.append([t.name for t in await tp.host.catalog()])
            assert len(reads) == 2, "the shim reported a registration: read again"
            monkeypatch.setattr(toolhost, "LISTING_REUSE_S", 0.0)
            seen.append([t.name for t in await tp.host.catalog()])
            assert len(reads) == 3, "an earlier read too old to stand for the page now: read again"
            return seen

    monkeypatch.setattr(toolhost, "LISTING_REUSE_S", 60.0)
    assert in_thread(asyncio.run, play()) == [["first"], ["first"], ["first", "second"], ["first", "second"]]
