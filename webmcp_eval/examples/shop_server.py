"""The example tea shop (``webmcp-eval serve-example shop``), served as the project's own tests serve it.

Python's own static file server, no server state: the shop keeps its cart in localStorage, registers its
tools late, has one declarative form tool, and loads a web font from a second host, its CDN. The only
"build step" writes the CDN's address into a copy of the files (they hold a ``__CDN__`` placeholder). The CDN
also answers ``POST /share`` (the shop's sharing service), which ``python -m http.server`` alone does not.
Both servers keep what they were asked (``site_seen``, ``cdn_seen``), and ``fail_once`` makes a path answer
503 the next time only: a test reads and sets them.
"""

from __future__ import annotations

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

SHOP = Path(__file__).resolve().parent / "shop"  # site/ (the shop under demo/) and cdn/ (its web font)
EXAMPLES = ("shop",)


class _Handler(SimpleHTTPRequestHandler):
    seen: list[tuple[str, str]]
    fail_once: set[str]

    def log_message(self, *args: object) -> None:  # one line at start says where it is; no line per request
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
class ShopServer:
    root: Path  # where the served copy lies
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


def serve_directory(
    directory: Path, seen: list[tuple[str, str]], fail_once: set[str] | None = None, port: int = 0
) -> ThreadingHTTPServer:
    """A folder served on loopback in a thread of its own (port 0: a free one); OSError when the port is taken."""
    handler = type("Handler", (_Handler,), {"seen": seen, "fail_once": fail_once if fail_once is not None else set()})
    server = ThreadingHTTPServer(("127.0.0.1", port), partial(handler, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@contextmanager
def served_shop(tmp: Path, port: int = 0, shop: ShopServer | None = None) -> Iterator[ShopServer]:
    """The shop copied into tmp and served on loopback (port 0: a free one), its CDN on a free port."""
    shop = shop or ShopServer(root=tmp)
    shutil.copytree(SHOP / "cdn", tmp / "cdn")
    cdn = serve_directory(tmp / "cdn", shop.cdn_seen)
    shop.cdn_port = cdn.server_address[1]
    servers = [cdn]
    try:
        shutil.copytree(SHOP / "site", tmp / "site")
        for path in (tmp / "site").rglob("*"):
            if path.suffix in (".html", ".js", ".css"):
                path.write_text(path.read_text(encoding="utf-8").replace("__CDN__", shop.cdn), encoding="utf-8")
        servers.append(serve_directory(tmp / "site", shop.site_seen, shop.fail_once, port))
        shop.site_port = servers[-1].server_address[1]
        yield shop
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def serve_example(name: str, port: int) -> None:
    """Serve the example until Ctrl-C (or SIGTERM); OSError when the port cannot be listened on."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # `kill` too removes the served copy
    try:
        with tempfile.TemporaryDirectory(prefix=f"webmcp-eval-{name}-") as tmp, served_shop(Path(tmp), port) as shop:
            print(f"the example {name}: {shop.url} (its CDN: {shop.cdn}); Ctrl-C stops it", flush=True)
            threading.Event().wait()
    except KeyboardInterrupt:
        pass
