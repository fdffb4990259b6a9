"""Shards: a deterministic split of the plan, and a merge that equals the unsharded run or refuses.

The end-to-end test runs the demo site three times (whole, shard 1/2, shard 2/2) and compares the
merged report with the unsharded one trial for trial.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_support import cli

from webmcp_eval.play.run.shard import ShardError, parse_shard, read_durations, shard_of, split
from webmcp_eval.play.run.trial import world_id
from webmcp_eval.results.run_results import RunInput
from webmcp_eval.results.shards import merge
from webmcp_eval.rundir.plan import make_plan, plan_hash, read_plan, write_plan
from webmcp_eval.trace import Trace, write_trace

IDS = [f"C{c:02d}.t{t}" for c in range(7) for t in (1, 2, 3)]


def test_parse_shard():
    assert parse_shard("1/4") == (1, 4) and parse_shard(" 4 / 4 ") == (4, 4)
    for bad in ("0/2", "3/2", "1/0", "1", "a/b", "-1/2"):
        with pytest.raises(ShardError):
            parse_shard(bad)


def test_the_split_by_count_covers_the_plan_once_and_is_balanced():
    parts = split(IDS, 4)
    assert sorted(t for p in parts for t in p) == sorted(IDS)
    assert max(map(len, parts)) - min(map(len, parts)) <= 1
    assert all(p == [t for t in IDS if t in p] for p in parts)  # each shard in plan order
    assert split(IDS, 4) == parts and shard_of(IDS, 2, 4) == parts[1]  # the same on every call and machine
    assert split(IDS, 1) == [IDS]
    assert split(IDS[:2], 3)[2] == []  # more shards than trials: an empty shard, not an error


def test_the_split_by_durations_is_longest_first_onto_the_lightest_shard():
    durations = {"a": 10.0, "b": 6.0, "c": 5.0, "d": 4.0, "e": 1.0}
    parts = split(["a", "b", "c", "d", "e"], 2, durations)
    # a -> 1 (10); b -> 2 (6); c -> 2 (11); d -> 1 (14); e -> 2 (12)
    assert parts == [["a", "d"], ["b", "c", "e"]]
    # equal durations: ties broken by trial id, then by shard number, so the split is reproducible
    assert split(["y", "x", "z"], 2, {"x": 1.0, "y": 1.0, "z": 1.0}) == [["x", "z"], ["y"]]
    # a trial the earlier run did not have weighs the median known duration
    assert split(["a", "new"], 2, {"a": 3.0}) == [["a"], ["new"]]


def test_durations_from_a_run_directory_or_a_file(tmp_path):
    _trace(tmp_path, "SEL-01.t1", "passed", duration_ms=1200.0)
    assert read_durations(tmp_path) == {"SEL-01.t1": 1200.0}
    file = tmp_path / "d.json"
    file.write_text('{"SEL-01.t1": 5}', encoding="utf-8")
    assert read_durations(file) == {"SEL-01.t1": 5.0}
    file.write_text("[1]", encoding="utf-8")
    with pytest.raises(ShardError, match="JSON object"):
        read_durations(file)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ShardError, match="no trial traces"):
        read_durations(tmp_path / "empty")
    with pytest.raises(ShardError, match="cannot read"):
        read_durations(tmp_path / "nothing")


def test_the_plan_hash_changes_with_the_suite_files_and_the_settings(tmp_path):
    case = tmp_path / "A.yaml"
    case.write_text("id: A\n", encoding="utf-8")
    one = plan_hash([case], ["A"], 2, agent="reference", model=None)
    assert one == plan_hash([case], ["A"], 2, agent="reference", model=None)
    assert one != plan_hash([case], ["A"], 3, agent="reference", model=None)
    assert one != plan_hash([case], ["A"], 2, agent="model", model="m")
    case.write_text("id: A\n# edited\n", encoding="utf-8")
    assert one != plan_hash([case], ["A"], 2, agent="reference", model=None)


def _trace(run_dir: Path, trial_id: str, verdict: str, duration_ms: float = 0.0, run_id: str = "") -> None:
    case_id = trial_id.rsplit(".t", 1)[0]
    trace = Trace(
        run_id=run_id or run_dir.name,
        trial_id=trial_id,
        case_id=case_id,
        case_file=f"cases/{case_id}.yaml",
        behaviour="selection",
        start_route="/events",
        verdict=verdict,
        verdict_reason="made up for the test",
        duration_ms=duration_ms,
    )
    write_trace(trace, run_dir / "trials")


def _shard(
    tmp_path: Path, name: str, index: int, count: int, digest: str = "h1", run_id: str = ""
) -> tuple[str, RunInput]:
    run_dir = tmp_path / name
    plan = make_plan(run_id or name, [("A", "cases/A.yaml"), ("B", "cases/B.yaml")], 2, **_WHO)
    mine = set(shard_of([t["trial_id"] for t in plan["trials"]], index, count))
    plan["plan_hash"] = digest
    plan["shard"] = {"index": index, "count": count, "planned_trials": len(plan["trials"])}
    plan["trials"] = [t for t in plan["trials"] if t["trial_id"] in mine]
    write_plan(run_dir, plan)
    for t in plan["trials"]:
        _trace(run_dir, t["trial_id"], "passed", run_id=run_id)
    return str(run_dir), RunInput([], read_plan(run_dir))


_WHO = {"agent": "reference", "model": None, "evidence_kind": "deterministic"}


def test_merge_refuses_a_missing_a_duplicated_or_a_foreign_shard(tmp_path):
    one, two, three = (_shard(tmp_path, f"s{i}", i, 3) for i in (1, 2, 3))
    merged = merge([three, one, two])
    assert [t["trial_id"] for t in merged.plan["trials"]] == ["A.t1", "A.t2", "B.t1", "B.t2"]
    assert "shard" not in merged.plan and merged.plan["plan_hash"] == "h1"
    with pytest.raises(ShardError, match="shard\\(s\\) 2/3 missing"):
        merge([one, three])
    with pytest.raises(ShardError, match=f"shard 1/3 given twice: {one[0]}, {one[0]}"):
        merge([one, one, two, three])
    other = _shard(tmp_path, "o2", 2, 3, digest="h2")
    with pytest.raises(ShardError, match="different plans") as err:
        merge([one, other, three])
    assert other[0] in str(err.value)
    half = _shard(tmp_path, "h1of2", 1, 2)
    with pytest.raises(ShardError, match="shard 1/2"):
        merge([one, half])
    plain = tmp_path / "plain"
    write_plan(plain, make_plan("plain", [("A", "cases/A.yaml")], 1, **_WHO))
    with pytest.raises(ShardError, match="not a shard"):
        merge([one, (str(plain), RunInput([], read_plan(plain)))])


def test_report_names_the_missing_shard_and_exits_2(tmp_path):
    one, _, three = (_shard(tmp_path, f"s{i}", i, 3) for i in (1, 2, 3))
    out = cli("report", one[0], three[0], "--out", str(tmp_path / "m"))
    assert out.returncode == 2, out.stdout + out.stderr
    assert (
        out.stderr.strip()
        == "cannot merge: shard(s) 2/3 missing: the merged report would be a smaller suite than planned"
    )
    assert not (tmp_path / "m").exists()


def _figures(summary: dict) -> list[tuple]:
    keys = ("trial_id", "case_id", "verdict", "reason", "assertions_passed", "assertions_counted")
    more = ("assertions_not_run", "tool_calls", "writes")
    return sorted(tuple(t[k] for k in (*keys, *more)) for t in summary["trials"])


def _cases(summary: dict) -> list[dict]:
    """Each series' per-case figures, without wall-clock time and run ids (what two runs may not share)."""
    rows = [dict(c) for s in summary["series"] for c in s["cases"]]
    for row in rows:
        row["cost"] = {k: v for k, v in row["cost"].items() if k != "wall_ms"}
        row["trials"] = [{k: v for k, v in t.items() if k != "run_id"} for t in row["trials"]]
    return sorted(rows, key=lambda r: r["case_id"])


