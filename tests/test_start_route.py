"""A trial's start (play/page/start_route.py): each setup failure is not_run with its kind and what to check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from playwright.async_api import Error as PlaywrightError

from tests.fake_page import run
from webmcp_eval.play.page.start_route import first_line, open_start_route, require_tools
from webmcp_eval.play.run.abort import TrialAborted
from webmcp_eval.proxies.addon import REPLAY_MISS_STATUS
from webmcp_eval.suite.site import SiteConfig

CONFIG = SiteConfig(base_url="http://site.test")


@dataclass
class Response:
    status: int
    status_text: str = ""


class Page:
    def __init__(self, answer: Response | Exception | None) -> None:
        self.answer = answer
        self.opened: list[str] = []

    async def goto(self, url: str, wait_until: str) -> Response | None:
        self.opened.append(url)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def start(answer: Any, *, proxied: bool = True, crashed: str | None = None) -> Page:
    page = Page(answer)
    run(open_start_route(page, CONFIG, "/events", "SEL-01", proxied=proxied, crashed=lambda: crashed))  # type: ignore[arg-type]
    return page


def aborted(answer: Any, **kw: Any) -> TrialAborted:
    with pytest.raises(TrialAborted) as err:
        start(answer, **kw)
    return err.value


def test_a_start_route_that_answers_opens_the_trial() -> None:
    assert start(Response(200)).opened == ["http://site.test/events"]
    assert start(None).opened  # a same-document answer (no response) is fine too


def test_a_start_route_the_site_cannot_serve_is_the_sites_failure() -> None:
    err = aborted(Response(500, "Internal Server Error"))
    assert err.kind == "infrastructure"
    assert str(err).startswith("setup: the start route /events answered HTTP 500 Internal Server Error: check that")


def test_a_missing_start_route_is_a_setup_failure() -> None:
    err = aborted(Response(404, "Not Found"))
    assert err.kind == "setup" and "answered HTTP 404 Not Found" in str(err)


def test_a_gateway_error_through_the_proxy_says_the_proxy_got_no_answer() -> None:
    assert "the proxy could not get an answer from the site" in str(aborted(Response(502)))
    assert "the proxy" not in str(aborted(Response(502), proxied=False))


def test_a_replay_without_a_recorded_answer_says_how_to_record_it() -> None:
    err = aborted(Response(REPLAY_MISS_STATUS))
    assert err.kind == "fixture" and "webmcp-eval record SEL-01" in str(err)


def test_a_site_that_is_down_is_an_infrastructure_failure() -> None:
    err = aborted(PlaywrightError("net::ERR_CONNECTION_REFUSED at http://site.test/events\n=== logs ==="))
    assert err.kind == "infrastructure"
    assert "could not open the start route /events: net::ERR_CONNECTION_REFUSED at http://site.test/events;" in str(err)


def test_a_crashed_page_raises_as_it_is_the_crash_is_the_reason() -> None:
    with pytest.raises(PlaywrightError):
        start(PlaywrightError("Target crashed"), crashed="the page crashed (renderer process gone)")


class Host:
    def __init__(self, tools: list[str] | Exception) -> None:
        self.tools = tools

    async def catalog(self) -> list[str]:
        if isinstance(self.tools, Exception):
            raise self.tools
        return self.tools


def tools_at(tools: Any, page_errors: list[str] | None = None) -> None:
    run(require_tools(Host(tools), "/events", "http://site.test", page_errors or []))  # type: ignore[arg-type]


def test_a_page_with_tools_starts() -> None:
    tools_at(["search_events"])


def test_a_page_without_tools_is_not_run_with_where_to_look() -> None:
    with pytest.raises(TrialAborted, match="no WebMCP tools were registered at the start route /events") as err:
        tools_at([])
    assert err.value.kind == "setup" and "http://site.test" in str(err.value)


def test_a_page_that_threw_before_registering_names_its_error() -> None:
    with pytest.raises(TrialAborted, match=r"threw an error before the first step \(TypeError: x is undefined\)"):
        tools_at([], ["TypeError: x is undefined"])


def test_tools_that_cannot_be_read_are_a_setup_failure() -> None:
    with pytest.raises(TrialAborted, match="could not read the page's tools: Execution context was destroyed"):
        tools_at(PlaywrightError("Execution context was destroyed"))


def test_first_line_of_an_error() -> None:
    assert first_line(PlaywrightError("one\ntwo")) == "one" and first_line(TimeoutError()) == "TimeoutError"
