"""A page behind a login: the headers (``--header``) and Playwright storage state (``--storage-state``) an
audit brings to the site, and the secrets they carry, which no output may show.

Headers go to the audited origin only (a route on its URLs), never to a CDN or any other host the page
reaches. The storage state (cookies and each origin's localStorage, as Playwright's
``context.storage_state()`` writes it) opens every browser context, and is put back after ``--all-tools``
clears the origin's cookies and storage before each call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from playwright.async_api import BrowserContext, Page, Route

from webmcp_eval.data_file import FileProblem, load_json
from webmcp_eval.errors import InvalidInput
from webmcp_eval.proxies.redaction import MIN_SECRET, REDACTED, credential_secrets, scrub

T = TypeVar("T")
RESTORE_PATH = "/__webmcp_eval_restore_storage__"  # answered by the route below: no request reaches the site


class AccessError(InvalidInput, ValueError):
    """A header or storage-state file that cannot be used: one line, exit 2."""


@dataclass
class Access:
    origin: str = ""  # the audited origin: the only one that gets the headers
    headers: dict[str, str] = field(default_factory=dict)
    state: dict[str, Any] | None = None  # Playwright's storage state
    # HTTP authentication taken out of the audited URL's user:password@ (webmcp_eval/suite/site.py split_credentials)
    credentials: tuple[str, str] | None = None
    # values the site handed out during the audit (the cookies it set): secrets as much as those brought
    learned: set[str] = field(default_factory=set)

    def secrets(self) -> set[str]:
        """Every value that opens the site: header values (a Bearer token also alone), cookie and localStorage
        values of the storage state (those of MIN_SECRET characters or more: shorter ones occur by chance), the
        password of the URL and the Basic value made of it, and the cookies the site set."""
        found: set[str] = credential_secrets(self.credentials) | self.learned
        for value in self.headers.values():  # a Bearer token also alone
            found |= {value.strip(), value.strip().split(" ", 1)[-1]}
        state = self.state or {}
        found |= {
            str(c.get("value") or "") for c in state.get("cookies", []) if len(str(c.get("value") or "")) >= MIN_SECRET
        }
        for origin in state.get("origins", []):
            found |= {
                str(i.get("value") or "")
                for i in origin.get("localStorage", [])
                if len(str(i.get("value") or "")) >= MIN_SECRET
            }
        return {s for s in found if len(s) >= MIN_SECRET}  # a shorter value would be scrubbed out of every word

    def redact(self, value: T) -> T:
        """The text or JSON value with every secret replaced, in every spelling (proxies/redaction.py)."""
        return scrub(value, self.secrets())  # type: ignore[no-any-return]  # scrub keeps the value's shape

    async def learn(self, context: BrowserContext) -> None:
        """Take the cookies the site set in context as secrets (before the context closes)."""
        cookies = await context.cookies()
        self.learned |= {str(c.get("value") or "") for c in cookies if len(str(c.get("value") or "")) >= MIN_SECRET}

    async def open(self, context: BrowserContext) -> None:
        """Send the headers to the audited origin's requests only."""
        if not self.headers:
            return

        async def add_headers(route: Route) -> None:
            await route.continue_(headers={**route.request.headers, **self.headers})

        await context.route(lambda url: _origin(url) == self.origin, add_headers)

    async def restore(self, page: Page) -> None:
        """Put the storage state back after the origin's data was cleared: its cookies, and each origin's
        localStorage written from a blank document of that origin (a route answers it, not the site)."""
        if not self.state:
            return
        if self.state.get("cookies"):
            await page.context.add_cookies(self.state["cookies"])
        for origin in self.state.get("origins", []):
            items = origin.get("localStorage") or []
            if not items:
                continue
            url = origin["origin"] + RESTORE_PATH
            await page.route(url, lambda route: route.fulfill(body="<!doctype html>", content_type="text/html"))
            try:
                await page.goto(url)
                await page.evaluate("items => items.forEach(i => localStorage.setItem(i.name, i.value))", items)
            finally:
                await page.unroute(url)


