"""Shards: one plan's (case, trial) pairs split across machines, the same split on every machine.

The split depends only on the plan (and, when given, an earlier run's trial durations), never on
the machine, the clock or the worker count, so ``--shard 1/3`` on one CI runner and ``--shard 2/3``
on another never overlap and together cover the plan. The plan hash names the whole plan (the
suite files' contents, the agent, model and settings, trials per case), so shards of different
plans are never merged as one run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from webmcp_eval.data_file import FileProblem, load_json
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.rundir.plan import RunPlan, ShardError

T = TypeVar("T")
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def planned_shard(plan: RunPlan | None) -> tuple[int, int] | None:
    """The (i, n) a run's plan was planned as: None for a whole run, or for no plan."""
    shard = plan.get("shard") if plan is not None else None
    return (shard["index"], shard["count"]) if shard else None


def parse_shard(text: str) -> tuple[int, int]:
    """``"i/n"`` (1-based) -> (i, n); ShardError unless 1 <= i <= n."""
    match = _SHARD.match(text)
    if not match:
        raise ShardError(f"--shard {text!r}: expected i/n, e.g. 1/4")
    index, count = int(match[1]), int(match[2])
    if count < 1 or not 1 <= index <= count:
        raise ShardError(f"--shard {text}: i must be between 1 and n (n >= 1)")
    return index, count


def split(trial_ids: Sequence[str], count: int, durations: Mapping[str, float] | None = None) -> list[list[str]]:
    """``count`` shards of the trial ids, each in plan order.

    With durations: greedy longest-first onto the lightest shard (ties: trial id, then shard
    number); a trial the earlier run did not have weighs the median known duration. Without:
    round-robin by plan position, so shard sizes differ by at most one.
    """
    if not durations:
        return [list(trial_ids[k::count]) for k in range(count)]
    known = sorted(durations[t] for t in trial_ids if t in durations)
    fallback = known[len(known) // 2] if known else 1.0
    weight = {t: float(durations.get(t, fallback)) for t in trial_ids}
    loads = [0.0] * count
    chosen: list[set[str]] = [set() for _ in range(count)]
    for trial in sorted(trial_ids, key=lambda t: (-weight[t], t)):
        lightest = min(range(count), key=lambda k: (loads[k], k))
        loads[lightest] += weight[trial]
        chosen[lightest].add(trial)
    return [[t for t in trial_ids if t in part] for part in chosen]


def shard_of(
    trial_ids: Sequence[str], index: int, count: int, durations: Mapping[str, float] | None = None
) -> list[str]:
    """The trial ids of shard ``index`` (1-based) of ``count``."""
    return split(trial_ids, count, durations)[index - 1]


def read_durations(source: str | Path) -> dict[str, float]:
    """Trial id -> duration (ms) from an earlier run directory's traces, or a JSON file of that mapping."""
    path = Path(source)
    if path.is_dir():
        found: dict[str, float] = {}
        for trace in RunDir(path).trace_paths():
            data = _json(trace)
            if isinstance(data, dict) and "trial_id" in data and "duration_ms" in data:
                found[str(data["trial_id"])] = float(data["duration_ms"])
        if not found:
            raise ShardError(f"--durations {source}: no trial traces with durations there")
        return found
    data = _json(path)
    if not isinstance(data, dict) or not all(isinstance(v, int | float) for v in data.values()):
        raise ShardError(f"--durations {source}: expected a run directory or a JSON object of trial id -> ms")
    return {str(k): float(v) for k, v in data.items()}


def _json(path: Path) -> Any:
    try:
        return load_json(path)
    except FileProblem as err:
        raise ShardError(f"--durations cannot read {err.at(path)}") from None
