"""The MCP bridge: a live page's active WebMCP catalog, served as an MCP server.

Any agent harness that speaks MCP (a desktop or CLI agent, an agent
framework) can then use the site. Nothing is called around the page: every
``tools/call`` goes to the tool host (webmcp_eval/play/page/toolhost.py), which calls the
page's tool as an agent host does, so the shim logs it, the DevTools witness
sees it, and a tool that is not in the active catalog is refused and recorded
for the checks, exactly as for our own agents. The SDK's input validation is
off for the same reason: a call with wrong arguments reaches the page and is
judged there, not silently dropped.

The tool list is what the page offers at the moment of ``tools/list``. When
the page's catalog changes (a call or a navigation (un)registers tools) every
connected client gets ``notifications/tools/list_changed``.

Transports: stdio and streamable HTTP, from the official MCP Python SDK
(``pip install 'webmcp-eval[mcp]'``). Over HTTP a request is answered only when its ``Host`` (and its
``Origin``, when it has one) names a loopback address or a host the user allowed (``mcp --allow-host``):
a web page the person visits cannot reach the bridge by pointing its own name at 127.0.0.1 (DNS rebinding).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import AsyncIterator, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from webmcp_eval.agents.protocol import ToolHost, tool_description, tool_result_text
from webmcp_eval.errors import InvalidInput
from webmcp_eval.llm.providers import EMPTY_SCHEMA

if TYPE_CHECKING:  # the SDK is an extra: imported where the bridge starts
    from mcp import types as mcp_types

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
SETTLE_TIMEOUT_MS = 2000  # after a call: how long to wait for the page's tools to settle
WATCH_INTERVAL_S = 0.2


class BridgeConfigError(InvalidInput, ValueError):
    """The bridge cannot start as asked (the SDK is missing, the page has no tools): a usage error."""


def require_mcp() -> Any:
    try:
        import mcp
    except ImportError as err:
        raise BridgeConfigError(
            f"the MCP bridge needs the 'mcp' package: pip install 'webmcp-eval[mcp]' ({err})"
        ) from None
    return mcp


def _version() -> str:
    try:
        return version("webmcp-eval")
    except PackageNotFoundError:
        return "0"


class PageBridge:
    """One MCP server over one live page's tool host."""

    def __init__(self, host: ToolHost, on_call: Any = None):
        require_mcp()
        from mcp import types
        from mcp.server.lowlevel import Server

        self.host = host
        self.on_call = on_call  # called with each ToolCall record (the command prints them)
        self.server: Any = Server("webmcp-eval", version=_version())
        self.sessions: list[Any] = []
        self.announced: list[str] | None = None  # the names the clients were last given
        self._lock = asyncio.Lock()  # the page runs one call at a time, in the order they came
        self._types = types

        async def list_tools() -> list[types.Tool]:
            self._remember_session()
            return await self.tools()

        async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
            self._remember_session()
            return await self.call(name, arguments)

        # the SDK's decorators have no types: applied as the calls they are, the handlers keep theirs
        self.server.list_tools()(list_tools)
        self.server.call_tool(validate_input=False)(call_tool)

    def _remember_session(self) -> None:
        with contextlib.suppress(LookupError):
            session = self.server.request_context.session
            if session not in self.sessions:
                self.sessions.append(session)

    def init_options(self) -> Any:
        from mcp.server.lowlevel import NotificationOptions

        return self.server.create_initialization_options(NotificationOptions(tools_changed=True))

    async def tools(self) -> list[mcp_types.Tool]:
        types = self._types
        catalog = await self.host.catalog()
        self.announced = sorted(t.name for t in catalog)
        return [
            types.Tool(
                name=t.name,
                description=tool_description(t),
                inputSchema=t.input_schema if isinstance(t.input_schema, dict) else EMPTY_SCHEMA,
                annotations=types.ToolAnnotations(readOnlyHint=t.read_only or None),
            )
            for t in sorted(catalog, key=lambda t: t.name)
        ]

    async def call(self, name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        types = self._types
        async with self._lock:
            record = await self.host.call(name, arguments)
            await self.host.wait_for_tools(timeout_ms=SETTLE_TIMEOUT_MS)
        if self.on_call:
            self.on_call(record)
        await self.announce_if_changed()
        text, is_error = tool_result_text(record)
        structured = record.result if isinstance(record.result, dict) and not is_error else None
        result: mcp_types.CallToolResult = types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structuredContent=structured, isError=is_error
        )
        return result

    def current_names(self) -> list[str]:
        """The page's active tools by the shim's log (no page round trip: cheap enough to poll)."""
        return sorted({r.name for r in self.host.log.active_registrations()})

    async def announce_if_changed(self) -> bool:
        if self.announced is None or self.current_names() == self.announced:
            return False
        self.announced = self.current_names()
        for session in list(self.sessions):
            try:
                await session.send_tool_list_changed()
            except Exception:  # a client that went away
                self.sessions.remove(session)
        return True

    async def watch(self) -> None:
        """Re-announce changes no call made (a navigation, the page's own scripts)."""
        while True:
            await asyncio.sleep(WATCH_INTERVAL_S)
            if self.announced is not None and self.current_names() != self.announced and not self._lock.locked():
                await self.host.wait_for_tools(timeout_ms=SETTLE_TIMEOUT_MS)
                await self.announce_if_changed()

    # -- transports --------------------------------------------------------------------------

    async def serve_stdio(self) -> None:
        from mcp.server.stdio import stdio_server

        watcher = asyncio.ensure_future(self.watch())
        try:
            async with stdio_server() as (read, write):
                await self.server.run(read, write, self.init_options())
        finally:
            watcher.cancel()

    @contextlib.asynccontextmanager
    async def serve_http(
        self, host: str = "127.0.0.1", port: int = 0, allow_hosts: Sequence[str] = ()
    ) -> AsyncIterator[str]:
        """Streamable HTTP on host:port (0: a free port) inside this event loop; yields the endpoint URL. Only
        requests whose Host and Origin name loopback or one of allow_hosts are answered (421, 403 otherwise)."""
        import uvicorn
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
        from starlette.applications import Starlette
        from starlette.routing import Mount

        manager = StreamableHTTPSessionManager(app=self.server, security_settings=host_check(allow_hosts))

        @contextlib.asynccontextmanager
        async def lifespan(_app: Any) -> AsyncIterator[None]:
            async with manager.run():
                yield

        app = Starlette(routes=[Mount("/mcp", app=manager.handle_request)], lifespan=lifespan)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(64)
        bound = sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
        server = uvicorn.Server(config)
        serving = asyncio.ensure_future(server.serve(sockets=[sock]))
        watcher = asyncio.ensure_future(self.watch())
        try:
            deadline = time.monotonic() + 10
            while not server.started:
                if serving.done() or time.monotonic() > deadline:
                    raise BridgeConfigError(f"the MCP bridge could not listen on {host}:{bound}")
                await asyncio.sleep(0.01)
            yield f"http://{host}:{bound}/mcp/"
        finally:
            watcher.cancel()
            server.should_exit = True
            with contextlib.suppress(Exception):
                await asyncio.wait_for(serving, timeout=5)
            sock.close()


def host_check(allow_hosts: Sequence[str] = ()) -> Any:
    """The SDK's DNS-rebinding check: Host and Origin must name loopback or an allowed host (any port)."""
    from mcp.server.transport_security import TransportSecuritySettings

    names = [*LOOPBACK_NAMES, *(h for h in allow_hosts if h not in LOOPBACK_NAMES)]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[form for name in names for form in (name, f"{name}:*")],
        allowed_origins=[
            form
            for name in names
            for scheme in ("http", "https")
            for form in (f"{scheme}://{name}", f"{scheme}://{name}:*")
        ],  # fmt: skip
    )


def mcp_config(url: str, name: str = "webmcp") -> dict[str, Any]:
    """An MCP client configuration naming the bridge (the ``mcpServers`` shape most harnesses read)."""
    return {"mcpServers": {name: {"type": "http", "url": url}}}
