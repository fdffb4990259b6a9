"""The hash-routed test site (tests/hotel_site/): one page whose tools change with its hash route.

``#/`` registers ``search_hotels`` and ``get_hotel`` (a hotel id the page shows in its links, or refused),
``#/hotel/ID`` registers ``book_room`` (a day from today on, or refused; it prepares the booking and a person
confirms it), and pressing Start concierge registers ``ask_concierge``. The same files open as a ``file:`` URL.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from static_server import _serve

SOURCE = Path(__file__).resolve().parent / "hotel_site"


@dataclass
class HotelSite:
    port: int = 0
    seen: list[tuple[str, str]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/index.html"

    @property
    def file_url(self) -> str:
        return (SOURCE / "index.html").as_uri()


@contextmanager
def hotel_site() -> Iterator[HotelSite]:
    site = HotelSite()
    server = _serve(SOURCE, site.seen)
    site.port = server.server_address[1]
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()
