"""The pages an audit opens and calls tools in: a redirect to another origin, a call's page lost to a navigation,
a document loaded again, the frame that has registered a tool, the shim's report of a call."""

from __future__ import annotations

import asyncio
import time
from urllib.parse import urljoin

import httpx
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame as PwFrame

from webmcp_eval.audit.inputs import PAGE_VALUES_JS, PageValues
from webmcp_eval.audit.model import Frame
from webmcp_eval.audit.smoke import CallOutcome
from webmcp_eval.play.page.surface.opened import OpenPage, origin_of

MAX_REDIRECTS = 5


# What Playwright says when the document a call runs in goes away under it (a navigation mid-call): the call's
# page was lost, which says nothing of the tool
LOST_PAGE = ("Execution context was destroyed", "Frame was detached", "frame got detached", "its frame is gone")


def lost_page(outcome: CallOutcome) -> bool:
    return outcome.error is not None and any(s in outcome.error for s in LOST_PAGE)


def not_run_if_lost(outcome: CallOutcome) -> None:
    """A call whose page was lost again on its retry is not run: judged neither way, never the tool's error."""
    if lost_page(outcome):
        outcome.not_run = f"its page was lost to a navigation twice ({outcome.error})"
        outcome.error = None


async def _settled(opened: OpenPage) -> None:
    """After a navigation took the page: wait for the document it loaded (at most the load's own timeout)."""
    try:
        await opened.page.wait_for_load_state("load", timeout=10_000)
    except PlaywrightError:
        return


async def page_values(opened: OpenPage) -> PageValues:
    """What the page offers to draw smoke inputs from (its forms' own values, the ids it shows)."""
    try:
        return PageValues.from_page(await opened.page.evaluate(PAGE_VALUES_JS))
    except PlaywrightError:
        return PageValues()


async def _shim_report(opened: OpenPage, logged: int, name: str, wait_s: float = 0.05) -> None:
    """Wait until the shim has reported the call's answer (its own time, a throw), at most wait_s: the report
    usually comes within a few milliseconds; one that never comes costs the whole wait, as a fixed pause did."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if opened.surface.call_events(logged, name)[1] is not None:
            return
        await asyncio.sleep(0.005)


async def _reopen(opened: OpenPage, url: str) -> str | None:
    """Load url again up to its DOM (the call waits for the tool to register, not for the load event); None when
    it opened, else why not."""
    try:
        response = await opened.page.goto(url, wait_until="domcontentloaded", timeout=30_000)
    except PlaywrightError as err:
        return _first_line(err)
    if response is not None and response.status >= 400:
        return f"HTTP {response.status}"
    return None


async def _registered(opened: OpenPage, frame_info: Frame, name: str, wait_s: float) -> PwFrame | None:
    """The frame once it has registered the tool (at most wait_s: then as it is, and the call says what fails)."""
    deadline = time.monotonic() + wait_s
    while True:
        frame = _find_frame(opened, frame_info)
        if frame is not None and _registered_now(opened, frame, name) or time.monotonic() >= deadline:
            return frame
        await asyncio.sleep(0.01)


def _registered_now(opened: OpenPage, frame: PwFrame, name: str) -> bool:
    """Whether the frame's current document has name registered, by the shim's reports (the engine's reading)."""
    document = opened.log.document_in(frame)
    live, _ = opened.log.registrations({document} if document else set())
    return any(r.name == name for r in live)


def _find_frame(opened: OpenPage, frame: Frame) -> PwFrame | None:
    if frame.main:
        return opened.page.main_frame
    return next((f for f in opened.page.frames if f.url == frame.url and not f.is_detached()), None)


async def redirect_away(
    url: str, headers: dict[str, str] | None = None, credentials: tuple[str, str] | None = None
) -> str | None:
    """Why the page is not audited when it redirects to another origin (the redirect is never followed).
    The headers and the HTTP authentication go to the audited origin only."""
    target = url
    async with httpx.AsyncClient(timeout=15, trust_env=False, follow_redirects=False) as http:
        for _ in range(MAX_REDIRECTS):
            try:
                same = origin_of(target) == origin_of(url)  # the headers go to the audited origin only
                get = (
                    http.stream("GET", target, headers=headers, auth=credentials)
                    if same
                    else http.stream("GET", target)
                )
                async with get as response:
                    if response.status_code not in (301, 302, 303, 307, 308):
                        return None
                    target = urljoin(target, response.headers.get("location", ""))
            except httpx.HTTPError:
                return None  # the browser says what is wrong, with its own words
            if origin_of(target) != origin_of(url):
                return f"redirects to another origin ({target}): not followed"
    return None


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
