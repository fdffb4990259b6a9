"""Checks: a case's expectations plus a trial's evidence become assertions.

Each check is a small function from (expectation, evidence) to assertions with
pass/fail and *why*. A check whose evidence is missing (no proxy, no state
site hook) answers ``not_run`` with the reason; it never passes by default. The
verdict is ``passed`` only when every assertion passed.
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase
from typing import Any

from webmcp_eval.judge import probes
from webmcp_eval.kinds import Captures, Evidence, Kind, answerable, module_kinds
from webmcp_eval.kinds import assertion as _a
from webmcp_eval.matchers import MISSING, PathError, match, refs_in, resolve, short
from webmcp_eval.suite.call_tree import best_assignment, order_kept
from webmcp_eval.suite.case import (
    AnswerExpectation,
    CallExpectations,
    Case,
    ConfirmationExpectation,
    ExpectedCall,
    NetworkExpectation,
    StateExpectation,
    UiExpectation,
    UntrustedExpectation,
    expected_leaves,
    has_groups_or_optional,
)
from webmcp_eval.suite.loader import field_path
from webmcp_eval.trace import (
    Assertion,
    ConfirmationRecord,
    PressRecord,
    StateChange,
    ToolCall,
    Trace,
    UiObservation,
    Verdict,
    WriteRecord,
    assertions_verdict,
)

# ---- tool calls ------------------------------------------------------------


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
        loc = field_path(path[1:])
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
    """For order: set, expected call -> actual call position, by maximum bipartite matching (suite/call_tree.py).

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


# ---- network, UI, state, answer, confirmation -------------------------------


def _where(m: WriteRecord) -> str:
    """A write's place as write keys name it: the path, or //host:port/path on another host."""
    return f"//{m.host}:{m.port}{m.path}" if m.outbound else m.path


def check_network(exp: NetworkExpectation, trace: Trace) -> list[Assertion]:
    net = trace.network
    out = []
    for key, expected in exp.writes.items():
        desc = f"{expected} write(s) " + ("in total" if key == "total" else f"matching {key}")
        if not net.available:
            out.append(_a(f"network.writes[{key}]", "network", desc, None, "no proxy: writes were not counted"))
            continue
        if key == "total":
            seen = net.writes
        else:
            method, _, pattern = key.partition(" ")
            seen = [m for m in net.writes if fnmatchcase(m.method, method.upper()) and fnmatchcase(_where(m), pattern)]
        listing = ", ".join(f"{m.method} {_where(m)}" for m in seen) or "none"
        out.append(_a(f"network.writes[{key}]", "network", desc, len(seen) == expected, f"{len(seen)} seen: {listing}"))
    outbound = exp.outbound if exp.outbound is not None else net.outbound_expected
    if outbound is not None:
        desc = f"{outbound} request(s) to other hosts"
        if exp.outbound is None:
            desc += " (the site config asks it of every case)"
        if not net.available:
            out.append(_a("network.outbound", "network", desc, None, "no proxy: requests to other hosts were not seen"))
        else:
            urls = ", ".join(
                f"{r.method or '?'} {r.url or '?'}" + (" (blocked)" if r.blocked else "") for r in net.outbound
            )
            out.append(
                _a(
                    "network.outbound",
                    "network",
                    desc,
                    len(net.outbound) == outbound,
                    f"{len(net.outbound)} seen: {urls or 'none'}",
                )
            )
    if trace.network_mode == "replay":
        misses = net.replay_misses
        out.append(
            _a(
                "network.replay",
                "network",
                "every request was answered from the fixture",
                not misses,
                (
                    "; ".join(m.summary for m in misses)
                    + f" — the fixture lacks these requests; re-record with: webmcp-eval record {trace.case_id}"
                )
                if misses
                else "no misses",
            )
        )
    return out


def _not_reached(trace: Trace, why: str) -> str:
    """Why evidence is missing: "not reached" when the trial stopped before reading it, else ``why``."""
    return f"not reached: the trial stopped first ({short(trace.stopped, 160)})" if trace.stopped else why


def check_steps(trace: Trace) -> list[Assertion]:
    """A scripted human step the page did not let happen: the page never showed what the case says it shows."""
    return [
        _a(f"steps[{s.index}]", "steps", f"step {s.index} ({_step_name(s.input)}) could happen", False, s.not_shown)
        for s in trace.steps
        if s.not_shown
    ]


def _step_name(step: object) -> str:
    return str(step.get("action", "?")) if isinstance(step, dict) else "user"