def _origin(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


# RFC 9110's token: the characters a header name may have
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def parse_header(text: str) -> tuple[str, str]:
    """'Name: value' as (name, value); AccessError says what is wrong. The name is an HTTP token; the value is
    printable ASCII with spaces and tabs (a CR or LF would end the header and start another; a browser refuses
    other bytes)."""
    name, sep, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not sep or not name:
        raise AccessError(f"--header {text.split(':')[0]!r}: give 'Name: value' (e.g. 'Authorization: Bearer …')")
    if not _TOKEN.fullmatch(name):
        raise AccessError(f"--header {name!r}: a header name is letters, digits and !#$%&'*+.^_`|~- only")
    if any(not (" " <= c <= "~" or c == "\t") for c in value):
        raise AccessError(f"--header {name}: its value holds a line break, a control or a non-ASCII character")
    return name, value


def read_storage_state(path: Path) -> dict[str, Any]:
    """Playwright's storage state file, checked as Playwright takes it: {cookies: [{name, value, and a url or
    a domain and path}], origins: [{origin, localStorage: [{name, value}]}]}, every name and value a string."""
    try:
        data = load_json(path)  # depth-limited: a file nested 100,000 deep is a line, not a crash
    except FileProblem as err:
        raise AccessError(f"--storage-state {err.at(path)}") from None
    cookies = data.get("cookies", []) if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(cookies, list):
        raise AccessError(f"--storage-state {path}: not a Playwright storage state (cookies: [...], origins: [...])")
    for i, cookie in enumerate(cookies):
        if problem := _cookie_problem(cookie):
            raise AccessError(f"--storage-state {path}: cookies[{i}]: {problem}")
    origins = data.get("origins", [])
    if not isinstance(origins, list):
        raise AccessError(f"--storage-state {path}: origins must be a list of {{origin, localStorage}}")
    for i, origin in enumerate(origins):
        if problem := _origin_problem(origin):
            raise AccessError(f"--storage-state {path}: origins[{i}]: {problem}")
    return data


def _cookie_problem(cookie: object) -> str | None:
    if not isinstance(cookie, dict):
        return "expected {name, value, domain, path} (or a url)"
    for key in ("name", "value"):
        if not isinstance(cookie.get(key), str):
            return f"{key} must be a string"
    for key in ("domain", "path", "url", "sameSite"):
        if key in cookie and not isinstance(cookie[key], str):
            return f"{key} must be a string"
    if not (isinstance(cookie.get("url"), str) or (isinstance(cookie.get("domain"), str) and "path" in cookie)):
        return "give a url, or a domain and a path"
    if cookie.get("sameSite", "Lax") not in ("Strict", "Lax", "None"):
        return "sameSite must be Strict, Lax or None"
    for key in ("expires",):
        if key in cookie and (isinstance(cookie[key], bool) or not isinstance(cookie[key], int | float)):
            return f"{key} must be a number"
    for key in ("httpOnly", "secure"):
        if key in cookie and not isinstance(cookie[key], bool):
            return f"{key} must be true or false"
    return None


def _origin_problem(origin: object) -> str | None:
    if not isinstance(origin, dict) or not isinstance(origin.get("origin"), str):
        return "expected {origin: 'https://host', localStorage: [{name, value}]}"
    if not origin["origin"].startswith(("http://", "https://")):
        return f"origin {origin['origin']!r} must be an http(s) origin"
    items = origin.get("localStorage", [])
    if not isinstance(items, list) or not all(
        isinstance(i, dict) and isinstance(i.get("name"), str) and isinstance(i.get("value"), str) for i in items
    ):
        return "localStorage must be a list of {name, value}, both strings"
    return None


__all__ = ["REDACTED", "Access", "AccessError", "parse_header", "read_storage_state"]
