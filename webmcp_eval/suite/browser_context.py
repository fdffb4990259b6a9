"""The person's time zone and locale, pinned in every browser context of a run.

A page that formats dates and times with the browser's zone or language shows
what the machine running the suite happens to use; pinned, a displayed time is
something a case can assert. A suite sets both in ``suite.yaml``
(``timezone_id``, ``locale``); a suite that says nothing gets UTC and en-US, so
a run never depends on the machine either way.
"""

from __future__ import annotations

import functools
import re
import zoneinfo
from dataclasses import dataclass

DEFAULT_TIMEZONE = "UTC"
DEFAULT_LOCALE = "en-US"

# BCP 47 well-formed (RFC 5646, without the grandfathered tags Chromium refuses): language, optional
# script, region and variants, extensions (-u-ca-buddhist) and a private-use tail (-x-...). Letters
# and digits only: a stray space or newline reaches the browser as an invalid header.
_LOCALE = re.compile(
    r"[A-Za-z]{2,3}(-[A-Za-z]{4})?(-(?:[A-Za-z]{2}|\d{3}))?(-(?:[A-Za-z\d]{5,8}|\d[A-Za-z\d]{3}))*"
    r"(-[0-9A-WY-Za-wy-z](-[A-Za-z\d]{2,8})+)*(-[Xx](-[A-Za-z\d]{1,8})+)?"
)
# Names the system's zone files hold that Chromium's (ICU's) zone list does not: the machine's own
# zone under another name, and the rule sets the posix/ and right/ trees repeat every zone under.
_NOT_BROWSER_ZONES = frozenset({"localtime", "posixrules"})


@functools.cache
def browser_zones() -> frozenset[str]:
    """The IANA names a browser context takes: the zone list (no posix/, right/), less the machine's own."""
    return frozenset(zoneinfo.available_timezones()) - _NOT_BROWSER_ZONES


def check_timezone(value: str) -> str:
    """An IANA time zone name the browser takes (Asia/Taipei, UTC); ValueError says what to give instead."""
    if value not in browser_zones():
        raise ValueError(f"{value!r} is not an IANA time zone; give one such as Asia/Taipei or UTC")
    return value


def check_locale(value: str) -> str:
    """A BCP 47 language tag (zh-TW, en-US); ValueError says what to give instead."""
    if not _LOCALE.fullmatch(value):
        raise ValueError(f"{value!r} is not a BCP 47 language tag; give one such as zh-TW or en-US")
    return value


@dataclass(frozen=True)
class BrowserContextSettings:
    """What every browser context of a run is opened with, and every trace records."""

    timezone_id: str = DEFAULT_TIMEZONE
    locale: str = DEFAULT_LOCALE
