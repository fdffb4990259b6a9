"""Re-judging: a run's stored traces judged again with the current case files and checks.

The checks are pure functions of (case, trace), so a trace can be judged again
when a check or a case is fixed: the evidence (calls, UI, network, state, the
answer) stays exactly as it was recorded; only the case it is judged by, the
code-checked assertions and the verdict are new. Assertions the code checks do
not make are kept as they were: the agent's own (a budget that ran out) and the
model grader's or people's verdicts on rubric criteria (judging those again
needs the grader, not the trace).

A trace the current case cannot be judged on is *unanswerable*: its case id is
no longer in the suite, the case now plays differently (another start route,
seed, site breaks or steps), or one of its expect: blocks asks for evidence the
trial never gathered (a UI target, a confirmation control or untrusted rendering
that was never observed: each kind says what, webmcp_eval/judge/checks.py KINDS).
Judging it would answer a question the trial never asked the site.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from webmcp_eval.judge import checks
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.rundir.plan import RunPlan, write_plan
from webmcp_eval.rundir.run_info import read_run_info, write_run_info
from webmcp_eval.suite.case import Case
from webmcp_eval.suite.live_rules import rules_that_never_fire
from webmcp_eval.trace import NotRunKind, Trace, write_trace

# A trial that stopped before its evidence was complete (browser, site, agent, step...) has nothing new to judge.
JUDGED_KINDS = (None, "evidence", "checker")
PLAY_FIELDS = ("start_route", "seed", "breaks")  # with the steps: what the trial did, as opposed to what it expects
AGENT_STEP_FIELDS = ("plan", "reply")  # the reference agent's script, not the task: judged as the agent's choice


@dataclass
class Change:
    """What re-judging did to one trial."""

    case_id: str
    trial_id: str
    old: str
    new: str
    assertions: list[str] = field(default_factory=list)  # "ui[0]: passed → failed", "answer.contains[1]: new, failed"

    @property
    def changed(self) -> bool:
        return self.old != self.new or bool(self.assertions)


NEVER_FIRES = "can never fire: "  # a rule against the tools the trial saw (suite/live_rules.py): judged at the end


def judged_again(trace: Trace) -> bool:
    """The trial played to the end (its verdict came from the checks): there is evidence to judge again."""
    return trace.not_run_kind in JUDGED_KINDS or (
        trace.not_run_kind == "case" and trace.verdict_reason.startswith(NEVER_FIRES)
    )


def unanswerable(case: Case, trace: Trace) -> str:
    """Why this trace cannot answer ``case`` as it is now ("" when it can)."""
    played = _play_of(trace.case)
    now = _play_of(case.model_dump(mode="json", exclude_defaults=True))
    for name in (*PLAY_FIELDS, "steps"):
        if played.get(name) != now.get(name):
            return f"the case's {name} changed since the trial was played: play it again"
    for kind, value in checks.blocks(case):  # evidence the trial never gathered for one of its blocks
        why = kind.unanswerable(value, trace)
        if why:
            return why
    return ""


def _play_of(dumped: dict[str, Any]) -> dict[str, Any]:
    """The fields of a dumped case that decide what the trial does (the reference agent's script aside)."""
    steps = [
        {k: v for k, v in step.items() if k not in AGENT_STEP_FIELDS} if isinstance(step, dict) else step
        for step in dumped.get("steps") or []
    ]
    return {**{name: dumped.get(name) for name in PLAY_FIELDS}, "steps": steps}


def rejudge(
    trace: Trace, case: Case | None, case_file: str, new_run_id: str, why_not: str = "", live_rules: bool = False
) -> Trace:
    """The trace judged again by ``case`` (None: no such case in the suite), as a trace of run ``new_run_id``.

    ``why_not``: the trace is unanswerable (see ``unanswerable``); it becomes not_run with that reason.
    ``live_rules``: the suite has no catalog file, so the case's rules are checked against the tools the
    trial saw, as ``run`` does. The evidence is copied as it was; ``rejudged`` says where the trace came
    from and what it said then.
    """
    new = trace.model_copy(deep=True)
    new.run_id = new_run_id
    new.rejudged = {
        "from_run": trace.run_id,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "verdict": trace.verdict,
        "verdict_reason": trace.verdict_reason,
    }
    if case is None:
        new.assertions = []
        new.verdict, new.not_run_kind = "not_run", "case"
        new.verdict_reason = f"rejudge: case {trace.case_id} is not in the suite"
        return new
    new.case = case.model_dump(mode="json", exclude_defaults=True)
    new.case_file, new.behaviour, new.title = case_file, case.behaviour, case.title
    if not judged_again(trace):
        return new  # it never played to the end: its not_run stands, whatever the case says now
    # the agent's own and the simulated user's (a goal case's conversation is evidence, not a check)
    kept = [a for a in trace.assertions if a.grader != "code" or a.kind in ("agent", "conversation")]
    never = rules_that_never_fire(case, trace.live_tools)[0] if live_rules and trace.live_tools is not None else []
    kind: NotRunKind
    error, kind = (NEVER_FIRES + "; ".join(never), "case") if never else (None, "evidence")
    try:
        new.assertions = checks.evaluate(case, trace) + kept
    except Exception as err:  # a check that raises: not_run, as in a trial
        new.assertions = kept
        error, kind = error or f"checker error: {type(err).__name__}: {err}", kind if error else "checker"
    new.verdict, new.verdict_reason = checks.verdict(new.assertions, error)
    new.not_run_kind = None if new.verdict != "not_run" else kind if error else "evidence"
    if why_not:
        new.verdict, new.not_run_kind = "not_run", "case"
        new.verdict_reason = f"rejudge: {why_not}"
    return new


def change_of(old: Trace, new: Trace) -> Change:
    """The verdict and the assertions whose status changed, appeared or went away."""
    before = {a.id: a for a in old.assertions}
    after = {a.id: a for a in new.assertions}
    lines = []
    for aid, a in after.items():
        b = before.get(aid)
        if b is None:
            lines.append(f"{aid}: new, {a.status}")
        elif b.status != a.status:
            lines.append(f"{aid}: {b.status} → {a.status}")
    lines += [f"{aid}: gone (was {b.status})" for aid, b in before.items() if aid not in after]
    return Change(old.case_id, old.trial_id, old.verdict, new.verdict, lines)


def write_run(src: Path, dst: Path, traces: list[Trace], plan: RunPlan | None) -> None:
    """A new run directory of the re-judged traces: their plan and artifacts as the old run had them.

    The old run is never written to; ``dst`` must not exist yet or be empty.
    """
    run_id = dst.name
    for name in RunDir.ARTIFACT_DIRS:  # named in the traces: copied as they are
        if (src / name).is_dir():
            shutil.copytree(src / name, dst / name, dirs_exist_ok=True)
    if plan is not None:
        write_plan(dst, {**plan, "run_id": run_id})
    info = read_run_info(src)
    info.update(run_id=run_id, rejudged_from=str(src))
    write_run_info(dst, info)
    for trace in traces:
        write_trace(trace, RunDir(dst).trials)
