"""Real Chromium through the proxy: loopback traffic really goes through it, attributed by the trial header."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserType
from proxy_helpers import PNG, OriginServer, new_trial_id

from webmcp_eval.play.browser.browser import find_chromium, launch_args
from webmcp_eval.proxies import TRIAL_HEADER, NetworkProxy

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def proxied_browser(browser_type: BrowserType, proxy: NetworkProxy) -> Iterator[Browser]:
    # Both are needed: Playwright's bypass list and Chromium's own, which otherwise never proxies loopback.
    browser = browser_type.launch(
        executable_path=find_chromium().path,
        args=launch_args(proxy_bypass_loopback=True),
        proxy={"server": proxy.url, "bypass": "<-loopback>"},
    )
    yield browser
    browser.close()


def open_page(browser: Browser, origin: OriginServer, trial: str) -> str:
    context = browser.new_context()
    context.set_extra_http_headers({TRIAL_HEADER: trial})  # what the runner does per trial
    try:
        page = context.new_page()
        page.goto(f"{origin.url}/page")
        page.wait_for_function("document.title.startsWith('done')")
        assert page.evaluate("document.images[0].naturalWidth >= 0")
        return page.title()
    finally:
        context.close()


def test_chromium_loopback_requests_go_through_the_proxy(proxied_browser, proxy, origin, outsider):
    trial = new_trial_id()
    proxy.begin_trial(trial)
    before = len(origin.hits)
    title = open_page(proxied_browser, origin, trial)
    context = proxied_browser.new_context(extra_http_headers={TRIAL_HEADER: trial})
    page = context.new_page()
    page.goto(f"{origin.url}/notes.txt")
    # no-cors: the proxy's 403 has no CORS headers, so the page only sees an opaque answer.
    page.evaluate("url => fetch(url, {method: 'POST', body: '{}', mode: 'no-cors'})", f"{outsider.url}/beacon")
    context.close()
    net = proxy.end_trial(trial)

    assert title == "done 200"  # the POST carried the session's CSRF token and the site accepted it
    seen = [(r.method, r.path) for r in net.requests]
    for wanted in [
        ("GET", "/page"),
        ("GET", "/logo.png"),
        ("GET", "/api/session"),
        ("POST", "/api/saved"),
        ("GET", "/notes.txt"),
    ]:
        assert wanted in seen
    assert net.write_counts == {"POST /api/saved": 1}
    assert outsider.count() == 0
    assert [(b.method, b.url) for b in net.blocked] == [("POST", f"{outsider.url}/beacon")]
    for hit in origin.hits[before:]:
        assert TRIAL_HEADER.lower() not in {k.lower() for k in hit.headers}


def test_chromium_record_then_replay_without_the_origin(proxied_browser, proxy, origin):
    recording = new_trial_id()
    proxy.begin_trial(recording, mode="record")
    assert open_page(proxied_browser, origin, recording) == "done 200"
    fixture = proxy.end_trial(recording).fixture
    assert fixture is not None
    logo = next(e for e in fixture.entries if e.key == "GET /logo.png")
    assert logo.response.encoding == "base64" and logo.response.content() == PNG

    replaying = new_trial_id()
    proxy.begin_trial(replaying, mode="replay", fixture=fixture)
    before = len(origin.hits)
    assert open_page(proxied_browser, origin, replaying) == "done 200"
    net = proxy.end_trial(replaying)
    assert len(origin.hits) == before  # served from the fixture only
    assert net.replay_misses == []
    assert {r.path for r in net.requests} >= {"/page", "/logo.png", "/api/session", "/api/saved"}
