"""init's probe: each tool called live, in throw-away browser contexts, with inputs the page itself suggests.

For every tool of the top page of a route (after the setup steps), the inputs of the one input generator
(webmcp_eval/audit/inputs.py ``realistic_inputs``: the form's own values, the schema's, the ids the page
shows) are tried in order, each on a fresh context, until the site accepts one (no throw, no error field,
no validation list, no words that say no: the audit's own reading of an answer, ``refusal_of``). The
accepted input is then called once more, on another fresh context, and only what both calls showed is
kept as evidence: the answer's shape and the lines of text the page showed after the call and not before.
The proxy counts each call's network writes, so a write starter can say how many it makes.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from playwright.async_api import Browser, Playwright
from playwright.async_api import Error as PlaywrightError

from webmcp_eval.audit.inputs import PAGE_VALUES_JS, PageValues, SmokeInput, realistic_inputs
from webmcp_eval.audit.smoke import CallOutcome, refusal_of, take_answer
from webmcp_eval.play.browser.browser import http_credentials, launch
from webmcp_eval.play.browser.driver import playwright_driver
from webmcp_eval.play.page.surface.discover import GOTO_TIMEOUT_MS, RouteTools, SetupFailed, perform_setup
from webmcp_eval.play.page.surface.log import ShimLog
from webmcp_eval.play.page.surface.model import Tool
from webmcp_eval.play.page.surface.opened import origin_of
from webmcp_eval.play.page.surface.reader import Surface, first_line
from webmcp_eval.play.page.toolhost import ToolHost
from webmcp_eval.suite.case import SetupStep
from webmcp_eval.suite.init import INIT_TOOLS_PER_PAGE
from webmcp_eval.suite.site import split_credentials
from webmcp_eval.suite.starters import ToolProbe, answer_shape

if TYPE_CHECKING:
    from webmcp_eval.proxies import NetworkProxy

PROBE_CALL_TIMEOUT_MS = 8_000  # a probe call that takes longer is not a call a starter should wait for
TEXT_JS = "() => document.body ? document.body.innerText : ''"
MAX_LINE = 80  # a line of visible text longer than this is a paragraph, not a change to check


@dataclass
class Probe:
    """What one tool did when init called it: the accepted input and its evidence, or why none was accepted."""

    tool: str
    route: str
    args: dict[str, Any] | None = None  # the input the site accepted (None: none was)
    why: str = ""  # where its values came from (the input's label), or why nothing was accepted
    result: Any = None  # the answer, as a trial records it
    shown: list[str] = field(default_factory=list)  # lines the page showed after both calls and not before
    writes: int = 0  # network writes the accepted call made (the proxy's count; a file page: none counted)
    waits_for_person: bool = False  # a form filled and left for a person to submit: a confirmation step
    tried: list[str] = field(default_factory=list)  # each input tried, and what came of it
    adds: list[str] = field(default_factory=list)  # tools the accepted call registered (on both calls)
    removes: list[str] = field(default_factory=list)  # tools it withdrew (on both calls)
    outlived: list[str] = field(default_factory=list)  # tools it left registered on another route (both calls)

    @property
    def accepted(self) -> bool:
        return self.args is not None


@dataclass
class _Call:
    outcome: CallOutcome
    before: list[str]
    after: list[str]
    writes: int
    waits_for_person: bool
    tools: tuple[set[str], set[str]] = (set(), set())  # the tools offered before the call and after it
    outlived: set[str] = field(default_factory=set)  # tools still registered after the call moved the page's route


class _Prober:
    def __init__(
        self, browser: Browser, proxy: NetworkProxy | None, credentials: tuple[str, str] | None, settle_ms: int
    ) -> None:
        self.browser, self.proxy, self.credentials, self.settle_ms = browser, proxy, credentials, settle_ms
        self.ids = itertools.count(1)
        self.values: dict[str, PageValues | str] = {}  # per route URL: what the page offers, or why it could not
        self.answered: list[str] = []  # ids the accepted calls answered with, for the tools probed after them

    async def call(self, url: str, setup: list[SetupStep], tool: Tool, smoke: SmokeInput | None) -> _Call | str:
        """One call of the tool on a fresh context (smoke None: only the page's values are read); why not."""
        from webmcp_eval.proxies import TRIAL_HEADER

        trial = f"init-probe-{next(self.ids)}-{uuid.uuid4().hex[:6]}"
        if self.proxy:
            self.proxy.begin_trial(trial)
        context = await self.browser.new_context(
            extra_http_headers={TRIAL_HEADER: trial} if self.proxy else None,
            http_credentials=http_credentials(self.credentials),
        )
        try:
            log = ShimLog()
            await Surface.install(context, log)
            page = await context.new_page()
            # on evidence, settle_ms its cap: the tool probed is waited for by its name (a tool that comes after a
            # bare timer too), and a call's effects by the page's requests and changes. A trial of a late-tool
            # suite waits the whole quiet window after each step and so sees at least what the probe saw.
            host = ToolHost(page, log, 0.0, settle_ms=self.settle_ms, settle="evidence")
            await page.goto(url, wait_until="load", timeout=GOTO_TIMEOUT_MS)
            await host.wait_for_tools()
            await perform_setup(page, host.surface, host.wait_for_tools, url, setup)
            await host.wait_for_tools([tool.name], timeout_ms=3000)
            before = _lines(await page.evaluate(TEXT_JS))
            offered, document = {t.name for t in await host.catalog()}, log.top_loaded()
            outcome = CallOutcome(smoke or SmokeInput("page values", {}, True), declarative=tool.kind == "declarative")
            if smoke is None:
                outcome.result = await page.evaluate(PAGE_VALUES_JS)
                return _Call(outcome, before, before, 0, False)
            writes_before = self._writes(trial)
            answer = await host.surface.call(page.main_frame, tool.name, smoke.args, PROBE_CALL_TIMEOUT_MS)
            take_answer(outcome, answer)
            if not answer.timed_out and not answer.error:
                outcome.result = answer.result  # as a trial records it (the shim's parse is the audit's)
            await host.wait_for_tools(grace_in=document)  # a page the call loaded is read, its tools never
            after = _lines(await page.evaluate(TEXT_JS))
            tools = offered, await _offered_after(host, document, offered)
            # a route change within the document that left tools of the old route registered: the site's tools
            # for every route (or tools it forgets to withdraw: init's suite.yaml says which to keep)
            kept = {r.name for r in log.stale_registrations(host.route()) if r.is_top}
            outlived = kept if log.top_loaded() is document else set()
            writes = self._writes(trial) - writes_before
            return _Call(outcome, before, after, writes, answer.waits_for_person, tools, outlived)
        except SetupFailed as err:
            return str(err)
        except (PlaywrightError, TimeoutError) as err:
            return first_line(err)
        finally:
            await context.close()

    def _writes(self, trial: str) -> int:
        return sum(1 for r in self.proxy.snapshot(trial).requests if r.write) if self.proxy else 0


async def _offered_after(host: ToolHost, document: object, before: set[str]) -> set[str]:
    """The tools the page offers after the call; a call that loaded another document (a form's submission, a
    navigation) changed pages, not this page's tools: what it offered before."""
    if host.log.top_loaded() is not document:
        return before
    try:
        return {t.name for t in await host.catalog()}
    except PlaywrightError:  # the document went away while it was read
        return before


def _lines(text: object) -> list[str]:
    return [line.strip() for line in str(text or "").splitlines() if line.strip()]


def _new_lines(call: _Call) -> list[str]:
    """Short lines the page shows after the call that it did not show before."""
    seen = set(call.before)
    return [line for line in call.after if line not in seen and len(line) <= MAX_LINE]


async def probe_tool(prober: _Prober, url: str, route: str, setup: list[SetupStep], tool: Tool) -> Probe:
    probe = Probe(tool.name, route)
    if url not in prober.values:  # what the page offers, read once per route
        read = await prober.call(url, setup, tool, None)
        prober.values[url] = read if isinstance(read, str) else PageValues.from_page(read.outcome.result)
    values = prober.values[url]
    if isinstance(values, str):
        probe.why = f"the page could not be opened: {values}"
        return probe
    # the ids other tools answered with come first: "a tea id from list_products" is one of those
    values = replace(values, answered=list(prober.answered))
    inputs = realistic_inputs(tool.input_schema, values, tool.name)
    if not inputs:
        probe.why = "no input valid under its schema could be made"
        return probe
    for smoke in inputs:
        first = await prober.call(url, setup, tool, smoke)
        if isinstance(first, str):
            probe.tried.append(f"{smoke.args}: not called ({first})")
            continue
        refused = None if first.waits_for_person else refusal_of(first.outcome)
        if first.outcome.timed_out or refused:
            probe.tried.append(f"{smoke.args}: {'no answer in time' if first.outcome.timed_out else refused}")
            continue
        again = await prober.call(url, setup, tool, smoke)  # evidence both calls showed: not a clock or a random id
        if isinstance(again, str) or (not again.waits_for_person and refusal_of(again.outcome)):
            probe.tried.append(f"{smoke.args}: accepted once, not the second time")
            continue
        probe.args, probe.why = smoke.args, smoke.label
        probe.result = first.outcome.result if _same_shape(first.outcome.result, again.outcome.result) else None
        probe.shown = [line for line in _new_lines(first) if line in set(_new_lines(again))]
        probe.writes = first.writes if first.writes == again.writes else max(first.writes, again.writes)
        probe.waits_for_person = first.waits_for_person
        (before, after), (again_before, again_after) = first.tools, again.tools
        probe.adds = sorted((after - before) & (again_after - again_before))
        probe.removes = sorted((before - after) & (again_before - again_after))
        probe.outlived = sorted(first.outlived & again.outlived)
        probe.tried.append(f"{smoke.args}: accepted")
        prober.answered += [i for i in ids_in(probe.result) if i not in prober.answered]
        return probe
    probe.why = f"the site refused every input tried ({len(inputs)})"
    return probe


def ids_in(result: object, key: str = "", depth: int = 0) -> list[str]:
    """The ids an answer holds (values of an "id" or "..._id" field), in order: inputs for the next tools."""
    if depth > 6:
        return []
    if isinstance(result, dict):
        return [i for k, v in result.items() for i in ids_in(v, str(k), depth + 1)]
    if isinstance(result, list):
        return [i for v in result[:50] for i in ids_in(v, key, depth + 1)]
    id_key = key.lower() == "id" or key.lower().endswith(("_id", "id")) and len(key) > 2
    return [str(result)] if id_key and isinstance(result, str | int) and not isinstance(result, bool) else []


def _same_shape(a: object, b: object) -> bool:
    return bool(answer_shape(a) == answer_shape(b))


async def probe_routes(
    base_url: str,
    readings: Sequence[RouteTools],
    *,
    setup: list[SetupStep],
    settle_ms: int,
    chromium: str | None = None,
    playwright: Playwright | None = None,
) -> dict[str, ToolProbe]:
    """Each top-page tool of the readings probed once, at the first route that registers it: {tool name: Probe};
    at most INIT_TOOLS_PER_PAGE of a page (the ones init writes starters for). playwright: a driver already
    running (init's, which read the pages), else one is started."""
    from webmcp_eval.proxies import NetworkProxy  # mitmproxy is heavy: only when init probes

    bare, credentials = split_credentials(base_url)
    web = bare.startswith(("http://", "https://"))
    proxy = NetworkProxy(site_origins=[origin_of(bare)], block_other_hosts=False).start() if web else None
    out: dict[str, ToolProbe] = {}
    try:
        async with playwright_driver(playwright) as p:
            browser, _ = await launch(p.chromium, explicit=chromium, proxy_server=proxy.url if proxy else None)
            prober = _Prober(browser, proxy, credentials, settle_ms)
            try:
                for reading in readings:
                    # read-only tools first: the ids they answer with are inputs for the others
                    for tool in sorted(reading.tools[:INIT_TOOLS_PER_PAGE], key=lambda t: not t.read_only):
                        if tool.name not in out:
                            out[tool.name] = await probe_tool(prober, reading.url, reading.route, setup, tool)
            finally:
                await browser.close()
    finally:
        if proxy:
            proxy.stop()
    return out
