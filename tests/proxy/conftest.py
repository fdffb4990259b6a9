"""Fixtures for the proxy tests: real local servers and a real NetworkProxy.

mitmproxy allows one running proxy per process, so `proxy` is module-scoped
and a module that needs a fresh one per test uses `stack` only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from proxy_helpers import OriginServer, Stack, start_origin

from webmcp_eval.proxies import TRIAL_HEADER, NetworkProxy


@pytest.fixture(scope="module")
def origin() -> Iterator[OriginServer]:
    server = start_origin()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def outsider() -> Iterator[OriginServer]:
    """Another local server that is NOT a site origin: it must never receive anything."""
    server = start_origin()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def allowed() -> Iterator[OriginServer]:
    """A third-party host the site is allowed to reach (listed in allow_hosts)."""
    server = start_origin()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def proxy(origin: OriginServer, allowed: OriginServer) -> Iterator[NetworkProxy]:
    with NetworkProxy(site_origins=[origin.url], allow_hosts=[f"127.0.0.1:{allowed.server.server_port}"]) as running:
        yield running


@pytest.fixture
def stack() -> Iterator[Stack]:
    """A fresh origin and proxy for one test (the test may stop the origin)."""
    server = start_origin()
    try:
        with NetworkProxy(site_origins=[server.url]) as running:
            yield Stack(server, running)
    finally:
        server.stop()


@pytest.fixture(scope="session")
def transports() -> Iterator[dict[str, httpx.HTTPTransport]]:
    """One transport per proxy URL: building each client's SSL context costs ~0.1 s."""
    made: dict[str, httpx.HTTPTransport] = {}
    yield made
    for transport in made.values():
        transport.close()


@pytest.fixture
def client_for(transports: dict[str, httpx.HTTPTransport]) -> Callable[..., httpx.Client]:
    """httpx clients through a proxy, carrying a trial header. Not closed: that would close the shared transport."""

    def make(proxy: NetworkProxy, trial_id: str | None, **kwargs: Any) -> httpx.Client:
        headers = {TRIAL_HEADER: trial_id} if trial_id is not None else {}
        headers.update(kwargs.pop("headers", {}))
        if proxy.url not in transports:
            transports[proxy.url] = httpx.HTTPTransport(proxy=proxy.url)
        return httpx.Client(transport=transports[proxy.url], headers=headers, trust_env=False, timeout=10, **kwargs)

    return make
