"""A hostile test site (tests/hostile_site/), served on a free loopback port: tools whose strings hold lone
surrogates, a 5 MB answer, a page of 3,000 tools, a self-referencing and a remote ``$ref``, schemas of 20,000
properties and of a 100,000-value enum, a 1 MB description, a ``$ref`` to nothing, text with line breaks and
control characters, and a page that registers ten more tools every 20 ms for as long as it is open. The server keeps
every path it was asked for, so a test can tell that the remote ``$ref`` was never fetched."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from static_server import _serve

SITE = Path(__file__).resolve().parent / "hostile_site"


@dataclass
class HostileSite:
    port: int = 0
    seen: list[tuple[str, str]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def fetched(self, path: str) -> bool:
        return any(p.split("?")[0] == path for _, p in self.seen)


@contextmanager
def hostile_site() -> Iterator[HostileSite]:
    site = HostileSite()
    server = _serve(SITE, site.seen)
    site.port = server.server_address[1]
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()
