"""NetworkProxy: mitmproxy in-process, on its own thread and event loop.

    proxy = NetworkProxy(site_origins=["http://127.0.0.1:8000"]).start()
    proxy.begin_trial("SEL-01#1", mode="live")
    ...  # a browser context with the header X-WebMCP-Eval-Trial: SEL-01#1, proxied via proxy.url
    net = proxy.end_trial("SEL-01#1")   # TrialNetwork: requests, writes, blocked, faults, misses
    proxy.stop()

Every method is thread-safe. mitmproxy keeps its options and master in
module-global state (``mitmproxy.ctx``), so one process runs one NetworkProxy
at a time; trials, not proxies, are the unit of isolation.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

from mitmproxy.addons import core, disable_h2c, errorcheck, next_layer, proxyserver, tlsconfig
from mitmproxy.master import Master
from mitmproxy.options import Options

from .addon import EvalAddon
from .canonical import TRIAL_HEADER
from .fixture import Fixture
from .models import FaultSpec, Mode, TrialNetwork
from .trial_state import TrialSite

__all__ = ["TRIAL_HEADER", "FaultSpec", "Fixture", "NetworkProxy", "ProxyError", "TrialNetwork"]

START_TIMEOUT_S = 30.0
_running_lock = threading.Lock()  # held while a NetworkProxy runs in this process


class ProxyError(RuntimeError):
    """The proxy could not start (or was used before it started)."""


class _Starter:
    """Tells the controller thread the bound port once mitmproxy's servers are up."""

    def __init__(self, master: Master, on_ready: Any) -> None:
        self.master, self.on_ready = master, on_ready

    def running(self) -> None:
        self.on_ready(self.master.addons.get("proxyserver").listen_addrs())


