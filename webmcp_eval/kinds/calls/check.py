"""The checker of ``expect.calls``: the agent's tool calls against the expected and forbidden ones, and the
rules every call is held to (the call budget, the active catalog, stale tools, annotations, descriptions,
input schemas, the second witness).

The expected calls are matched in the case's ``order``; with groups or optional calls, by the best
assignment of calls to them (webmcp_eval/kinds/calls/tree.py). What they capture reaches the kinds after them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from webmcp_eval.data_file import shown_field
from webmcp_eval.kinds import _probes as probes
from webmcp_eval.kinds import assertion as _a
from webmcp_eval.kinds.calls.model import CallExpectations, ExpectedCall, expected_leaves, has_groups_or_optional
from webmcp_eval.kinds.calls.tree import best_assignment, order_kept
from webmcp_eval.matchers import MISSING, PathError, match, refs_in, resolve, short
from webmcp_eval.trace import Assertion, ToolCall, Trace


def call_matches(expected: ExpectedCall, call: ToolCall, captures: dict[str, Any]) -> tuple[bool, str]:
    """Does this actual call satisfy the expected one? (ok, why-not)."""
    if call.tool != expected.tool:
        return False, f"tool {call.tool!r}, expected {expected.tool!r}"
    if expected.step is not None and call.step != expected.step:
        return False, f"made during step {call.step}, expected step {expected.step}"
    if call.refused:
        why = call.error or ""
        return False, why if why.startswith("refused") else f"refused: {why}"
    for name, matcher in expected.args.items():
        ok, why = match(matcher, call.args.get(name, MISSING), captures)
        if not ok:
            return False, f"argument {name}: {why}"
    if expected.no_other_args:
        extra = sorted(set(call.args) - set(expected.args))
        if extra:
            return False, f"unexpected argument(s) {', '.join(extra)} = " + short({k: call.args[k] for k in extra})
    if expected.result is not None:
        if call.error:
            return False, f"the call failed: {call.error}"
        ok, why = match(expected.result, call.result, captures)
        if not ok:
            return False, f"result {why}"
    return True, ""


def _capture(expected: ExpectedCall, call: ToolCall, captures: dict[str, Any]) -> list[str]:
    problems = []
    for name, path in expected.capture.items():
        try:
            value = resolve({"args": call.args, "result": call.result}, path)
        except PathError as err:
            # validate refuses such a path; a checker error here is not_run, never a verdict
            raise ValueError(f"capture {name!r} of {expected.tool}: {err}") from None
        if value is MISSING:
            problems.append(f"nothing at {path} to capture as {name!r}")
        else:
            captures[name] = value
    return problems


def _describe_call(expected: ExpectedCall) -> str:
    args = f"({short(expected.args, 60)})" if expected.args else ""
    extra = " and no other arguments" if expected.no_other_args else ""
    result = f" → {short(expected.result, 50)}" if expected.result else ""
    return f"calls {expected.tool}{args}{extra}{result}"


def _nearest_miss(expected: ExpectedCall, calls: Iterable[ToolCall], captures: dict[str, Any]) -> str:
    same_tool = [c for c in calls if c.tool == expected.tool]
    if not same_tool:
        made = ", ".join(c.tool for c in calls) or "none"
        return f"no call to {expected.tool} (calls made: {made})"
    reasons = [f"call #{c.index}: {call_matches(expected, c, captures)[1]}" for c in same_tool]
    return "; ".join(reasons)


def check_calls(exp: CallExpectations, trace: Trace) -> tuple[list[Assertion], dict[str, Any]]:
    if has_groups_or_optional(exp):
        return _check_call_tree(exp, trace)
    calls = trace.calls
    captures: dict[str, Any] = {}
    out: list[Assertion] = []
    cursor = 0  # for order: sequence/exact, the next actual call to consider
    used: set[int] = set()
    leaves = [n for n in exp.expected if isinstance(n, ExpectedCall)]  # no groups: every node is a call
    assignment = _set_assignment(exp, leaves, calls) if exp.order == "set" else {}
    for i, expected in enumerate(leaves):
        pool = calls[cursor:] if exp.order != "set" else [c for c in calls if c.index not in used]
        if exp.order == "exact":
            pool = pool[:1]
        if exp.order == "set":
            hit = calls[assignment[i]] if i in assignment else None
        else:
            hit = next((c for c in pool if call_matches(expected, c, captures)[0]), None)
        if hit is None:
            why = _nearest_miss(expected, pool if exp.order != "set" else calls, captures)
            if exp.order != "set" and cursor:
                why = f"after call #{cursor - 1}: {why}"
            out.append(_a(f"calls.expected[{i}]", "calls", _describe_call(expected), False, why))
            continue
        used.add(hit.index)
        cursor = hit.index + 1 if exp.order != "set" else cursor
        problems = _capture(expected, hit, captures)
        why = f"call #{hit.index} {hit.tool}({short(hit.args, 60)})"
        out.append(
            _a(
                f"calls.expected[{i}]",
                "calls",
                _describe_call(expected),
                not problems,
                "; ".join(problems) or why,
                {"call": hit.index},
            )
        )
    if exp.order == "exact":
        extra = [c for c in calls if c.index not in used]
        out.append(
            _a(
                "calls.exact",
                "calls",
                "no calls besides the expected ones",
                not extra,
                "extra: " + ", ".join(f"#{c.index} {c.tool}" for c in extra) if extra else "none",
            )
        )
    return out + _call_rules(exp, trace, calls, captures), captures


def _call_rules(
    exp: CallExpectations, trace: Trace, calls: list[ToolCall], captures: dict[str, Any]
) -> list[Assertion]:
    """Forbidden calls, the call budget, the active catalog, stale tools and the second witness."""
    out = _forbidden(exp, calls, captures)
    if exp.max_calls is not None:
        n = len(calls)
        out.append(
            _a(
                "calls.max",
                "calls",
                f"at most {exp.max_calls} tool call(s)",
                n <= exp.max_calls,
                f"{n} call(s): " + (", ".join(c.tool for c in calls) or "none"),
            )
        )
    if exp.only_active_catalog:
        outside = [c for c in calls if not c.in_catalog]
        out.append(
            _a(
                "calls.catalog",
                "catalog",
                "every call names a tool of the active catalog",
                not outside,
                "; ".join(f"#{c.index} {c.tool}: {c.error}" for c in outside)
                or f"all {len(calls)} call(s) were in the catalog",
            )
        )
    if exp.no_stale_tools:
        out.append(_stale(trace))
    if exp.annotations_hold:
        out += _annotations(trace)
    if exp.descriptions_trusted:
        out += _descriptions(trace)
    if exp.schemas_hold:
        out += _schemas(trace)
    if exp.witness_agrees:
        out.append(_witness(trace))
    return out


# ---- groups of expected calls ({ordered: [...]}, {unordered: [...]}) and optional calls ----------


def _check_call_tree(exp: CallExpectations, trace: Trace) -> tuple[list[Assertion], dict[str, Any]]:
    """Expected calls nested in ordered/unordered groups, some optional: the best assignment of calls to them.

    Every expected call gets a distinct actual call (an optional one may get none);
    an ordered group (and the top level, unless ``order: set``) keeps its
    children's calls in order; ``order: exact`` also leaves no call unassigned.
    """
    calls = trace.calls
    leaves = expected_leaves(exp.expected)
    assignment, captures = best_assignment(exp, [e for _, e in leaves], calls, _fits)
    out: list[Assertion] = []
    for k, (path, expected) in enumerate(leaves):
        loc = shown_field(path[1:])
        hit = assignment.get(k)
        if hit is None:
            if expected.optional:
                continue  # left out, as allowed: nothing to assert (a wrong call shows in calls.exact)
            out.append(_a(loc, "calls", _describe_call(expected), False, _nearest_miss(expected, calls, captures)))
            continue
        call = calls[hit]
        out.append(
            _a(
                loc,
                "calls",
                _describe_call(expected),
                True,
                f"call #{call.index} {call.tool}({short(call.args, 60)})",
                {"call": call.index},
            )
        )
    if exp.order == "exact":
        extra = [c for pos, c in enumerate(calls) if pos not in assignment.values()]
        why = "extra: " + ", ".join(f"#{c.index} {c.tool}" for c in extra) if extra else "none"
        blocks = order_kept(exp, assignment)
        if not blocks:
            why = ("" if not extra else why + "; ") + "a group's calls are not one block: another call comes between"
        out.append(_a("calls.exact", "calls", "no calls besides the expected ones", not extra and blocks, why))
    return out + _call_rules(exp, trace, calls, captures), captures


def _fits(expected: ExpectedCall, call: ToolCall, captures: dict[str, Any]) -> dict[str, Any] | None:
    """The captures after ``call`` fills ``expected``, or None when it does not match (or a capture fails)."""
    if not call_matches(expected, call, captures)[0]:
        return None
    more = dict(captures)
    return None if _capture(expected, call, more) else more


def _hints_of(trace: Trace, call: ToolCall) -> dict[str, Any]:
    """The annotations of the registration that ran the call (by document and instance; else by its name)."""
    regs = [r for r in trace.registrations if r.type == "register" and r.tool_name == call.tool]
    own = [r for r in regs if call.instance is not None and (r.instance, r.document) == (call.instance, call.document)]
    chosen = own or regs[-1:]
    return chosen[0].hints if chosen else {}


def _annotations(trace: Trace) -> list[Assertion]:
    """A tool's annotations are promises the agent acts on: a read-only tool that writes breaks one, and so
    does a live tool whose hints differ from the suite's catalog (an untrusted hint lost is never excused)."""
    desc = "every tool's annotations hold: read-only tools wrote nothing, hints as in the suite's catalog"
    problems, judged = [], 0
    for call in trace.calls:
        if not _hints_of(trace, call).get("readOnlyHint") or call.writes is None:
            continue  # not marked read-only, or its writes were not counted (no proxy)
        judged += 1
        if call.writes:
            problems.append(f"#{call.index} {call.tool} is marked readOnlyHint and wrote: {', '.join(call.writes)}")
    differ, compared = probes.hints_against_catalog(trace.registrations, trace.catalog_hints)
    problems += differ
    judged += compared
    if not judged:
        return []  # nothing counted to hold them to: no assertion, never a pass by default
    why = "; ".join(problems) or f"{judged} read-only call(s) or registration(s) held to their annotations"
    return [_a("calls.annotations", "annotations", desc, not problems, why)]


