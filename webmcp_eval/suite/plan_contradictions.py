"""Errors for a case whose expectations contradict its own reference plan.

The reference agent plays the plan as written, so a rule the plan breaks fails
every deterministic trial: an expected argument the plan never sends (or sends
another value of, or sends where ``$absent`` forbids it), ``no_other_args``
beside an argument the plan adds, ``max_calls`` below the plan's number of
calls, a forbidden call (with arguments) that the plan makes. This is known
before any run, so ``validate`` refuses the case, naming the plan step and the
rule (a case meant for other agents gives a plan that passes it). A plan value
that uses ``{$ref: …}`` is only known when it runs, so such values (and matchers
that use ``$ref``) are left out, and so is an ``optional`` expected call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from webmcp_eval.data_file import FieldPath
from webmcp_eval.matchers import MISSING, match, refs_in
from webmcp_eval.suite.case import ExpectedCall, UserStep, expected_leaves
from webmcp_eval.suite.loader import LoadedCase, Problem, field_path


@dataclass(frozen=True)
class _Planned:
    step: int
    index: int
    tool: str
    args: dict[str, Any]

    @property
    def where(self) -> str:
        return f"steps[{self.step}].plan[{self.index}]"


def plan_problems(cases: list[LoadedCase]) -> list[Problem]:
    out: list[Problem] = []
    for lc in cases:
        planned = [
            _Planned(si, pi, p.call, p.args)
            for si, s in enumerate(lc.case.steps)
            if isinstance(s, UserStep)
            for pi, p in enumerate(s.plan)
        ]
        if not planned:
            continue  # no plan: nothing to contradict
        out += _expected(lc, planned) + _forbidden(lc, planned) + _budget(lc, planned)
    return out


def _problem(lc: LoadedCase, loc: FieldPath, message: str) -> Problem:
    return Problem(lc.file, lc.line_of(*loc), field_path(loc), message)


def _expected(lc: LoadedCase, planned: list[_Planned]) -> list[Problem]:
    out = []
    by_tool: dict[str, list[_Planned]] = {}
    sent: set[tuple[str, int | None, str]] = set()  # (tool, step and any step, the args as JSON) of each call
    for p in planned:
        by_tool.setdefault(p.tool, []).append(p)
        sent |= {(p.tool, p.step, _key(p.args)), (p.tool, None, _key(p.args))}
    for loc, exp in expected_leaves(lc.case.expect.calls.expected):
        if exp.optional:
            continue  # a call the agent may leave out: the plan not making it fails nothing
        same = [p for p in by_tool.get(exp.tool, []) if exp.step in (None, p.step)]
        if not same:
            continue  # "never calls" is validate's error already
        if _sent_as_is(exp, sent):
            continue  # a planned call sends exactly these plain values: nothing to match (4,000 calls, linear)
        first = None
        for p in same:  # the first planned call that may fill it ends the search
            reason = _mismatch(exp, p)
            if reason is None:
                break
            first = first or reason
        else:  # every planned call of the tool misses
            assert first is not None
            where, name, why = first
            out.append(
                _problem(
                    lc,
                    (*loc, *name),
                    f"the reference plan's call {where} {exp.tool} {why}, so the case fails with its own plan",
                )
            )
    return out


def _key(args: dict[str, Any]) -> str:
    return json.dumps(args, sort_keys=True, default=str)


def _sent_as_is(exp: ExpectedCall, sent: set[tuple[str, int | None, str]]) -> bool:
    """A planned call (of the expected step, if it names one) sends exactly the expected arguments, all plain
    values (no matcher, no $ref): equal values match, so nothing is left to compare."""
    if exp.no_other_args or _has_operator(exp.args):
        return False
    return (exp.tool, exp.step, _key(exp.args)) in sent


def _has_operator(value: object) -> bool:
    if isinstance(value, dict):
        return any(k.startswith("$") for k in value) or any(_has_operator(v) for v in value.values())
    return isinstance(value, list) and any(_has_operator(v) for v in value)


def _mismatch(exp: ExpectedCall, p: _Planned) -> tuple[str, FieldPath, str] | None:
    """Why this planned call cannot fill ``exp`` (where, field, why), or None when it may."""
    for name, matcher in exp.args.items():
        value = p.args.get(name, MISSING)
        if refs_in(matcher) or (value is not MISSING and refs_in(value)):
            continue
        ok, why = _match(matcher, value)
        if not ok:
            sent = "never sends it" if value is MISSING else why
            return p.where, ("args", name), f"does not satisfy the expected argument {name}: {sent}"
    if exp.no_other_args:
        extra = sorted(set(p.args) - set(exp.args))
        if extra:
            return p.where, ("no_other_args",), f"also sends {', '.join(extra)}, which no_other_args fails"
    return None


def _forbidden(lc: LoadedCase, planned: list[_Planned]) -> list[Problem]:
    out = []
    for i, rule in enumerate(lc.case.expect.calls.forbidden):
        if not rule.args or refs_in(rule.args):
            continue  # without arguments it is validate's error already; with $ref only known when it runs
        for p in planned:
            if p.tool != rule.tool or rule.step not in (None, p.step) or refs_in(p.args):
                continue
            if all(_match(m, p.args.get(k, MISSING))[0] for k, m in rule.args.items()):
                out.append(
                    _problem(
                        lc,
                        ("expect", "calls", "forbidden", i),
                        f"the reference plan's call {p.where} {p.tool} is one this rule forbids, "
                        "so the case fails with its own plan",
                    )
                )
                break
    return out


def _match(matcher: object, value: object) -> tuple[bool, str]:
    """As ``match``, but a matcher that cannot be read (validate's error) contradicts nothing."""
    try:
        return match(matcher, value)
    except ValueError:
        return True, ""


def _budget(lc: LoadedCase, planned: list[_Planned]) -> list[Problem]:
    most = lc.case.expect.calls.max_calls
    if most is None or len(planned) <= most:
        return []
    return [
        _problem(
            lc,
            ("expect", "calls", "max_calls"),
            f"max_calls is {most}, but the reference plan makes {len(planned)} calls "
            f"({', '.join(p.tool for p in planned)}), so the case fails with its own plan",
        )
    ]