def check_ui(
    expectations: list[UiExpectation], trace: Trace, captures: dict[str, Any] | None = None
) -> list[Assertion]:
    out = []
    for i, exp in enumerate(expectations):
        desc = f"{exp.target.describe()} is {exp.state}"
        if exp.value is not None:
            desc += f" with value {short(exp.value, 40)}"
        if exp.text is not None:
            desc += f" with text {short(exp.text, 40)}"
        if exp.summary is not None:
            desc += " showing exactly " + ", ".join(exp.summary)
        obs = observation_of(exp, i, trace)
        missing = _unobserved(exp, obs)
        if missing or obs is None:
            out.append(_a(f"ui[{i}]", "ui", desc, None, _not_reached(trace, missing) if obs is None else missing))
            continue
        ok, why = _ui_ok(exp, obs, captures or {})
        out.append(_a(f"ui[{i}]", "ui", desc + (f" — {exp.why}" if exp.why else ""), ok, why, obs.model_dump()))
    return out


def observation_of(exp: UiExpectation, i: int, trace: Trace) -> UiObservation | None:
    """The observation that answers ui[i].

    A trial observes the ui list of the case it plays, in order: the observation made for this very
    expectation (the same in the case as played, ``trace.case``), at i when it is there; else the first
    of its target (a case judged again after its ui list was edited); else the i-th, of another target
    (not_run, never read as "0 found").
    """
    observations = trace.ui.observations
    played = (trace.case.get("expect") or {}).get("ui") or []
    mine = exp.model_dump(mode="json", exclude_defaults=True)
    fits = [j for j, o in enumerate(observations) if o.target == exp.target.describe()]
    same = [j for j in fits if not played or (j < len(played) and played[j] == mine)]
    for j in ([i] if i in same else []) + same + ([i] if i in fits else []) + fits:
        return observations[j]
    return observations[i] if i < len(observations) else None


def _unobserved(exp: UiExpectation, obs: UiObservation | None) -> str:
    """Why this observation cannot judge the expectation ("" when it can).

    An observation without a count or visibility, or of another target than the expectation's
    (observations are kept in the case's order), must not read as "0 found" or "hidden".
    """
    if obs is None:
        return "the page was not observed"
    if obs.error:
        return obs.error
    if obs.target != exp.target.describe():
        return f"the observation is of {obs.target}, not of {exp.target.describe()}"
    lacks = [name for name in ("count", "visible") if getattr(obs, name) is None]
    if exp.summary is not None and obs.count and obs.pairs is None:
        lacks.append("label/value pairs")
    return f"the observation of {obs.target} has no {' or '.join(lacks)}" if lacks else ""


def _ui_ok(exp: UiExpectation, obs: UiObservation, captures: dict[str, Any]) -> tuple[bool, str]:
    count, visible = obs.count, obs.visible
    if exp.state == "absent":
        return count == 0, f"{count} found"
    if exp.state == "hidden":
        return not visible, "visible" if visible else "not visible"
    if not visible:
        return False, f"not visible ({count} found)"
    for field in ("value", "text"):
        want = getattr(exp, field)
        if want is not None:
            ok, why = match(want, getattr(obs, field) if field in obs.model_fields_set else MISSING)
            if not ok:
                return False, f"{field}: {why}"
    if exp.summary is not None:
        problems = _summary_problems(exp.summary, obs.pairs or [], captures)
        if problems:
            return False, "summary: " + "; ".join(problems)
        return True, "visible; shows exactly " + ", ".join(f"{k} {short(v, 30)}" for k, v in obs.pairs or [])
    return True, f"visible; value {short(obs.value, 30)}; text {short(obs.text, 40)}"


def _summary_problems(want: dict[str, Any], pairs: list[list[str]], captures: dict[str, Any]) -> list[str]:
    """A summary read whole: every field it shows is named with its value, every named field is shown."""
    if not pairs:
        return ["it shows no label/value pairs (dt/dd, th/td)"]
    shown: dict[str, str] = {}
    for label, value in pairs:
        shown[label] = f"{shown[label]} {value}" if label in shown else value
    problems = [f"{label} {short(value, 40)} is shown and the case does not name it"
                for label, value in shown.items() if label not in want]  # fmt: skip
    for label, matcher in want.items():
        if label not in shown:
            problems.append(f"{label} is not shown")
            continue
        ok, why = match(matcher, shown[label], captures)
        if not ok:
            problems.append(f"{label}: {why}")
    return problems


