"""Playwright's trace.zip (kept with ``--trace``) made safe to share.

Playwright records every request and response of the trial: session cookies,
Set-Cookie headers, CSRF tokens in API answers and page snapshots. Before a
kept trace.zip is left on disk, the fixtures' redaction rules
(webmcp_eval/proxies/redaction.py) are applied inside it: secret headers and cookie
values are replaced, secret-named JSON and form fields hold ``<redacted>``,
and every secret value found anywhere is scrubbed from every file of the zip
(network log, action log, DOM snapshots, response bodies).
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from webmcp_eval.proxies.files import file_mode
from webmcp_eval.proxies.redaction import (
    MIN_SECRET,
    REDACTED,
    REDACTED_COOKIE,
    is_secret_field,
    is_secret_header,
    redact_cookie,
    redact_json,
    redact_url,
    scrub,
    secrets_in_headers,
    secrets_in_html,
    secrets_in_json,
)

LOGS = (".trace", ".network")  # JSON lines: Playwright's action and network logs


def redact_trace_zip(path: Path) -> int:
    """Rewrite the zip at path with every secret redacted (atomically); the number of secret values found."""
    with zipfile.ZipFile(path) as zin:
        members = [(info, zin.read(info)) for info in zin.infolist()]
    secrets: set[str] = set()
    for info, data in members:
        secrets |= _secrets_in(info.filename, data)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, file_mode(path))  # the zip's own mode, not mkstemp's 0600
        with os.fdopen(fd, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as zout:
            for info, data in members:
                zout.writestr(info, _redacted(info.filename, data, secrets))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(secrets)


def _json_lines(data: bytes) -> list[Any] | None:
    try:
        return [json.loads(line) if line.strip() else None for line in data.decode("utf-8").split("\n")]
    except (UnicodeDecodeError, ValueError):
        return None


def _json(data: bytes) -> tuple[bool, Any]:
    try:
        return True, json.loads(data)
    except (UnicodeDecodeError, ValueError):
        return False, None


def _secrets_in(name: str, data: bytes) -> set[str]:
    found: set[str] = set()
    if name.endswith(LOGS):
        for record in _json_lines(data) or []:
            _walk_for_secrets(record, found)
    else:
        is_json, value = _json(data)
        if is_json:
            found |= secrets_in_json(value)
        else:  # a resource: a page's HTML carries its CSRF tokens
            found |= secrets_in_html(data.decode("utf-8", "replace"))
    return found


def _walk_for_secrets(value: object, found: set[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "headers" and _is_pairs(item):
                found |= secrets_in_headers([(h["name"], h["value"]) for h in item])
            elif key == "cookies" and _is_pairs(item):
                found |= {c["value"] for c in item if len(c["value"]) >= MIN_SECRET}
            elif key == "postData" and isinstance(item, dict) and isinstance(item.get("text"), str):
                found |= _secrets_in_body(item["text"])
            elif isinstance(item, str) and ("<input" in item or "<meta" in item):  # HTML kept as text
                found |= secrets_in_html(item)
            else:
                _walk_for_secrets(item, found)
    elif isinstance(value, list):
        for item in value:
            _walk_for_secrets(item, found)


def _secrets_in_body(text: str) -> set[str]:
    is_json, value = _json(text.encode())
    if is_json:
        return secrets_in_json(value)
    return {v for k, v in parse_qsl(text) if is_secret_field(k) and len(v) >= MIN_SECRET}


def _is_pairs(item: object) -> bool:
    return isinstance(item, list) and all(
        isinstance(h, dict) and isinstance(h.get("name"), str) and isinstance(h.get("value"), str) for h in item
    )


def _redacted(name: str, data: bytes, secrets: set[str]) -> bytes:
    records = _json_lines(data) if name.endswith(LOGS) else None
    if records is not None:
        lines = [json.dumps(scrub(_redact_record(r), secrets), ensure_ascii=False) if r else "" for r in records]
        return "\n".join(lines).encode("utf-8")
    is_json, value = _json(data)
    if is_json:
        return json.dumps(scrub(redact_json(value), secrets), ensure_ascii=False).encode("utf-8")
    for secret in sorted(secrets, key=len, reverse=True):
        data = data.replace(secret.encode("utf-8"), REDACTED.encode())
    return data


def _redact_record(value: object) -> Any:
    """Secret headers, cookies, bodies and URL parameters of one log record, by name."""
    if isinstance(value, list):
        return [_redact_record(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key == "headers" and _is_pairs(item):
            out[key] = [{**h, "value": _redact_header(h["name"], h["value"])} for h in item]
        elif key == "cookies" and _is_pairs(item):
            out[key] = [{**c, "value": REDACTED_COOKIE} for c in item]
        elif key == "postData" and isinstance(item, dict) and isinstance(item.get("text"), str):
            is_json, body = _json(item["text"].encode())
            text = json.dumps(redact_json(body), ensure_ascii=False) if is_json else item["text"]
            out[key] = {**item, "text": text}
        elif key == "url" and isinstance(item, str):
            out[key] = redact_url(item)
        else:
            out[key] = _redact_record(item)
    return out


def _redact_header(name: str, value: str) -> str:
    lower = name.lower()
    if lower in ("cookie", "set-cookie"):
        return redact_cookie(value, set_cookie=lower == "set-cookie")
    return REDACTED if is_secret_header(lower) else value
