"""Checks: a case's expectations plus a trial's evidence become assertions.

Each block of a case's ``expect:`` is judged by its kind (webmcp_eval/kinds/: one module per kind, its
model, its checker, the evidence it reads); here are the kinds in the order they are judged, the loop
that judges a case, and the verdict. A check whose evidence is missing (no proxy, no state site hook)
answers ``not_run`` with the reason; it never passes by default. The verdict is ``passed`` only when
every assertion passed.
"""

from __future__ import annotations

from typing import Any

from webmcp_eval.kinds import Captures, Evidence, Kind, module_kinds
from webmcp_eval.kinds import assertion as _a
from webmcp_eval.kinds.calls import check_calls
from webmcp_eval.kinds.state import state_diff
from webmcp_eval.suite.case import Case
from webmcp_eval.trace import Assertion, Trace, Verdict, assertions_verdict

# where the trial (the state diff) and the pytest plugin (the calls' checker) take them from
__all__ = ["KINDS", "blocks", "check_calls", "check_steps", "evaluate", "evidence", "state_diff", "verdict"]

# Every kind, in the order of the case model's expect: fields: their assertions come in this order, and the
# calls' captures reach the kinds after them.
KINDS: tuple[Kind[Any], ...] = module_kinds()


def evidence() -> list[Evidence]:
    """Every part of a trace some kind reads, once, in the kinds' order."""
    out: dict[str, Evidence] = {}
    for kind in KINDS:
        for part in kind.reads:
            out.setdefault(part.name, part)
    return list(out.values())


def blocks(case: Case) -> list[tuple[Kind[Any], Any]]:
    """The case's expect: blocks with their kinds (an absent block has nothing to judge)."""
    return [(kind, value) for kind in KINDS if (value := getattr(case.expect, kind.name)) is not None]


def check_steps(trace: Trace) -> list[Assertion]:
    """A scripted human step the page did not let happen: the page never showed what the case says it shows."""
    return [
        _a(f"steps[{s.index}]", "steps", f"step {s.index} ({_step_name(s.input)}) could happen", False, s.not_shown)
        for s in trace.steps
        if s.not_shown
    ]


def _step_name(step: object) -> str:
    return str(step.get("action", "?")) if isinstance(step, dict) else "user"


# ---- all of it ---------------------------------------------------------------


def evaluate(case: Case, trace: Trace) -> list[Assertion]:
    assertions = check_steps(trace)
    captures: Captures = {}
    for kind, value in blocks(case):
        assertions += kind.check(value, trace, captures)
    return assertions


def verdict(assertions: list[Assertion], harness_error: str | None = None) -> tuple[Verdict, str]:
    """passed only when every assertion passed; not_run when evidence is missing.

    Assertions with ``gates=False`` (a model grader without enough agreement
    with people's labels) are shown but do not decide.
    """
    assertions = [a for a in assertions if a.gates]
    if harness_error:
        return "not_run", harness_error
    return assertions_verdict(assertions, "the case states no expectations")
