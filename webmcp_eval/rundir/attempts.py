"""A trial's earlier attempts in its run directory: ``attempts/<trial id>.a<N>.json``, set aside from ``trials/``."""

from __future__ import annotations

import os
from pathlib import Path

from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.trace import EarlierAttempt, Trace, read_trace


def set_aside(trace: Trace, out_dir: Path) -> EarlierAttempt:
    """Move an attempt's trace file out of trials/ (it is not the trial's verdict); what the next attempt lists."""
    run = RunDir(out_dir)
    source = run.trace(trace.trial_id)
    target = run.attempt(trace.trial_id, trace.attempt)
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(source, target)
    return EarlierAttempt(
        attempt=trace.attempt,
        verdict=trace.verdict,
        kind=trace.not_run_kind,
        reason=trace.verdict_reason,
        duration_ms=trace.duration_ms,
        trace=RunDir.link_from_trace(target),  # relative to the trial's trace, like its screenshot
    )


def resumed_attempts(trial_id: str, out_dir: Path) -> list[EarlierAttempt]:
    """The attempts a trial already had in this run directory (it is played again by --resume
    --rerun-not-run): its not_run trace moves to attempts/ and is listed, after the ones it listed."""
    path = RunDir(out_dir).trace(trial_id)
    if not path.is_file():
        return []
    old = read_trace(path)
    if old.verdict != "not_run":  # a verdict is never an attempt of another trial (a reused --run-id)
        return []
    return [*old.earlier_attempts, set_aside(old, out_dir)]
