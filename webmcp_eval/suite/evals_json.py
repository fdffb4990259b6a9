"""The public webmcp-evals format (``evals.json``), read as our cases.

An ``evals.json`` is a JSON array of evals, each ``{name?, messages,
expectedCall}``. ``messages`` is the conversation so far: user and model text
(``type: message``), earlier model calls (``type: functioncall``, ``name``,
``arguments``) and their answers (``type: functionresponse``, ``name``,
``response``; the public examples also write an answer as ``functioncall``
with ``response``). ``expectedCall`` is ``null`` (no tool call), one call, or a
list of calls and ``{ordered: [...]}`` / ``{unordered: [...]}`` groups; a call
is ``{functionName, arguments?, result?, optional?, mockOutput?}``, and
argument values use the matchers ``$pattern``, ``$contains``, ``$gt``,
``$gte``, ``$lt``, ``$lte``, ``$type`` and ``$any``.

Each eval becomes one case: the last user message is the step's message, the
messages before it its ``history``; the expected calls become both the
expectation (``order: exact``: the public tool fails any call beyond the
expected ones) and the reference plan (each matcher played with a value that
satisfies it); ``expectedCall: null`` becomes "no tool calls". Groups,
``optional`` and matchers map one to one. Every problem names the file, the
line and the JSON path of the eval (``[3].expectedCall[0].arguments.size``);
an unknown ``$`` operator or a misspelled key is an error, where the public
tool would silently match anything.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from webmcp_eval.data_file import (
    MAX_PERSON_JSON_BYTES,
    FieldPath,
    FileProblem,
    LineMap,
    json_lines,
    parse_json,
    read_text,
)
from webmcp_eval.errors import InvalidInput
from webmcp_eval.matchers import MISSING
from webmcp_eval.suite.case import Case
from webmcp_eval.suite.evals_format import _TAGS, CallMessage, Eval, Node, OrderedGroup, TextMessage, UnorderedGroup
from webmcp_eval.suite.loader import LoadedCase, Problem
from webmcp_eval.suite.matcher_examples import _typed_only, example
from webmcp_eval.suite.site import SiteConfig

BEHAVIOURS = {
    "tool_call": "the agent makes the expected tool calls (webmcp-evals expectedCall)",
    "no_tool_call": "the agent makes no tool call (webmcp-evals expectedCall: null)",
}
START_ROUTE = "/"  # the public tool opens one URL: the base URL itself
WEAKER = (
    "the public tool shares one browser context between evals (state carries over from one to the next); "
    "here every case starts at its route with clean state: an eval that needs an earlier one's effect "
    "must carry it in its messages",
    "the public tool checks a result only where an expected call gives `result` (older releases never); "
    "here every run also asserts that each call names a tool the page registered and that no tool outlived "
    "its route, so a run can fail where the public tool passes",
    "`mockOutput` is not used: calls reach the real page",
)


class EvalsFormatError(InvalidInput):
    """A file that is not an evals.json at all (one line for the user)."""


# ---- reading: JSON with the line of every value ----------------------------------------------


def _json_path(loc: Sequence[str | int]) -> str:
    """``(3, 'expectedCall', 0, 'arguments')`` as ``[3].expectedCall[0].arguments``; union tags dropped."""
    parts = [p for i, p in enumerate(loc) if not (p in _TAGS and i and isinstance(loc[i - 1], int))]
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".")


def _line(lines: LineMap, loc: Sequence[str | int]) -> int:
    best = lines.get((), 1)
    path: FieldPath = ()
    for part in loc:
        if (*path, part) in lines:
            path = (*path, part)
            best = lines[path]
    return best


def looks_like_evals(path: Path) -> bool:
    """A .json file given where cases go is read as an evals.json (a catalog is never given there)."""
    return path.suffix == ".json" and path.is_file()


def read_evals(path: Path) -> tuple[list[tuple[int, Eval]], LineMap, list[Problem]]:
    """The evals that are well formed (with their index), the line of each value, and every problem."""
    file = str(path)
    try:
        text = read_text(path, MAX_PERSON_JSON_BYTES)
        data = parse_json(text)
    except FileProblem as err:
        return [], {}, [Problem(file, err.line or 1, "", err.what)]
    twice: list[tuple[FieldPath, int]] = []
    lines = json_lines(text, twice)
    if twice:  # JSON keeps the last of two equal keys: an expectation would vanish unseen
        return (
            [],
            lines,
            [Problem(file, at, _json_path(p), "duplicate key (the first would be ignored)") for p, at in twice],
        )
    if not isinstance(data, list):
        return (
            [],
            lines,
            [Problem(file, 1, "", "an evals.json is a JSON array of evals ({name, messages, expectedCall})")],
        )
    evals: list[tuple[int, Eval]] = []
    problems: list[Problem] = []
    for i, item in enumerate(data):  # each eval alone: one broken eval hides no problem of another
        try:
            evals.append((i, Eval.model_validate(_one_call_as_list(item))))
        except ValidationError as err:
            for e in err.errors():
                loc = (i, *e["loc"])
                problems.append(Problem(file, _line(lines, loc), _json_path(loc), _message({**e, "loc": loc})))
    return evals, lines, problems


def _one_call_as_list(item: object) -> Any:
    """``expectedCall`` may be one call instead of a list of one."""
    if isinstance(item, dict) and isinstance(item.get("expectedCall"), dict):
        return {**item, "expectedCall": [item["expectedCall"]]}
    return item


def _message(error: ErrorDetails) -> str:
    if error["type"] == "extra_forbidden":
        return "unknown field (a misspelled key is never ignored)"
    if error["type"] == "missing":
        return "required field is missing" + (
            " (null means: no tool call)" if error["loc"][-1:] == ("expectedCall",) else ""
        )
    return error["msg"]


# ---- converting: one eval, one case ----------------------------------------------------------

Renames: TypeAlias = dict[FieldPath, FieldPath]  # a converted case's field path -> the eval's own JSON path


@dataclass
class Converted:
    """The cases of one evals.json, with what the conversion noticed."""

    file: str
    cases: list[LoadedCase] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # per eval: what the import cannot carry over exactly
    renames: dict[str, Renames] = field(default_factory=dict)  # case id -> its renames

    def relabel(self, case_id: str, problem: Problem) -> Problem:
        """A problem found on a converted case, named by the JSON path of the eval it came from."""
        names = self.renames[case_id]
        ours = _parse_field(problem.field)
        for cut in range(len(ours), -1, -1):
            if ours[:cut] in names:
                rest = tuple(_THEIR_NAMES.get(p, p) if isinstance(p, str) else p for p in ours[cut:])
                path = _json_path((*names[ours[:cut]], *rest))
                return Problem(self.file, problem.line, path, problem.message, problem.of_case)
        return problem


def load_evals(path: Path, catalog: Any = None) -> tuple[list[LoadedCase], list[Problem], Converted]:
    """Convert and validate as ``validate`` does each case; every problem named by the eval's JSON path."""
    from webmcp_eval.suite.validate import validate_suite

    converted = convert(path)
    problems = list(converted.problems)
    for lc in converted.cases:
        found = validate_suite([lc], catalog, whole_suite=False, rules=(BEHAVIOURS, 0))
        problems += [converted.relabel(lc.case.id, p) for p in found]
    return converted.cases, sorted(problems, key=lambda p: p.line), converted


