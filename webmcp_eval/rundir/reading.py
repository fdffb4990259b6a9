"""A run directory read back: its plan, its traces in plan order, the control played beside it, where a
report finds a trace."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from webmcp_eval.errors import InvalidInput
from webmcp_eval.rundir.kept import read_traces_kept
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.rundir.plan import RunPlan, plan_hashes, read_plan
from webmcp_eval.rundir.run_info import read_run_id
from webmcp_eval.trace import Trace, read_trace


class RunDirError(InvalidInput, ValueError):
    """A directory that is not a readable run: one line that names it."""


def read_run(run_dir: str, kept: bool = False) -> tuple[list[Trace], RunPlan | None, str]:
    """(traces, plan, run id) of a run directory, without the control played beside it; RunDirError when it has
    neither traces nor a plan, or they cannot be read.

    ``kept``: the traces as the figures keep them (webmcp_eval/rundir/kept.py), read one at a time: a report of
    many trials holds a small record per trial, never every whole trace at once."""
    path = Path(run_dir)
    if not path.is_dir():
        raise RunDirError(f"{run_dir}: not a run directory")
    try:
        plan = read_plan(path)
        files: dict[Path, Trace]
        if kept:
            files = {t.file or path: t for t in read_traces_kept(trace_files(path))}
        else:
            files = {p: read_trace(p) for p in trace_files(path)}
        # the control played beside it (run --control) is a run of its own in a sub-directory
        beside = _trials_beside(path)
    except (OSError, ValueError) as err:
        raise RunDirError(f"{run_dir}: {str(err).splitlines()[0]}") from err
    files = {p: t for p, t in files.items() if (t.run_id, t.trial_id) not in beside}
    found = list(files.values())
    if not found and plan is None:
        raise RunDirError(f"{run_dir}: no traces (expected {RunDir(path).trials}/*.json)")
    check_traces(files, plan)
    return found, plan, read_run_id(path) if plan is None else plan["run_id"]


def check_traces(files: dict[Path, Trace], plan: RunPlan | None) -> None:
    """Every trace of the run is this run's: filed under its own trial id, once, planned, of this plan and run.

    RunDirError naming the file otherwise: a trace copied in from another run (or left by an earlier run
    under a reused run id), an unplanned trial, or one filed under another trial's name would change the
    figures without a word."""
    planned = {t["trial_id"] for t in plan["trials"]} if plan else set()
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
        if t.trial_id not in planned:
            raise RunDirError(f"{file}: trial {t.trial_id} is not in this run's plan")


def control_dirs(run_dir: Path) -> list[Path]:
    """The null agent's runs played beside this run (``run --control none``): sub-directories with a control plan.

    Found by their plan, not their name: a folder of before the rename (``<run id>-baseline/``, its plan's kind
    ``baseline``) is found as well."""
    found = []
    for sub in sorted(p for p in run_dir.iterdir() if RunDir(p).plan.is_file()) if run_dir.is_dir() else []:
        plan = read_plan(sub)
        if plan and plan["evidence_kind"] == "control":
            found.append(sub)
    return found


def _trials_beside(run_dir: Path) -> set[tuple[str, str]]:
    """(run id, trial id) of the control's trials played beside the run (run --control), read one at a time."""
    return {(t.run_id, t.trial_id) for d in control_dirs(run_dir) for t in read_traces_kept(trace_files(d))}


def planned_traces(run_dir: Path, plan: RunPlan | None = None) -> list[Trace]:
    """The run's traces as the figures keep them (webmcp_eval/rundir/kept.py), read one at a time, in plan
    order when it has a plan (a trace outside the plan is not this run's)."""
    traces: list[Trace] = list(read_traces_kept(trace_files(run_dir))) if RunDir(run_dir).has_traces() else []
    beside = _trials_beside(run_dir)
    traces = [t for t in traces if (t.run_id, t.trial_id) not in beside]
    plan = plan or read_plan(run_dir)
    if plan is None:
        return traces
    by_id = {t.trial_id: t for t in traces}
    return [by_id[p["trial_id"]] for p in plan["trials"] if p["trial_id"] in by_id]


def read_traces(directory: Path) -> list[Trace]:
    """Every trace under a run directory (temp files of a killed write are skipped)."""
    return [read_trace(p) for p in trace_files(directory)]


def trace_files(directory: Path) -> list[Path]:
    """The trace files under a run directory, in name order (temp files of a killed write are skipped)."""
    return [p for p in sorted(Path(directory).glob("**/*.json")) if RunDir.is_trace_file(p)]


def trace_dir(trace: Trace, report_dir: Path, trace_dirs: Path | Mapping[str, Path] | None = None) -> Path:
    """The directory holding a trace's file, for a report written in report_dir.

    ``trace_dirs`` names it: one directory, or a mapping keyed by ``run_id/trial_id`` (merged shards,
    which may share a run id) or by run id; otherwise the usual places around the report are tried.
    """
    if isinstance(trace_dirs, Mapping):
        for key in (f"{trace.run_id}/{trace.trial_id}", trace.run_id):
            if key in trace_dirs:
                return Path(trace_dirs[key])
    elif trace_dirs is not None:
        return Path(trace_dirs)
    candidates = [RunDir(report_dir), RunDir(report_dir / trace.run_id), RunDir(report_dir.parent / trace.run_id)]
    for c in candidates:
        if c.trace(trace.trial_id).is_file():
            return c.trials
    return next((c.trials for c in candidates if c.has_traces()), candidates[0].trials)
