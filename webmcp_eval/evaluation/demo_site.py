"""The embedded demo site, started for a run whose settings name no site: the front ends decide it
(``run``, ``validate --control``, the pytest plugin's suite items), so the player (webmcp_eval/play/) never
imports the site package."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator

from webmcp_eval.play.run.settings import RunState
from webmcp_eval.suite.site import SiteConfig, demo_site_config


@contextlib.contextmanager
def embedded_demo_site() -> Iterator[SiteConfig]:
    """The demo site in test mode on a free loopback port, for as long as the run lasts."""
    from webmcp_eval.site_under_test.server import SiteServer  # the site's server loads only when it serves

    with SiteServer(test_mode=True) as server:
        yield demo_site_config(server.url)


def with_demo_site(state: RunState | None = None) -> RunState:
    """The state a front end hands a run: the embedded demo site to start when the settings name no site."""
    state = state or RunState()
    return state if state.demo_site is not None else dataclasses.replace(state, demo_site=embedded_demo_site)
