"""``expect.ui``: what the page shows after the steps, each element found as a person finds it (a locator).

Each expectation names its element (``target``) and its ``state`` (visible, hidden, absent); a visible one
may be held to its ``value``, ``text`` or whole ``summary`` (label/value pairs). After the steps each target
is read once (``observe``; the trace's ``ui.observations``, in the case's order).
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import Field, model_validator

from webmcp_eval.data_file import FieldPath
from webmcp_eval.kinds import CaseFacts, Evidence, Kind, PageReader, RuleProblem
from webmcp_eval.kinds import assertion as _a
from webmcp_eval.kinds import not_reached as _not_reached
from webmcp_eval.kinds._locator import Locator, Strict
from webmcp_eval.matchers import MISSING, match, matcher_problems, short
from webmcp_eval.trace import Assertion, Trace, UiObservation


class UiExpectation(Strict):
    target: Locator
    state: Literal["visible", "hidden", "absent"] = "visible"
    value: Any = None
    text: Any = None
    summary: dict[str, Any] | None = Field(
        default=None,
        description="label -> matcher of every label/value pair the element shows (a dl's dt/dd, a table's "
        "th/td rows), read whole: a field it shows that is not named here, or named with another value, fails",
    )
    why: str = ""

    @model_validator(mode="after")
    def _checked(self) -> UiExpectation:
        given = [name for name in ("value", "text", "summary") if getattr(self, name) is not None]
        if given and self.state != "visible":
            raise ValueError(
                f"{' and '.join(given)} beside state: {self.state} is never checked (only a visible element has "
                f"one to read); to say which element must be {self.state}, put it in the target "
                "(name:, text:, within:)"
            )
        return self


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


def _ui_unobserved(expectations: list[UiExpectation], trace: Trace) -> str:
    observed = {o.target for o in trace.ui.observations}
    for i, exp in enumerate(expectations):
        if exp.target.describe() not in observed:
            return f"ui[{i}] {exp.target.describe()} was never observed in this trial: play it again"
    return ""


def matcher_fields(expectations: list[UiExpectation], facts: CaseFacts) -> list[RuleProblem]:
    """The matchers of value, text and each summary label are well formed."""
    out: list[RuleProblem] = []
    for i, ui in enumerate(expectations):
        places: list[tuple[FieldPath, Any]] = [(("expect", "ui", i, f), getattr(ui, f)) for f in ("value", "text")]
        places += [(("expect", "ui", i, "summary", label), m) for label, m in (ui.summary or {}).items()]
        out += [((*where, *at), message) for where, matcher in places for at, message in matcher_problems(matcher)]
    return out


def page_wide_text(expectations: list[UiExpectation], facts: CaseFacts) -> list[RuleProblem]:
    """Page-wide text in a case with a confirmation point or a dialog: a warning, the case still runs.

    Such an assertion passes whenever the text appears anywhere (a list card, a heading), not on the
    element it speaks of; scope it with ``within``."""
    if facts.expect.confirmation is None and not any(_names_dialog(ui.target) for ui in expectations):
        return []
    return [
        (
            ("expect", "ui", i, "target"),
            f"page-wide text {ui.target.text!r} in a case with a confirmation point or a dialog: "
            "it passes wherever the text appears; scope it with within: (the dialog, form or region)",
        )
        for i, ui in enumerate(expectations)
        if ui.target.page_wide_text
    ]


def _names_dialog(loc: Locator | None) -> bool:
    while loc is not None:
        if loc.role in ("dialog", "alertdialog"):
            return True
        loc = loc.within
    return False


async def observe(expectations: list[UiExpectation], page: PageReader, trace: Trace) -> None:
    """Each expected element as the page shows it now, in the case's order."""
    reads = (page.target(exp.target, exp.summary is not None) for exp in expectations)
    trace.ui.observations = list(await asyncio.gather(*reads))


UI = Evidence("ui", ("ui",), lambda t: [o.model_dump() for o in t.ui.observations])
ARIA = Evidence("aria", ("ui",), lambda t: t.ui.aria_snapshot)
URL = Evidence("url", ("ui",), lambda t: t.ui.url)

KIND = Kind(
    "ui",
    UiExpectation,
    check_ui,
    (UI, ARIA, URL),
    _ui_unobserved,
    annotation=list[UiExpectation],
    field=Field(default_factory=list),
    validate=matcher_fields,
    observe=observe,
    warn=page_wide_text,
)
