"""The shards of one plan merged into one run, or refused: a missing or duplicated shard is never a smaller suite.

Splitting a plan into shards is play's (webmcp_eval/play/run/shard.py); putting their
traces back together for one report is the results layer's.
"""

from __future__ import annotations

from collections.abc import Sequence

from webmcp_eval.results.run_results import RunInput
from webmcp_eval.rundir.plan import RunPlan, ShardError, ShardInfo


def merge(runs: Sequence[tuple[str, RunInput]]) -> RunInput:
    """One run from the (directory, RunInput) of every shard of one plan; ShardError names what is wrong.

    The shards must share one plan hash and be exactly shards 1..n of n, each once, covering the
    whole plan: a missing or duplicated shard is an error, never a silently smaller suite.
    """
    if not runs:
        raise ShardError("no shards to merge")
    shards: list[tuple[str, RunPlan, ShardInfo]] = []
    for d, r in runs:
        if r.plan is None or "shard" not in r.plan:
            raise ShardError(f"{d}: not a shard (its plan.json has no shard); merge only the shards of one plan")
        shards.append((d, r.plan, r.plan["shard"]))
    hashes: dict[str, list[str]] = {}
    for d, p, _ in shards:
        hashes.setdefault(p.get("plan_hash", ""), []).append(d)
    if len(hashes) > 1:
        groups = "; ".join(f"plan {h[:12] or '(none)'}: {', '.join(ds)}" for h, ds in hashes.items())
        raise ShardError(
            f"the shards belong to different plans (suite files, agent, model or settings differ): {groups}"
        )
    count = shards[0][2]["count"]
    by_index: dict[int, list[str]] = {}
    for d, _, s in shards:
        index, n = s["index"], s["count"]
        if n != count:
            raise ShardError(f"{d}: shard {index}/{n}, but {runs[0][0]} is a shard of {count}")
        by_index.setdefault(index, []).append(d)
    twice = {i: ds for i, ds in by_index.items() if len(ds) > 1}
    if twice:
        i, ds = min(twice.items())
        raise ShardError(f"shard {i}/{count} given twice: {', '.join(ds)}")
    absent = [i for i in range(1, count + 1) if i not in by_index]
    if absent:
        names = ", ".join(f"{i}/{count}" for i in absent)
        raise ShardError(f"shard(s) {names} missing: the merged report would be a smaller suite than planned")
    _, first, first_shard = shards[0]
    order = {c["id"]: k for k, c in enumerate(first["cases"])}
    trials = sorted(
        (t for _, p, _ in shards for t in p["trials"]), key=lambda t: (order.get(t["case_id"], 0), t["trial_index"])
    )
    whole = first_shard["planned_trials"]
    if len(trials) != whole or len({t["trial_id"] for t in trials}) != len(trials):
        raise ShardError(f"the shards' trials ({len(trials)}) are not the plan's {whole}: shards of one plan overlap")
    plan = first.copy()
    del plan["shard"]
    plan["trials"] = trials
    plan["run_id"] = f"merged-{first.get('plan_hash', '')[:12]}"
    return RunInput([t for _, r in runs for t in r.traces], plan, run_id=plan["run_id"])
