"""Case files a person could plausibly get wrong: a bounded fuzz over the seed cases.

Each variant of a seed case (a key misspelt or dropped, a value of another type,
an operator with a good or bad argument, a step that does not exist, a typo in
an argument name, another order, expected calls put into ordered/unordered
groups or made optional, a corrupt capture path, a broken line, a bad byte, an
alias bomb, and the shapes a documented rule forbids: a ``state.changed_only`` path in a form the state diff
never names, ids that differ only in case, an expected call its own plan breaks, a result matcher that
contradicts itself) goes through the real loading path (``load_suite``) and:

- never raises: no traceback, whatever the input;
- when rejected, every problem names the file, a line inside it and the field
  (or is a YAML-level problem, which has no field);
- when accepted, it is either equivalent to the original case, or it can be
  judged: the checks run on a trace built from its own reference plan without
  raising, every forbidden rule fires on a call that fits it, and every
  required expected call (in any group) fails when its tool is never called (a
  rule that cannot fire is a wrong verdict waiting to happen).

No browser: the trace is built from the plan, with tool results made to fit
the case's own expectations. ``python tests/test_case_fuzz.py`` prints the figures.
"""

from __future__ import annotations

import copy
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from webmcp_eval.judge import checks
from webmcp_eval.matchers import COMPARISONS, MISSING, is_operator, match, parse_path, resolve, substitute
from webmcp_eval.suite.case import Case, UserStep, expected_leaves
from webmcp_eval.suite.loader import LoadedCase, Problem, case_files
from webmcp_eval.suite.plan_contradictions import plan_problems
from webmcp_eval.suite.validate import SuiteCatalog, load_suite
from webmcp_eval.trace import ToolCall, Trace

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "cases"
CATALOG = SuiteCatalog.load(CASES / "catalog.json")
VARIANTS_PER_SEED = 15  # 345 variants: a few seconds
ABSENT = object()  # a witness for {$absent: true}: leave the key out


# ---- witnesses: values that satisfy a matcher ------------------------------------------


def witness(matcher: Any, captures: dict[str, Any]) -> tuple[Any, bool]:
    """A value that satisfies ``matcher`` (checked with the real matcher), and whether one was found."""
    for candidate in _candidates(matcher, captures):
        if candidate is ABSENT:
            if match(matcher, MISSING, captures)[0]:
                return ABSENT, True
        elif match(matcher, candidate, captures)[0]:
            return candidate, True
    return None, False


def _candidates(matcher: Any, captures: dict[str, Any]) -> list[Any]:
    if not isinstance(matcher, dict | list):
        return [matcher]
    if isinstance(matcher, list):
        items = [witness(m, captures) for m in matcher]
        return [[v for v, _ in items]] if all(ok for _, ok in items) else []
    if not is_operator(matcher):
        out = {}
        for key, sub in matcher.items():
            value, ok = witness(sub, captures)
            if not ok:
                return []
            if value is not ABSENT:
                out[key] = value
        return [out]
    found: list[Any] = []
    for op, arg in matcher.items():
        if op == "$in":
            found += [v for a in arg for v in _candidates(a, captures)]
        elif op == "$ref" and arg in captures:
            found.append(captures[arg])
        elif op == "$contains":
            found += [arg, [arg]] if not isinstance(arg, dict) else [[w] for w in _candidates(arg, captures)]
        elif op == "$pattern":
            found.append(re.sub(r"[\^\$\\]", "", arg))
        elif op == "$len":
            found += ["x" * arg, [0] * arg]
        elif op == "$type":
            found.append(
                {"string": "s", "number": 1.5, "integer": 1, "boolean": True}.get(arg, {"object": {}}.get(arg))
            )
            found.append([] if arg == "array" else None)
        elif op in COMPARISONS:
            found += [arg + 1, arg, arg - 1]
        elif op == "$absent":
            found.append(ABSENT if arg else "present")
        elif op in ("$any", "$not"):
            found += ["any", 0, None, True, [], {}]
    return found