def _descriptions(trace: Trace) -> list[Assertion]:
    """Untrusted text from a hinted result, copied into a tool's description or annotations, reaches every
    agent as the site's own words; so does a description that gives the agent orders (the audit's rule)."""
    texts = probes.untrusted_passages(trace.calls, [r.model_dump() for r in trace.registrations])
    if not texts and trace.tool_instructions is None:
        return []  # nothing to judge: no hinted result, descriptions not read for instructions
    desc = "no tool's description or annotations carry untrusted text or instructions to the agent"
    found = probes.carried_untrusted(trace.registrations, texts) if texts else []
    found += [f"instructions to the agent in {line}" for line in trace.tool_instructions or []]
    read = [f"{len(texts)} untrusted passage(s) in none"] if texts else []
    if trace.tool_instructions is not None:
        read.append("no description gives the agent orders")
    return [_a("tools.descriptions", "annotations", desc, not found, "; ".join(found) or "; ".join(read))]


def _schemas(trace: Trace) -> list[Assertion]:
    """A live tool's input schema is what the agent is told it may send: one that lost a constraint the
    server still enforces (an enum, a required argument) invites calls the site will refuse. Other drift
    from the catalog is named here and among the trial's warnings, and does not decide."""
    losses, drift, compared = probes.schemas_against_catalog(trace.registrations, trace.catalog_schemas)
    if not compared:
        return []  # no catalog schema for any live tool: nothing to hold them to, never a pass by default
    desc = "every live tool's input schema keeps the constraints the catalog says the server enforces"
    why = "; ".join(losses) or f"{compared} registration(s) held to the catalog"
    if drift:
        why += "; drift the server does not enforce (warned): " + "; ".join(drift)
    return [_a("tools.schemas", "annotations", desc, not losses, why)]


