"""Model providers: the OpenAI chat-completions and Anthropic Messages adapters.

Each adapter does three things, and only these:

- ``build_request`` turns the provider-neutral conversation (see below) and the
  offered tools into the exact JSON body the provider's API takes. The body is
  what a model cassette keys on, so it is built deterministically.
- ``send`` posts the body through the provider's official SDK and answers the
  response as plain JSON (``to_dict``), so a recorded response parses exactly
  like a live one.
- ``parse`` reads a response (live or recorded) into a :class:`ModelTurn`.

The SDKs are imported lazily: the core install works without them, and a
missing SDK is a clear error naming the extra to install
(``pip install 'webmcp-eval[openai]'``).

The neutral conversation is a list of dicts:

- ``{"role": "user", "content": str}``
- ``{"role": "assistant", "content": str, "tool_calls": [{"id", "name", "arguments", "raw_arguments"}]}``
  (``name`` is the provider-side tool name; ``raw_arguments`` is the provider's
  own text of the arguments, kept so the next request repeats it byte for byte)
- ``{"role": "tool", "tool_call_id": str, "name": str, "content": str, "is_error": bool}``
"""

from __future__ import annotations

import hashlib
import json
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

NO_KEY = "no-key"  # what a local server gets when no key is configured (they ignore it)
TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # OpenAI's rule; Anthropic's is the same or looser
TOOL_NAME_MAX = 64
EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}

EXTRAS = {"openai": "openai", "anthropic": "anthropic"}
DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


class ProviderError(Exception):
    """The provider could not answer a request."""


class MissingSDK(ProviderError, ImportError):
    """The provider's SDK is not installed."""


class EndpointUnreachable(ProviderError):
    """No connection to the endpoint (refused, DNS, TLS)."""


class EndpointTimeout(ProviderError):
    """The endpoint did not answer in time."""


class EndpointRejected(ProviderError):
    """The endpoint answered with an HTTP error."""

    def __init__(self, status: int | None, message: str):
        super().__init__(f"HTTP {status}: {message}" if status else message)
        self.status = status


@dataclass
class ToolSpec:
    """One tool as offered to the model (``name`` already provider-safe)."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass
class ModelCall:
    id: str
    name: str  # provider-side name
    arguments: dict[str, Any] | None  # None: the model's arguments were not a JSON object
    raw_arguments: str | None = None
    error: str | None = None  # why the arguments could not be read


@dataclass
class ModelTurn:
    text: str
    calls: list[ModelCall] = field(default_factory=list)
    stop_reason: str | None = None
    usage: dict[str, int] | None = None  # {"input": n, "output": n}; None when the endpoint gave none


def require_sdk(kind: str) -> Any:
    """Import the provider's SDK, or fail naming the extra that installs it."""
    module = {"openai": "openai", "anthropic": "anthropic"}[kind]
    try:
        return __import__(module)
    except ImportError as err:
        raise MissingSDK(
            f"--agent {kind} needs the {module!r} package: pip install 'webmcp-eval[{EXTRAS[kind]}]' ({err})"
        ) from None


def safe_tool_name(name: str) -> str:
    """A provider-valid name for a page tool; the same name always maps the same way.

    Valid names are kept. Others get their invalid characters replaced and a
    short digest of the original appended, so two page tools never share a
    provider name and the agent can map a call back (reversibly) to the page's
    own name.
    """
    if TOOL_NAME_RE.match(name):
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    base = re.sub(r"[^A-Za-z0-9_-]", "_", name)[: TOOL_NAME_MAX - 9] or "tool"
    return f"{base}_{digest}"


