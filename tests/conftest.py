"""Shared fixtures: Chromium with WebMCP for pytest-playwright, and a real demo
site in test mode where every test gets its own world.

    def test_x(web):                 # a page in a fresh world of the shared site
        web.goto("/events")          # waits until the route's tools are registered
        web.call("search_events", {"city": "taipei"})
        web.world.state()            # the world's server state (control API)
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from playwright.sync_api import BrowserContext, Page, Request

from runner.browser import find_chromium, launch_args
from site_under_test.server import SiteServer

WORLD_COOKIE = "wmcp_world"
_world_numbers = itertools.count(1)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """pytest-playwright launches the Chromium runner.browser picks, with WebMCP on."""
    return {**browser_type_launch_args, "executable_path": find_chromium().path, "args": launch_args()}


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SiteServer]:
    """One test-mode site for the whole run, on a free loopback port."""
    with SiteServer(test_mode=True, data_dir=tmp_path_factory.mktemp("site-data")) as server:
        yield server


@pytest.fixture(scope="session")
def transport() -> Iterator[httpx.HTTPTransport]:
    """One shared transport: each new httpx.Client would otherwise build an SSL context (~0.1 s)."""
    with httpx.HTTPTransport() as shared:
        yield shared


@pytest.fixture
def http(site: SiteServer, transport: httpx.HTTPTransport) -> Callable[..., httpx.Client]:
    """A factory of plain HTTP clients for the site (own cookie jar each)."""

    def make(**kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=site.url, transport=transport, timeout=10, **kwargs)

    return make


@pytest.fixture(scope="session")
def control(site: SiteServer, transport: httpx.HTTPTransport) -> httpx.Client:
    return httpx.Client(base_url=site.url, transport=transport, timeout=10)


@dataclass
class World:
    """One isolated world of the site, driven through the /__test__/ control API."""

    name: str
    control: httpx.Client

    def reset(self, seed: str = "default", breaks: tuple[str, ...] | list[str] = ()) -> None:
        body = {"world": self.name, "seed": seed, "breaks": list(breaks)}
        self.control.post("/__test__/reset", json=body).raise_for_status()

    def state(self) -> dict[str, Any]:
        response = self.control.get("/__test__/state", params={"world": self.name})
        response.raise_for_status()
        return response.json()

    def expire_sessions(self) -> None:
        self.control.post("/__test__/expire-session", json={"world": self.name}).raise_for_status()

    def change(self, op: str, **fields: Any) -> dict[str, Any]:
        response = self.control.post("/__test__/change", json={"world": self.name, "op": op, **fields})
        response.raise_for_status()
        return response.json()

    def event(self, event_id: str) -> dict[str, Any]:
        return next(e for e in self.state()["events"] if e["id"] == event_id)

    def active_registrations(self) -> list[str]:
        return [r["id"] for r in self.state()["registrations"] if r["status"] == "active"]


@pytest.fixture
def new_world(control: httpx.Client) -> Callable[[], World]:
    """A factory of fresh worlds (seed `default`), each with a unique name."""

    def make() -> World:
        world = World(f"t{next(_world_numbers)}-{uuid.uuid4().hex[:8]}", control)
        world.reset()
        return world

    return make


@pytest.fixture
def world(new_world: Callable[[], World]) -> World:
    """A fresh world from seed `default`; call world.reset(...) for another seed or breaks."""
    return new_world()


def join_world(context: BrowserContext, site: SiteServer, world: World) -> None:
    context.add_cookies([{"name": WORLD_COOKIE, "value": world.name, "url": site.url}])


@dataclass
class Web:
    """A page of the site in one world, with helpers for WebMCP and the network."""

    page: Page
    site: SiteServer
    world: World
    requests: list[Request] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.page.on("request", lambda request: self.requests.append(request))

    def goto(self, path: str) -> None:
        self.page.goto(self.site.url + path)
        self.wait_ready(path.split("?")[0])

    def wait_ready(self, path: str) -> None:
        """Wait until the route `path` has rendered and registered its tools."""
        self.page.wait_for_function("p => window.__siteReady === p", arg=path)

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.page.webmcp.call_tool(name, arguments or {})

    def tool_names(self) -> list[str]:
        return sorted(tool["name"] for tool in self.page.webmcp.tools())

    def api_requests(self, method: str | None = None, path_part: str = "/api/") -> list[Request]:
        return [r for r in self.requests
                if path_part in r.url and (method is None or r.method == method)]

    def fetch(self, path: str, method: str = "GET", body: Any = None,
              headers: dict[str, str] | None = None, csrf: bool = True) -> dict[str, Any]:
        """fetch() from inside the page (its cookies); answers {status, body}."""
        return self.page.evaluate(
            """async ([path, method, body, headers, csrf]) => {
                const h = {'Content-Type': 'application/json', ...headers};
                if (csrf) h['X-CSRF-Token'] = (await (await fetch('/api/session')).json()).csrfToken;
                const init = {method, headers: h};
                if (method !== 'GET') init.body = JSON.stringify(body ?? {});
                const r = await fetch(path, init);
                return {status: r.status, body: await r.json()};
            }""",
            [path, method, body, headers or {}, csrf],
        )


@pytest.fixture
def web(page: Page, site: SiteServer, world: World) -> Web:
    join_world(page.context, site, world)
    return Web(page, site, world)
