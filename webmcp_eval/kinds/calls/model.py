"""The model of ``expect.calls``: the expected calls (alone or in ordered/unordered groups, some optional),
the forbidden ones, the call budget and the rules every call is held to."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from webmcp_eval.data_file import FieldPath
from webmcp_eval.kinds._locator import Strict


class ExpectedCall(Strict):
    tool: str
    args: dict[str, Any] = Field(default_factory=dict, description="argument matchers")
    no_other_args: bool = Field(default=False, description="fail when the call has arguments not listed")
    result: Any = Field(
        default=None,
        description="matcher on the tool's result: partial for a mapping, or a scalar/list/operator "
        "(none: not checked; {$type: null} expects null)",
    )
    capture: dict[str, str] = Field(default_factory=dict, description="name -> path into {args, result}")
    step: int | None = Field(default=None, description="only calls made during this user step (0-based)")
    optional: bool = Field(
        default=False,
        description="the call may be left out; made, it must match (only order: exact can tell, "
        "so it is accepted only there)",
    )


class OrderedGroup(Strict):
    """These expected calls in this order (calls of other tools between them as the case's order allows)."""

    ordered: list[ExpectedNode] = Field(min_length=1)


class UnorderedGroup(Strict):
    """These expected calls in any order, e.g. five toppings in any order, then share."""

    unordered: list[ExpectedNode] = Field(min_length=1)


def _node_kind(value: object) -> str | None:
    if isinstance(value, dict):
        for key in ("ordered", "unordered"):
            if key in value:
                return key
        return "call"
    kinds: dict[type, str] = {OrderedGroup: "ordered", UnorderedGroup: "unordered"}
    return kinds.get(type(value), "call")


ExpectedNode = Annotated[
    Annotated[ExpectedCall, Tag("call")]
    | Annotated[OrderedGroup, Tag("ordered")]
    | Annotated[UnorderedGroup, Tag("unordered")],
    Discriminator(_node_kind),
]
OrderedGroup.model_rebuild()
UnorderedGroup.model_rebuild()


def expected_leaves(
    nodes: Sequence[ExpectedNode], path: FieldPath = ("expect", "calls", "expected")
) -> list[tuple[FieldPath, ExpectedCall]]:
    """Every expected call in a tree of groups, in reading order, with its field path."""
    out: list[tuple[FieldPath, ExpectedCall]] = []
    for i, node in enumerate(nodes):
        if isinstance(node, ExpectedCall):
            out.append(((*path, i), node))
        elif isinstance(node, OrderedGroup):
            out += expected_leaves(node.ordered, (*path, i, "ordered"))
        else:
            out += expected_leaves(node.unordered, (*path, i, "unordered"))
    return out


def has_groups_or_optional(calls: CallExpectations) -> bool:
    """Whether expected calls use groups or optional calls (then the tree matcher judges them)."""
    return any(not isinstance(n, ExpectedCall) or n.optional for n in calls.expected)


class ForbiddenCall(Strict):
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    step: int | None = Field(default=None, description="only forbidden during this user step")
    why: str = ""


class CallExpectations(Strict):
    order: Literal["sequence", "set", "exact"] = Field(
        default="sequence",
        description="sequence: in this order, other calls may come between; set: any order; "
        "exact: these calls and no others, in this order",
    )
    expected: list[ExpectedNode] = Field(
        default_factory=list, description="expected calls, or groups of them: {ordered: [...]}, {unordered: [...]}"
    )
    forbidden: list[ForbiddenCall] = Field(default_factory=list)
    max_calls: int | None = None
    only_active_catalog: bool = Field(default=True, description="every call named a tool of the active catalog")
    no_stale_tools: bool = Field(default=True, description="no registration outlived the route it belongs to")
    annotations_hold: bool = Field(
        default=True,
        description="every tool's annotations hold: a tool marked readOnlyHint wrote nothing during its calls "
        "(the proxy's count per call), and each live tool's hints are those the suite's catalog gives it",
    )
    descriptions_trusted: bool = Field(
        default=True,
        description="no tool's description or annotations carry untrusted text from a result of an "
        "untrustedContentHint tool (it would reach every agent as the site's own words)",
    )
    schemas_hold: bool = Field(
        default=True,
        description="every live tool's input schema keeps the constraints (type, enum, required) the suite's "
        "catalog marks enforced by the server; other drift from the catalog is a warning",
    )
    witness_agrees: bool = Field(
        default=False,
        description="the DevTools WebMCP domain saw the same calls as the shim (a disagreement is "
        "always a warning in the trace; this makes it an assertion)",
    )
