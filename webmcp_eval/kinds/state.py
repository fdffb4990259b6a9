"""``expect.state``: the site's server state after the trial against the state before it.

``unchanged``, ``changed_only`` (the paths that may change) and ``after`` (path -> matcher on the state
after; a path may name a value the calls captured, ``events[id={event_id}].seatsLeft``). The state is read
through the site's state hook before and after the trial (the trace's ``state``, its diff made by
``state_diff``); a site without one answers not_run.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, model_validator

from webmcp_eval.kinds import CaseFacts, Evidence, Kind, RuleProblem, answerable
from webmcp_eval.kinds import assertion as _a
from webmcp_eval.kinds import not_reached as _not_reached
from webmcp_eval.kinds._locator import Strict
from webmcp_eval.kinds.calls.model import expected_leaves
from webmcp_eval.matchers import MISSING, PathError, match, matcher_problems, parse_path, refs_in, resolve, short
from webmcp_eval.trace import Assertion, StateChange, Trace

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


class StateExpectation(Strict):
    unchanged: bool = False
    changed_only: list[str] | None = Field(default=None, description="paths that may change; all else must not")
    after: dict[str, Any] = Field(default_factory=dict, description="path -> matcher on the state after")

    @model_validator(mode="after")
    def _not_contradictory(self) -> StateExpectation:
        if self.unchanged and (self.changed_only or self.after):
            raise ValueError("unchanged: true cannot be combined with changed_only or after")
        return self


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


# ---- its rules against the suite ----------------------------------------------------------------


def state_problems(state: StateExpectation, facts: CaseFacts) -> list[RuleProblem]:
    """Paths in the form the diff names a change, placeholders and ``$ref`` s the expected calls capture."""
    out = _changed_only_problems(state)
    captured = {name for _, exp in expected_leaves(facts.expect.calls.expected) for name in exp.capture}
    for path, matcher in state.after.items():
        where = ("expect", "state", "after", path)
        try:
            parse_path(path)
        except PathError as err:
            out.append((where, str(err)))
        for name in _PLACEHOLDER.findall(path):
            if name not in captured:
                out.append((where, f"{{{name}}} in the path is never captured by an expected call"))
        out += [((*where, *at), message) for at, message in matcher_problems(matcher)]
    return out


def refs_problems(state: StateExpectation, facts: CaseFacts) -> list[RuleProblem]:
    """Every ``$ref`` in ``after`` names a value an expected call captures."""
    captured = {name for _, exp in expected_leaves(facts.expect.calls.expected) for name in exp.capture}
    where = ("expect", "state", "after")
    return [(where, f"$ref {name!r} is never captured by an expected call") for name in refs_in(state.after)
            if name not in captured]  # fmt: skip


def _changed_only_problems(state: StateExpectation) -> list[RuleProblem]:
    """changed_only paths are read as after paths are, in the form the state diff names a change: keys joined by
    '.', list items by id ([id=…]); a path in any other form matches no change, so the rule refuses them all."""
    out: list[RuleProblem] = []
    for i, path in enumerate(state.changed_only or []):
        where = ("expect", "state", "changed_only", i)
        if _PLACEHOLDER.search(path):
            out.append((where, f"{path!r}: changed_only paths are not filled from captures; name the place"))
            continue
        try:
            parts = parse_path(path)
        except PathError as err:
            out.append((where, str(err)))
            continue
        if any(isinstance(p, int) or (isinstance(p, tuple) and p[0] != "id") for p in parts):
            out.append(
                (
                    where,
                    f"{path!r}: the state diff names a list item by its id ([id=…]), never by "
                    "position or another field, so this path matches no change",
                )
            )
            continue
        shown = ".".join(p if isinstance(p, str) else f"[id={p[1]}]" for p in parts).replace(".[", "[")
        if shown != path:
            out.append((where, f"{path!r} matches no change as written: write it as {shown!r}"))
    return out


def _validate(state: StateExpectation, facts: CaseFacts) -> list[RuleProblem]:
    return state_problems(state, facts) + refs_problems(state, facts)


STATE = Evidence("state", ("state",), lambda t: [d.model_dump() for d in t.state.diff])


def _about_writes(exp: StateExpectation) -> bool:
    return True  # the state after the steps, changed or unchanged, is what writes make


KIND = Kind(
    "state", StateExpectation, check_state, (STATE,), answerable, validate=_validate, about_writes=_about_writes
)
