"""One audit from start to end: open each page, read its surface, judge it, call its tools, score it.

    report = asyncio.run(audit(AuditOptions(url="http://127.0.0.1:8000/demo/", smoke=True)))
    report.exit_code          # 0 clean, 1 an error-level finding or a page that failed to load

Pages are read one at a time, each in a fresh browser context with the shim.
With ``max_pages`` > 1 same-origin links are followed (breadth first, each
URL once, never a form submission); a redirect to another origin is reported
and not followed. Smoke calls go through the real proxy, which counts the
network writes of every call; a tool not marked read-only is called only with
``all_tools``, then each call in a fresh world (the site's reset hook, when it
has one) so one call's write never meets the next.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from playwright.async_api import Browser, BrowserContext, CDPSession
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame as PwFrame

from webmcp_eval.audit.access import Access
from webmcp_eval.audit.audit_report import AuditReport, PageAudit
from webmcp_eval.audit.config import AuditConfig
from webmcp_eval.audit.contract import contract_diff, contract_findings, contract_of, read_contract, write_contract
from webmcp_eval.audit.coverage import Coverage, tool_coverage
from webmcp_eval.audit.drift import drift_findings
from webmcp_eval.audit.forms import form_findings, one_cause, read_forms
from webmcp_eval.audit.inputs import PageValues, SmokeInput, smoke_inputs
from webmcp_eval.audit.model import Finding, Frame, PageSurface, Tool
from webmcp_eval.audit.pages import (
    _find_frame,
    _first_line,
    _registered,
    _reopen,
    _settled,
    _shim_report,
    lost_page,
    not_run_if_lost,
    page_values,
    redirect_away,
)
from webmcp_eval.audit.rules import lint
from webmcp_eval.audit.score import Evidence, page_score, site_score
from webmcp_eval.audit.smoke import (
    CallOutcome,
    add_requests,
    judge,
    page_answer,
    smoke_choice,
    take_answer,
    waits_for_person,
)
from webmcp_eval.audit.timeline import timeline_findings, timeline_of
from webmcp_eval.play.browser.browser import http_credentials, launch
from webmcp_eval.play.browser.driver import playwright_driver
from webmcp_eval.play.page.surface.bounds import AUDIT_CALLS_PER_TOOL, AUDIT_PAGE_SECONDS
from webmcp_eval.play.page.surface.discover import SetupFailed, perform_setup, shim_settle
from webmcp_eval.play.page.surface.opened import OpenPage, open_page, origin_of, read_surface
from webmcp_eval.suite.case import SetupStep
from webmcp_eval.suite.site import SiteClient, SiteConfig, resolve_route

if TYPE_CHECKING:  # the proxy is started only when the audit watches the network
    from webmcp_eval.proxies import NetworkProxy
    from webmcp_eval.proxies.models import RequestRecord

FRESH_WAIT_MS = 2000  # --all-tools: how long a fresh document may take to register the tool called
NETWORK_SETTLE_S = 0.3  # after a tool's last call, how long its requests may still start and count for it, at most
# After a call the network settles on evidence (PageActivity.settle): once no request of the page is open and
# nothing (a request, a report of the shim, a change of the document) happened for this long, what the call set
# off has started. A write a tool fires from a short timer after answering shows no sign before its timer runs
# out, so the quiet must outlast such a timer: 0.2 s covers one of 150 ms (tests/audit_site's forgets_its_write)
# with room for a loaded machine's late timer. A write from a longer timer, on a page with nothing else under way,
# is missed (the fixed 0.3 s wait this replaced caught one up to NETWORK_SETTLE_S; a later one, neither).
SMOKE_QUIET_S = 0.2


@dataclass
class AuditOptions:
    url: str
    routes: list[str] = field(default_factory=list)
    max_pages: int = 1
    smoke: bool = False
    all_tools: bool = False
    watch_ms: int = 5000
    config: AuditConfig = field(default_factory=AuditConfig)
    contract: Path | None = None
    update_contract: bool = False
    chromium: str | None = None
    site: SiteConfig | None = None  # hooks for a fresh world per call (--all-tools)
    coverage: Coverage | None = None  # what the suite's cases call or assert; None: no suite
    access: Access = field(default_factory=Access)  # headers and storage state for a page behind a login
    setup: list[SetupStep] = field(default_factory=list)  # steps to the state the tools are read and called in
    page_seconds: float = AUDIT_PAGE_SECONDS  # smoke calls on one page stop after this; the tools left are said
    calls_per_tool: int = AUDIT_CALLS_PER_TOOL  # smoke inputs sent to one tool at most


class _Network:
    """The proxy's account of one context's traffic, diffed around each call."""

    def __init__(self, proxy: NetworkProxy) -> None:
        self.proxy = proxy
        self.ids = itertools.count(1)

    def begin(self) -> str:
        trial = f"audit-{next(self.ids)}-{uuid.uuid4().hex[:6]}"
        self.proxy.begin_trial(trial)
        return trial

    def requests(self, trial: str) -> list[RequestRecord]:
        """The trial's requests so far (a copy: the proxy's account goes on)."""
        return self.proxy.snapshot(trial).requests


class Auditor:
    def __init__(self, options: AuditOptions, browser: Browser, network: _Network | None) -> None:
        self.options = options
        self.browser = browser
        self.network = network
        self.site = SiteClient(options.site) if options.site else None

    async def _context(self) -> tuple[BrowserContext, str | None]:
        from webmcp_eval.proxies import TRIAL_HEADER

        trial = self.network.begin() if self.network else None
        context = await self.browser.new_context(
            extra_http_headers={TRIAL_HEADER: trial} if trial else None,
            storage_state=self.options.access.state,  # type: ignore[arg-type]  # the file's JSON, checked when read
            http_credentials=http_credentials(self.options.access.credentials),
        )
        await self.options.access.open(context)
        return context, trial

    async def audit_page(self, url: str) -> PageAudit:
        started = time.monotonic()
        error = await redirect_away(url, self.options.access.headers, self.options.access.credentials)
        if error:
            audit = PageAudit(PageSurface(url=url, error=error))
        else:
            context, trial = await self._context()
            try:
                opened = await open_page(context)
                audit = PageAudit(await read_surface(opened, url, self.options.watch_ms, self._setup(opened, url)))
                self._judge_static(audit)
                if not audit.surface.error:
                    tools = [t for _, t in audit.surface.tools()]
                    forms = form_findings(url, await read_forms(opened.page), self.options.config, tools)
                    audit.findings = one_cause(audit.findings + forms)
                if self.options.smoke and not audit.surface.error:
                    await self._smoke(audit, opened, trial, await page_values(opened))
                await self.options.access.learn(context)  # the outputs are redacted of the cookies it set too
            finally:
                await context.close()
        if audit.surface.error and self.options.config.enabled("page-unreachable"):
            config = self.options.config
            audit.findings.insert(
                0,
                Finding(
                    "page-unreachable",
                    config.severity("page-unreachable"),
                    f"could not audit the page: {audit.surface.error}",
                    url,
                ),
            )
        audit.seconds = round(time.monotonic() - started, 2)
        return audit

    def _setup(self, opened: OpenPage, url: str) -> Callable[[], Awaitable[str | None]] | None:
        """The setup steps (--setup, --step) on the loaded page, before its tools are read; None without any."""
        if not self.options.setup:
            return None

        async def perform() -> str | None:
            async def settle(names: list[str] | None = None, timeout_ms: int = 5000) -> None:
                await shim_settle(opened.log, names, timeout_ms)

            try:
                await perform_setup(opened.page, opened.surface, settle, url, self.options.setup)
            except SetupFailed as err:
                return str(err)
            return None

        return perform

    def _judge_static(self, audit: PageAudit) -> None:
        config = self.options.config
        audit.findings += lint(audit.surface, config)
        audit.findings += timeline_findings(audit.surface, config)
        audit.timeline = timeline_of(audit.surface, config) if not audit.surface.error else None

    async def _smoke(self, audit: PageAudit, opened: OpenPage, trial: str | None, values: PageValues) -> None:
        page = audit.surface
        deadline = time.monotonic() + self.options.page_seconds
        left: list[str] = []  # the tools the page's time budget left uncalled
        cut: list[str] = []  # the tools whose inputs were more than calls_per_tool
        for frame_info, tool in page.tools():
            choice = smoke_choice(tool, self.options.all_tools)
            if choice == "say":  # a call would only fill the form and wait for a person: said, not called
                audit.findings += waits_for_person(tool, frame_info, page.url, self.options.config)
            if choice != "call":
                continue
            if time.monotonic() >= deadline:
                left.append(tool.name)
                continue
            inputs = smoke_inputs(tool.input_schema, values, tool.name)  # the page's own values first
            if len(inputs) > self.options.calls_per_tool:
                cut.append(f"{tool.name} ({len(inputs)})")
                inputs = inputs[: self.options.calls_per_tool]
            if tool.read_only:
                outcomes = await self._read_only_calls(opened, frame_info, tool, trial, inputs)
            else:
                outcomes = await self._fresh_calls(page.url, frame_info, tool, inputs)
            audit.calls[f"{frame_info.url} {tool.name}"] = outcomes
            names = [t.name for _, t in page.tools()]
            audit.findings += judge(tool, frame_info, page.url, outcomes, self.options.config, names)
        if not any(audit.calls.values()):
            audit.smoke_note = nothing_called(page, self.options.all_tools)
        audit.findings += self._budget_findings(page.url, left, cut)

    def _budget_findings(self, url: str, left: list[str], cut: list[str]) -> list[Finding]:
        """The audit-budget notes of a page's smoke calls: the tools its time left uncalled, the inputs cut."""
        config = self.options.config
        if not config.enabled("audit-budget"):
            return []
        notes = []
        if left:
            named = ", ".join(left[:10]) + (f" and {len(left) - 10:,} more" if len(left) > 10 else "")
            notes.append(f"smoke calls stopped after the page's {self.options.page_seconds:g} s: {named} not called")
        if cut:
            named = ", ".join(cut[:10]) + (f" and {len(cut) - 10:,} more" if len(cut) > 10 else "")
            notes.append(f"at most {self.options.calls_per_tool} smoke calls per tool: the inputs of {named} cut")
        return [Finding("audit-budget", config.severity("audit-budget"), n, url) for n in notes]

    async def _read_only_calls(
        self, opened: OpenPage, frame_info: Frame, tool: Tool, trial: str | None, inputs: list[SmokeInput]
    ) -> list[CallOutcome]:
        """A read-only tool's inputs, called one after another on the open page.

        Each call's writes are those the proxy counted from its start to the next call's start, and the network
        settles once, after the tool's last call, not after every call (a page of 50 calls waited 15 s for it).
        A write the tool fires and forgets is still the tool's, which is what readonly-writes judges; it may be
        listed under the input after the one that fired it.
        """
        outcomes: list[CallOutcome] = []
        mark = self._mark(trial)
        for smoke_input in inputs:
            if _skip(smoke_input, outcomes):
                continue
            outcome = await self._call(opened, _find_frame(opened, frame_info), tool, smoke_input)
            if lost_page(outcome):  # a navigation took the page mid-call: once more on the page it loaded
                await _settled(opened)
                first = outcome.error
                outcome = await self._call(opened, _find_frame(opened, frame_info), tool, smoke_input)
                outcome.retried = first
                not_run_if_lost(outcome)
            _keep(outcomes, outcome)
            mark = self._count(outcomes[-1], trial, mark)
            if outcomes[-1].timed_out:
                break  # a tool that hangs once is judged; waiting out every input would only cost time
        if outcomes:
            await self._settle(opened, outcomes[-1], trial, mark)
        return outcomes

    def _mark(self, trial: str | None) -> int:
        """How many requests the proxy has counted for the trial so far."""
        return len(self.network.requests(trial)) if self.network and trial else 0

    def _count(self, outcome: CallOutcome, trial: str | None, start: int) -> int:
        """Add the trial's requests since start to outcome; return where the next count starts."""
        if not (self.network and trial):
            return start
        requests = self.network.requests(trial)  # one copy of the account: the count and the end agree
        add_requests(outcome, requests[start:])
        return len(requests)

    async def _settle(self, opened: OpenPage, outcome: CallOutcome, trial: str | None, start: int) -> None:
        """Give the last call's requests time to start and end (SMOKE_QUIET_S), then count them for it."""
        if self.network and trial:
            try:
                reason, waited = await opened.activity.settle(SMOKE_QUIET_S, NETWORK_SETTLE_S)
            except PlaywrightError:  # the page or its browser is gone: what the proxy counted is all it sent
                reason, waited = "page closed", set()
            outcome.settled = f"{reason} ({', '.join(sorted(waited))})" if waited else reason
            self._count(outcome, trial, start)

    async def _call(self, opened: OpenPage, frame: PwFrame | None, tool: Tool, smoke_input: SmokeInput) -> CallOutcome:
        """One call of the tool in frame; the caller counts its network."""
        outcome = CallOutcome(smoke_input, declarative=tool.kind == "declarative")
        if frame is None:
            outcome.error = "its frame is gone"
            return outcome
        timeout_ms = self.options.config.options("smoke-timeout")["timeout_ms"]
        logged = len(opened.log.events)
        # a form through DevTools: its answer follows the form's navigation to the next page (Playwright's call ends
        # with the document it was made in, and answers null)
        declarative = tool.kind == "declarative"
        answer = await opened.surface.call(frame, tool.name, smoke_input.args, timeout_ms, devtools=declarative)
        outcome.navigated_to = answer.navigated_to
        take_answer(outcome, answer)
        await _shim_report(opened, logged, tool.name)
        page_answer(outcome, opened.surface.call_events(logged, tool.name)[1])
        await self._redact(outcome, opened)
        return outcome

    async def _redact(self, outcome: CallOutcome, opened: OpenPage) -> None:
        """The answer without a secret before any rule reads it: a finding quotes answers cut short, and a cut
        token would no longer be found by the outputs' redaction. The cookies the site has set by now count."""
        access = self.options.access
        await access.learn(opened.page.context)
        outcome.result = access.redact(outcome.result)
        outcome.error = access.redact(outcome.error)
        outcome.navigated_to = access.redact(outcome.navigated_to)

    async def _fresh_calls(
        self, url: str, frame_info: Frame, tool: Tool, inputs: list[SmokeInput]
    ) -> list[CallOutcome]:
        """A tool that may write: each call on a fresh document in a clean world (the site's reset hook, when it
        has one). One browser context serves all the tool's calls: a new context per call, with its shim binding,
        its DevTools session and a fixed watch of the page, cost about 3 s a call (pizza-maker: 230 s for 79)."""
        context, trial = await self._context()
        try:
            opened = await open_page(context)
            cdp = await context.new_cdp_session(opened.page)  # one session clears the origin's data before each call
            outcomes: list[CallOutcome] = []
            for smoke_input in inputs:
                if _skip(smoke_input, outcomes):
                    continue
                outcome = await self._fresh_call(opened, cdp, url, frame_info, tool, smoke_input, trial)
                if lost_page(outcome):  # a navigation took the page mid-call: once more on a fresh document
                    first = outcome.error
                    outcome = await self._fresh_call(opened, cdp, url, frame_info, tool, smoke_input, trial)
                    outcome.retried = first
                    not_run_if_lost(outcome)
                _keep(outcomes, outcome)
                if outcomes[-1].timed_out:
                    break  # a tool that hangs once is judged; waiting out every input would only cost time
            return outcomes
        finally:
            await context.close()

    async def _fresh_call(
        self,
        opened: OpenPage,
        cdp: CDPSession,
        url: str,
        frame_info: Frame,
        tool: Tool,
        smoke_input: SmokeInput,
        trial: str | None,
    ) -> CallOutcome:
        """One call on a fresh document: the last one left (about:blank), the origin's cookies and storage
        cleared while the site makes a new world, the page loaded again and called once the tool is registered."""
        world = f"audit-{uuid.uuid4().hex[:10]}"
        reset_error, _ = await asyncio.gather(self._reset(world), self._clean(opened, cdp, url, world))
        if reset_error:
            return CallOutcome(smoke_input, error=f"could not reset a fresh world: {reset_error}")
        error = await _reopen(opened, url)
        if not error and (setup := self._setup(opened, url)):
            error = await setup()  # the state the tool was read in, reached again
        if error:
            return CallOutcome(smoke_input, error=f"could not open the page again: {error}")
        frame = await _registered(opened, frame_info, tool.name, min(self.options.watch_ms, FRESH_WAIT_MS) / 1000)
        start = self._mark(trial)
        outcome = await self._call(opened, frame, tool, smoke_input)
        await self._settle(opened, outcome, trial, start)
        return outcome

    async def _reset(self, world: str) -> str | None:
        """A new world from the site's reset hook, when it has one; why not, when it failed."""
        if not (self.site and self.site.has("reset")):
            return None
        try:
            await self.site.reset(world, "default", [])
        except Exception as err:  # noqa: BLE001 - the site's hook failed: said for this call
            return _first_line(err)
        return None

    async def _clean(self, opened: OpenPage, cdp: CDPSession, url: str, world: str) -> None:
        """Leave the page, clear what the origin keeps in the browser, and set the new world's cookie."""
        page = opened.page
        await page.goto("about:blank")
        await cdp.send("Storage.clearDataForOrigin", {"origin": origin_of(url), "storageTypes": "all"})
        await page.context.clear_cookies()
        await self.options.access.restore(page)
        if self.options.site and self.options.site.world_cookie:
            await page.context.add_cookies(
                [{"name": self.options.site.world_cookie, "value": world, "url": self.options.url}]
            )

    async def close(self) -> None:
        if self.site:
            await self.site.aclose()


