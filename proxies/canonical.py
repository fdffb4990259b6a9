"""Canonical request keys and secret redaction, shared by record and replay.

A fixture key is ``METHOD target[?query][ body]`` where ``target`` is the path
for the primary site origin (so a fixture recorded on one port or deployment
replays on another) and ``scheme://host[:port]path`` for any other host. The
query has its parameters sorted; a JSON body is parsed and dumped with sorted
keys; secrets are redacted *before* keying, so a key never holds a token and a
request whose token came from a redacted recording still matches.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "<redacted>"
# Cookie values must stay valid cookie octets, so no angle brackets there.
REDACTED_COOKIE = "REDACTED"
TRIAL_HEADER = "X-WebMCP-Eval-Trial"

# Header names whose values are secrets wherever they appear.
SECRET_HEADERS = {"cookie", "set-cookie", "authorization", "proxy-authorization", "x-csrf-token"}
SECRET_HEADER_PATTERN = re.compile(r"api[-_]?key|token|secret", re.I)
# JSON fields, query parameters and form fields whose values are secrets.
SECRET_FIELD_PATTERN = re.compile(r"token|api[-_]?key|secret|password|passwd|csrf", re.I)

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
DEFAULT_PORTS = {"http": 80, "https": 443}
LONG_BODY = 512  # canonical bodies longer than this are keyed by their hash


def normalize_origin(url: str) -> str:
    """``scheme://host:port`` with the port always explicit, lower-case host."""
    parts = urlsplit(url if "://" in url else f"http://{url}")
    scheme = (parts.scheme or "http").lower()
    port = parts.port or DEFAULT_PORTS.get(scheme, 80)
    return f"{scheme}://{(parts.hostname or '').lower()}:{port}"


def short_origin(url: str) -> str:
    """``scheme://host`` plus the port only when it is not the scheme's default."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port
    return f"{scheme}://{host}" if port in (None, DEFAULT_PORTS.get(scheme)) else f"{scheme}://{host}:{port}"


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


def canonical_query(query: str) -> str:
    return urlencode(sorted(redact_pairs(parse_qsl(query, keep_blank_values=True))))


def parse_json(content: bytes) -> tuple[bool, Any]:
    """(True, value) when content is JSON; (False, None) otherwise."""
    if not content:
        return False, None
    try:
        return True, json.loads(content)
    except (ValueError, UnicodeDecodeError):
        return False, None


def canonical_body(content: bytes, content_type: str = "") -> str:
    """JSON sorted and redacted, forms sorted and redacted, anything else byte-exact."""
    if not content:
        return ""
    is_json, value = parse_json(content)
    if is_json:
        text = json.dumps(redact_json(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    elif "application/x-www-form-urlencoded" in content_type.lower():
        text = canonical_query(content.decode("utf-8", "replace"))
    else:
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            text = "base64:" + base64.b64encode(content).decode()
    if len(text) > LONG_BODY:
        return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:32]
    return text


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


def scrub(value: Any, secrets: set[str]) -> Any:
    """Replace every known secret value inside strings (recursively for JSON values)."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in sorted(secrets, key=len, reverse=True):
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {k: scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, secrets) for v in value]
    return value


def request_key(method: str, url: str, content: bytes, content_type: str, primary_origin: str) -> str:
    """The fixture key of one request; never depends on when in the trial it was made."""
    parts = urlsplit(url)
    origin = normalize_origin(url)
    target = parts.path or "/"
    if origin != primary_origin:
        target = short_origin(url) + target
    key = f"{method.upper()} {target}"
    query = canonical_query(parts.query)
    if query:
        key += f"?{query}"
    body = canonical_body(content, content_type)
    if body:
        key += f" {body}"
    return key
