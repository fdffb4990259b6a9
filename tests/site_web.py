"""Helpers for the site tests: a world of the demo site and a page in it.

Kept out of conftest.py so test modules import them by a name no other
conftest shares.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx
from playwright.sync_api import BrowserContext, Page, Request

from webmcp_eval.site_under_test.server import SiteServer

WORLD_COOKIE = "wmcp_world"


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
        return [r for r in self.requests if path_part in r.url and (method is None or r.method == method)]

    def fetch(
        self, path: str, method: str = "GET", body: Any = None, headers: dict[str, str] | None = None, csrf: bool = True
    ) -> dict[str, Any]:
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
