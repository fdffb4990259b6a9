"""The person's time zone and locale, pinned in every browser context of a run.

A page that formats dates and times with the browser's zone or language shows
what the machine running the suite happens to use; pinned, a displayed time is
something a case can assert. A suite sets both in ``suite.yaml``
(``timezone_id``, ``locale``); a suite that says nothing gets UTC and en-US, so
a run never depends on the machine either way.
"""

from __future__ import annotations

import re
import zoneinfo
from dataclasses import dataclass

DEFAULT_TIMEZONE = "UTC"
DEFAULT_LOCALE = "en-US"

# BCP 47 well-formed: language, optional script, region and variants (Chromium takes these)
_LOCALE = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z]{4})?(-(?:[A-Za-z]{2}|\d{3}))?(-(?:[A-Za-z\d]{5,8}|\d[A-Za-z\d]{3}))*$")


def check_timezone(value: str) -> str:
    """An IANA time zone name (Asia/Taipei, UTC); ValueError says what to give instead."""
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"{value!r} is not an IANA time zone; give one such as Asia/Taipei or UTC") from None
    return value


def check_locale(value: str) -> str:
    """A BCP 47 language tag (zh-TW, en-US); ValueError says what to give instead."""
    if not _LOCALE.match(value):
        raise ValueError(f"{value!r} is not a BCP 47 language tag; give one such as zh-TW or en-US")
    return value


@dataclass(frozen=True)
class BrowserContextSettings:
    """What every browser context of a run is opened with, and every trace records."""

    timezone_id: str = DEFAULT_TIMEZONE
    locale: str = DEFAULT_LOCALE