def _witness(trace: Trace) -> Assertion:
    """The second witness (DevTools' WebMCP domain) saw the calls the shim logged, and no others."""
    w = trace.witness
    desc = "DevTools saw the same tool calls as the shim"
    if not w.available:
        return _a(
            "calls.witness", "witness", desc, None, "the browser has no DevTools WebMCP domain: no second witness"
        )
    seen = sum(e.event == "toolInvoked" for e in w.events)
    why = "; ".join(w.disagreements) or f"{seen} call(s), the same"
    if w.unwitnessed:  # a cross-site frame's calls: out of DevTools' view, so neither agreeing nor not
        why += f"; out of DevTools' view (a frame in another process): {', '.join(w.unwitnessed)}"
    return _a("calls.witness", "witness", desc, not w.disagreements, why)


def _set_assignment(exp: CallExpectations, expected: list[ExpectedCall], calls: list[ToolCall]) -> dict[int, int]:
    """For order: set, expected call -> actual call position, by maximum bipartite matching (kinds/calls/tree.py).

    Greedy matching can give a loose expectation the call a strict one needed.
    """
    return best_assignment(exp, expected, calls, _fits)[0]


def _forbidden(exp: CallExpectations, calls: list[ToolCall], captures: dict[str, Any]) -> list[Assertion]:
    out = []
    for i, rule in enumerate(exp.forbidden):
        missing = [r for r in refs_in(rule.args) if r not in captures]
        if missing:
            # A rule about a value that was never captured cannot be judged; never let it pass.
            out.append(
                _a(
                    f"calls.forbidden[{i}]",
                    "forbidden",
                    f"never calls {rule.tool}",
                    None,
                    f"nothing was captured as {', '.join(map(repr, missing))}",
                )
            )
            continue
        hits = [
            c
            for c in calls
            if c.tool == rule.tool
            and (rule.step is None or c.step == rule.step)
            and all(match(m, c.args.get(k, MISSING), captures)[0] for k, m in rule.args.items())
        ]
        what = f"never calls {rule.tool}" + (f"({short(rule.args, 50)})" if rule.args else "")
        why = f"called at #{', #'.join(str(c.index) for c in hits)}" if hits else "not called"
        out.append(
            _a(f"calls.forbidden[{i}]", "forbidden", what + (f" — {rule.why}" if rule.why else ""), not hits, why)
        )
    return out