_THEIR_NAMES = {"tool": "functionName", "args": "arguments"}


def _parse_field(text: str) -> FieldPath:
    return tuple(int(i) if i else k for i, k in re.findall(r"\[(\d+)\]|([^.\[\]]+)", text))


def convert(path: Path) -> Converted:
    """Every eval of ``path`` as a case; the file's own problems when it cannot be read as evals."""
    evals, lines, problems = read_evals(path)
    out = Converted(str(path), problems=problems)
    used: set[str] = set()
    by_eval: dict[int, LineMap] = {}  # each eval's own lines, read once: linear in the file's size
    for where, at in lines.items():
        if where and isinstance(where[0], int):
            by_eval.setdefault(where[0], {})[where] = at
    for i, ev in evals:
        case_id = _unique_id(ev, i, used)
        data, names, case_lines, notes = _case_data(ev, i, case_id, path, by_eval.get(i, {}), lines)
        out.notes += [f"[{i}] {case_id}: {n}" for n in notes]
        out.renames[case_id] = names
        try:
            case = Case.model_validate(data)
        except ValidationError as err:  # a value the format allows but a case cannot hold
            out.problems += [
                Problem(str(path), lines.get((i,), 1), f"[{i}]", f"cannot be a case: {e['msg']}") for e in err.errors()
            ]
            continue
        out.cases.append(LoadedCase(case, str(path), case_lines))
    return out


