"""Infrastructure retries: a trial that could not run because the machinery failed is played again.

Only a ``not_run`` whose kind is ``infrastructure`` (a crashed or lost browser, a site that was
unreachable or answered 5xx) is retried. A ``failed`` trial never is: pass@k and pass^k measure
exactly that, and a retry into a pass would be a wrong verdict. Nor is a not_run of another kind
(a checker error, a missing hook, no tools at the start route): it would fail the same way again.

Every attempt keeps its trace. The last one is the trial's trace, in ``trials/`` as always, and
lists the earlier ones; each earlier attempt's trace moves to ``attempts/<trial id>.a<N>.json``.
``--resume --rerun-not-run`` keeps them the same way: the not_run trace it plays again becomes an
earlier attempt of the new one, never overwritten.
"""

from __future__ import annotations

import os
from pathlib import Path

from runner.trace import EarlierAttempt, Trace, read_trace

ATTEMPTS_DIR = "attempts"


def retryable(trace: Trace) -> bool:
    """Is this trial's outcome the machinery's, so that another attempt may run it?"""
    return trace.verdict == "not_run" and trace.not_run_kind == "infrastructure"


def set_aside(trace: Trace, out_dir: Path) -> EarlierAttempt:
    """Move an attempt's trace file out of trials/ (it is not the trial's verdict); what the next attempt lists."""
    source = out_dir / "trials" / f"{trace.trial_id}.json"
    target = out_dir / ATTEMPTS_DIR / f"{trace.trial_id}.a{trace.attempt}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(source, target)
    return EarlierAttempt(
        attempt=trace.attempt,
        verdict=trace.verdict,
        kind=trace.not_run_kind,
        reason=trace.verdict_reason,
        duration_ms=trace.duration_ms,
        trace=f"../{ATTEMPTS_DIR}/{target.name}",  # relative to the trial's trace, like its screenshot
    )


def resumed_attempts(trial_id: str, out_dir: Path) -> list[EarlierAttempt]:
    """The attempts a trial already had in this run directory (it is played again by --resume
    --rerun-not-run): its not_run trace moves to attempts/ and is listed, after the ones it listed."""
    path = out_dir / "trials" / f"{trial_id}.json"
    if not path.is_file():
        return []
    old = read_trace(path)
    if old.verdict != "not_run":  # a verdict is never an attempt of another trial (a reused --run-id)
        return []
    return [*old.earlier_attempts, set_aside(old, out_dir)]