@pytest.mark.browser
def test_two_shards_merged_equal_the_unsharded_run_trial_for_trial(tmp_path):
    cases = ["SEL-01", "NO-01"]  # four trials over two shards: enough for a split, a merge and a durations balance
    two = ("--trials", "2", "-j", "2")  # two workers: each trial's waits overlap another's work
    whole = cli("run", *cases, *two, "--out", str(tmp_path), "--run-id", "whole")
    assert whole.returncode == 0, whole.stdout + whole.stderr
    for i in (1, 2):
        args = ["--shard", f"{i}/2", "--durations", str(tmp_path / "whole")]
        shard = cli("run", *cases, *two, *args, "--out", str(tmp_path), "--run-id", f"s{i}")
        assert shard.returncode == 0, shard.stdout + shard.stderr
    plans = [json.loads((tmp_path / f"s{i}" / "plan.json").read_text(encoding="utf-8")) for i in (1, 2)]
    assert plans[0]["plan_hash"] == plans[1]["plan_hash"] and len(plans[0]["plan_hash"]) == 64
    assert [p["shard"] for p in plans] == [{"index": i, "count": 2, "planned_trials": 4} for i in (1, 2)]
    ids = [[t["trial_id"] for t in p["trials"]] for p in plans]
    assert not set(ids[0]) & set(ids[1]) and len(ids[0]) + len(ids[1]) == 4 and ids[0] and ids[1]

    merged = cli("report", str(tmp_path / "s2"), str(tmp_path / "s1"), "--out", str(tmp_path / "m"))
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "complete: 4 of 4 trials" in merged.stdout
    for name in ("summary.json", "junit.xml", "report.html"):
        assert (tmp_path / "m" / name).is_file()
    ours = json.loads((tmp_path / "m" / "summary.json").read_text(encoding="utf-8"))
    theirs = json.loads((tmp_path / "whole" / "summary.json").read_text(encoding="utf-8"))
    assert _figures(ours) == _figures(theirs)
    assert ours["summary"] == theirs["summary"]
    assert _cases(ours) == _cases(theirs)
    assert ours["completeness"]["state"] == "complete" and ours["completeness"]["planned"] == 4

    dup = cli("report", str(tmp_path / "s1"), str(tmp_path / "s1"), "--out", str(tmp_path / "d"))
    assert dup.returncode == 2 and "shard 1/2 given twice" in dup.stderr
    # another plan's shard 2/2 (its one trial is shard 1's, so this one plays none) beside this plan's shard 1/2
    other = cli("run", "SEL-01", "--shard", "2/2", "--out", str(tmp_path), "--run-id", "o2")
    assert other.returncode == 0, other.stdout + other.stderr
    foreign = cli("report", str(tmp_path / "o2"), str(tmp_path / "s1"), "--out", str(tmp_path / "f"))
    assert foreign.returncode == 2 and "different plans" in foreign.stderr


