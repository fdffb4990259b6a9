"""Canonical request keys, shared by record and replay (secrets redacted by .redaction's rules).

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
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from .redaction import redact_json, redact_pairs  # the secret rules: one place for every store

TRIAL_HEADER = "X-WebMCP-Eval-Trial"

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


def fixture_key(method: str, url: str, content: bytes, content_type: str, primary_origin: str) -> str:
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