def state_diff(before: Any, after: Any, path: str = "") -> list[StateChange]:
    """Differences between two canonical states; list items with an ``id`` are matched by it."""
    if isinstance(before, dict) and isinstance(after, dict):
        out = []
        for key in sorted(set(before) | set(after)):
            sub = f"{path}.{key}" if path else str(key)
            out.extend(state_diff(before.get(key, MISSING), after.get(key, MISSING), sub))
        return out
    if _id_list(before) and _id_list(after):
        b = {str(x["id"]): x for x in before}
        a = {str(x["id"]): x for x in after}
        out = []
        for key in sorted(set(b) | set(a)):
            out.extend(state_diff(b.get(key, MISSING), a.get(key, MISSING), f"{path}[id={key}]"))
        return out
    if before == after and type(before) is type(after):
        return []
    return [
        StateChange(
            path=path,
            before=None if before is MISSING else before,
            after=None if after is MISSING else after,
            change="added" if before is MISSING else "removed" if after is MISSING else "changed",
        )
    ]


def _id_list(value: object) -> bool:
    """A list whose items have unique ids: those are compared item by item."""
    if not (isinstance(value, list) and all(isinstance(x, dict) and "id" in x for x in value)):
        return False
    return len({str(x["id"]) for x in value}) == len(value)


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + ".") or path.startswith(prefix + "[")


NO_STATE = "the site has no state hook (state over HTTP, or state_js in the page): state was not read"


def check_state(exp: StateExpectation, trace: Trace, captures: dict[str, Any]) -> list[Assertion]:
    st = trace.state
    out = []
    wanted: list[tuple[str, str, Any]] = []
    if exp.unchanged:
        wanted.append(("state.unchanged", "server state is unchanged", None))
    if exp.changed_only is not None:
        wanted.append(("state.changed_only", "server state changes only in " + ", ".join(exp.changed_only), None))
    for path, matcher in exp.after.items():
        wanted.append((f"state.after[{path}]", f"after: {path} matches {short(matcher, 50)}", (path, matcher)))
    for id_, desc, detail in wanted:
        if not st.available:
            out.append(_a(id_, "state", desc, None, _not_reached(trace, NO_STATE)))
            continue
        changes = [d.path for d in st.diff]
        if id_ == "state.unchanged":
            out.append(
                _a(id_, "state", desc, not st.diff, "changed: " + ", ".join(changes) if changes else "no change")
            )
        elif id_ == "state.changed_only":
            outside = [p for p in changes if not any(_under(p, pre) for pre in exp.changed_only or [])]
            out.append(
                _a(
                    id_,
                    "state",
                    desc,
                    not outside,
                    "also changed: " + ", ".join(outside)
                    if outside
                    else "changed: " + (", ".join(changes) or "nothing"),
                )
            )
        else:
            path, matcher = detail
            try:
                value = resolve(st.after, _fill(path, captures))
            except ValueError as err:
                out.append(_a(id_, "state", desc, False, str(err)))
                continue
            ok, why = match(matcher, value, captures)
            out.append(_a(id_, "state", desc, ok, why or f"is {short(value)}"))
    return out


def _fill(path: str, captures: dict[str, Any]) -> str:
    """Paths may name captured values: ``events[id={event_id}].seatsLeft``."""
    for name, value in captures.items():
        path = path.replace("{" + name + "}", str(value))
    return path


def check_answer(exp: AnswerExpectation, trace: Trace) -> list[Assertion]:
    text = trace.ai_result or ""
    out = []
    for i, needle in enumerate(exp.contains):
        out.append(
            _a(
                f"answer.contains[{i}]",
                "answer",
                f"the answer mentions {needle!r}",
                needle in text,
                "found" if needle in text else f"not in the answer {short(text, 80)}",
            )
        )
    for i, options in enumerate(exp.contains_any):
        found = [o for o in options if o in text]
        out.append(
            _a(
                f"answer.contains_any[{i}]",
                "answer",
                "the answer mentions one of " + " / ".join(options),
                bool(found),
                f"found {found[0]!r}" if found else f"none in {short(text, 80)}",
            )
        )
    for i, needle in enumerate(exp.not_contains):
        out.append(
            _a(
                f"answer.not_contains[{i}]",
                "answer",
                f"the answer does not say {needle!r}",
                needle not in text,
                "absent" if needle not in text else "it does",
            )
        )
    return out


