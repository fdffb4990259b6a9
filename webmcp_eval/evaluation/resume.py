"""Running again: ``--resume`` (the planned trials without a trace) and ``--last-failed`` (a new run)."""

from __future__ import annotations

import contextlib
import fnmatch
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from webmcp_eval.errors import InvalidInput, UsageError
from webmcp_eval.evaluation.loading import (
    load_cases,
)
from webmcp_eval.evaluation.output import console, one_line, report_problems, say
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.rundir.plan import PlanError, RunPlan, case_path, changed_files, missing_trials, read_plan, replanned
from webmcp_eval.rundir.reading import planned_traces
from webmcp_eval.suite.loader import LoadedCase

if TYPE_CHECKING:
    from webmcp_eval.agents.protocol import Agent
    from webmcp_eval.suite.folder import Suite


@dataclass(frozen=True)
class Resumed:
    """What ``--resume RUN_DIR`` plays: the planned cases in plan order, the planned trials still to play, the
    run directory, its suite and its plan (replanned when the case files changed and --force-replan says so)."""

    cases: list[LoadedCase]
    only_trials: set[str]
    run_dir: Path
    suite: Suite
    plan: RunPlan

    @property
    def trials(self) -> int:
        return self.plan["trials_per_case"]


def resume_selection(
    resume: str, *, rerun_not_run: bool = False, force_replan: bool = False, catalog: str | None = None
) -> Resumed:
    """The planned cases, and the planned trials that have no trace (or, when asked, say not_run)."""
    run_dir = Path(resume)
    if not run_dir.is_dir():
        raise UsageError(f"--resume {run_dir}: not a run directory")
    try:
        plan = read_plan(run_dir)
    except PlanError as err:
        raise UsageError(str(err)) from None
    if plan is None:
        raise UsageError(f"--resume {run_dir}: no plan.json there (not a run directory, or a run made before plans)")
    try:
        traces = planned_traces(run_dir, plan)
    except (OSError, ValueError) as err:
        raise UsageError(f"--resume {run_dir}: a trace cannot be read: {one_line(err)}") from None
    todo = missing_trials(plan, traces, rerun_not_run=rerun_not_run)
    changed = changed_files(plan)
    if changed and todo and not force_replan:
        raise UsageError(
            f"--resume {run_dir}: case file(s) changed since the run was planned: {', '.join(changed)}; "
            "its trials would be judged by two versions. Start a new run, or --resume --force-replan to play "
            "the rest with the files as they are now"
        )
    if changed and todo:
        plan = replanned(plan)  # written by the run, inside the run directory's lock
    files = list(dict.fromkeys(str(case_path(plan, c)) for c in plan["cases"]))
    try:
        loaded_suite = load_cases(files, catalog)
    except InvalidInput as err:
        say(str(err))
        raise UsageError(f"--resume {run_dir}: the planned case files {', '.join(files)} cannot be loaded") from None
    loaded, problems, suite = loaded_suite.cases, loaded_suite.problems, loaded_suite.suite
    if problems:
        report_problems(problems)
        raise UsageError(f"--resume {run_dir}: the planned case files no longer load; fix them and resume again")
    by_id = {lc.case.id: lc for lc in loaded}
    gone = [c["id"] for c in plan["cases"] if c["id"] not in by_id]
    if gone:
        raise UsageError(f"--resume {run_dir}: planned case(s) {', '.join(gone)} no longer in {', '.join(files)}")
    return Resumed([by_id[c["id"]] for c in plan["cases"]], {t["trial_id"] for t in todo}, run_dir, suite, plan)


def check_same_agent(run_dir: Path, plan: RunPlan, agent_factory: Callable[[], Agent]) -> None:
    """A resumed run must be played by the agent its plan names: evidence kinds never mix."""
    agent = agent_factory()
    if (agent.name, agent.model) != (plan["agent"], plan["model"]):
        model = f" --model {plan['model']}" if plan["model"] else ""
        raise UsageError(f"--resume {run_dir}: planned for --agent {plan['agent']}{model}; resume with the same agent")


def last_failed(out: Path, patterns: list[str]) -> tuple[list[str], list[str]]:
    """The case files and ids of the failed cases of the latest run under --out."""
    latest = latest_run(out)
    try:
        traces = planned_traces(latest)
        plan = read_plan(latest)
    except (OSError, ValueError, PlanError) as err:
        raise UsageError(f"--last-failed: the latest run {latest} cannot be read: {one_line(err)}") from None
    failed = list(dict.fromkeys(t.case_id for t in traces if t.verdict == "failed"))
    if not failed:
        raise UsageError(f"--last-failed: the latest run {latest} has no failed case; nothing to rerun")
    files = {c["id"]: c["file"] for c in plan["cases"]} if plan else {t.case_id: t.case_file for t in traces}
    console.print(f"--last-failed: {len(failed)} failed case(s) of {latest}: {', '.join(failed)}", markup=False)
    ids = [f for f in failed if not patterns or any(fnmatch.fnmatchcase(f, p.upper()) for p in patterns)]
    if not ids:
        raise UsageError(f"--last-failed: none of the failed cases of {latest} matches {' '.join(patterns)}")
    return list(dict.fromkeys(files[i] for i in ids if i in files)), ids


def latest_run(out: Path) -> Path:
    """The run under out planned last (a run without a plan counts by its files' time)."""
    runs = [d for d in out.iterdir() if RunDir(d).has_traces()] if out.is_dir() else []
    if not runs:
        raise UsageError(f"--last-failed: no run under {out}; give the --out the runs went to")

    def when(run: Path) -> float:
        with contextlib.suppress(PlanError, ValueError):
            plan = read_plan(run)
            if plan:
                return datetime.fromisoformat(plan["created_at"]).timestamp()
        return RunDir(run).trials.stat().st_mtime

    return max(runs, key=when)
