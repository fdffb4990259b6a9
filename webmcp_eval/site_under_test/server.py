"""Running the site: ``run_site`` (blocking, for the CLI) and ``SiteServer``
(a background thread, for tests and the runner)."""

from __future__ import annotations

import errno
import os
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType

import uvicorn
from starlette.applications import Starlette

from .app import create_app


class SiteStartError(Exception):
    """The site cannot start: the address is taken or invalid, or the data directory is unusable."""


def _bind(host: str, port: int) -> socket.socket:
    """Bind and listen ourselves so the real port is known before uvicorn starts;
    connections made before uvicorn accepts simply wait in the backlog."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio only sets TCP_NODELAY on sockets that say so,
    # and without it every response waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _uvicorn(app: Starlette) -> uvicorn.Server:
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    return uvicorn.Server(config)


def run_site(
    host: str = "127.0.0.1",
    port: int = 8000,
    test_mode: bool = False,
    data_dir: str | Path | None = None,
    revision: str | None = None,
) -> None:
    """Serve until Ctrl-C. Without data_dir the data lives in a fresh temp dir, removed on stop.

    Raises SiteStartError (one line, what to do) when the address or the data directory cannot be used.
    """
    try:
        sock = _bind(host, port)
    except OSError as err:
        hint = "pick another --port (0 picks a free one)" if err.errno == errno.EADDRINUSE else "check --host"
        raise SiteStartError(f"cannot listen on {host}:{port} ({err.strerror or err}); {hint}") from None
    temp = None if data_dir else temp_data_dir()
    try:
        app = create_app(test_mode=test_mode, data_dir=Path(data_dir or temp or ""), revision=revision)
    except OSError as err:
        sock.close()
        raise SiteStartError(f"--data-dir {data_dir}: cannot use it ({err.strerror or err})") from None
    real_port = sock.getsockname()[1]
    suffix = " (test mode)" if test_mode else ""
    print(f"webmcp-eval demo site: {_url(host, real_port)}/events{suffix}", flush=True)
    try:
        _uvicorn(app).run(sockets=[sock])
    except KeyboardInterrupt:
        # uvicorn shuts down gracefully on Ctrl-C, then re-raises the signal (and a
        # Ctrl-C before it installed its handlers lands here directly): a clean stop.
        pass
    finally:
        sock.close()
        if temp:
            shutil.rmtree(temp, ignore_errors=True)
    print("webmcp-eval demo site: stopped", flush=True)


TEMP_PREFIX = "webmcp-site-"


def temp_data_dir() -> str:
    """A fresh temp folder for the site's data, named for this process; the folders of processes that are
    gone (killed with -9, which no cleanup survives) are removed first."""
    for old in Path(tempfile.gettempdir()).glob(f"{TEMP_PREFIX}*"):
        pid = old.name[len(TEMP_PREFIX) :].split("-")[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(old, ignore_errors=True)
    return tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class SiteServer:
    """The site in a background thread on a free loopback port.

    >>> with SiteServer(test_mode=True) as site:
    ...     print(site.url)   # e.g. http://127.0.0.1:54321
    """

    def __init__(
        self,
        test_mode: bool = True,
        data_dir: str | Path | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        revision: str | None = None,
    ) -> None:
        self._temp = None if data_dir else temp_data_dir()
        self.data_dir = Path(data_dir or self._temp or "")
        self.test_mode = test_mode
        self.app = create_app(test_mode=test_mode, data_dir=self.data_dir, revision=revision)
        self._host, self._port = host, port
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    def start(self, timeout: float = 10.0) -> SiteServer:
        sock = _bind(self._host, self._port)
        self.url = _url(self._host, sock.getsockname()[1])
        self._server = _uvicorn(self.app)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="webmcp-site", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the demo site did not start")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        if self._server and self._thread:
            self._server.should_exit = True
            self._thread.join(timeout)
        self._server = self._thread = None
        if self._temp:
            shutil.rmtree(self._temp, ignore_errors=True)

    def __enter__(self) -> SiteServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