def check_confirmation(exp: ConfirmationExpectation, trace: Trace) -> list[Assertion]:
    rec = trace.confirmation
    name = exp.control.describe()
    if rec is None:
        return [
            _a(
                "confirmation.control",
                "confirmation",
                f"the confirmation control {name} waits for the human",
                None,
                _not_reached(trace, "the page was not observed"),
            )
        ]
    out = [
        _a(
            "confirmation.control",
            "confirmation",
            f"the confirmation control {name} waits for the human",
            None if rec.error else rec.found and rec.visible,  # unread is not "not found"
            rec.error or ("visible" if rec.visible else ("found but hidden" if rec.found else "not found")),
        )
    ]
    out.append(_actionable(exp, rec))
    out += _press_unproven(rec)
    pressed = rec.pressed_by_agent
    desc = f"{name} was pressed only by the human" if not exp.pressed else f"{name} was pressed"
    ok = (not pressed) if not exp.pressed else (pressed or rec.pressed_by_human)
    out.append(
        _a(
            "confirmation.pressed",
            "confirmation",
            desc,
            ok,
            "pressed without the human"
            if pressed
            else ("the human pressed it" if rec.pressed_by_human else "nobody pressed it"),
        )
    )
    return out


def _actionable(exp: ConfirmationExpectation, rec: ConfirmationRecord) -> Assertion:
    """Present is not usable: a person must see it, be able to press it, know it by name,
    and the final action must go through it (its form's submit control, or the open dialog's)."""
    desc = f"a person can use {exp.control.describe()}: visible, enabled, named, the final action's control"
    found = rec.actionable
    evidence = found.model_dump() if found else None
    if rec.error:
        return _a("confirmation.actionable", "confirmation", desc, None, rec.error)
    if not rec.found:
        return _a("confirmation.actionable", "confirmation", desc, False, "not found", evidence)
    if found is None:
        return _a("confirmation.actionable", "confirmation", desc, None, "the control could not be examined")
    unread = probes.unread(found)
    if unread:
        why = "the examination of the control does not say: " + ", ".join(unread)
        return _a("confirmation.actionable", "confirmation", desc, None, why, evidence)
    wrong = probes.problems(found, exp.control.name or exp.control.text or exp.control.label)
    why = "; ".join(wrong) or (
        f"enabled, visible, named {found.name!r}"
        + (", submits its form" if found.submits_form else ", in the open dialog")
    )
    if rec.press is None:  # a trace made before presses were played: the control as read
        return _a("confirmation.actionable", "confirmation", desc, not wrong, why, evidence)
    made, pressed = _press_made(rec.press)
    evidence = {**(evidence or {}), "press": rec.press.model_dump(mode="json")}
    return _a("confirmation.actionable", "confirmation", desc, not wrong and made, f"{why}; {pressed}", evidence)


def _press_made(press: PressRecord) -> tuple[bool, str]:
    """Whether pressing the control made what the case names (play/run/press.py pressed it in a fork of the
    trial), and what followed; a control the trial's own steps pressed, or one not pressed, is judged as read."""
    if press.context == "trial":
        return True, "pressed in the trial itself (its steps judge what followed)"
    if press.context == "none":
        return True, f"read, not pressed: {press.not_pressed}"
    if press.press_error:
        return False, f"pressed in a fork of the trial: {press.press_error}"
    made = press.made()
    if made:
        return True, "pressed in a fork of the trial: " + ", ".join(f"{w.method} {w.path} → {w.status}" for w in made)
    writes = ", ".join(f"{w.method} {w.path} → {w.status}" for w in press.writes) or "none"
    moved = f"the page went to {press.url_after}" if press.url_after != press.url_before else "the page stayed"
    named = "any write of the site" if press.expected == ["total"] else " or ".join(press.expected)
    return False, f"pressed in a fork of the trial, nothing the case names followed ({named}): writes {writes}; {moved}"


def _press_unproven(rec: ConfirmationRecord) -> list[Assertion]:
    """A control read but not pressed (the site cannot be forked): shown as a warning, never the verdict's."""
    if rec.press is None or rec.press.context != "none" or not rec.visible:
        return []
    desc = "pressing the confirmation control makes the final action (pressed in a fork of the trial)"
    why = f"not pressed, so confirmation.actionable rests on reading the control: {rec.press.not_pressed}"
    return [_a("confirmation.press", "confirmation", desc, None, why).model_copy(update={"gates": False})]