def test_worlds_are_named_by_run_shard_and_trial():
    assert world_id("ci-7", None, "SEL-01.t1") == "ci-7-SEL-01-t1"
    assert world_id("ci-7", (2, 4), "SEL-01.t1") == "ci-7-s2of4-SEL-01-t1"
    assert world_id("ci-7", (1, 4), "SEL-01.t1") != world_id("ci-7", (2, 4), "SEL-01.t1")
    long_a, long_b = "a" * 70 + "-one", "a" * 70 + "-two"
    a, b = world_id(long_a, (1, 2), "SEL-01.t1"), world_id(long_b, (1, 2), "SEL-01.t1")
    assert a != b and len(a) <= 64 and a.endswith("-s1of2-SEL-01-t1")


@pytest.mark.parametrize("shared_run_id", [False, True], ids=["own-run-ids", "one-run-id"])
def test_a_merged_summary_points_at_each_shards_traces(tmp_path, shared_run_id):
    shards = [_shard(tmp_path, f"s{i}", i, 2, run_id="ci" if shared_run_id else "") for i in (1, 2)]
    out = cli("report", *(d for d, _ in shards), "--out", str(tmp_path / "m"))
    assert out.returncode == 0, out.stdout + out.stderr
    summary = json.loads((tmp_path / "m" / "summary.json").read_text(encoding="utf-8"))
    paths = [t["trace"] for t in summary["trials"]]
    assert len(paths) == 4 and all(p.startswith("../s") for p in paths), paths
    for trial in summary["trials"]:
        trace = json.loads((tmp_path / "m" / trial["trace"]).read_text(encoding="utf-8"))
        assert trace["trial_id"] == trial["trial_id"]
    lean = cli("report", *(d for d, _ in shards), "--out", str(tmp_path / "lean"), "--no-html")
    assert lean.returncode == 0 and (tmp_path / "lean" / "summary.json").is_file()
    assert not (tmp_path / "lean" / "report.html").exists()  # a merge of 100,000 trials wants no HTML file
    whole = tmp_path / "s1"  # a shard's own report keeps its own trials/ path
    assert cli("report", str(whole), "--json", str(whole / "summary.json")).returncode == 0
    own = json.loads((whole / "summary.json").read_text(encoding="utf-8"))
    assert {t["trace"] for t in own["trials"]} == {f"trials/{t['trial_id']}.json" for t in own["trials"]}


@pytest.mark.browser
def test_a_resumed_shard_plays_in_the_shards_worlds(tmp_path):
    first = cli("run", "SEL-01", "--trials", "2", "--shard", "2/2", "--out", str(tmp_path), "--run-id", "ci")
    assert first.returncode == 0, first.stdout + first.stderr
    (trace,) = (tmp_path / "ci" / "trials").glob("*.json")
    before = json.loads(trace.read_text(encoding="utf-8"))
    key = json.loads((tmp_path / "ci" / "plan.json").read_text(encoding="utf-8"))["world_key"]
    assert before["world"] == f"ci-{key}-s2of2-SEL-01-t2"
    trace.unlink()
    resumed = cli("run", "--resume", str(tmp_path / "ci"))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert json.loads(trace.read_text(encoding="utf-8"))["world"] == f"ci-{key}-s2of2-SEL-01-t2"
