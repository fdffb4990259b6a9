"""The hash-routed test site (tests/hotel_site/): one page whose tools change with its hash route.

``#/`` registers ``search_hotels`` and ``get_hotel`` (a hotel id the page shows in its links, or refused),
``#/hotel/ID`` registers ``book_room`` (a day from today on, or refused; it prepares the booking and a person
confirms it), and pressing Start concierge registers ``ask_concierge``. The same files open as a ``file:`` URL.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from static_server import ServedFolder, served

SOURCE = Path(__file__).resolve().parent / "hotel_site"


@dataclass
class HotelSite(ServedFolder):
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/index.html"

    @property
    def file_url(self) -> str:
        return (SOURCE / "index.html").as_uri()


def hotel_site() -> AbstractContextManager[HotelSite]:
    return served(SOURCE, HotelSite())
