"""Secret redaction: which headers, fields and values are secrets, and what replaces them.

One set of rules for everything the runner keeps: fixtures (record/replay),
traces, and the Playwright trace.zip files kept with ``--trace``. Secret
headers (cookies, Authorization, CSRF and token headers) lose their values;
JSON, form and query fields named like tokens, keys, secrets or passwords hold
``<redacted>``; and every secret value seen anywhere is scrubbed wherever else
it appears (a CSRF token echoed in a page, a session id in a URL); CSRF tokens a page
carries in its HTML (hidden inputs, ``<meta name="csrf-token">``) are such values too.

A secret is found by its value in every spelling a page or a server may give it (``spellings``): as it
is, JSON-escaped at any depth, URL-encoded, base64 and HTML-escaped, so a site that echoes a token
inside a JSON string inside a JSON answer does not carry it past the scrub. ``scrub`` runs before
anything is cut short: a token's first characters never survive a truncation.
"""

from __future__ import annotations

import base64
import html
import json
import re
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlencode, urlsplit, urlunsplit

REDACTED = "<redacted>"
# Cookie values must stay valid cookie octets, so no angle brackets there.
REDACTED_COOKIE = "REDACTED"

# Header names whose values are secrets wherever they appear.
SECRET_HEADERS = {"cookie", "set-cookie", "authorization", "proxy-authorization", "x-csrf-token"}
SECRET_HEADER_PATTERN = re.compile(r"api[-_]?key|token|secret", re.I)
# JSON fields, query parameters and form fields whose values are secrets.
SECRET_FIELD_PATTERN = re.compile(r"token|api[-_]?key|secret|password|passwd|csrf", re.I)


def is_secret_header(name: str) -> bool:
    lower = name.lower()
    return lower in SECRET_HEADERS or bool(SECRET_HEADER_PATTERN.search(lower))


def is_secret_field(name: str) -> bool:
    return bool(SECRET_FIELD_PATTERN.search(name))


def redact_json(value: Any) -> Any:
    """The same JSON value with every secret-named field's value replaced."""
    if isinstance(value, dict):
        return {
            k: (REDACTED if is_secret_field(k) and v not in (None, "") else redact_json(v)) for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact_json(v) for v in value]
    return value


def redact_pairs(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k, REDACTED if is_secret_field(k) and v else v) for k, v in pairs]


def redact_query(query: str) -> str:
    """The query string with secret parameters redacted (order kept); unchanged when it has none."""
    pairs = parse_qsl(query, keep_blank_values=True)
    redacted = redact_pairs(pairs)
    return query if redacted == pairs else urlencode(redacted)


def redact_url(url: str) -> str:
    parts = urlsplit(url)
    query = redact_query(parts.query)
    return url if query == parts.query else urlunsplit(parts._replace(query=query))


def redact_cookie(value: str, *, set_cookie: bool) -> str:
    """Keep cookie names (a reviewer sees what was set) but never their values."""
    if set_cookie:
        first, *attrs = [p.strip() for p in value.split(";")]
        name = first.split("=", 1)[0]
        kept = [a for a in attrs if a.split("=", 1)[0].strip().lower() not in ("expires", "max-age")]
        return "; ".join([f"{name}={REDACTED_COOKIE}", *kept])
    names = [p.split("=", 1)[0].strip() for p in value.split(";") if p.strip()]
    return "; ".join(f"{n}={REDACTED_COOKIE}" for n in names)


MIN_SECRET = 8  # shorter values are too likely to occur by chance in other text


def secrets_in_headers(pairs: list[tuple[str, str]]) -> set[str]:
    """Secret values carried by headers: cookie values, tokens, credentials."""
    found: set[str] = set()
    for name, value in pairs:
        lower = name.lower()
        if lower in ("cookie", "set-cookie"):
            parts = value.split(";") if lower == "cookie" else value.split(";")[:1]
            found.update(p.split("=", 1)[1].strip() for p in parts if "=" in p)
        elif is_secret_header(lower):
            found.add(value.strip())
            if " " in value.strip():  # "Bearer abc...": the credential alone may appear elsewhere
                found.add(value.strip().split(" ", 1)[1])
    return {s for s in found if len(s) >= MIN_SECRET}