def _plant(data: dict[str, Any], path: str, value: Any) -> None:
    """Make ``path`` resolve in ``data`` (creating objects and lists on the way), unless it already does."""
    try:
        parts = parse_path(path)
    except ValueError:
        return
    if resolve(data, path) is not MISSING:
        return
    current: Any = data
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        nxt: Any = value if last else ([] if not isinstance(parts[i + 1], str) else {})
        if isinstance(part, str):
            if not isinstance(current, dict):
                return
            current = current.setdefault(part, nxt) if not last else current.__setitem__(part, value)
        elif isinstance(part, int):
            if not isinstance(current, list):
                return
            while len(current) <= part:
                current.append({} if not last else None)
            if last:
                current[part] = value
            current = current[part]
        else:
            key, want = part
            if not isinstance(current, list):
                return
            hit = next((x for x in current if isinstance(x, dict) and str(x.get(key)) == want), None)
            if hit is None:
                hit = {key: want}
                current.append(hit)
            current = hit if not last else None


# ---- a trace from the reference plan -------------------------------------------------------


def plan_trace(case: Case) -> Trace:
    """The calls the reference plan makes, with results made to fit the case's expected results."""
    plan_captures: dict[str, Any] = {}
    check_captures: dict[str, Any] = {}
    expected = [e for _, e in expected_leaves(case.expect.calls.expected)]  # through ordered/unordered groups
    used: set[int] = set()
    calls: list[ToolCall] = []
    for si, step in enumerate(case.reference_steps):  # a goal case: its plan, as one step
        if not isinstance(step, UserStep):
            continue
        for planned in step.plan:
            try:
                args = substitute(planned.args, plan_captures)
            except KeyError:
                args = planned.args
            j = next(
                (
                    j
                    for j, e in enumerate(expected)
                    if j not in used and e.tool == planned.call and e.step in (None, si)
                ),
                None,
            )
            result: Any = {}
            if j is not None:
                used.add(j)
                if expected[j].result is not None:
                    value, ok = witness(expected[j].result, check_captures)
                    result = value if ok and isinstance(value, dict) else {}
            record = {"args": args, "result": result}
            paths = list(planned.capture.values()) + (list(expected[j].capture.values()) if j is not None else [])
            for path in paths:
                if path.startswith("result"):
                    _plant(record, path, f"v-{path}")
            call = ToolCall(index=len(calls), step=si, tool=planned.call, args=args, result=record["result"])
            calls.append(call)
            for name, path in planned.capture.items():
                value = _resolve(record, path)
                if value is not MISSING:
                    plan_captures[name] = value
            if j is not None:
                for name, path in expected[j].capture.items():
                    value = _resolve(record, path)
                    if value is not MISSING:
                        check_captures[name] = value
    replies = " ".join(s.reply for s in case.reference_steps if isinstance(s, UserStep))
    return Trace(
        run_id="fuzz",
        trial_id=f"{case.id}.t1",
        case_id=case.id,
        behaviour=case.behaviour,
        start_route=case.start_route,
        calls=calls,
        ai_result=replies,
    )


def _resolve(record: dict[str, Any], path: str) -> Any:
    try:
        return resolve(record, path)
    except ValueError:
        return MISSING


def forbidden_fires(case: Case, trace: Trace) -> list[str]:
    """Wrong verdicts: a forbidden rule that a call fitting both it and the tool's schema does not trip.

    Returns one line per such rule; rules whose arguments have no witness are not judged here.
    """
    captures = checks.check_calls(case.expect.calls, trace)[1]
    user_steps = [si for si, s in enumerate(case.reference_steps) if isinstance(s, UserStep)]
    wrong = []
    for i, rule in enumerate(case.expect.calls.forbidden):
        args, ok = witness(rule.args, captures)
        if not ok or not isinstance(args, dict):
            continue
        if rule.step is None and not user_steps:
            continue  # a case with a simulated user (user:) and no scripted steps: no step to put the call in
        step = rule.step if rule.step is not None else user_steps[0]
        fits_schema = any(_fits(args, s) for s in CATALOG.schemas(rule.tool))
        call = ToolCall(index=len(trace.calls), step=step, tool=rule.tool, args=args)
        tripped = trace.model_copy(update={"calls": [*trace.calls, call]})
        status = next(
            a.status for a in checks.check_calls(case.expect.calls, tripped)[0] if a.id == f"calls.forbidden[{i}]"
        )
        if status != "failed" or step not in user_steps or not fits_schema:
            wrong.append(f"forbidden[{i}] {rule.tool}({args}) step {step}: {status}, fits schema: {fits_schema}")
    return wrong


