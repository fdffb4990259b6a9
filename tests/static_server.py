"""The second test site: a static tea shop under /demo/, plus a second host standing in for a CDN.

Served by Python's own static file server (no server state, no test API): the
shop keeps its cart in localStorage, registers its tools late, has one
declarative form tool, and loads a web font from the other host. The only
"build step" writes the CDN's address into the copied files. The CDN also
answers ``POST /share`` (the shop's sharing service), which ``http.server``
alone does not: serve the shop with this module, as the tests do.

    python tests/static_server.py --port 8000    # the shop at http://127.0.0.1:8000/demo/, until Ctrl-C
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml

from webmcp_eval.suite.site import SiteConfig

SOURCE = Path(__file__).resolve().parent / "static_site"
CASES = SOURCE / "cases"


class _Quiet(SimpleHTTPRequestHandler):
    seen: list[tuple[str, str]]
    fail_once: set[str]

    def log_message(self, *args: object) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.seen.append(("GET", self.path))
        if self.path in self.fail_once:  # a server having a bad moment: 503 this once, then as usual
            self.fail_once.discard(self.path)
            self.send_error(503, "Service Unavailable")
            return
        super().do_GET()

    def end_headers(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")  # as font CDNs answer: fonts load in CORS mode
        super().end_headers()

    def do_POST(self) -> None:  # noqa: N802
        """The CDN's sharing service: takes the cart, answers a link."""
        self.seen.append(("POST", self.path))
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b'{"link": "https://share.example/c/1"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@dataclass
class StaticSite:
    root: Path
    site_port: int = 0
    cdn_port: int = 0
    site_seen: list[tuple[str, str]] = field(default_factory=list)
    cdn_seen: list[tuple[str, str]] = field(default_factory=list)
    fail_once: set[str] = field(default_factory=set)  # site paths that answer 503 the next time only

    @property
    def url(self) -> str:
        """The base URL, with its sub-path."""
        return f"http://127.0.0.1:{self.site_port}/demo/"

    @property
    def cdn(self) -> str:
        return f"http://127.0.0.1:{self.cdn_port}"

    def config(self, **changes: object) -> SiteConfig:
        """The shop's site config (tests/static_site/site.yaml) with this server's base URL."""
        data = yaml.safe_load((SOURCE / "site.yaml").read_text(encoding="utf-8"))
        return SiteConfig.model_validate({**data, "base_url": self.url, **changes})


def _serve(
    directory: Path, seen: list[tuple[str, str]], fail_once: set[str] | None = None, port: int = 0
) -> ThreadingHTTPServer:
    handler = type("Handler", (_Quiet,), {"seen": seen, "fail_once": fail_once if fail_once is not None else set()})
    server = ThreadingHTTPServer(("127.0.0.1", port), partial(handler, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@contextmanager
def static_site(tmp: Path, port: int = 0) -> Iterator[StaticSite]:
    """The shop copied into tmp and served on loopback (port 0: a free one); its CDN on a free port."""
    site = StaticSite(root=tmp)
    shutil.copytree(SOURCE / "cdn", tmp / "cdn")
    cdn = _serve(tmp / "cdn", site.cdn_seen)
    site.cdn_port = cdn.server_address[1]
    shutil.copytree(SOURCE / "site", tmp / "site")
    for path in (tmp / "site").rglob("*"):
        if path.suffix in (".html", ".js", ".css"):
            path.write_text(path.read_text(encoding="utf-8").replace("__CDN__", site.cdn), encoding="utf-8")
    server = _serve(tmp / "site", site.site_seen, site.fail_once, port)
    site.site_port = server.server_address[1]
    try:
        yield site
    finally:
        for s in (server, cdn):
            s.shutdown()
            s.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tests/static_server.py",
        description="Serve the static test shop on loopback as the tests serve it (its CDN on a free port), "
        "until Ctrl-C.",
    )
    parser.add_argument("--port", type=int, default=8000, help="the shop's port; 0 picks a free one (default 8000)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # `kill` too cleans the copied shop up
    try:
        with tempfile.TemporaryDirectory(prefix="static-shop-") as tmp, static_site(Path(tmp), args.port) as shop:
            print(f"the static shop: {shop.url} (its CDN: {shop.cdn}); Ctrl-C stops it", flush=True)
            threading.Event().wait()
    except KeyboardInterrupt:
        pass
    except OSError as err:  # the port is taken
        print(f"error: port {args.port}: {err.strerror}; pick another with --port", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
