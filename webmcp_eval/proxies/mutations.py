"""Proxy-side mutation operators: the site's answers rewritten on their way to the page.

Each operator is a per-trial rewriter with ``request(flow)`` and/or
``response(flow)`` (called by the addon on the proxy thread) and counts how
often it fired. ``Observer`` changes nothing: it records what a trial's page
asked and got, so ``webmcp-eval mutate`` knows which cases touch which routes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from mitmproxy import http

LEAK = 'sqlite3.OperationalError: database is locked (File "/srv/app/db.py", line 88, in query)'
MUTATING = ("POST", "PUT", "PATCH", "DELETE")


def path_template(path: str) -> str:
    """/api/events/evt-a7k2p9 -> /api/events/*: segments that look like IDs become *."""
    parts = [p if not re.search(r"[\d_-]", p) and len(p) <= 24 else "*" for p in path.split("/")]
    return "/".join(parts) or "/"


def _json(message: http.Message) -> Any:
    if "json" not in message.headers.get("content-type", ""):
        return None
    try:
        return json.loads(message.get_content(strict=False) or b"null")
    except ValueError:
        return None


def _set_json(message: http.Message, value: Any) -> None:
    message.set_content(json.dumps(value, ensure_ascii=False).encode())
    message.headers["content-type"] = "application/json"


@dataclass
class Rewriter:
    fired: int = 0
    errors: list[str] = field(default_factory=list)


@dataclass
class Observer(Rewriter):
    """Records every exchange (method, path, query, status, JSON bodies); rewrites nothing."""

    exchanges: list[dict[str, Any]] = field(default_factory=list)

    def response(self, flow: http.HTTPFlow) -> None:
        req, resp = flow.request, flow.response
        assert resp is not None
        parts = urlsplit(req.path)
        self.exchanges.append(
            {
                "method": req.method,
                "path": parts.path,
                "template": path_template(parts.path),
                "query": dict(parse_qsl(parts.query)),
                "status": resp.status_code,
                "request_json": _json(req),
                "request_type": req.headers.get("content-type", ""),
                "response_json": _json(resp),
            }
        )


@dataclass
class ParamIgnored(Rewriter):
    """The site ignores one query parameter (a filter): it is dropped before the site sees it."""

    path: str = "*"
    param: str = ""

    def request(self, flow: http.HTTPFlow) -> None:
        parts = urlsplit(flow.request.path)
        query = parse_qsl(parts.query, keep_blank_values=True)
        if flow.request.method != "GET" or not fnmatchcase(parts.path, self.path):
            return
        kept = [(k, v) for k, v in query if k != self.param]
        if len(kept) != len(query):
            self.fired += 1
            flow.request.path = parts.path + (f"?{urlencode(kept)}" if kept else "")


# Han, kana and Hangul: what a search that keeps only ASCII-friendly characters loses
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


@dataclass
class ScriptStripped(Rewriter):
    """The site drops the Chinese, Japanese and Korean characters of one query parameter before it searches
    (the page and the tool's arguments still show them): it answers a wider query than was asked."""

    path: str = "*"
    param: str = ""

    def request(self, flow: http.HTTPFlow) -> None:
        parts = urlsplit(flow.request.path)
        if flow.request.method != "GET" or not fnmatchcase(parts.path, self.path):
            return
        query = parse_qsl(parts.query, keep_blank_values=True)
        kept = [(k, CJK.sub("", v).strip() if k == self.param else v) for k, v in query]
        if kept != query:
            self.fired += 1
            flow.request.path = parts.path + f"?{urlencode(kept)}"


def emptied(value: Any) -> Any:
    """A success body with every list emptied: 'nothing here' instead of 'you are not signed in'."""
    if isinstance(value, dict):
        return {k: emptied(v) for k, v in value.items()}
    if isinstance(value, list):
        return []
    return value


@dataclass
class UnauthorizedAsSuccess(Rewriter):
    """A 401 answered as an empty success (200 with the route's success body, lists emptied)."""

    method: str = "*"
    path: str = "*"
    success: Any = None  # a success body of the same route, as seen without the mutation

    def response(self, flow: http.HTTPFlow) -> None:
        resp = flow.response
        if resp is None or resp.status_code != 401 or not self._matches(flow):
            return
        self.fired += 1
        resp.status_code = 200
        _set_json(resp, emptied(self.success) if self.success is not None else {})

    def _matches(self, flow: http.HTTPFlow) -> bool:
        method_ok = self.method in ("*", flow.request.method)
        return method_ok and fnmatchcase(urlsplit(flow.request.path).path, self.path)


@dataclass
class ErrorLeaks(Rewriter):
    """An error answer whose message leaks internals (a stack frame, the database)."""

    path: str = "*"

    def response(self, flow: http.HTTPFlow) -> None:
        resp = flow.response
        if resp is None or resp.status_code < 400 or not fnmatchcase(urlsplit(flow.request.path).path, self.path):
            return
        body = _json(resp)
        if isinstance(body, dict) and isinstance(body.get("message"), str):
            self.fired += 1
            body["message"] = f"{body['message']} {LEAK}"
            _set_json(resp, body)


def _freshened(value: Any) -> Any:
    """Flags that say 'this was done before' set to false: the repeat looks like a first write."""
    if isinstance(value, dict):
        return {
            k: False if isinstance(v, bool) and re.match(r"(?i)already|replayed|duplicate", k) else _freshened(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_freshened(v) for v in value]
    return value


@dataclass
class RepeatAnsweredFresh(Rewriter):
    """A repeated identical write is answered as a first one (not idempotent as far as the page can tell)."""

    path: str = "*"
    seen: set[tuple[str, str, bytes]] = field(default_factory=set)

    def response(self, flow: http.HTTPFlow) -> None:
        req, resp = flow.request, flow.response
        if resp is None or req.method not in MUTATING or not fnmatchcase(urlsplit(req.path).path, self.path):
            return
        key = (req.method, req.path, req.get_content(strict=False) or b"")
        if key not in self.seen:
            self.seen.add(key)
            return
        body = _json(resp)
        fresh = _freshened(body)
        if body is not None and fresh != body:
            self.fired += 1
            _set_json(resp, fresh)