def _quiet_on_cancel(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    if not isinstance(context.get("exception"), asyncio.CancelledError):
        loop.default_exception_handler(context)


def _mitmproxy_addons() -> list[Any]:
    """Only what a forwarding, TLS-intercepting proxy needs.

    Every hook of every request visits every addon; mitmdump's default set is
    about 35 addons (playback, export, scripting, map rules, ...), none of which
    the runner uses, and they doubled the Python work per proxied request.
    ErrorCheck turns a start-up error (a port, an unreadable CA directory) into
    an exit that ``start`` reports.
    """
    return [
        core.Core(),
        proxyserver.Proxyserver(),
        next_layer.NextLayer(),
        tlsconfig.TlsConfig(),
        disable_h2c.DisableH2C(),
        errorcheck.ErrorCheck(),
    ]


class NetworkProxy:
    def __init__(
        self,
        *,
        site_origins: list[str],
        allow_hosts: Sequence[str] = (),
        write_methods: Sequence[str] = ("POST", "PUT", "PATCH", "DELETE"),
        ignore_paths: Sequence[str] = ("/__test__/",),
        ssl_insecure: bool = False,
        confdir: str | None = None,
        block_other_hosts: bool = True,
        listen_host: str = "127.0.0.1",
        advertise_host: str | None = None,
    ) -> None:
        """site_origins: where the site lives (the first is the primary: fixture keys carry no host for it);
        none when each trial names its own (begin_trial's site).
        allow_hosts: other hosts the site may reach (exact or glob, optionally host:port); all else is blocked.
        block_other_hosts: False passes every other host through (still recorded, its writes counted).
        ssl_insecure: do not verify upstream HTTPS certificates (a staging deployment's self-signed one).
        confdir: mitmproxy's directory for its CA (default ~/.mitmproxy).
        listen_host: the address to listen on (a remote browser needs one it can reach, e.g. 0.0.0.0).
        advertise_host: the host the browser is told to use (default: listen_host; 127.0.0.1 for 0.0.0.0)."""
        self.addon = EvalAddon(
            site_origins=list(site_origins),
            allow_hosts=list(allow_hosts),
            write_methods=tuple(write_methods),
            ignore_paths=list(ignore_paths),
            ssl_insecure=ssl_insecure,
            block_other_hosts=block_other_hosts,
        )
        self._confdir = confdir
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._master: Master | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._holds_lock = False
        self.port: int | None = None
        self.listen_host = listen_host
        wildcard = listen_host in ("0.0.0.0", "::", "")
        self.advertise_host = advertise_host or ("127.0.0.1" if wildcard else listen_host)

    @property
    def url(self) -> str:
        if self.port is None:
            raise ProxyError("the proxy has not started")
        host = f"[{self.advertise_host}]" if ":" in self.advertise_host else self.advertise_host
        return f"http://{host}:{self.port}"

    # ---- lifecycle ----------------------------------------------------------------

    def start(self) -> NetworkProxy:
        """Start listening on a free port of listen_host; returns once requests are accepted."""
        if self._thread is not None:
            raise ProxyError("this NetworkProxy has already been started")
        if not _running_lock.acquire(blocking=False):
            raise ProxyError("another NetworkProxy is running in this process (mitmproxy allows one); stop it first")
        self._holds_lock = True
        self._thread = threading.Thread(target=self._serve, name="webmcp-eval-proxy", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S):
            self.stop()
            raise ProxyError(f"mitmproxy did not start listening within {START_TIMEOUT_S:.0f}s")
        if self._failure is not None or self.port is None:
            self.stop()
            raise ProxyError(f"mitmproxy failed to start: {self._failure!r}") from self._failure
        return self

    def stop(self) -> None:
        """Stop listening and join the proxy thread (idempotent)."""
        if self._master is not None and self._loop is not None and not self._loop.is_closed():
            self._master.shutdown()
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._holds_lock:
            self._holds_lock = False
            _running_lock.release()

    def __enter__(self) -> NetworkProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _serve(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as err:  # noqa: BLE001 - mitmproxy's errorcheck raises SystemExit on startup errors
            self._failure = err
        finally:
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        options: dict[str, Any] = {
            "listen_host": self.listen_host,
            "listen_port": 0,
            # Lazy: mitmproxy opens an upstream connection only to forward a request,
            # never on CONNECT, so a replayed or blocked request reaches no server at all.
            "connection_strategy": "lazy",
            "ssl_insecure": self.addon.ssl_insecure,
        }
        if self._confdir:
            options["confdir"] = self._confdir
        master = Master(Options(), with_termlog=False)
        master.addons.add(*_mitmproxy_addons())
        master.options.update(**options)  # after the addons exist: they declare most options
        master.addons.add(self.addon, _Starter(master, self._on_ready))
        self._master = master
        await master.run()
        # asyncio.run now cancels the handlers of connections still open; their
        # CancelledError is expected at shutdown, not worth a traceback.
        self._loop.set_exception_handler(_quiet_on_cancel)

    def _on_ready(self, addresses: list[Any]) -> None:
        wanted = {self.listen_host, f"::ffff:{self.listen_host}"}
        if self.listen_host in ("0.0.0.0", "::", ""):
            wanted |= {"0.0.0.0", "::", ""}
        ports = [addr[1] for addr in addresses if addr and addr[0] in wanted]
        self.port = ports[0] if ports else None
        if self.port is None:
            self._failure = ProxyError(f"mitmproxy listens on {addresses!r}, not on {self.listen_host}")
        self._ready.set()

    # ---- trials -------------------------------------------------------------------

    def begin_trial(
        self,
        trial_id: str,
        *,
        mode: Mode = "live",
        fixture: Fixture | None = None,
        rewrite: Any = None,
        site: TrialSite | None = None,
    ) -> None:
        """Start counting for trial_id. record: fixture (optional) gives case_id/site_revision;
        replay: fixture is required and is the only source of answers. rewrite: an object with
        ``request(flow)`` / ``response(flow)`` that may change the trial's traffic (mutation testing).
        site: the trial's own site and allow list instead of the proxy's (a pytest test's page)."""
        self.addon.begin_trial(trial_id, mode, fixture, rewrite, site)

    def arm_fault(self, trial_id: str, fault: FaultSpec) -> None:
        self.addon.arm_fault(trial_id, fault)

    def snapshot(self, trial_id: str) -> TrialNetwork:
        """Everything seen so far for the trial (a copy; the trial goes on)."""
        return self.addon.snapshot(trial_id)

    def so_far(self, trial_id: str) -> tuple[int, list[str]]:
        """The trial's requests counted and its writes named so far ("POST /api/saved"), without a copy."""
        return self.addon.so_far(trial_id)

    @property
    def client_connections(self) -> int:
        """How many connections clients have opened to the proxy so far (a keep-alive browser opens few)."""
        return self.addon.client_connections

    def end_trial(self, trial_id: str) -> TrialNetwork:
        """Everything seen for the trial, and the recorded fixture in record mode. KeyError if never begun."""
        return self.addon.end_trial(trial_id)