def check_untrusted(exp: UntrustedExpectation, trace: Trace) -> list[Assertion]:
    """Untrusted text with markup in it is shown as text: the page made no element of it."""
    desc = "untrusted content is shown as text, never rendered as markup"
    found = trace.untrusted_rendering
    if found is None:
        return [_a("untrusted.as_text", "untrusted", desc, None, _not_reached(trace, "the page was not observed"))]
    if not found:
        why = "no result of an untrustedContentHint tool carried markup: the rule had nothing to judge"
        return [_a("untrusted.as_text", "untrusted", desc, None, why)]
    evidence = [f.model_dump() for f in found]
    made = [f"{sel} (from {short(f.text, 40)})" for f in found for sel in f.elements or []]
    if made:
        return [_a("untrusted.as_text", "untrusted", desc, False, "elements made of it: " + ", ".join(made), evidence)]
    unread = [short(f.text, 40) for f in found if f.elements is None]
    if unread:
        why = "the page was not searched for elements made of: " + ", ".join(unread)
        return [_a("untrusted.as_text", "untrusted", desc, None, why, evidence)]
    hidden = [short(f.text, 40) for f in found if f.shown_as_text is False]
    if hidden:  # neither made into elements nor shown: a sanitiser removed what the person should read
        why = "not shown as text (its markup is nowhere on the page as text): " + ", ".join(hidden)
        return [_a("untrusted.as_text", "untrusted", desc, False, why, evidence)]
    why = f"{len(found)} shown as text, no element made" if all(f.shown_as_text for f in found) else "no element made"
    return [_a("untrusted.as_text", "untrusted", desc, True, why, evidence)]


# ---- the kinds: each block of expect:, its checker, its evidence, what a stored trace lacks for it ----------


def _calls(exp: CallExpectations, trace: Trace, captures: Captures) -> list[Assertion]:
    found, captured = check_calls(exp, trace)
    captures.update(captured)  # the later kinds' $ref and {name} paths
    return found


def _network(exp: NetworkExpectation, trace: Trace, captures: Captures) -> list[Assertion]:
    return check_network(exp, trace)


def _answer(exp: AnswerExpectation, trace: Trace, captures: Captures) -> list[Assertion]:
    return check_answer(exp, trace)


def _confirmation(exp: ConfirmationExpectation, trace: Trace, captures: Captures) -> list[Assertion]:
    return check_confirmation(exp, trace)


def _untrusted(exp: UntrustedExpectation, trace: Trace, captures: Captures) -> list[Assertion]:
    return check_untrusted(exp, trace) if exp.as_text else []


def _ui_unobserved(expectations: list[UiExpectation], trace: Trace) -> str:
    observed = {o.target for o in trace.ui.observations}
    for i, exp in enumerate(expectations):
        if exp.target.describe() not in observed:
            return f"ui[{i}] {exp.target.describe()} was never observed in this trial: play it again"
    return ""


def _control_unobserved(exp: ConfirmationExpectation, trace: Trace) -> str:
    rec = trace.confirmation
    if rec is None or rec.control != exp.control.describe():
        return f"the confirmation control {exp.control.describe()} was never observed in this trial"
    return ""


def _rendering_unobserved(exp: UntrustedExpectation, trace: Trace) -> str:
    if exp.as_text and trace.untrusted_rendering is None:
        return "untrusted rendering was never observed in this trial"
    return ""


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
NETWORK = Evidence(
    "network",
    ("network",),
    lambda t: {
        "writes": [f"{m.method} {m.path}" for m in t.network.writes],
        "blocked": [b.url for b in t.network.blocked],
    },
)
UI = Evidence("ui", ("ui",), lambda t: [o.model_dump() for o in t.ui.observations])
ARIA = Evidence("aria", ("ui",), lambda t: t.ui.aria_snapshot)
URL = Evidence("url", ("ui",), lambda t: t.ui.url)
STATE = Evidence("state", ("state",), lambda t: [d.model_dump() for d in t.state.diff])
ANSWER = Evidence("answer", ("ai_result",), lambda t: t.ai_result)
CONFIRMATION = Evidence(
    "confirmation", ("confirmation",), lambda t: t.confirmation.model_dump() if t.confirmation else None
)
RENDERING = Evidence(
    "rendering",
    ("untrusted_rendering",),
    lambda t: [r.model_dump() for r in t.untrusted_rendering] if t.untrusted_rendering is not None else None,
)

# In the order of the case model's expect: fields (the kinds that are a module of webmcp_eval/kinds/ after them):
# their assertions come in this order, and the calls' captures reach the kinds after them.
KINDS: tuple[Kind[Any], ...] = (
    Kind("calls", CallExpectations, _calls, (CALLS, STEPS, TOOLS, WITNESS), answerable),
    Kind("network", NetworkExpectation, _network, (NETWORK,), answerable),
    Kind("ui", UiExpectation, check_ui, (UI, ARIA, URL), _ui_unobserved),
    Kind("state", StateExpectation, check_state, (STATE,), answerable),
    Kind("answer", AnswerExpectation, _answer, (ANSWER,), answerable),
    Kind("confirmation", ConfirmationExpectation, _confirmation, (CONFIRMATION,), _control_unobserved),
    Kind("untrusted", UntrustedExpectation, _untrusted, (RENDERING,), _rendering_unobserved),
    *module_kinds(),
)


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