def public_base(url: str | None) -> str | None:
    """The endpoint as it may be shown: no user info, no query (either could carry a secret)."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _read_arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """Arguments as the model gave them: a JSON object, or why not (never guessed into shape)."""
    if isinstance(raw, dict):
        return raw, None
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None  # no arguments at all
    if not isinstance(raw, str):
        return None, f"arguments of type {type(raw).__name__}, not a JSON object"
    try:
        value = json.loads(raw)
    except ValueError as err:
        return None, f"arguments are not valid JSON ({err})"
    if not isinstance(value, dict):
        return None, f"arguments are a JSON {type(value).__name__}, not an object"
    return value, None


class Provider(ABC):
    """One model API: build the request body, send it, read the turn back."""

    kind = ""

    def __init__(self, model: str, api_base: str | None, api_key: str, max_retries: int = 2):
        self.model = model
        self.api_base = api_base
        self._api_key = api_key
        self.max_retries = max_retries
        self._client: Any = None

    def __repr__(self) -> str:  # never show the key
        return f"<{type(self).__name__} model={self.model!r} api_base={public_base(self.api_base)!r}>"

    def redact(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text

    @abstractmethod
    def build_request(
        self, system: str, messages: list[dict[str, Any]], tools: list[ToolSpec], params: dict[str, Any]
    ) -> dict[str, Any]: ...

    @abstractmethod
    async def send(self, request: dict[str, Any], timeout: float) -> dict[str, Any]: ...

    @abstractmethod
    def parse(self, response: dict[str, Any]) -> ModelTurn: ...

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    def _errors(self, sdk: Any, err: Exception) -> ProviderError:
        """The SDK's exception as one of ours, with the key never in the message."""
        if isinstance(err, sdk.APITimeoutError):
            return EndpointTimeout(self.redact("the model endpoint did not answer in time"))
        if isinstance(err, sdk.APIConnectionError):
            cause = err.__cause__ or err.__context__
            detail = f"{err}" + (f" ({type(cause).__name__}: {cause})" if cause else "")
            return EndpointUnreachable(self.redact(detail))
        if isinstance(err, sdk.APIStatusError):
            return EndpointRejected(err.status_code, self.redact(_status_message(err)))
        return ProviderError(self.redact(f"{type(err).__name__}: {err}"))


def _status_message(err: Any) -> str:
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:500]
    return str(getattr(err, "message", err))[:500]