def _stale(trace: Trace) -> Assertion:
    """No registration outlived its route, and no call ran on such a registration.

    A frame's route is its own document's path: a frame's tools are held against
    the frame's route, never the top page's (the trial lists them per frame).
    """
    desc = "no tool outlives its route; no stale handler runs"
    # instances count per document: a multi-page site numbers each page's tools from 1 again
    registered_on = {(r.document, r.instance): r.route for r in trace.registrations if r.type == "register"}
    by_instance = {instance: route for (_, instance), route in registered_on.items()}  # traces before documents
    problems = []
    for step in trace.steps:
        for reg in step.stale_registrations:
            where = f"{reg.route} in the frame {reg.frame.url}" if reg.frame and not reg.frame.top else reg.route
            problems.append(
                f"after step {step.index} on {step.route_after}: {reg.name} (registered on {where}) is still registered"
            )
    unknown = []
    for call in trace.calls:
        if call.instance is None:
            continue  # no handler ran it (refused by the host)
        if call.document is None:
            origin = by_instance.get(call.instance)
        else:
            origin = registered_on.get((call.document, call.instance))
        if origin is None:
            # the log lacks where its handler was registered: whether it was stale cannot be told
            unknown.append(f"call #{call.index} {call.tool} (instance {call.instance})")
        elif call.frame and not call.frame.top:  # a frame's tool: the frame's route when it ran
            if call.frame.path and origin != call.frame.path:
                where = f"{call.frame.path} in the frame {call.frame.url}"
                problems.append(f"call #{call.index} {call.tool} on {where} ran a handler registered on {origin}")
        elif call.route and origin != call.route:
            problems.append(f"call #{call.index} {call.tool} on {call.route} ran a handler registered on {origin}")
    if problems:
        return _a("calls.stale", "stale", desc, False, "; ".join(problems))
    if unknown:
        why = "the registration log does not say where these were registered: " + ", ".join(unknown)
        return _a("calls.stale", "stale", desc, None, why)
    return _a("calls.stale", "stale", desc, True, "every registration was withdrawn with its route")
