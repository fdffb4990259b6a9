"""Shared fixtures: Chromium with WebMCP for pytest-playwright, and a real demo
site in test mode where every test gets its own world.

    def test_x(web):                 # a page in a fresh world of the shared site
        web.goto("/events")          # waits until the route's tools are registered
        web.call("search_events", {"city": "taipei"})
        web.world.state()            # the world's server state (control API)
"""

from __future__ import annotations

import itertools
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from frames_server import FramesSite, frames_site
from playwright.sync_api import Page
from site_web import Web, World, join_world
from static_server import StaticSite, static_site

from webmcp_eval.play.browser.browser import find_chromium, launch_args
from webmcp_eval.play.evidence.fixture_store import FixtureStore
from webmcp_eval.play.run.settings import RunState
from webmcp_eval.site_under_test.server import SiteServer
from webmcp_eval.trace import Trace

_world_numbers = itertools.count(1)

# A command a test starts in another folder imports this checkout's runner, never another one that
# happens to be installed in the environment (an editable install of a second checkout).
_ROOT = str(Path(__file__).resolve().parent.parent)
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, os.environ.get("PYTHONPATH")) if p)


# pytest-playwright's fixtures and ours that open a page: a test asking for one starts Chromium.
BROWSER_FIXTURES = frozenset({"page", "context", "browser", "new_context", "web"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that starts Chromium through a fixture is `browser`, marked or not, so the fast tier
    (`-m "not browser"`) never waits for one. Tests that start a browser another way (a run of the
    runner, a `webmcp-eval run` subprocess) carry the mark themselves."""
    for item in items:
        if BROWSER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """pytest-playwright launches the Chromium webmcp_eval.play.browser.browser picks (headless: the headless shell when
    installed, as the runner's own runs), with WebMCP on."""
    headless = browser_type_launch_args.get("headless", True)
    chromium = find_chromium(headless=headless).path
    return {**browser_type_launch_args, "executable_path": chromium, "args": launch_args()}


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


@pytest.fixture
def web(page: Page, site: SiteServer, world: World) -> Web:
    join_world(page.context, site, world)
    return Web(page, site, world)


@pytest.fixture(scope="session")
def static_shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StaticSite]:
    """The second test site (webmcp_eval/examples/shop/): a static shop under /demo/ and its CDN, for the run."""
    with static_site(tmp_path_factory.mktemp("static-shop")) as served:
        yield served


@pytest.fixture(scope="session")
def frames() -> Iterator[FramesSite]:
    """The frames test site (tests/frames_site/): a top page with a same-origin and a cross-origin frame."""
    with frames_site() as served:
        yield served


class SeedRun:
    """The whole seed suite played once for the session with the reference agent, its network recorded:
    its traces (tests/test_suite_e2e.py: every case passes, what a trace carries) and the fixtures the
    recording wrote (tests/test_record_replay.py: replayed without the site, the same verdicts)."""

    def __init__(self, out: Path) -> None:
        from eval_support import play

        self.fixtures = out / "fixtures"
        # Four workers on two cores: a trial spends much of its time waiting (page loads, the tools' settle time),
        # and four overlap those waits; test_workers_do_not_change_results holds the verdicts to a serial run's.
        store = FixtureStore(self.fixtures, "record")
        self.traces: list[Trace] = play(out, network_mode="record", state=RunState(fixtures=store), workers=4)
        self.run_dir = out / "run"  # its run directory (play's run id)


@pytest.fixture(scope="session")
def seed_run(tmp_path_factory: pytest.TempPathFactory) -> SeedRun:
    return SeedRun(tmp_path_factory.mktemp("seed-run"))
