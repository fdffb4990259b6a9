"""The audit's own test site (tests/audit_site/): static pages on one loopback port, frames from a second.

The site records every write it receives (``POST /api/log``) so a test can
tell what a smoke call wrote; ``GET /away`` redirects to the other origin (a
redirect the crawl must not follow); ``POST /__test__/reset`` is the reset
hook ``--all-tools`` uses for a fresh world per call. ``/private.html`` is a
page behind a login: it answers 401 without ``Authorization: Bearer
<TOKEN>``, and writes the header it got into the page (a leak the audit's
outputs must redact); both servers note every Authorization header they get.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "audit_site"


TOKEN = "Bearer audit-secret-7f3a9c"


class _Handler(SimpleHTTPRequestHandler):
    writes: list[str]
    resets: list[str]
    auths: list[str]
    other: str

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.headers.get("Authorization"):
            self.auths.append(f"{self.path} {self.headers['Authorization']}")
        if self.path.startswith("/private.html"):
            self._private()
            return
        if self.path == "/away":
            self.send_response(302)
            self.send_header("Location", f"{self.other}/cross.html")
            self.end_headers()
            return
        super().do_GET()

    def _private(self) -> None:
        if self.headers.get("Authorization") != TOKEN:
            self.send_error(401)
            return
        page = Path(self.directory, "private.html").read_text(encoding="utf-8")
        body = page.replace("__AUTH__", TOKEN).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8", "replace")
        if self.path == "/api/log":
            self.writes.append(body)
        elif self.path == "/__test__/reset":
            self.resets.append(body)
        else:
            self.send_error(404)
            return
        self.send_response(204)
        self.end_headers()


@dataclass
class AuditSite:
    port: int = 0
    other_port: int = 0
    writes: list[str] = field(default_factory=list)
    resets: list[str] = field(default_factory=list)
    auths: list[str] = field(default_factory=list)  # "PATH VALUE" per request with an Authorization header
    other_auths: list[str] = field(default_factory=list)  # the same on the other origin: must stay empty

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def other(self) -> str:
        return f"http://127.0.0.1:{self.other_port}"


def _serve(directory: Path, **attrs: object) -> ThreadingHTTPServer:
    handler = type("Handler", (_Handler,), attrs)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@contextmanager
def audit_site(tmp: Path) -> Iterator[AuditSite]:
    site = AuditSite()
    other = _serve(SOURCE / "other", writes=[], resets=[], auths=site.other_auths, other="")
    site.other_port = other.server_address[1]
    shutil.copytree(SOURCE / "site", tmp / "site")
    for path in (tmp / "site").glob("*.html"):
        path.write_text(path.read_text(encoding="utf-8").replace("__OTHER__", site.other), encoding="utf-8")
    server = _serve(tmp / "site", writes=site.writes, resets=site.resets, auths=site.auths, other=site.other)
    site.port = server.server_address[1]
    try:
        yield site
    finally:
        for s in (server, other):
            s.shutdown()
            s.server_close()
