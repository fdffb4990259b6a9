"""``expect.calls``: the agent's tool calls, the one kind every case has (its defaults hold every trial to
the active catalog, no stale tools, annotations, descriptions and input schemas that hold).

Its model (``model``), its checker (``check``) and its rules against the suite (``rules``) are modules of
this package; its captures (``capture:`` of an expected call) reach the kinds judged after it.
"""

from __future__ import annotations

from pydantic import Field

from webmcp_eval.kinds import Captures, Evidence, Kind, answerable
from webmcp_eval.kinds.calls.check import call_matches, check_calls
from webmcp_eval.kinds.calls.model import (
    CallExpectations,
    ExpectedCall,
    ExpectedNode,
    ForbiddenCall,
    OrderedGroup,
    UnorderedGroup,
    expected_leaves,
    has_groups_or_optional,
)
from webmcp_eval.kinds.calls.rules import call_problems
from webmcp_eval.trace import Assertion, Trace

__all__ = [
    "KIND",
    "CallExpectations",
    "ExpectedCall",
    "ExpectedNode",
    "ForbiddenCall",
    "OrderedGroup",
    "UnorderedGroup",
    "call_matches",
    "check_calls",
    "expected_leaves",
    "has_groups_or_optional",
]


def _calls(exp: CallExpectations, trace: Trace, captures: Captures) -> list[Assertion]:
    found, captured = check_calls(exp, trace)
    captures.update(captured)  # the later kinds' $ref and {name} paths
    return found


CALL_FIELDS = ("tool", "args", "result", "error", "refused", "in_catalog", "route")
CALLS = Evidence("calls", ("calls",), lambda t: [{k: getattr(c, k) for k in CALL_FIELDS} for c in t.calls])
STEPS = Evidence(
    "steps",
    ("steps",),
    lambda t: [
        {"route": s.route_after, "catalog": s.catalog_after, "stale": [r.name for r in s.stale_registrations]}
        for s in t.steps
    ],
)
TOOLS = Evidence(
    "tools",
    ("registrations", "tool_instructions"),
    lambda t: [
        {
            "name": r.name,
            "description": (r.model_extra or {}).get("description"),
            "annotations": r.annotations,
            "input_schema": (r.model_extra or {}).get("inputSchema"),
        }
        for r in t.registrations
        if r.type == "register"
    ],
)
WITNESS = Evidence(
    "witness", ("witness",), lambda t: {"available": t.witness.available, "disagreements": t.witness.disagreements}
)

KIND = Kind(
    "calls",
    CallExpectations,
    _calls,
    (CALLS, STEPS, TOOLS, WITNESS),
    answerable,
    annotation=CallExpectations,
    field=Field(default_factory=CallExpectations),
    validate=call_problems,
)