def _unique_id(ev: Eval, i: int, used: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", (ev.name or "").strip()).strip("-._")[:60] or "eval"
    base = f"{i + 1:03d}-{base}"
    case_id, n = base, 2
    while case_id in used:
        case_id, n = f"{base}-{n}", n + 1
    used.add(case_id)
    return case_id


def _case_data(
    ev: Eval, i: int, case_id: str, path: Path, mine: LineMap, lines: LineMap
) -> tuple[dict[str, Any], Renames, LineMap, list[str]]:
    """Our case as data, our paths -> the eval's JSON paths, our paths -> lines, and notes."""
    notes: list[str] = []
    names: Renames = {(): (i,), ("title",): (i, "name"), ("steps", 0): (i, "messages")}
    history, user, user_at = _history(ev, i, names)
    names[("steps", 0, "user")] = (i, "messages", user_at)
    expected = [
        _node(n, (i, "expectedCall", k), ("expect", "calls", "expected", k), names)
        for k, n in enumerate(ev.expectedCall or [])
    ]
    plan = _plan(ev.expectedCall or [], (i, "expectedCall"), names, notes)
    calls: dict[str, Any] = {"order": "exact", "expected": expected}
    if not ev.expectedCall:
        calls["max_calls"] = 0
        names[("expect", "calls", "max_calls")] = (i, "expectedCall")
    names[("expect", "calls", "expected")] = (i, "expectedCall")
    names[("expect", "calls")] = (i, "expectedCall")
    step: dict[str, Any] = {"user": user}
    if history:
        step = {"history": history, **step}
    if plan:
        step["plan"] = plan
    data = {
        "id": case_id,
        "behaviour": "tool_call" if ev.expectedCall else "no_tool_call",
        "title": ev.name or user[:80] or case_id,
        "start_route": START_ROUTE,
        "steps": [step],
        "expect": {"calls": calls},
        "notes": f"imported from {path.name} [{i}]",
    }
    return data, names, _case_lines(i, names, mine, lines), notes


def _case_lines(i: int, names: Renames, mine: LineMap, lines: LineMap) -> LineMap:
    """Our field paths -> lines of the JSON (``mine``: this eval's), down to the keys inside arguments."""
    ours_names = {v: k for k, v in _THEIR_NAMES.items()}
    below: dict[FieldPath, list[tuple[FieldPath, int]]] = {}  # every path of mine under each of its prefixes
    for path, line in mine.items():
        for cut in range(len(path)):
            below.setdefault(path[:cut], []).append((path, line))
    out: LineMap = {}
    for ours, theirs in names.items():  # each path is found under its few prefixes: linear, not names × paths
        out.setdefault(ours, _line(lines, theirs))
        for path, line in below.get(theirs, []):
            rest = tuple(ours_names.get(p, p) if isinstance(p, str) else p for p in path[len(theirs) :])
            out.setdefault((*ours, *rest), line)
    for path in list(out):
        for cut in range(len(path)):
            out.setdefault(path[:cut], lines.get((i,), 1))
    return out


def _history(ev: Eval, i: int, names: Renames) -> tuple[list[dict[str, Any]], str, int]:
    """The messages before the final user message as history turns; that message; its index.

    A conversation that ends otherwise keeps every message as history and has no new message
    (``user: ''``): after a tool's answer the model goes on from it, as the public tool has it;
    after a model turn ``validate`` says there is nothing to answer.
    """
    final = ev.messages[-1]
    asked = final if isinstance(final, TextMessage) and final.role == "user" else None
    last = len(ev.messages) - 1 if asked is not None else len(ev.messages)
    turns: list[dict[str, Any]] = []
    for k, m in enumerate(ev.messages[:last]):
        at = ("steps", 0, "history", len(turns))
        if isinstance(m, TextMessage):
            turns.append({m.role: m.content})
        elif isinstance(m, CallMessage):
            turns.append({"call": m.name, "args": m.arguments})
        else:
            prev = turns[-1] if turns else None
            if prev is not None and prev.get("call") == m.name and "result" not in prev:
                prev["result"] = m.response
                continue
            turns.append({"call": m.name, "result": m.response})
        names[at] = (i, "messages", k)
    user = asked.content if asked is not None else ""
    return turns, user, min(last, len(ev.messages) - 1)


def _group(node: OrderedGroup | UnorderedGroup) -> tuple[str, list[Node]]:
    return ("ordered", node.ordered) if isinstance(node, OrderedGroup) else ("unordered", node.unordered)


def _node(node: Node, theirs: FieldPath, ours: FieldPath, names: Renames) -> dict[str, Any]:
    names[ours] = theirs
    if isinstance(node, OrderedGroup | UnorderedGroup):
        key, members = _group(node)
        names[(*ours, key)] = (*theirs, key)
        return {key: [_node(n, (*theirs, key, k), (*ours, key, k), names) for k, n in enumerate(members)]}
    names[(*ours, "tool")] = (*theirs, "functionName")
    names[(*ours, "args")] = (*theirs, "arguments")
    out: dict[str, Any] = {"tool": node.functionName, "args": node.arguments or {}}
    if "result" in node.model_fields_set:
        out["result"] = {"$type": "null"} if node.result is None else node.result
        names[(*ours, "result")] = (*theirs, "result")
    if node.optional:
        out["optional"] = True
        names[(*ours, "optional")] = (*theirs, "optional")
    return out


def _plan(nodes: Sequence[Node], theirs: FieldPath, names: Renames, notes: list[str]) -> list[dict[str, Any]]:
    """The reference plan: every required call in reading order, each argument a value its matcher accepts."""
    plan: list[dict[str, Any]] = []
    for k, node in enumerate(nodes):
        if isinstance(node, OrderedGroup | UnorderedGroup):
            key, members = (
                ("ordered", node.ordered) if isinstance(node, OrderedGroup) else ("unordered", node.unordered)
            )
            plan.extend(_plan(members, (*theirs, k, key), names, notes))
            continue
        if node.optional:
            continue
        args: dict[str, Any] = {}
        made_up: dict[str, Any] = {}  # argument -> the matcher its value was made up from
        for name, matcher in (node.arguments or {}).items():
            value = example(matcher)
            if value is MISSING:
                where = _json_path((*theirs, k, "arguments", name))
                notes.append(
                    f"{where}: no value is known to satisfy {json.dumps(matcher, ensure_ascii=False)}; the reference "
                    "plan leaves the argument out (give one in the imported case's plan)"
                )
                continue
            if _typed_only(matcher):
                where = _json_path((*theirs, k, "arguments", name))
                notes.append(
                    f"{where}: made up {json.dumps(value)} for {json.dumps(matcher)} (marked synthesized: the "
                    "reference agent asks the tool's schema for a better one); give a real value if the site checks it"
                )
                made_up[name] = matcher
            args[name] = value
        names[("steps", 0, "plan", len(plan))] = (*theirs, k)
        call: dict[str, Any] = {"call": node.functionName, "args": args} if args else {"call": node.functionName}
        if made_up:
            call["synthesized"] = made_up
        plan.append(call)
    return plan


# ---- import: the cases as a suite folder ----------------------------------------------------


def write_suite(source: Path, out: Path, base_url: str | None) -> tuple[list[Path], list[Problem], list[str]]:
    """Write ``source``'s evals as YAML cases and suite.yaml into ``out``; nothing when it has problems.

    Returns the case files, the problems (then nothing is written) and the notes on what the
    conversion could not carry over exactly. The folder written is checked as ``validate`` would.
    """
    from webmcp_eval.suite.folder import SUITE_FILE, SuiteConfig, dump_suite_config
    from webmcp_eval.suite.validate import load_suite

    cases, problems, converted = load_evals(source)
    if problems:
        return [], problems, converted.notes
    if not cases:  # a suite folder with no case is not a suite: validate and run would refuse it
        return [], [Problem(str(source), 1, "", "no evals in the file (an empty list): nothing to import")], []
    config = SuiteConfig(
        site=SiteConfig(base_url=base_url) if base_url else None, behaviours=BEHAVIOURS, min_cases_per_behaviour=0
    )
    out.mkdir(parents=True, exist_ok=True)
    header = f"# Imported from {source.name} by webmcp-eval import: the webmcp-evals format.\n"
    (out / SUITE_FILE).write_text(header + _yaml(dump_suite_config(config)), encoding="utf-8")
    written = []
    for lc in cases:
        data = lc.case.model_dump(mode="json", exclude_defaults=True)
        target = out / f"{lc.case.id}.yaml"
        target.write_text(f"# {lc.case.notes}\n" + _yaml(data), encoding="utf-8")
        written.append(target)
    from webmcp_eval.suite.folder import find_suite

    _, again = load_suite([out], None, True, find_suite([out]))
    return written, again, converted.notes


def _yaml(data: object) -> str:
    import yaml

    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100)