def _params(params: dict[str, Any], max_tokens_key: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if params.get("temperature") is not None:
        out["temperature"] = params["temperature"]
    if params.get("max_output_tokens") is not None:
        out[max_tokens_key] = params["max_output_tokens"]
    for key, value in (params.get("extra") or {}).items():
        if value is None:
            out.pop(key, None)  # an extra set to null removes a default (e.g. temperature for some models)
        else:
            out[key] = value
    return out


# ---- OpenAI-compatible chat completions ------------------------------------------


class OpenAIProvider(Provider):
    """Any OpenAI-compatible ``/chat/completions`` endpoint with tool calling."""

    kind = "openai"

    def build_request(
        self, system: str, messages: list[dict[str, Any]], tools: list[ToolSpec], params: dict[str, Any]
    ) -> dict[str, Any]:
        out: list[dict[str, Any]] = [{"role": "system", "content": system}]
        for m in messages:
            if m["role"] == "user":
                out.append({"role": "user", "content": m["content"]})
            elif m["role"] == "assistant":
                msg: dict[str, Any] = {"role": "assistant", "content": m.get("content") or None}
                if m.get("tool_calls"):
                    msg["tool_calls"] = [
                        {
                            "id": c["id"],
                            "type": "function",
                            "function": {
                                "name": c["name"],
                                "arguments": c["raw_arguments"]
                                if c.get("raw_arguments") is not None
                                else _dumps(c.get("arguments") or {}),
                            },
                        }
                        for c in m["tool_calls"]
                    ]
                elif msg["content"] is None:
                    msg["content"] = ""
                out.append(msg)
            elif m["role"] == "tool":
                out.append({"role": "tool", "tool_call_id": m["tool_call_id"], "content": m["content"]})
        body: dict[str, Any] = {"model": self.model, "messages": out}
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in tools
            ]
        body.update(_params(params, "max_tokens"))
        return body

    def _client_for(self) -> Any:
        sdk = require_sdk("openai")
        if self._client is None:
            self._client = sdk.AsyncOpenAI(api_key=self._api_key, base_url=self.api_base, max_retries=self.max_retries)
        return sdk, self._client

    async def send(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        sdk, client = self._client_for()
        try:
            response = await client.chat.completions.create(**request, timeout=timeout)
        except sdk.OpenAIError as err:
            raise self._errors(sdk, err) from None
        answer: dict[str, Any] = response.to_dict(mode="json")  # the SDK client is reached untyped
        return answer

    def parse(self, response: dict[str, Any]) -> ModelTurn:
        choices = response.get("choices") or []
        if not choices:
            raise EndpointRejected(None, "the endpoint answered without any choice")
        choice = choices[0]
        message = choice.get("message") or {}
        text = message.get("content") or message.get("refusal") or ""
        if isinstance(text, list):  # some servers answer content parts
            text = "".join(p.get("text", "") for p in text if isinstance(p, dict))
        calls = []
        for i, raw in enumerate(message.get("tool_calls") or []):
            fn = raw.get("function") or {}
            raw_args = fn.get("arguments")
            args, error = _read_arguments(raw_args)
            calls.append(
                ModelCall(
                    id=raw.get("id") or f"call_{i}",
                    name=fn.get("name") or "",
                    arguments=args,
                    raw_arguments=raw_args if isinstance(raw_args, str) else None,
                    error=error,
                )
            )
        usage = response.get("usage")
        tokens = None
        if isinstance(usage, dict) and ("prompt_tokens" in usage or "completion_tokens" in usage):
            tokens = {"input": int(usage.get("prompt_tokens") or 0), "output": int(usage.get("completion_tokens") or 0)}
        return ModelTurn(text=text, calls=calls, stop_reason=choice.get("finish_reason"), usage=tokens)


# ---- Anthropic Messages -------------------------------------------------------------------


class AnthropicProvider(Provider):
    """The Anthropic Messages API (``/v1/messages``)."""

    kind = "anthropic"

    def build_request(
        self, system: str, messages: list[dict[str, Any]], tools: list[ToolSpec], params: dict[str, Any]
    ) -> dict[str, Any]:
        out: list[dict[str, Any]] = []

        def add(role: str, blocks: list[dict[str, Any]]) -> None:
            if out and out[-1]["role"] == role:  # the API alternates roles: merge neighbours
                out[-1]["content"].extend(blocks)
            else:
                out.append({"role": role, "content": blocks})

        for m in messages:
            if m["role"] == "user":
                add("user", [{"type": "text", "text": m["content"]}])
            elif m["role"] == "assistant":
                blocks: list[dict[str, Any]] = []
                if m.get("content"):
                    blocks.append({"type": "text", "text": m["content"]})
                for c in m.get("tool_calls") or []:
                    blocks.append(
                        {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c.get("arguments") or {}}
                    )
                if blocks:  # an empty answer is not sent back: the API refuses empty content
                    add("assistant", blocks)
            elif m["role"] == "tool":
                block: dict[str, Any] = {
                    "type": "tool_result",
                    "tool_use_id": m["tool_call_id"],
                    "content": m["content"],
                }
                if m.get("is_error"):
                    block["is_error"] = True
                add("user", [block])
        body: dict[str, Any] = {"model": self.model, "system": system, "messages": out}
        if tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
            ]
        body.update(_params({"max_output_tokens": 1024, **params}, "max_tokens"))  # the API requires max_tokens
        return body

    def _client_for(self) -> Any:
        sdk = require_sdk("anthropic")
        if self._client is None:
            self._client = sdk.AsyncAnthropic(
                api_key=self._api_key, base_url=self.api_base, max_retries=self.max_retries
            )
        return sdk, self._client

    async def send(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        sdk, client = self._client_for()
        try:
            response = await client.messages.create(**request, timeout=timeout)
        except sdk.AnthropicError as err:
            raise self._errors(sdk, err) from None
        answer: dict[str, Any] = response.to_dict(mode="json")  # the SDK client is reached untyped
        return answer

    def parse(self, response: dict[str, Any]) -> ModelTurn:
        texts, calls = [], []
        for block in response.get("content") or []:
            if block.get("type") == "text":
                texts.append(block.get("text") or "")
            elif block.get("type") == "tool_use":
                args, error = _read_arguments(block.get("input"))
                calls.append(
                    ModelCall(id=block.get("id") or "", name=block.get("name") or "", arguments=args, error=error)
                )
        usage = response.get("usage")
        tokens = None
        if isinstance(usage, dict):
            cached = int(usage.get("cache_creation_input_tokens") or 0) + int(usage.get("cache_read_input_tokens") or 0)
            tokens = {
                "input": int(usage.get("input_tokens") or 0) + cached,
                "output": int(usage.get("output_tokens") or 0),
            }
        return ModelTurn(text="".join(texts), calls=calls, stop_reason=response.get("stop_reason"), usage=tokens)


PROVIDERS: dict[str, type[Provider]] = {"openai": OpenAIProvider, "anthropic": AnthropicProvider}
