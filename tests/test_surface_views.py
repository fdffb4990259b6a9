"""One surface, four views, the same answer.

Each test site's page is read through every front end of the page surface engine: the trial's tool
host, ``webmcp-eval tools``, the audit and the pytest ``webmcp`` fixture. They must report the same
frames, tools, kinds, annotations and refusals, and the same answer to the same call. The declarative
form site (tests/form_site/) covers the form's three outcomes: it waits for a person (no
toolautosubmit), it answers the booking (autosubmit, good input), it refuses with its list of
problems (bad input).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from form_server import FormSite, form_site
from frames_server import FramesSite
from playwright.async_api import async_playwright
from playwright.sync_api import sync_playwright
from runner_support import cli, in_thread
from static_server import StaticSite

from runner.audit.engine import AuditOptions, audit
from runner.play.browser.browser import find_chromium, launch, launch_args
from runner.play.page import toolhost
from runner.play.page.surface.log import ShimLog
from runner.play.page.surface.model import Frame
from runner.play.page.surface.reader import WAITS_FOR_PERSON, Surface
from runner.play.page.toolhost import ToolHost
from runner.pytest_plugin import page_webmcp
from runner.pytest_plugin.page_webmcp import PageWebMCP, ToolCallError

pytestmark = pytest.mark.browser
SETTLE_MS = 500
SHORT_CALL_MS = 1500  # a form that waits for a person is seen waiting by then

GOOD = {"name": "Ada", "day": "2030-01-02", "party": "2"}
BAD = {"name": "A", "day": "2030-01-02"}


@pytest.fixture(scope="module")
def form() -> Iterator[FormSite]:
    with form_site() as site:
        yield site


def _frames(frames: list[Frame]) -> dict[tuple[str, bool], Any]:
    """What every view must agree on, per frame that lists or refused something."""
    out = {}
    for f in frames:
        if not (f.main or f.tools or f.refused):
            continue
        where = urlsplit(f.url)
        out[(f"{where.netloc.split(':')[0]}{where.path}?{where.query}", f.main)] = {
            "tools": {t.name: (t.kind, {k: v for k, v in t.annotations.items() if v}) for t in f.tools},
            "refused": sorted(str(r.name) for r in f.refused),
            "derived": sorted(t.name for t in f.tools if t.schema_derived),
        }
    return out


def _json_frames(route: dict[str, Any]) -> list[Frame]:
    """``tools --json``'s route read back into frames (what a user of the listing sees)."""
    from runner.play.page.surface.model import Refused, Tool

    def frame(url: str, main: bool, tools: list[dict], refused: list[dict]) -> Frame:
        return Frame(
            url,
            "",
            main,
            tools=[
                Tool(
                    t["name"],
                    t["description"],
                    t["input_schema"],
                    t["annotations"],
                    t["kind"],
                    schema_derived=t["kind"] == "declarative",
                )
                for t in tools
            ],
            refused=[Refused(r["name"], r["error"], r["kind"]) for r in refused],
        )

    top = frame(route["url"], True, route["tools"], route["refused"])
    return [top] + [frame(f["url"], False, f["tools"], f["refused"]) for f in route["frames"]]


async def _host_view(url: str, calls: list[tuple[str, dict]]) -> tuple[list[Frame], list[Any], list[str]]:
    """The trial's tool host: its catalog, then each call as an agent makes it."""
    async with async_playwright() as p:
        browser, _ = await launch(p.chromium)
        try:
            context = await browser.new_context()
            log = ShimLog()
            await Surface.install(context, log)
            page = await context.new_page()
            host = ToolHost(page, log, 0.0, settle_ms=SETTLE_MS)
            await host.frames.watch(context)
            await page.goto(url, wait_until="load")
            await host.wait_for_tools()
            frames = await host.surface.read_frames()
            catalog = [t.name for t in await host.catalog()]
            answers = []
            for name, args in calls:
                record = await host.call(name, args)
                answers.append(record.error if record.error else record.result)
            return frames, answers, catalog
        finally:
            await browser.close()


