"""The audit's HTML page (webmcp_eval/audit/html_page.py): the run report's look, score first, findings by
rule, tool cards, the registration timeline drawn, smoke calls folded with short answers, and every word the
site said shown as text, in the file and in a real Chromium."""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from webmcp_eval.audit.audit_report import AuditReport, PageAudit
from webmcp_eval.audit.html_page import SHORT_ANSWER, html_report
from webmcp_eval.audit.inputs import SmokeInput
from webmcp_eval.audit.model import Finding, Frame, PageSurface, Refused, TimelineEvent, Tool
from webmcp_eval.audit.smoke import CallOutcome
from webmcp_eval.audit.timeline import Timeline
from webmcp_eval.report.html import render_html
from webmcp_eval.trace import Trace

HOSTILE = '<img src=x onerror="window.__pwned=1">'
HOSTILE_SCRIPT = "<script>window.__pwned=2</script>"
URL = "http://site.test/"
LONG = {"status": "ok", "data": [{"id": f"evt-{i}", "title": f"event {i} " + HOSTILE} for i in range(200)]}
DESCRIPTION = "Finds events by city and date. " + HOSTILE
SCHEMA = {"type": "object", "properties": {"q": {"type": "string", "description": "words " + HOSTILE_SCRIPT}}}


def call(label: str, valid: bool = True, **kw: object) -> CallOutcome:
    return CallOutcome(SmokeInput(label, {"q": label}, valid), **kw)  # type: ignore[arg-type]


def audit_report() -> AuditReport:
    search = Tool("search_events", DESCRIPTION, SCHEMA, annotations={"readOnlyHint": True})
    book = Tool("book" + HOSTILE_SCRIPT, "Books a seat.", {"type": "object"}, kind="declarative", schema_derived=True)
    frame = Frame(
        URL,
        "http://site.test",
        tools=[search, book],
        refused=[Refused("bad name!", "Invalid tool name " + HOSTILE)],
        events=[
            TimelineEvent(30, "register", "search_events"),
            TimelineEvent(40, "register", book.name),
            TimelineEvent(900, "unregister", "search_events"),
            TimelineEvent(1200, "register", "search_events"),
        ],
    )
    surface = PageSurface(URL, frames=[frame], load_ms=100, watched_ms=2000, script_errors=["Error: " + HOSTILE])
    findings = [
        Finding("smoke-null", "warning", "search_events answered null " + HOSTILE, URL, URL, "search_events", "/data"),
        Finding("description-short", "error", "book is too short", URL, URL, book.name, "/description"),
        Finding("smoke-null", "warning", "search_events answered null again", URL, URL, "search_events", "/x"),
        Finding("form-not-tool", "note", "a form is not a tool", URL, URL),
    ]
    calls = {
        f"{URL} search_events": [
            call("required only", result=LONG, ms=12),
            call("missing required q", valid=False, result={"status": "error", "message": "q is required"}, ms=3),
            call("all fields", timed_out=True, ms=5000),
            call("q of 100 characters", error="TypeError: boom " + HOSTILE, ms=4),
        ]
    }
    page = PageAudit(
        surface,
        findings=findings,
        timeline=Timeline(first_tool_ms=130, late={}, churn={"search_events": 1}),
        calls=calls,
        seconds=3.2,
        score=71,
        categories={"declarations": 60, "runtime": 80, "safety": 100},
    )
    cross = Finding("contract-changed", "error", "the contract changed: " + HOSTILE, URL)
    return AuditReport(
        URL,
        pages=[page],
        findings=[cross],
        contract_changes=["search_events: description changed " + HOSTILE],
        score=71,
        categories=page.categories,
        seconds=3.4,
        smoke=True,
    )


