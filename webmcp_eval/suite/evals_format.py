"""The public webmcp-evals format (``evals.json``), strictly: its messages, calls, groups and evals as models
that forbid unknown keys, where the public tool would silently match anything."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TextMessage(_Strict):
    role: Literal["user", "model"]
    type: Literal["message"]
    content: str


class CallMessage(_Strict):
    role: Literal["model"]
    type: Literal["functioncall"]
    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)


class ResponseMessage(_Strict):
    role: Literal["user"]
    type: Literal["functionresponse", "functioncall"]  # the public examples write both
    name: str = Field(min_length=1)
    response: Any


def _message_kind(value: object) -> str | None:
    if not isinstance(value, dict):
        models: dict[type, str] = {TextMessage: "message", CallMessage: "call", ResponseMessage: "response"}
        return models.get(type(value))
    kind = value.get("type")
    if not isinstance(kind, str):  # a list or mapping here is no kind (and no key to look up)
        return None
    if kind == "functionresponse" or (kind == "functioncall" and "response" in value):
        return "response"
    return {"message": "message", "functioncall": "call"}.get(kind)


Message = Annotated[
    Annotated[TextMessage, Tag("message")]
    | Annotated[CallMessage, Tag("call")]
    | Annotated[ResponseMessage, Tag("response")],
    Discriminator(
        _message_kind,
        custom_error_type="message_kind",
        custom_error_message="a message is {role, type: message, content}, {role: model, type: functioncall, "
        "name, arguments} or {role: user, type: functionresponse, name, response}",
    ),
]


class FunctionCall(_Strict):
    functionName: str = Field(min_length=1)  # noqa: N815 - the public format's own key
    arguments: dict[str, Any] | None = None
    result: Any = None
    optional: bool = False
    mockOutput: Any = None  # noqa: N815


class OrderedGroup(_Strict):
    ordered: list[Node] = Field(min_length=1)


class UnorderedGroup(_Strict):
    unordered: list[Node] = Field(min_length=1)


def _node_kind(value: object) -> str | None:
    if isinstance(value, dict):
        return next((k for k in ("ordered", "unordered") if k in value), "call")
    models: dict[type, str] = {OrderedGroup: "ordered", UnorderedGroup: "unordered", FunctionCall: "call"}
    return models.get(type(value))


Node = Annotated[
    Annotated[FunctionCall, Tag("call")]
    | Annotated[OrderedGroup, Tag("ordered")]
    | Annotated[UnorderedGroup, Tag("unordered")],
    Discriminator(
        _node_kind,
        custom_error_type="call_kind",
        custom_error_message="an expected call is {functionName, arguments}, {ordered: [...]} or {unordered: [...]}",
    ),
]
OrderedGroup.model_rebuild()
UnorderedGroup.model_rebuild()


class Eval(_Strict):
    name: str | None = None
    messages: list[Message] = Field(min_length=1)
    expectedCall: list[Node] | None  # noqa: N815 - required: null is "no call", never a forgotten key


_TAGS = {"message", "call", "response", "ordered", "unordered"}
