"""Real local HTTP servers for the proxy tests (imported by conftest and the tests).

`OriginServer` is a tiny threaded http.server on a free 127.0.0.1 port that
counts every request it receives. It plays a site with a session cookie and a
CSRF token (like the demo site: GET /api/session, writes need X-CSRF-Token),
a page for the browser test, a binary asset, and a JSON echo for everything
else whose ``n`` (the server's request count) makes every answer distinct.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import ssl
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from mitmproxy import certs

from webmcp_eval.proxies import NetworkProxy

SESSION_COOKIE_VALUE = "sess-7f3a9c1e5b2d4f60a8e1"
CSRF_TOKEN = "csrf-4b1d8e2a9f7c3e5d6a0b"
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000") + bytes(range(256))

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>loading</title><link rel="icon" href="data:,"></head>
<body><img src="/logo.png" alt="logo">
<script>
(async () => {
  const session = await (await fetch('/api/session')).json();
  const saved = await fetch('/api/saved', {
    method: 'POST',
    headers: {'Content-Type': 'application/json', 'X-CSRF-Token': session.csrfToken},
    body: JSON.stringify({eventId: 'evt-1', note: '台北'}),
  });
  window.result = await saved.json();
  document.title = 'done ' + saved.status;
})();
</script></body></html>
"""


@dataclass
class Hit:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class OriginServer:
    """A real HTTP server in a thread; `hits` is every request it received, in order."""

    hits: list[Hit] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    tls: ssl.SSLContext | None = None

    def start(self) -> OriginServer:
        origin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # One segment per answer: without it Nagle + delayed ACK add 40 ms to some requests.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with origin.lock:
                    origin.hits.append(Hit(self.command, self.path, dict(self.headers.items()), body))
                    n = len(origin.hits)
                status, headers, content = origin.answer(self, body, n)
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(content)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        if self.tls is not None:
            self.server.socket = self.tls.wrap_socket(self.server.socket, server_side=True)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()
        return self

    @property
    def url(self) -> str:
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://127.0.0.1:{self.server.server_port}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def count(self, method: str | None = None, path: str | None = None) -> int:
        with self.lock:
            return sum(
                1
                for h in self.hits
                if (method is None or h.method == method) and (path is None or h.path.split("?")[0] == path)
            )

    def answer(self, handler: BaseHTTPRequestHandler, body: bytes, n: int) -> tuple[int, list[tuple[str, str]], bytes]:
        path = urlsplit(handler.path).path
        date = [("Date", "Wed, 02 Dec 2026 10:00:00 GMT"), ("Server", "origin/1.0"), ("Server-Timing", f"app;dur={n}")]
        if path == "/page":
            return 200, [("Content-Type", "text/html; charset=utf-8"), *date], PAGE.encode()
        if path == "/logo.png":
            return 200, [("Content-Type", "image/png"), ("Cache-Control", "no-store")], PNG
        if path == "/notes.txt":
            return 200, [("Content-Type", "text/plain; charset=utf-8")], f"line one\n第二行\nrequest {n}\n".encode()
        if path == "/api/session":
            data = {"user": "demo", "csrfToken": CSRF_TOKEN, "n": n}
            cookie = ("Set-Cookie", f"sess={SESSION_COOKIE_VALUE}; HttpOnly; Path=/; Max-Age=3600")
            return 200, [("Content-Type", "application/json"), cookie, *date], json.dumps(data).encode()
        if path == "/api/saved" and handler.command == "POST" and handler.headers.get("X-CSRF-Token") != CSRF_TOKEN:
            return 403, [("Content-Type", "application/json")], b'{"status":"error","code":"FORBIDDEN"}'
        if path == "/api/whoami":  # echoes secrets in fields not named like secrets: the value scrub must catch them
            data = {
                "cookieHeader": handler.headers.get("Cookie", ""),
                "auth": handler.headers.get("Authorization", ""),
                "password": "hunter2-hunter2",
                "profile": {"apiKey": "ak-1234567890abcdef"},
            }
            return 200, [("Content-Type", "application/json")], json.dumps(data).encode()
        parsed: Any
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = body.decode("utf-8", "replace")
        echo = {
            "method": handler.command,
            "path": path,
            "query": dict(parse_qsl(urlsplit(handler.path).query)),
            "body": parsed,
            "n": n,
        }
        return 200, [("Content-Type", "application/json"), *date], json.dumps(echo, ensure_ascii=False).encode()


def start_origin(tls: ssl.SSLContext | None = None) -> OriginServer:
    return OriginServer(tls=tls).start()


def self_signed_tls(directory: Path) -> ssl.SSLContext:
    """A server TLS context for 127.0.0.1 with a throwaway CA (mitmproxy's cert helpers make it)."""
    store = certs.CertStore.from_store(directory, "origin-ca", 2048)
    entry = store.get_cert("127.0.0.1", [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    cert, key = directory / "origin.pem", directory / "origin.key"
    cert.write_bytes(entry.cert.to_pem())
    key.write_bytes(
        entry.privatekey.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context


@dataclass
class Stack:
    origin: OriginServer
    proxy: NetworkProxy


def new_trial_id() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"
