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
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pytest
from eval_support import cli, in_thread
from form_server import FormSite, form_site
from frames_server import FramesSite
from playwright.async_api import async_playwright
from playwright.sync_api import sync_playwright
from static_server import StaticSite

from webmcp_eval.audit.audit_report import PageAudit
from webmcp_eval.audit.engine import AuditOptions, audit
from webmcp_eval.play.browser.browser import find_chromium, launch, launch_args
from webmcp_eval.play.page import toolhost
from webmcp_eval.play.page.surface.log import ShimLog
from webmcp_eval.play.page.surface.model import Frame
from webmcp_eval.play.page.surface.reader import WAITS_FOR_PERSON, Surface
from webmcp_eval.play.page.toolhost import ToolHost
from webmcp_eval.pytest_plugin import page_webmcp
from webmcp_eval.pytest_plugin.page_webmcp import PageWebMCP, ToolCallError

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
    from webmcp_eval.play.page.surface.model import Refused, Tool

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


@dataclass(frozen=True)
class Site:
    """A page every view reads, the calls made on it, the audit's options; ``call_ms``: a shorter call time-out
    for a page whose form waits for a person (its call is seen waiting by then)."""

    url: str
    calls: list[tuple[str, dict]]
    audit: dict[str, Any]
    call_ms: int | None = None


@contextmanager
def _call_timeout(ms: int | None) -> Iterator[None]:
    """The tool host's and the fixture's call time-out, for one page's calls."""
    if ms is None:
        yield
        return
    saved = toolhost.CALL_TIMEOUT_MS, page_webmcp.CALL_TIMEOUT_MS
    toolhost.CALL_TIMEOUT_MS = page_webmcp.CALL_TIMEOUT_MS = ms
    try:
        yield
    finally:
        toolhost.CALL_TIMEOUT_MS, page_webmcp.CALL_TIMEOUT_MS = saved


async def _host_views(sites: dict[str, Site]) -> dict[str, tuple[list[Frame], list[Any], list[str]]]:
    """The trial's tool host on each page (a context of its own in one browser): its catalog, then each call
    as an agent makes it."""
    out = {}
    async with async_playwright() as p:
        browser, _ = await launch(p.chromium)
        try:
            for name, site in sites.items():
                context = await browser.new_context()
                log = ShimLog()
                await Surface.install(context, log)
                page = await context.new_page()
                host = ToolHost(page, log, 0.0, settle_ms=SETTLE_MS)
                await host.frames.watch(context)
                await page.goto(site.url, wait_until="load")
                await host.wait_for_tools()
                frames = await host.surface.read_frames()
                catalog = [t.name for t in await host.catalog()]
                answers = []
                with _call_timeout(site.call_ms):
                    for tool, args in site.calls:
                        record = await host.call(tool, args)
                        answers.append(record.error if record.error else record.result)
                await context.close()
                out[name] = (frames, answers, catalog)
        finally:
            await browser.close()
    return out


def _fixture_views(sites: dict[str, Site]) -> dict[str, tuple[list[Frame], list[Any]]]:
    """The pytest fixture on each page (a page and context of its own in one browser), over Playwright's sync
    API as a test uses it."""
    out = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=find_chromium().path, args=launch_args())
        try:
            for name, site in sites.items():
                page = browser.new_page()
                webmcp = PageWebMCP(page)._install()
                page.goto(site.url, wait_until="load")
                webmcp.wait_for_tools()
                page.wait_for_timeout(SETTLE_MS)
                frames = webmcp.surface().frames
                answers = []
                with _call_timeout(site.call_ms):
                    for tool, args in site.calls:
                        try:
                            answers.append(webmcp.call(tool, args))
                        except ToolCallError as err:
                            answers.append(str(err).rsplit("): ", 1)[1])
                page.context.close()
                out[name] = (frames, answers)
        finally:
            browser.close()
    return out


def _audit_views(sites: dict[str, Site]) -> dict[str, PageAudit]:
    """The audit of each page: one audit per set of options, its pages the routes (a full URL is a route as it
    is, as a user gives one), each page read in a context of its own as a lone page's audit reads it."""
    together: dict[str, list[str]] = {}
    for name, site in sites.items():
        together.setdefault(json.dumps(site.audit, sort_keys=True), []).append(name)
    out = {}
    for names in together.values():
        first = sites[names[0]]
        routes = [sites[n].url for n in names]
        report = in_thread(asyncio.run, audit(AuditOptions(first.url, routes, watch_ms=SETTLE_MS, **first.audit)))
        assert [p.surface.url for p in report.pages] == routes
        out.update(zip(names, report.pages, strict=True))
    return out


def _listed_and_audited(sites: dict[str, Site]) -> tuple[list[dict[str, Any]], dict[str, PageAudit]]:
    """``tools`` of every page as one command's routes, then the audits."""
    routes = [a for site in sites.values() for a in ("--route", site.url)]
    listed = cli("tools", sites["waits"].url, *routes, "--json", "--settle-ms", str(SETTLE_MS))
    assert listed.returncode == 0, listed.stderr
    routes_read = json.loads(listed.stdout)["routes"]
    assert [r["url"] for r in routes_read] == [site.url for site in sites.values()]
    return routes_read, _audit_views(sites)