def required_fires(case: Case, trace: Trace) -> list[str]:
    """Wrong verdicts: a required expected call (in any group) that passes when its tool is never called."""
    wrong = []
    for where, expected in expected_leaves(case.expect.calls.expected):
        if expected.optional:
            continue
        kept = [c for c in trace.calls if c.tool != expected.tool]
        renumbered = [c.model_copy(update={"index": n}) for n, c in enumerate(kept)]  # as a trace numbers them
        without = trace.model_copy(update={"calls": renumbered})
        statuses = {a.status for a in checks.check_calls(case.expect.calls, without)[0] if a.kind == "calls"}
        if "failed" not in statuses:
            wrong.append(f"{'.'.join(map(str, where))} {expected.tool}: passes with no call to it")
    return wrong


def _fits(args: dict[str, Any], schema: dict[str, Any]) -> bool:
    """The arguments a real call could have: the rule's own ones, under the schema (others may be required)."""
    loose = {k: v for k, v in schema.items() if k != "required"}
    try:
        jsonschema.validate(args, loose)
    except jsonschema.ValidationError:
        return False
    return True


# ---- mutations ---------------------------------------------------------------------------

GOOD_AND_BAD_MATCHERS: list[Any] = [
    {"$in": "evt-a7k2p9"},
    {"$in": 5},
    {"$in": ["taipei", "online"]},
    {"$pattern": "([unclosed"},
    {"$pattern": "^tai"},
    {"$len": -1},
    {"$len": 2},
    {"$type": "string"},
    {"$type": "strin"},
    {"$gt": "5"},
    {"$gte": 0},
    {"$lt": 3},
    {"$contains": "x", "contains": "x"},
    {"$contains": "a"},
    {"$regex": "x"},
    {"$any": False},
    {"$any": True},
    {"$absent": True},
    {"$not": {"$in": "x"}},
    {"$not": "taipei"},
    {"$ref": "nothing_captured"},
    {"$ref": 3},
    {1: "x"},
    {"$not": {"$in": ["kaohsiung"]}},
    {"$not": ["a"]},
    {"$not": {"k": "v"}},
    {"$contains": ["a"]},
    {"$contains": {"k": "v"}},
    {"$pattern": "x{99999999999}"},
    {"$any": ["a"]},
    {"$in": [{"k": "v"}, ["a"]]},
]
VALUES: list[Any] = [5, "x", [], {}, None, True, 2.5, ["a"], {"k": "v"}]


def _typo(word: str, rng: random.Random) -> str:
    if len(word) < 2:
        return word + "x"
    i = rng.randrange(len(word) - 1)
    return rng.choice(
        [
            word[:i] + word[i + 1 :],
            word[:i] + word[i + 1] + word[i] + word[i + 2 :],
            word.lower() if word != word.lower() else word.capitalize(),
            word + "s",
        ]
    )