def _skip(smoke_input: SmokeInput, outcomes: list[CallOutcome]) -> bool:
    """A fallback input is sent only when the valid input before it was refused."""
    last = outcomes[-1] if outcomes else None
    return smoke_input.fallback and not (last is not None and last.input.valid and last.refusal is not None)


def _keep(outcomes: list[CallOutcome], outcome: CallOutcome) -> None:
    """A fallback's outcome is judged in place of the refused one before it; its label says what was refused."""
    if outcome.input.fallback and outcomes:
        refused = outcomes.pop()
        label = f"{outcome.input.label} (retried: {json.dumps(refused.input.args)} was refused)"
        outcome.input = replace(outcome.input, label=label)
    outcomes.append(outcome)


def nothing_called(page: PageSurface, all_tools: bool) -> str:
    """Why --smoke made no call on a page, in one line."""
    tools = [t for _, t in page.tools()]
    if not tools:
        return "--smoke called nothing: the page has no tool"
    waiting = [t.name for t in tools if t.waits_for_person]
    if all_tools and len(waiting) == len(tools):
        return f"--smoke called nothing: every tool is a form that waits for a person ({', '.join(waiting)})"
    if all_tools:
        return "--smoke called nothing: no tool gave an input to call it with"
    forms = sum(1 for t in tools if t.kind == "declarative")
    return (
        f"--smoke called nothing: no tool is marked read-only ({len(tools)} tool(s) may write"
        + (f", {forms} of them form(s)" if forms else "")
        + "); --all-tools calls them too, each call on a fresh document"
    )