@pytest.fixture(scope="module")
def read(form: FormSite, frames: FramesSite, static_shop: StaticSite) -> dict[str, dict[str, Any]]:
    """Every test site's page through every view. The tool host's and the fixture's each read every page in
    one browser; ``tools`` reads them all as one command's routes (a full URL is a route as it is), as a user
    can run it, and the audit once per set of options. Each test judges its page."""
    both = {"smoke": True, "all_tools": True}
    sites = {
        "waits": Site(form.url, [("book_table", GOOD)], both, call_ms=SHORT_CALL_MS),
        "autosubmit": Site(form.autosubmit_url, [("book_table", GOOD), ("book_table", BAD)], both),
        "frames": Site(frames.url, [("lookup_item", {"id": "item-1"}), ("find_items", {"q": "lamp"})], {"smoke": True}),
        "shop": Site(static_shop.url, [("list_products", {})], {"smoke": True}),
    }
    # two halves side by side, each its own browsers, each mostly waiting for its pages' windows: the tool host's
    # and the fixture's views (which change the call time-out), and `tools` and the audit (which do not call
    # through either)
    with ThreadPoolExecutor(2) as pool:
        callers = pool.submit(lambda: (in_thread(asyncio.run, _host_views(sites)), _fixture_views(sites)))
        readers = pool.submit(_listed_and_audited, sites)
        (hosts, fixtures), (routes_read, audits) = callers.result(), readers.result()
    return {
        name: {"host": hosts[name], "tools": route, "audit": audits[name], "fixture": fixtures[name]}
        for name, route in zip(sites, routes_read, strict=True)
    }


def _views(read: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
    """One page's views, held to each other: the same frames, tools, kinds, annotations, refusals and answers."""
    (host_frames, host_answers, catalog), route = read[name]["host"], read[name]["tools"]
    page, (fixture_frames, fixture_answers) = read[name]["audit"], read[name]["fixture"]
    views = {
        "host": _frames(host_frames),
        "tools": _frames(_json_frames(route)),
        "audit": _frames(page.surface.frames),
        "fixture": _frames(fixture_frames),
    }
    assert views["host"] == views["tools"] == views["audit"] == views["fixture"], views
    assert sorted(catalog) == sorted({n for f in views["host"].values() for n in f["tools"]})
    assert host_answers == fixture_answers
    return {"frames": views["host"], "answers": host_answers, "audit": page}


def test_a_form_that_waits_for_a_person_is_said_so_by_every_view(read: dict[str, dict[str, Any]]):
    seen = _views(read, "waits")
    ((_, frame),) = seen["frames"].items()
    assert frame["tools"] == {"book_table": ("declarative", {})} and frame["derived"] == ["book_table"]
    assert seen["answers"] == [WAITS_FOR_PERSON]  # its own outcome: not a timeout
    rules = {(f.rule, f.severity) for f in seen["audit"].findings}
    assert ("form-waits-for-person", "note") in rules and "smoke-timeout" not in {r for r, _ in rules}
    assert not seen["audit"].calls  # not smoke-called: a call would only wait
    assert (
        seen["audit"].smoke_note == "--smoke called nothing: every tool is a form that waits for a person (book_table)"
    )


def test_an_autosubmit_form_answers_and_refuses_bad_input_the_same_in_every_view(read: dict[str, dict[str, Any]]):
    seen = _views(read, "autosubmit")
    ((_, frame),) = seen["frames"].items()
    assert frame["tools"] == {"book_table": ("declarative", {"autosubmit": True})}
    booked, refused = seen["answers"]
    assert booked == "Booked for Ada on 2030-01-02, party of 2"
    assert refused == [{"field": "name", "message": "a name of 2 characters or more"}]
    page = seen["audit"]
    rules = {f.rule for f in page.findings}
    # the browser built the schema (anyOf for the <select>): no author rule judges it; the answers are the form's
    assert not rules & {"schema-unsupported-keyword", "schema-null", "smoke-unserializable", "form-waits-for-person"}
    # the form's list of problems is a refusal; a number for the name is written into the field as text, so the
    # booking for "12345" is the browser's doing, not the form accepting a wrong type: no finding
    assert "smoke-accepts-invalid" not in rules
    (outcomes,) = page.calls.values()
    (wrong_type,) = [o for o in outcomes if o.input.label == "name of the wrong type"]
    assert str(wrong_type.result).startswith("Booked for 12345")
    assert not any(f.severity == "error" for f in page.findings), page.findings
    (outcomes,) = page.calls.values()
    assert all(o.result is not None or o.error for o in outcomes)


def test_the_frames_site_reads_the_same_in_every_view(read: dict[str, dict[str, Any]]):
    seen = _views(read, "frames")
    assert len(seen["frames"]) >= 3  # the top page, the same-origin frame, the widget (and the denied widget)
    refused = sorted(r for f in seen["frames"].values() for r in f["refused"])
    assert refused == ["broken_tool", "widget_status"]


def test_the_static_shop_reads_the_same_in_every_view(read: dict[str, dict[str, Any]]):
    seen = _views(read, "shop")
    (frame,) = seen["frames"].values()
    assert frame["tools"]["subscribe_newsletter"][0] == "declarative"
    assert seen["answers"][0]  # the same product list in both the host's and the fixture's call