def secrets_in_json(value: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            if is_secret_field(k) and isinstance(v, str) and len(v) >= MIN_SECRET:
                found.add(v)
            else:
                found |= secrets_in_json(v)
    elif isinstance(value, list):
        for v in value:
            found |= secrets_in_json(v)
    return found


_TAG = re.compile(r"<(input|meta)\b[^>]*>", re.I)
_ATTR = re.compile(r"""([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""")


def secrets_in_html(text: str) -> set[str]:
    """CSRF and other tokens a page carries in its HTML: hidden inputs named like secrets
    (``csrfmiddlewaretoken``, ``authenticity_token``, ``_csrf``) and ``<meta name="csrf-token" content=…>``."""
    found: set[str] = set()
    for tag in _TAG.finditer(text):
        attrs = {m.group(1).lower(): m.group(2) or m.group(3) or m.group(4) or "" for m in _ATTR.finditer(tag.group(0))}
        if not is_secret_field(attrs.get("name", "")):
            continue
        found.add(attrs.get("value" if tag.group(1).lower() == "input" else "content", ""))
    return {s for s in found if len(s) >= MIN_SECRET}


JSON_DEPTH = 4  # a string escaped this many times over (JSON in JSON in JSON…) is still found


@lru_cache(maxsize=4096)
def spellings(secret: str) -> frozenset[str]:
    """Every way the secret may be written in text the run keeps: as it is, JSON-escaped at each depth up to
    JSON_DEPTH, URL-encoded (both ways), base64 (standard and URL-safe, with and without padding) and
    HTML-escaped."""
    found = {secret, quote(secret), quote(secret, safe=""), quote_plus(secret), quote_plus(secret, safe="/")}
    found.add(html.escape(secret))
    level = {secret}
    for _ in range(JSON_DEPTH):  # each level escaped by a writer that keeps non-ASCII, or one that \u-escapes it
        level = {json.dumps(s, ensure_ascii=ascii)[1:-1] for s in level for ascii in (False, True)}
        found |= level
    raw = secret.encode("utf-8", "surrogatepass")
    for encoded in (base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()):
        found |= {encoded, encoded.rstrip("=")}
    return frozenset(s for s in found if s)


def credential_secrets(credentials: tuple[str, str] | None) -> set[str]:
    """What HTTP authentication puts on the wire: the password, and the Basic value built from user:password
    (which a site that echoes its request headers shows)."""
    if not credentials:
        return set()
    user, password = credentials
    basic = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {s for s in (password, basic) if len(s) >= MIN_SECRET}


def _patterns(secrets: frozenset[str]) -> list[str]:
    """Every spelling of every secret, longest first (a longer spelling holds a shorter one)."""
    every = {spelled for secret in secrets for spelled in spellings(secret)}
    return sorted(every, key=len, reverse=True)


def scrub(value: Any, secrets: set[str]) -> Any:
    """Replace every known secret value, in every spelling, inside strings (recursively for JSON values)."""
    if not secrets:
        return value
    return _scrub(value, _patterns(frozenset(secrets)))


# characters every JSON writer writes as themselves: a run of them in a string is in the string's JSON text as it is
_PLAIN_RUN = re.compile(r"[A-Za-z0-9_.~=+%:-]+")


def may_hold_secret(text: str, secrets: set[str]) -> bool:
    """False only when no string of the JSON value whose text this is holds a secret in any spelling: then ``scrub``
    would change nothing. A spelling in a string is in the text escaped, however the writer escapes (quotes,
    backslashes, control or non-ASCII characters), so what is looked for is each run of its plain characters; a
    spelling without any is taken to be there."""
    for spelled in _patterns(frozenset(secrets)):
        runs = _PLAIN_RUN.findall(spelled)
        if not runs or all(run in text for run in runs):
            return True
    return False


def _scrub(value: Any, patterns: list[str]) -> Any:
    if isinstance(value, str):
        for spelled in patterns:
            if spelled in value:
                value = value.replace(spelled, REDACTED)
        return value
    if isinstance(value, dict):
        return {k: _scrub(v, patterns) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, patterns) for v in value]
    return value
