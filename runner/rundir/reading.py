"""A run directory read back: its plan, its traces in plan order, the baseline played beside it."""

from __future__ import annotations

from pathlib import Path

from runner.errors import InvalidInput
from runner.rundir.plan import PLAN_FILE, RunPlan, plan_hashes, read_plan
from runner.rundir.run_info import read_run_id
from runner.trace import Trace, read_trace, read_traces, trace_files


class RunDirError(InvalidInput, ValueError):
    """A directory that is not a readable run: one line that names it."""


def read_run(run_dir: str) -> tuple[list[Trace], RunPlan | None, str]:
    """(traces, plan, run id) of a run directory, without the baseline played beside it; RunDirError when it has
    neither traces nor a plan, or they cannot be read."""
    path = Path(run_dir)
    if not path.is_dir():
        raise RunDirError(f"{run_dir}: not a run directory")
    try:
        plan = read_plan(path)
        files = {p: read_trace(p) for p in trace_files(path)}
        # the baseline played beside it (run --baseline) is a run of its own in a sub-directory
        beside = {(t.run_id, t.trial_id) for d in baseline_dirs(path) for t in read_traces(d)}
    except (OSError, ValueError) as err:
        raise RunDirError(f"{run_dir}: {str(err).splitlines()[0]}") from err
    files = {p: t for p, t in files.items() if (t.run_id, t.trial_id) not in beside}
    found = list(files.values())
    if not found and plan is None:
        raise RunDirError(f"{run_dir}: no traces (expected {path / 'trials'}/*.json)")
    check_traces(files, plan)
    return found, plan, read_run_id(path) if plan is None else plan["run_id"]


def check_traces(files: dict[Path, Trace], plan: RunPlan | None) -> None:
    """Every trace of the run is this run's: filed under its own trial id, once, planned, of this plan and run.

    RunDirError naming the file otherwise: a trace copied in from another run (or left by an earlier run
    under a reused run id), an unplanned trial, or one filed under another trial's name would change the
    figures without a word."""
    planned = {t["trial_id"] for t in plan["trials"]} if plan else None
    hashes = plan_hashes(plan) if plan else set()
    seen: set[tuple[str, str]] = set()
    for file, t in files.items():
        if file.stem != t.trial_id:
            raise RunDirError(f"{file}: holds trial {t.trial_id}, under another trial's name")
        if (t.run_id, t.trial_id) in seen:
            raise RunDirError(f"{file}: trial {t.trial_id} has two traces in this run")
        seen.add((t.run_id, t.trial_id))
        if plan is None:
            continue
        if t.run_id != plan["run_id"] or (t.plan_hash and hashes and t.plan_hash not in hashes):
            raise RunDirError(f"{file}: a trace of another run ({t.run_id}), not of this run's plan")
        if t.trial_id not in planned:  # type: ignore[operator]
            raise RunDirError(f"{file}: trial {t.trial_id} is not in this run's plan")


def baseline_dirs(run_dir: Path) -> list[Path]:
    """The null agent's runs played beside this run (``run --baseline none``): sub-directories with a baseline plan."""
    found = []
    for sub in sorted(p for p in run_dir.iterdir() if (p / PLAN_FILE).is_file()) if run_dir.is_dir() else []:
        plan = read_plan(sub)
        if plan and plan["evidence_kind"] == "baseline":
            found.append(sub)
    return found


def planned_traces(run_dir: Path, plan: RunPlan | None = None) -> list[Trace]:
    """The run's traces, in plan order when it has a plan (a trace outside the plan is not this run's)."""
    traces = read_traces(run_dir) if (run_dir / "trials").is_dir() else []
    beside = {(t.run_id, t.trial_id) for d in baseline_dirs(run_dir) for t in read_traces(d)}  # run --baseline
    traces = [t for t in traces if (t.run_id, t.trial_id) not in beside]
    plan = plan or read_plan(run_dir)
    if plan is None:
        return traces
    by_id = {t.trial_id: t for t in traces}
    return [by_id[p["trial_id"]] for p in plan["trials"] if p["trial_id"] in by_id]
