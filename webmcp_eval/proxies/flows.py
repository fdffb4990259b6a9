"""What the proxy does to one flow beside its accounting: an answer it makes up itself (marked, in the site's
result-contract shape), a rewriter called without its bugs taking the proxy down, the browser's connection kept
alive when the origin closes its own."""

from __future__ import annotations

import json
from typing import Any

from mitmproxy import http

MARK_HEADER = "X-WebMCP-Eval"  # on every answer the proxy makes up itself


def _json_response(status: int, code: str, message: str, mark: str, data: Any = None) -> http.Response:
    """An answer in the site's result-contract shape, so pages handle it like any error."""
    body = {"status": "error", "code": code, "message": message, "retryable": status >= 500, "data": data}
    return http.Response.make(
        status, json.dumps(body, ensure_ascii=False).encode(), {"Content-Type": "application/json", MARK_HEADER: mark}
    )


def _call_rewrite(rewrite: Any, phase: str, flow: http.HTTPFlow) -> None:
    """A rewriter's own bug must not take the proxy down; the flow then goes on unchanged."""
    method = getattr(rewrite, phase, None)
    if method is None:
        return
    try:
        method(flow)
    except Exception as err:  # noqa: BLE001 - reported on the rewriter, the trial goes on
        errors = getattr(rewrite, "errors", None)
        if isinstance(errors, list):
            errors.append(f"{phase} {flow.request.method} {flow.request.path}: {type(err).__name__}: {err}")


def _keep_client_alive(flow: http.HTTPFlow) -> None:
    """The browser's connection to the proxy outlives an origin that closes its own after each answer.

    An HTTP/1.0 origin (Python's http.server, many static file servers) or a
    ``Connection: close`` answer makes mitmproxy close the browser's connection
    too, so every request of a page paid for a new proxy connection as well as a
    new origin connection. The proxy holds the whole body here, so it can
    answer the browser as HTTP/1.1 with a known length on a connection that
    stays open; the origin's connection still closes as the origin asked (the
    upstream side keeps the response object it parsed, this is a copy).
    """
    response = flow.response
    if response is None or response.status_code == 101 or flow.request.method.upper() == "CONNECT":
        return
    closes = "close" in response.headers.get("connection", "").lower()
    if response.http_version != "HTTP/1.0" and not closes:
        return
    if response.raw_content is None:  # streamed: the length is not known here
        return
    kept = response.copy()
    kept.http_version = "HTTP/1.1"
    kept.headers.pop("connection", None)
    kept.headers.pop("keep-alive", None)
    bodiless = flow.request.method.upper() == "HEAD" or response.status_code in (204, 304)
    if not bodiless and "content-length" not in kept.headers and "transfer-encoding" not in kept.headers:
        kept.headers["content-length"] = str(len(response.raw_content))
    flow.response = kept