def _paths(data: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(data, dict):
        for k, v in data.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += _paths(v, (*prefix, i))
    return out


def _get(data: Any, path: tuple) -> Any:
    for p in path:
        data = data[p]
    return data


def _call_rules(data: dict[str, Any]) -> list[dict[str, Any]]:
    calls = (data.get("expect") or {}).get("calls") or {}
    return [r for group in ("expected", "forbidden") for r in _flat(calls.get(group)) if "tool" in r]


def _flat(nodes: Any) -> list[dict[str, Any]]:
    """Expected calls and forbidden rules, also those inside {ordered: [...]} / {unordered: [...]} groups."""
    out: list[dict[str, Any]] = []
    for node in nodes if isinstance(nodes, list) else []:
        if isinstance(node, dict):
            inner = [v for k, v in node.items() if k in ("ordered", "unordered") and isinstance(v, list)]
            out += [r for members in inner for r in _flat(members)] if inner else [node]
    return out


def _regroup(data: dict[str, Any], rng: random.Random) -> None:
    """Expected calls put into a group (or a misspelt one, an empty one), or one made optional."""
    calls = data.setdefault("expect", {}).setdefault("calls", {})
    expected = calls.get("expected")
    if not isinstance(expected, list) or not expected:
        return
    how = rng.choice(["unordered", "ordered", "nested", "optional", "optional-exact", "empty", "typo"])
    a = rng.randrange(len(expected))
    b = rng.randrange(a, len(expected)) + 1
    members = expected[a:b]
    if how in ("unordered", "ordered"):
        expected[a:b] = [{how: members}]
    elif how == "nested":
        expected[a:b] = [{"unordered": [{"ordered": members}, *expected[b : b + 1]]}]
        del expected[a + 1 : a + 2]
    elif how in ("optional", "optional-exact"):
        rule = rng.choice(_flat(expected) or [{}])
        rule["optional"] = True
        if how == "optional-exact":
            calls["order"] = "exact"
    elif how == "empty":
        expected.insert(a, {rng.choice(["ordered", "unordered"]): []})
    else:
        expected[a:b] = [{rng.choice(["unorderd", "orderd", "any_order"]): members}]


def _matcher_slots(data: dict[str, Any]) -> list[tuple[dict, Any]]:
    slots: list[tuple[dict, Any]] = []
    for rule in _call_rules(data):
        for key in ("args", "result"):
            if isinstance(rule.get(key), dict):
                slots += [(rule[key], k) for k in rule[key]]
    after = ((data.get("expect") or {}).get("state") or {}).get("after")
    if isinstance(after, dict):
        slots += [(after, k) for k in after]
    return slots


def _inert(data: dict[str, Any], rng: random.Random) -> None:
    """A rule that could never fire: a misspelt ARIA role, text beside absent, a GET write rule, status 600."""
    expect = data.setdefault("expect", {}) if isinstance(data.get("expect"), dict) else {}
    how = rng.choice(["role", "absent-text", "get", "status"])
    ui = [u for u in expect.get("ui") or [] if isinstance(u, dict) and isinstance(u.get("target"), dict)]
    faults = [s for s in data.get("steps") or [] if isinstance(s, dict) and s.get("action") == "fault"]
    if how == "role" and ui:
        target = rng.choice(ui)["target"]
        target["role"] = _typo(str(target.get("role") or "dialog"), rng)
    elif how == "absent-text" and ui:
        rng.choice(ui).update({"state": "absent", "text": {"$contains": "x"}})
    elif how == "status" and faults:
        rng.choice(faults).update({"status": rng.choice([600, 99, 0, 1000]), "delay_ms": None})
    else:
        network = expect.setdefault("network", {})
        if isinstance(network, dict):
            network.setdefault("writes", {})["GET /api/*"] = 0


# Shapes a documented rule forbids: accepted, each is a wrong verdict (a rule that never matches, a case
# that fails with its own plan, ids that collide on a case-insensitive file system).
MUST_REFUSE = ("changed-only", "self-contradiction", "plan-contradiction", "id-case")
CHANGED_ONLY = ["events[0]", "events[name=x]", "a..b", ".saved", "{eventId}", "events[id=x", "saved."]
SELF_CONTRADICTIONS = [
    {"$gt": 5, "$lt": 3},
    {"$gte": 4, "$lt": 4},
    {"$type": "string", "$in": [1, 2]},
    {"$type": "string", "$gt": 1},
    {"$absent": True, "$type": "string"},
    {"$in": [1, 2], "$gt": 5},
    {"$pattern": "^a", "$type": "integer"},
]


def _must_refuse(data: dict[str, Any], rng: random.Random) -> str:
    """One shape a documented rule forbids, or 'none' when this case has no place for it."""
    expect = data.get("expect") if isinstance(data.get("expect"), dict) else {}
    how = rng.choice(MUST_REFUSE)
    if how == "changed-only":
        expect.setdefault("state", {})["changed_only"] = [rng.choice(CHANGED_ONLY)]
        return how
    if how == "self-contradiction":
        slots = [(h, k) for h, k in _matcher_slots(data) if h is not (expect.get("state") or {}).get("after")]
        if not slots:
            return "none"
        holder, key = rng.choice(slots)
        holder[key] = copy.deepcopy(rng.choice(SELF_CONTRADICTIONS))
        return how
    if how == "id-case":
        return how if data.get("id") != str(data.get("id")).lower() else "none"  # run_fuzz loads both files
    return _contradict_plan(data, expect, rng)


def _contradict_plan(data: dict[str, Any], expect: dict[str, Any], rng: random.Random) -> str:
    """An expected call the case's own plan breaks, in a way known before the run."""
    planned = [c for s in data.get("steps") or [] if isinstance(s, dict) for c in s.get("plan") or []]
    planned = [c for c in planned if isinstance(c, dict) and not any("$ref" in str(v) for v in c.get("args", {}))]
    calls = expect.get("calls") if isinstance(expect.get("calls"), dict) else {}
    rules = [r for r in _flat(calls.get("expected")) if not r.get("optional") and "step" not in r]
    pairs = [(r, c) for r in rules for c in planned if r.get("tool") == c.get("call") and c.get("args")]
    pairs = [(r, c) for r, c in pairs if not any("$ref" in str(v) for v in (r.get("args") or {}).values())]
    same_tool = [[c for c in planned if c.get("call") == r.get("tool")] for r, _ in pairs]
    pairs = [p for p, others in zip(pairs, same_tool, strict=True) if len(others) == 1]
    how = rng.choice(["value", "absent", "no-other-args", "max-calls"])
    if how == "max-calls" and planned:
        calls["max_calls"] = len(planned) - 1
        return "plan-contradiction"
    if not pairs:
        return "none"
    rule, call = rng.choice(pairs)
    name = rng.choice(sorted(call["args"]))
    if how == "absent":
        rule.setdefault("args", {})[name] = {"$absent": True}
    elif how == "no-other-args" and set(call["args"]) - set(rule.get("args") or {}):
        rule["no_other_args"] = True
    else:
        rule.setdefault("args", {})[name] = "a value the plan never sends"
    return "plan-contradiction"


def mutate_data(data: dict[str, Any], rng: random.Random) -> str:
    """Change ``data`` in place the way a person might; return what was done."""
    kinds = ["key", "drop", "type", "operator", "step", "arg", "order", "tool", "capture", "plan", "id", "group"]
    kinds += ["inert", "must-refuse", "must-refuse", "must-refuse"]
    kind = rng.choice(kinds)
    if kind == "must-refuse":
        return _must_refuse(data, rng)
    paths = [p for p in _paths(data) if p]
    if kind == "key":
        path = rng.choice([p for p in paths if isinstance(p[-1], str)])
        parent = _get(data, path[:-1])
        parent[_typo(path[-1], rng)] = parent.pop(path[-1])
    elif kind == "drop":
        path = rng.choice([p for p in paths if isinstance(p[-1], str)])
        del _get(data, path[:-1])[path[-1]]
    elif kind == "type":
        path = rng.choice(paths)
        _get(data, path[:-1])[path[-1]] = copy.deepcopy(rng.choice(VALUES))
    elif kind == "operator" and _matcher_slots(data):
        holder, key = rng.choice(_matcher_slots(data))
        holder[key] = copy.deepcopy(rng.choice(GOOD_AND_BAD_MATCHERS))
    elif kind == "step" and _call_rules(data):
        rng.choice(_call_rules(data))["step"] = rng.choice([-1, 0, 1, 2, 3, 5, 99])
    elif kind == "arg" and _call_rules(data):
        rule = rng.choice(_call_rules(data))
        args = rule.setdefault("args", {})
        if args and rng.random() < 0.7:
            name = rng.choice(list(args))
            args[_typo(str(name), rng)] = args.pop(name)
        else:
            args[rng.choice(["eventid", "city", "registrationID", "q"])] = rng.choice(["x", "taipei", 3])
    elif kind == "order":
        data.setdefault("expect", {}).setdefault("calls", {})["order"] = rng.choice(["sequence", "set", "exact", "any"])
    elif kind == "tool" and _call_rules(data):
        rule = rng.choice(_call_rules(data))
        rule["tool"] = rng.choice([*sorted(CATALOG.tools()), _typo(str(rule.get("tool", "x")), rng)])
    elif kind == "capture":
        holders = [r for r in _call_rules(data) if isinstance(r.get("capture"), dict) and r["capture"]]
        holders += [
            c for s in data.get("steps", []) for c in (s.get("plan") or []) if isinstance(c.get("capture"), dict)
        ]
        if holders:
            capture = rng.choice(holders)["capture"]
            if capture:
                name = rng.choice(list(capture))
                path = str(capture[name])
                capture[name] = rng.choice(
                    [path.replace("]", "", 1), "data." + path, path + "[", path.replace(".", "..")]
                )
    elif kind == "plan":
        steps = [s for s in data.get("steps", []) if isinstance(s, dict) and len(s.get("plan") or []) > 1]
        if steps:
            rng.shuffle(rng.choice(steps)["plan"])
    elif kind == "group":
        _regroup(data, rng)
    elif kind == "inert":
        _inert(data, rng)
    elif kind == "id":
        data["id"] = rng.choice(["SEL-01" + "A" * 300, "SEL-01/../x", "sel-01", "SEL-01 X", "SEL-99"])
    return kind


TAGGED = ["!!binary aGVsbG8=", "!!set {a, b}", "!!timestamp 2024-01-01", "!!omap [a: 1]", "!!python/none ''"]


def mutate_text(text: str, rng: random.Random) -> tuple[bytes, str]:
    lines = text.splitlines(keepends=True)
    kind = rng.choice(
        ["delete", "duplicate", "nul", "byte", "tab", "truncate", "bomb", "deep", "dedent", "tag", "key", "date"]
    )
    i = rng.randrange(len(lines))
    valued = [n for n, line in enumerate(lines) if re.match(r"\s*(- )?[\w$]+: \S", line)]
    if kind in ("tag", "date") and valued:
        # YAML's own types beyond JSON, or an unquoted date, as the value of some key
        n = rng.choice(valued)
        head = lines[n].split(": ", 1)[0]
        value = rng.choice(TAGGED) if kind == "tag" else rng.choice(["2024-01-01", "2027-01-05 19:00:00"])
        lines[n] = f"{head}: {value}\n"
    elif kind == "key":
        lines.insert(i if lines[i][:1] not in " -" else 0, rng.choice(["? [a, b]\n: 1\n", "? {a: 1}\n: 1\n"]))
    elif kind == "delete":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(i, lines[i])
    elif kind == "nul":
        lines[i] = lines[i].rstrip("\n") + "\x00\n"
    elif kind == "tab":
        lines[i] = "\t" + lines[i]
    elif kind == "dedent":
        lines[i] = lines[i].lstrip()
    elif kind == "truncate":
        lines = lines[:i] + [lines[i][: len(lines[i]) // 2]]
    elif kind == "bomb":
        bomb = "".join(f"x{n}: &x{n} [{', '.join([f'*x{n - 1}'] * 9) if n else 'a'}]\n" for n in range(8))
        lines.insert(i if lines[i][:1] not in " -" else 0, bomb)
    elif kind == "deep":
        lines.append("notes: " + "[" * 300 + "]" * 300 + "\n")
    data = "".join(lines).encode("utf-8")
    if kind == "byte":
        at = rng.randrange(len(data))
        data = data[:at] + b"\xff" + data[at:]
    return data, kind


# ---- the run ---------------------------------------------------------------------------


@dataclass
class Figures:
    tried: int = 0
    rejected: int = 0
    accepted: int = 0
    equivalent: int = 0
    judged: int = 0
    tracebacks: list[str] = field(default_factory=list)
    unplaced: list[str] = field(default_factory=list)  # problems without a file, line or field
    wrong_verdicts: list[str] = field(default_factory=list)
    plan_fails_own_case: int = 0  # accepted, but the reference plan would not pass it (the case fails: no wrong pass)
    warned_of_own_plan: int = 0  # ... of which validate names (plan_problems) before any browser starts
    kinds: dict[str, int] = field(default_factory=dict)

    def line(self) -> str:
        return (
            f"variants tried {self.tried}, rejected {self.rejected}, accepted {self.accepted} "
            f"({self.equivalent} equivalent to the original, {self.judged} judged on their plan's trace; "
            f"{self.plan_fails_own_case} fail with their own plan, {self.warned_of_own_plan} named), "
            f"tracebacks {len(self.tracebacks)}, "
            f"misplaced problems {len(self.unplaced)}, wrong verdicts {len(self.wrong_verdicts)}"
        )


FIELDLESS = ("not valid YAML", "refused:", "a case file must be a YAML mapping", "not UTF-8", "duplicate key")


def _check_problem(p: Problem, file: Path, data: bytes, figures: Figures) -> None:
    lines = data.count(b"\n") + 1
    text = str(p)
    placed = p.file == str(file) and 1 <= p.line <= lines and text.startswith(f"{file}:{p.line}: ") and "\n" not in text
    if not placed or not (p.field or p.message.startswith(FIELDLESS)):
        figures.unplaced.append(text)


def judge(variant: LoadedCase, original: Case, figures: Figures, label: str) -> None:
    if variant.case.model_dump() == original.model_dump():
        figures.equivalent += 1
        return
    figures.judged += 1
    trace = plan_trace(variant.case)
    assertions = checks.evaluate(variant.case, trace)
    calls = [a for a in assertions if a.kind in ("calls", "forbidden", "catalog")]
    if any(a.status == "failed" for a in calls):
        figures.plan_fails_own_case += 1
        figures.warned_of_own_plan += bool(plan_problems([variant]))
    figures.wrong_verdicts += [f"{label}: {w}" for w in forbidden_fires(variant.case, trace)]
    figures.wrong_verdicts += [f"{label}: {w}" for w in required_fires(variant.case, trace)]


def run_fuzz(tmp: Path, variants_per_seed: int = VARIANTS_PER_SEED, seed: int = 9) -> Figures:
    rng = random.Random(seed)
    figures = Figures()
    for source in case_files([CASES]):
        text = source.read_text(encoding="utf-8")
        original = load_suite([source], CATALOG, whole_suite=False)[0][0].case
        for n in range(variants_per_seed):
            if rng.random() < 0.75:
                data = yaml.safe_load(text)
                kind = mutate_data(data, rng)
                raw = yaml.safe_dump(data, allow_unicode=True, sort_keys=False).encode("utf-8")
            else:
                raw, kind = mutate_text(text, rng)
            figures.kinds[kind] = figures.kinds.get(kind, 0) + 1
            file = tmp / f"{source.stem}.v{n}.yaml"
            file.write_bytes(raw)
            label = f"{file.name} ({kind})"
            figures.tried += 1
            if kind == "id-case":  # the seed beside a copy whose id differs only in case
                copy_of = yaml.safe_load(text)
                copy_of["id"] = str(copy_of["id"]).lower()
                file.write_text(yaml.safe_dump(copy_of, allow_unicode=True, sort_keys=False), encoding="utf-8")
                raw = file.read_bytes()
            try:
                loaded, problems = load_suite([source, file] if kind == "id-case" else [file], CATALOG, False)
                plan_problems(loaded)  # validate prints them beside the problems: they must never raise either
                if problems:
                    figures.rejected += 1
                    for p in problems:
                        _check_problem(p, file, raw, figures) if p.file == str(file) else None
                    continue
                figures.accepted += 1
                if kind == "inert":  # every inert mutation changes the case: accepted, it could never fire
                    figures.wrong_verdicts.append(f"{label}: a rule that can never fire was accepted")
                if kind in MUST_REFUSE:
                    figures.wrong_verdicts.append(f"{label}: accepted although a documented rule forbids it")
                judge(loaded[-1], original, figures, label)
            except Exception as err:  # noqa: BLE001 - the point: nothing may escape
                figures.tracebacks.append(f"{label}: {type(err).__name__}: {err}")
    return figures


def test_the_seed_cases_pass_on_their_own_plan_trace():
    """The synthetic trace is sound: every seed's reference plan satisfies its own call checks."""
    for source in case_files([CASES]):
        (lc,), problems = load_suite([source], CATALOG, whole_suite=False)
        assert not problems
        assertions = checks.evaluate(lc.case, plan_trace(lc.case))
        failed = [f"{a.id}: {a.why}" for a in assertions if a.kind in ("calls", "forbidden") and a.status == "failed"]
        assert not failed, (source.name, failed)
        assert forbidden_fires(lc.case, plan_trace(lc.case)) == [], source.name
        assert required_fires(lc.case, plan_trace(lc.case)) == [], source.name


def test_fuzzed_cases_never_traceback_and_never_give_a_wrong_verdict(tmp_path, capsys):
    figures = run_fuzz(tmp_path)
    with capsys.disabled():
        print(f"\ncase fuzz: {figures.line()}")
    assert figures.tried == len(case_files([CASES])) * VARIANTS_PER_SEED
    assert figures.tracebacks == []
    assert figures.unplaced == []
    assert figures.wrong_verdicts == []
    assert figures.rejected and figures.judged and figures.equivalent  # the fuzz reaches every outcome
    assert figures.kinds.get("group", 0) >= 10  # groups and optional calls are fuzzed too
    assert all(figures.kinds.get(kind, 0) >= 3 for kind in MUST_REFUSE), figures.kinds  # each refused shape is tried


if __name__ == "__main__":  # python tests/test_case_fuzz.py [variants per seed]
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        result = run_fuzz(Path(tmp), int(sys.argv[1]) if len(sys.argv) > 1 else VARIANTS_PER_SEED)
    print(result.line())
    print("by mutation:", dict(sorted(result.kinds.items())))
    for line in result.tracebacks + result.unplaced + result.wrong_verdicts:
        print(" ", line)