class Visible(HTMLParser):
    """The text a reader sees before opening anything: inside a closed <details>, only its <summary> shows.

    Collects (text, inside a smoke tool's block) for each visible text node; <style> and <title> are not text.
    """

    def __init__(self) -> None:
        super().__init__()
        self.details: list[list[bool]] = []  # per enclosing <details>: [open, in its summary]
        self.smoke: list[int] = []  # depths of the details.smoke-tool blocks we are in
        self.skip = 0
        self.texts: list[tuple[str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "details":
            self.details.append(["open" in a, False])
            if "smoke-tool" in (a.get("class") or "").split():
                self.smoke.append(len(self.details))
        elif tag == "summary" and self.details:
            self.details[-1][1] = True
        elif tag in ("style", "title"):
            self.skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "details" and self.details:
            if self.smoke and self.smoke[-1] == len(self.details):
                self.smoke.pop()
            self.details.pop()
        elif tag == "summary" and self.details:
            self.details[-1][1] = False
        elif tag in ("style", "title"):
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        text = data.strip()
        if text and not self.skip and all(o or s for o, s in self.details):
            self.texts.append((text, bool(self.smoke)))


def longest_visible_smoke_text(html: str) -> int:
    v = Visible()
    v.feed(html)
    return max((len(t) for t, smoke in v.texts if smoke), default=0)


# --------------------------------------------------------------------------- the file


def test_the_visible_text_check_catches_a_raw_dump_and_passes_a_folded_one() -> None:
    dump = '{"events": [' + ", ".join(f'{{"id": "evt-{i}"}}' for i in range(100)) + "]}"
    raw = f"<details class='smoke-tool' open><summary>t</summary><table><tr><td><code>{dump}</code></td></tr></table>"
    folded = f"<details class='smoke-tool' open><summary>t</summary><details><summary>short</summary><pre>{dump}</pre>"
    assert longest_visible_smoke_text(raw + "</details>") == len(dump)
    assert longest_visible_smoke_text(folded + "</details></details>") == len("short")


def test_the_smoke_calls_fit_long_answers_cut_with_the_full_text_folded() -> None:
    html = html_report(audit_report())
    assert longest_visible_smoke_text(html) <= SHORT_ANSWER + 40  # the input's label and the cut answer, no dump
    full = re.search(r'<details class="answer-full"><summary[^>]*>full answer</summary><pre>(.*?)</pre>', html, re.S)
    assert full and "evt-199" in full.group(1)  # the whole answer, one click away
    shorts = [unescape(s) for s in re.findall(r'<span class="answer-short">(.*?)</span>', html, re.S)]
    assert len(shorts) == 4 and all(len(s) <= SHORT_ANSWER for s in shorts)
    assert shorts[0].endswith("…") and "q is required" in shorts[1]


def test_summary_and_score_first_and_the_headline_once() -> None:
    html = html_report(audit_report())
    assert html.count("WebMCP audit of") == 1 and html.count("<h1>") == 1
    order = [html.index(f'id="{s}"') for s in ("summary", "score", "findings", "page-0")]
    assert order == sorted(order)
    assert re.search(r'id="score">71<small>/100</small>', html)
    assert '<span class="sev error">error</span> 2' in html and '<span class="sev warning">warning</span> 2' in html


def test_findings_grouped_by_rule_worst_first_with_severity_colour() -> None:
    html = html_report(audit_report())
    groups = re.findall(r'<details class="rule (\w+)" id="rule-([\w-]+)" open>', html)
    assert groups == [
        ("error", "contract-changed"),
        ("error", "description-short"),
        ("warning", "smoke-null"),
        ("note", "form-not-tool"),
    ]
    smoke_null = html[html.index('id="rule-smoke-null"') : html.index('id="rule-form-not-tool"')]
    assert "2 finding(s)" in smoke_null and "A result has no null values" in smoke_null
    assert 'href="#page-0-tool-0-search_events"' in smoke_null  # the finding leads to the tool's card


def test_tool_cards_have_description_annotations_schema_and_registration() -> None:
    html = html_report(audit_report())
    card = html[html.index('id="page-0-tool-0-search_events"') : html.index('id="page-0-tool-1-')]
    assert "Finds events by city and date. &lt;img src=x" in card
    assert '<span class="chip">readOnlyHint</span>' in card and '<span class="chip">imperative</span>' in card
    assert "registerTool() in the page&#39;s script, 30 ms after the load event" in card
    assert "withdrawn and registered again 1 time(s)" in card and "native WebMCP" in card
    assert "input schema</summary><pre>{\n  &#34;type&#34;: &#34;object&#34;" in card
    form = html[html.index('id="page-0-tool-1-') :]
    assert "a &lt;form toolname&gt; in the page" in form and "built by the browser from the form" in form
    assert "bad name!: Invalid tool name &lt;img" in html  # the refused registration, as text


def test_the_registration_timeline_is_drawn() -> None:
    html = html_report(audit_report())
    svg = html[html.index('<svg class="time"') : html.index("</svg>")]
    assert svg.count('class="register"') == 3 and svg.count('class="unregister"') == 1
    assert svg.count('class="present"') == 3  # search_events 30–900 ms and from 1200 ms on; book from 40 ms on
    assert ">load</text>" in svg and ">search_events</text>" in svg
    assert "book&lt;script&gt;" in svg and "<script" not in svg


def test_smoke_calls_show_input_reason_evidence_and_verdict() -> None:
    html = html_report(audit_report())
    assert "missing required q (invalid)" in html and "refused (isError or an error field)" in html
    assert "refused (a thrown error)" in html and "<dt>arguments</dt><dd><code>{\n  &#34;q&#34;" in html
    assert html.count('<details class="smoke-call">') == 4
    assert ">timed out</span>" in html and "threw: TypeError: boom &lt;img" in html
    assert "accepted (no evidence of a refusal)" in html


def test_site_text_is_escaped_and_the_page_allows_no_script() -> None:
    html = html_report(audit_report())
    assert HOSTILE not in html and HOSTILE_SCRIPT not in html and "<script" not in html
    assert "script-src 'none'" in html and "default-src 'none'" in html
    assert "&lt;script&gt;window.__pwned=2&lt;/script&gt;" in html
    HTMLParser().feed(html)


def _style(html: str) -> str:
    return html[html.index("<style>") : html.index("</style>")]


def test_one_look_the_audit_and_run_reports_share_their_stylesheet() -> None:
    run = render_html(
        [Trace(run_id="r", trial_id="A.t1", case_id="A", case_file="a.yaml", behaviour="b", start_route="/")]
    )
    assert _style(html_report(audit_report())) == _style(run)
    assert ".sev.error" in _style(run) and ".badge.passed" in _style(run)


def test_a_page_that_did_not_open_and_an_audit_without_smoke() -> None:
    report = AuditReport(URL, pages=[PageAudit(PageSurface(URL, error="net::ERR_CONNECTION_REFUSED"), score=None)])
    html = html_report(report)
    assert "not audited: net::ERR_CONNECTION_REFUSED" in html and "run with <code>--smoke</code>" in html
    assert "no findings." in html


# --------------------------------------------------------------------------- in a real browser


@pytest.fixture
def audit_page(page: Page, tmp_path: Path) -> tuple[Page, list[str], list[str]]:
    path = tmp_path / "audit.html"
    path.write_text(html_report(audit_report()), encoding="utf-8")
    requests: list[str] = []
    problems: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("dialog", lambda d: (problems.append("dialog " + d.message), d.dismiss()))
    page.on("pageerror", lambda e: problems.append(f"page error {e}"))
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(path.as_uri())
    return page, requests, problems


@pytest.mark.browser
def test_the_page_fits_1280_px_with_every_verdict_on_screen(audit_page) -> None:
    page, _, _ = audit_page
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    verdicts = page.locator("details.smoke-call .verdict")
    assert verdicts.count() == 4
    for box in verdicts.evaluate_all("els => els.map(e => e.getBoundingClientRect().right)"):
        assert 0 < box <= 1280
    for d in page.locator("details").all():  # everything open, the full answer included: still no sideways scroll
        d.evaluate("d => d.open = true")
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    expect(page.locator("details.answer-full pre").first).to_contain_text("evt-199")


@pytest.mark.browser
def test_the_audit_page_runs_nothing_and_fetches_nothing(audit_page) -> None:
    page, requests, problems = audit_page
    for d in page.locator("details").all():
        d.evaluate("d => d.open = true")
    expect(page.locator(".tool-card").first).to_contain_text(HOSTILE)
    expect(page.locator("svg.time")).to_be_visible()
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img").count() == 0 and page.locator("script").count() == 0
    assert problems == []
    assert all(u.startswith(("file://", "data:")) for u in requests), requests