def _fixture_view(url: str, calls: list[tuple[str, dict]]) -> tuple[list[Frame], list[Any]]:
    """The pytest fixture, over Playwright's sync API as a test uses it."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=find_chromium().path, args=launch_args())
        try:
            page = browser.new_page()
            webmcp = PageWebMCP(page).install()
            page.goto(url, wait_until="load")
            webmcp.wait_for_tools()
            page.wait_for_timeout(SETTLE_MS)
            frames = webmcp.surface().frames
            answers = []
            for name, args in calls:
                try:
                    answers.append(webmcp.call(name, args))
                except ToolCallError as err:
                    answers.append(str(err).rsplit("): ", 1)[1])
            return frames, answers
        finally:
            browser.close()


def _views(url: str, calls: list[tuple[str, dict]], **audit_kw: Any) -> dict[str, Any]:
    host_frames, host_answers, catalog = in_thread(asyncio.run, _host_view(url, calls))
    listed = cli("tools", url, "--json", "--settle-ms", str(SETTLE_MS))
    assert listed.returncode == 0, listed.stderr
    report = in_thread(asyncio.run, audit(AuditOptions(url=url, watch_ms=SETTLE_MS, **audit_kw)))
    fixture_frames, fixture_answers = in_thread(_fixture_view, url, calls)
    views = {
        "host": _frames(host_frames),
        "tools": _frames(_json_frames(json.loads(listed.stdout)["routes"][0])),
        "audit": _frames(report.pages[0].surface.frames),
        "fixture": _frames(fixture_frames),
    }
    assert views["host"] == views["tools"] == views["audit"] == views["fixture"], views
    assert sorted(catalog) == sorted({n for f in views["host"].values() for n in f["tools"]})
    assert host_answers == fixture_answers
    return {"frames": views["host"], "answers": host_answers, "audit": report.pages[0]}


def test_a_form_that_waits_for_a_person_is_said_so_by_every_view(form: FormSite, monkeypatch):
    monkeypatch.setattr(toolhost, "CALL_TIMEOUT_MS", SHORT_CALL_MS)
    monkeypatch.setattr(page_webmcp, "CALL_TIMEOUT_MS", SHORT_CALL_MS)
    seen = _views(form.url, [("book_table", GOOD)], smoke=True, all_tools=True)
    ((_, frame),) = seen["frames"].items()
    assert frame["tools"] == {"book_table": ("declarative", {})} and frame["derived"] == ["book_table"]
    assert seen["answers"] == [WAITS_FOR_PERSON]  # its own outcome: not a timeout
    rules = {(f.rule, f.severity) for f in seen["audit"].findings}
    assert ("form-waits-for-person", "note") in rules and "smoke-timeout" not in {r for r, _ in rules}
    assert not seen["audit"].calls  # not smoke-called: a call would only wait
    assert (
        seen["audit"].smoke_note == "--smoke called nothing: every tool is a form that waits for a person (book_table)"
    )


def test_an_autosubmit_form_answers_and_refuses_bad_input_the_same_in_every_view(form: FormSite):
    seen = _views(form.autosubmit_url, [("book_table", GOOD), ("book_table", BAD)], smoke=True, all_tools=True)
    ((_, frame),) = seen["frames"].items()
    assert frame["tools"] == {"book_table": ("declarative", {"autosubmit": True})}
    booked, refused = seen["answers"]
    assert booked == "Booked for Ada on 2030-01-02, party of 2"
    assert refused == [{"field": "name", "message": "a name of 2 characters or more"}]
    page = seen["audit"]
    rules = {f.rule for f in page.findings}
    # the browser built the schema (anyOf for the <select>): no author rule judges it; the answers are the form's
    assert not rules & {"schema-unsupported-keyword", "schema-null", "smoke-unserializable", "form-waits-for-person"}
    # the form's list of problems is a refusal; a number for the name it books as "12345" is accepted, truly
    (accepted,) = [f.message for f in page.findings if f.rule == "smoke-accepts-invalid"]
    assert "none found: name of the wrong type (answered 'Booked for 12345" in accepted, accepted
    assert "missing required" not in accepted.split("none found:")[1].split("; its other")[0]
    assert not any(f.severity == "error" for f in page.findings), page.findings
    (outcomes,) = page.calls.values()
    assert all(o.result is not None or o.error for o in outcomes)


def test_the_frames_site_reads_the_same_in_every_view(frames: FramesSite):
    seen = _views(frames.url, [("lookup_item", {"id": "item-1"}), ("find_items", {"q": "lamp"})], smoke=True)
    assert len(seen["frames"]) >= 3  # the top page, the same-origin frame, the widget (and the denied widget)
    refused = sorted(r for f in seen["frames"].values() for r in f["refused"])
    assert refused == ["broken_tool", "widget_status"]


def test_the_static_shop_reads_the_same_in_every_view(static_shop: StaticSite):
    seen = _views(static_shop.url, [("list_products", {})], smoke=True)
    (frame,) = seen["frames"].values()
    assert frame["tools"]["subscribe_newsletter"][0] == "declarative"
    assert seen["answers"][0]  # the same product list in both the host's and the fixture's call
