"""A hostile test site (tests/hostile_site/), served on a free loopback port: tools whose strings hold lone
surrogates, a 5 MB answer, a page of 3,000 tools, a self-referencing and a remote ``$ref``, schemas of 20,000
properties and of a 100,000-value enum, a 1 MB description, a ``$ref`` to nothing, text with line breaks and
control characters, and a page that registers ten more tools every 20 ms for as long as it is open. The server keeps
every path it was asked for, so a test can tell that the remote ``$ref`` was never fetched."""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from static_server import ServedFolder, served

SITE = Path(__file__).resolve().parent / "hostile_site"


@dataclass
class HostileSite(ServedFolder):
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"


def hostile_site() -> AbstractContextManager[HostileSite]:
    return served(SITE, HostileSite())