def start_urls(options: AuditOptions) -> list[str]:
    return [resolve_route(options.url, r) for r in options.routes] if options.routes else [options.url]


async def audit(options: AuditOptions) -> AuditReport:
    started = time.monotonic()
    report = AuditReport(options.url, smoke=options.smoke)
    proxy = None
    if options.smoke:
        from webmcp_eval.proxies import NetworkProxy

        proxy = NetworkProxy(site_origins=[origin_of(options.url)], block_other_hosts=False).start()
    try:
        async with playwright_driver() as p:
            browser, _ = await launch(p.chromium, explicit=options.chromium, proxy_server=proxy.url if proxy else None)
            auditor = Auditor(options, browser, _Network(proxy) if proxy else None)
            try:
                report.pages = await _crawl(auditor, options)
            finally:
                await auditor.close()
                await browser.close()
    finally:
        if proxy:
            proxy.stop()
    config = options.config
    report.findings += drift_findings(report.pages, config)
    surfaces = [p.surface for p in report.pages]
    if options.contract and options.update_contract:
        write_contract(options.contract, surfaces)
        report.contract_written = options.contract
    elif options.contract:
        old = read_contract(options.contract)
        report.contract_changes = [c for _, _, c in contract_diff(old, contract_of(surfaces))]
        report.findings += contract_findings(old, surfaces, config)
    covered = options.coverage.tools if options.coverage else None
    scored = []
    for audit_ in report.pages:
        mine = audit_.findings + [f for f in report.findings if f.page == audit_.surface.url]
        evidence = Evidence(
            smoke=bool(audit_.calls),
            watch=options.watch_ms > 0,
            contract=bool(options.contract and not options.update_contract),
            crawl=len(report.pages) > 1,
        )
        audit_.score, audit_.categories, audit_.audits = page_score(audit_.surface, mine, evidence, config, covered)
        scored.append((audit_.surface, audit_.audits))
        if options.coverage and not audit_.surface.error:
            audit_.coverage = tool_coverage(options.coverage, [t for _, t in audit_.surface.tools()])
    report.score, report.categories = site_score(scored, covered)
    report.seconds = round(time.monotonic() - started, 2)
    return report


async def _crawl(auditor: Auditor, options: AuditOptions) -> list[PageAudit]:
    queue = deque(start_urls(options))
    seen = set(queue)
    pages: list[PageAudit] = []
    limit = max(options.max_pages, len(queue))
    while queue and len(pages) < limit:
        url = queue.popleft()
        audit_ = await auditor.audit_page(url)
        pages.append(audit_)
        if options.max_pages > 1:
            for link in audit_.surface.links:
                if link not in seen and urlsplit(link).scheme in ("http", "https"):
                    seen.add(link)
                    queue.append(link)
    return pages
