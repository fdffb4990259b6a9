"""A small tea shop whose tools are each made for one cause of a smoke verdict (tests/smoke_cause_site/), served
on a free loopback port: a tool without inputSchema, forms that navigate or that the browser's own validation
refuses, tools whose call takes the page away, a validation list, an isError answer, forms as Chrome checks them."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

SITE = Path(__file__).resolve().parent / "smoke_cause_site"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def smoke_cause_site() -> Iterator[str]:
    """The site's base URL (http://127.0.0.1:PORT/) while it is served."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(SITE)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
