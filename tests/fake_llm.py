"""A scripted model behind real HTTP: OpenAI-shaped and Anthropic-shaped, on 127.0.0.1.

The real SDKs talk to it over loopback (no internet). It reads each request
into a provider-neutral :class:`Conversation` and asks the script of the
requested model (a *policy*) for the next turn: an answer, or tool calls. The
policies are plain functions of the conversation, so a scripted agent can react
to what the page answered (e.g. take the first event ID of a search).

    with FakeLLM({"good": good_policy}) as llm:
        llm.openai_base      # http://127.0.0.1:PORT/v1  (POST /v1/chat/completions)
        llm.anthropic_base   # http://127.0.0.1:PORT     (POST /v1/messages)
        llm.requests         # every request received, in order
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

FAKE_KEY = "sk-fake-0123456789-secret"


@dataclass
class Call:
    name: str
    args: dict[str, Any] | str = field(default_factory=dict)  # a str is sent as the raw arguments text


@dataclass
class Say:
    text: str = ""
    calls: list[Call] = field(default_factory=list)


@dataclass
class Conversation:
    shape: str  # openai | anthropic
    model: str
    system: str
    tools: list[dict[str, Any]]  # {name, description, schema}
    events: list[dict[str, Any]]  # user / assistant / tool, in order

    @property
    def users(self) -> list[str]:
        return [e["text"] for e in self.events if e["role"] == "user"]

    @property
    def first_user(self) -> str:
        return self.users[0] if self.users else ""

    @property
    def turn(self) -> int:
        return len(self.users) - 1

    @property
    def tool_names(self) -> list[str]:
        return [t["name"] for t in self.tools]

    def tool(self, name: str) -> dict[str, Any] | None:
        return next((t for t in self.tools if t["name"] == name), None)

    def results(self, whole: bool = False) -> list[tuple[str, Any]]:
        """(tool name, parsed result) of the tool results of this turn (or the whole conversation)."""
        start = 0
        if not whole:
            start = max(i for i, e in enumerate(self.events) if e["role"] == "user")
        names = {}
        for e in self.events:
            for c in e.get("calls", []):
                names[c["id"]] = c["name"]
        out = []
        for e in self.events[start:]:
            if e["role"] == "tool":
                try:
                    value = json.loads(e["content"])
                except ValueError:
                    value = e["content"]
                out.append((names.get(e["id"], "?"), value))
        return out

    def last_result(self) -> tuple[str, Any] | None:
        results = self.results()
        return results[-1] if results else None

    @property
    def n_calls(self) -> int:
        return sum(len(e.get("calls", [])) for e in self.events)


Policy = Callable[[Conversation], Say]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict) and p.get("type") == "text")


def read_openai(body: dict[str, Any]) -> Conversation:
    system, events = "", []
    for m in body.get("messages", []):
        role = m.get("role")
        if role in ("system", "developer"):
            system += _text_of(m.get("content"))
        elif role == "user":
            events.append({"role": "user", "text": _text_of(m.get("content"))})
        elif role == "assistant":
            calls = [
                {"id": c["id"], "name": c["function"]["name"], "args": c["function"].get("arguments")}
                for c in m.get("tool_calls") or []
            ]
            events.append({"role": "assistant", "text": _text_of(m.get("content")), "calls": calls})
        elif role == "tool":
            events.append({"role": "tool", "id": m.get("tool_call_id"), "content": _text_of(m.get("content"))})
    tools = [
        {
            "name": t["function"]["name"],
            "description": t["function"].get("description", ""),
            "schema": t["function"].get("parameters"),
        }
        for t in body.get("tools") or []
    ]
    return Conversation("openai", body.get("model", ""), system, tools, events)


def read_anthropic(body: dict[str, Any]) -> Conversation:
    system = body.get("system") or ""
    system = system if isinstance(system, str) else _text_of(system)
    events = []
    for m in body.get("messages", []):
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        if m.get("role") == "assistant":
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            calls = [
                {"id": b["id"], "name": b["name"], "args": b.get("input")} for b in blocks if b["type"] == "tool_use"
            ]
            events.append({"role": "assistant", "text": text, "calls": calls})
            continue
        for b in blocks:
            if b.get("type") == "tool_result":
                events.append(
                    {
                        "role": "tool",
                        "id": b.get("tool_use_id"),
                        "content": _text_of(b.get("content")),
                        "is_error": bool(b.get("is_error")),
                    }
                )
            elif b.get("type") == "text":
                events.append({"role": "user", "text": b.get("text", "")})
    tools = [
        {"name": t["name"], "description": t.get("description", ""), "schema": t.get("input_schema")}
        for t in body.get("tools") or []
    ]
    return Conversation("anthropic", body.get("model", ""), system, tools, events)


def _usage(body: dict[str, Any], say: Say) -> tuple[int, int]:
    prompt = len(json.dumps(body, ensure_ascii=False, sort_keys=True)) // 4
    return prompt, max(1, len(say.text) // 4) + 20 * len(say.calls)


def _args_text(args: dict[str, Any] | str) -> str:
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


def openai_response(conv: Conversation, body: dict[str, Any], say: Say) -> dict[str, Any]:
    n = conv.n_calls
    message: dict[str, Any] = {"role": "assistant", "content": say.text or None}
    if say.calls:
        message["tool_calls"] = [
            {"id": f"call_{n + i}", "type": "function", "function": {"name": c.name, "arguments": _args_text(c.args)}}
            for i, c in enumerate(say.calls)
        ]
    prompt, completion = _usage(body, say)
    return {
        "id": f"chatcmpl-fake-{len(conv.events)}",
        "object": "chat.completion",
        "created": 1_800_000_000,
        "model": conv.model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if say.calls else "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


def anthropic_response(conv: Conversation, body: dict[str, Any], say: Say) -> dict[str, Any]:
    n = conv.n_calls
    content: list[dict[str, Any]] = [{"type": "text", "text": say.text}] if say.text else []
    for i, c in enumerate(say.calls):
        args = c.args if isinstance(c.args, dict) else {"_raw": c.args}
        content.append({"type": "tool_use", "id": f"toolu_{n + i:04d}", "name": c.name, "input": args})
    prompt, completion = _usage(body, say)
    return {
        "id": f"msg_fake_{len(conv.events)}",
        "type": "message",
        "role": "assistant",
        "model": conv.model,
        "content": content,
        "stop_reason": "tool_use" if say.calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": prompt, "output_tokens": completion},
    }


class FakeLLM:
    """The scripted model server; ``policies`` by model name, optional ``delays`` (seconds) by model name."""

    def __init__(self, policies: dict[str, Policy], api_key: str = FAKE_KEY, delays: dict[str, float] | None = None):
        self.policies = policies
        self.api_key = api_key
        self.delays = delays or {}
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.url = ""
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._openai, methods=["POST"]),
                Route("/v1/messages", self._anthropic, methods=["POST"]),
            ]
        )

    @property
    def openai_base(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base(self) -> str:
        return self.url

    def count(self, model: str | None = None) -> int:
        with self.lock:
            return sum(1 for r in self.requests if model is None or r["model"] == model)

    async def _turn(self, request: Request, shape: str) -> tuple[Conversation, dict[str, Any], Say] | JSONResponse:
        body = await request.json()
        headers = {k.lower(): v for k, v in request.headers.items()}
        authorised = (
            headers.get("authorization") == f"Bearer {self.api_key}"
            if shape == "openai"
            else headers.get("x-api-key") == self.api_key
        )
        with self.lock:
            self.requests.append({"shape": shape, "model": body.get("model"), "body": body, "authorised": authorised})
        if not authorised:
            return _error(shape, 401, "authentication_error", "invalid api key")
        conv = (read_openai if shape == "openai" else read_anthropic)(body)
        policy = self.policies.get(conv.model)
        if policy is None:
            return _error(shape, 404, "not_found_error", f"model {conv.model!r} not found")
        if self.delays.get(conv.model):
            await asyncio.sleep(self.delays[conv.model])
        return conv, body, policy(conv)

    async def _openai(self, request: Request) -> JSONResponse:
        got = await self._turn(request, "openai")
        if isinstance(got, JSONResponse):
            return got
        return JSONResponse(openai_response(*got))

    async def _anthropic(self, request: Request) -> JSONResponse:
        got = await self._turn(request, "anthropic")
        if isinstance(got, JSONResponse):
            return got
        return JSONResponse(anthropic_response(*got))

    def start(self) -> FakeLLM:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        # a delayed answer whose client gave up (a time limit's test) is not waited out when the server stops
        config = uvicorn.Config(
            self.app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=0.5
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the fake model server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server and self._thread:
            self._server.should_exit = True
            self._thread.join(10)
        self._server = self._thread = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _error(shape: str, status: int, kind: str, message: str) -> JSONResponse:
    if shape == "openai":
        return JSONResponse({"error": {"message": message, "type": kind, "code": None}}, status_code=status)
    return JSONResponse({"type": "error", "error": {"type": kind, "message": message}}, status_code=status)


def closed_port_url() -> str:
    """A loopback URL where nothing listens (for the unreachable-endpoint case)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"
