"""A run directory is one run's, provably: a lock, unique run ids, a reused id refused, traces of another
run (or plan, or trial) refused by every reader, outputs and trace paths kept out of the run's own files."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from eval_support import ROOT, cli

from webmcp_eval.play.run.run import RunIdTaken, _claim, new_run_id
from webmcp_eval.play.run.trial import world_id
from webmcp_eval.proxies.files import NotRegularFile, write_atomic
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.rundir.lock import RunDirBusy, RunLock
from webmcp_eval.rundir.plan import make_plan, write_plan
from webmcp_eval.trace import Trace, write_trace


def _run(run_dir: Path, ids=("A", "B"), plan_hash: str = "h1") -> dict:
    plan = make_plan(
        run_dir.name, [(i, f"cases/{i}.yaml") for i in ids], 1, agent="reference", model=None,
        evidence_kind="deterministic",
    )  # fmt: skip
    plan["plan_hash"] = plan_hash
    write_plan(run_dir, plan)
    for i in ids:
        _trace(run_dir, f"{i}.t1", plan_hash=plan_hash)
    return plan


def _trace(run_dir: Path, trial_id: str, *, run_id: str | None = None, plan_hash: str | None = "h1", name=None) -> Path:
    trace = Trace(
        run_id=run_id or run_dir.name,
        plan_hash=plan_hash,
        trial_id=trial_id,
        case_id=trial_id.split(".")[0],
        case_file="cases/x.yaml",
        behaviour="selection",
        start_route="/",
        verdict="passed",
        verdict_reason="made up for the test",
    )
    path = write_trace(trace, run_dir / "trials")
    if name:
        path = path.rename(path.with_name(name))
    return path


def test_run_ids_are_unique_to_the_millisecond_and_a_random_part():
    ids = {new_run_id() for _ in range(200)}
    assert len(ids) == 200


def test_the_lock_is_exclusive_and_a_stale_one_is_taken_over(tmp_path):
    with RunLock(tmp_path), pytest.raises(RunDirBusy, match=f"pid {os.getpid()}"):
        RunLock(tmp_path).acquire()
    assert not (RunDir(tmp_path).lock).exists()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    import socket

    (RunDir(tmp_path).lock).write_text(json.dumps({"pid": int(dead.stdout), "host": socket.gethostname()}))
    with RunLock(tmp_path):  # kill -9 left it: taken over
        assert json.loads((RunDir(tmp_path).lock).read_text())["pid"] == os.getpid()


def test_a_run_into_a_locked_or_taken_run_directory_is_refused_and_changes_nothing(tmp_path):
    _run(tmp_path / "r1")
    before = {p: p.read_bytes() for p in (tmp_path / "r1").rglob("*") if p.is_file()}
    out = cli("run", "SEL-01", "--out", str(tmp_path), "--run-id", "r1")
    assert out.returncode == 2 and "run id r1 is taken" in out.stderr and "--force" in out.stderr, out.stderr
    assert {p: p.read_bytes() for p in (tmp_path / "r1").rglob("*") if p.is_file()} == before
    (tmp_path / "r2").mkdir()
    with RunLock(tmp_path / "r2"):  # another run plays there now
        busy = cli("run", "SEL-01", "--out", str(tmp_path), "--run-id", "r2")
    assert busy.returncode == 2 and "another webmcp-eval" in busy.stderr, busy.stderr
    assert not (tmp_path / "r2" / "plan.json").exists()
    seed = tmp_path / "r3"
    plan = make_plan("r3", [("SEL-01", str(ROOT / "cases" / "SEL-01.yaml"))], 1, agent="reference", model=None,
                     evidence_kind="deterministic")  # fmt: skip
    write_plan(seed, plan)
    with RunLock(seed):  # a first --resume plays the missing trial now: a second one must not
        second = cli("run", "--resume", str(seed))
    assert second.returncode == 2 and "another webmcp-eval" in second.stderr, second.stderr
    assert not (seed / "trials").exists()


def test_force_replaces_the_old_run_and_nothing_of_it_is_left(tmp_path):
    _run(tmp_path / "r1")
    with pytest.raises(RunIdTaken):
        _claim(tmp_path / "r1", "r1", force=False)
    _claim(tmp_path / "r1", "r1", force=True)
    assert list((tmp_path / "r1").iterdir()) == []


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda d: _trace(d, "A.t1", run_id="other", plan_hash="h9"), "a trace of another run (other)"),
        (lambda d: _trace(d, "A.t1", plan_hash="h2"), "a trace of another run"),
        (lambda d: _trace(d, "C.t1"), "trial C.t1 is not in this run's plan"),
        (lambda d: _trace(d, "A.t1", name="B.t2.json"), "holds trial A.t1, under another trial's name"),
    ],
    ids=["another-run", "a-reused-run-id", "unplanned", "another-name"],
)
def test_report_rejudge_and_compare_refuse_a_trace_that_is_not_this_runs(tmp_path, damage, message):
    run = tmp_path / "run"
    _run(run)
    damage(run)
    for args in (
        ("report", str(run)),
        ("rejudge", str(run), "-o", str(tmp_path / "new")),
        ("compare", str(run), str(run)),
    ):
        out = cli(*args)
        assert out.returncode == 2 and message in out.stderr and "trials/" in out.stderr, (args, out.stderr)


def test_a_trace_without_a_plan_hash_still_reads_and_a_trial_id_never_leaves_trials(tmp_path):
    run = tmp_path / "run"
    _run(run, plan_hash="h1")
    _trace(run, "A.t1", plan_hash=None)  # a trace written before traces carried it
    assert cli("report", str(run)).returncode == 0
    text = (run / "trials" / "B.t1.json").read_text().replace('"B.t1"', '"../../escaped"')
    (run / "trials" / "B.t1.json").write_text(text)
    out = cli("rejudge", str(run), "-o", str(tmp_path / "new"))
    assert out.returncode == 2 and "trial_id" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "escaped.json").exists() and not list(tmp_path.rglob("escaped*"))


def test_outputs_never_replace_the_runs_own_files(tmp_path):
    run = tmp_path / "run"
    _run(run)
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    for flag, target in (("--html", "trials/A.t1.json"), ("--json", "plan.json"), ("--junit", "run.json")):
        out = cli("report", str(run), flag, str(run / target))
        assert out.returncode == 2 and "a file of the run" in out.stderr, (flag, out.stderr)
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before


def test_outputs_are_written_through_a_symlink_and_never_over_a_device(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_atomic(link, "new")
    assert link.is_symlink() and real.read_text() == "new"
    with pytest.raises(NotRegularFile):
        write_atomic(Path("/dev/null"), "x")
    assert Path("/dev/null").is_char_device()
    run = tmp_path / "run"
    _run(run)
    out = cli("report", str(run), "--json", "/dev/null")
    assert out.returncode == 2 and "not a regular file" in out.stderr and Path("/dev/null").is_char_device()


def test_a_screenshot_path_outside_the_run_folder_is_never_embedded(tmp_path):
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG\r\n\x1a\n" + b"SECRET-IMAGE-BYTES")
    run = tmp_path / "a" / "run"
    _run(run, ids=("A",))
    trace = json.loads((run / "trials" / "A.t1.json").read_text())
    trace["ui"] = {"screenshot": "../../../secret.png"}
    (run / "trials" / "A.t1.json").write_text(json.dumps(trace))
    out = cli("report", str(run), "--html", str(tmp_path / "r.html"))
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "r.html").read_text()
    assert base64.b64encode(secret.read_bytes()).decode() not in page and "outside the run folder" in page


def test_two_runs_with_one_run_id_have_worlds_apart():
    assert world_id("ci", None, "SEL-01.t1", "a1b2c3") != world_id("ci", None, "SEL-01.t1", "d4e5f6")
    assert world_id("ci", (1, 2), "SEL-01.t1", "a1b2c3").startswith("ci-a1b2c3-s1of2-")


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """SEL-01 played twice from a suite folder named relative to where the run started: a real run."""
    home = tmp_path_factory.mktemp("home")
    suite = home / "suite"
    suite.mkdir()
    for name in ("catalog.json", "SEL-01.yaml"):
        (suite / name).write_bytes((ROOT / "cases" / name).read_bytes())
    (suite / "suite.yaml").write_text(
        "site: demo\ncatalog: catalog.json\nmin_cases_per_behaviour: 1\ntimezone_id: Asia/Taipei\nlocale: zh-TW\n"
    )
    out = cli("run", "suite/SEL-01.yaml", "--trials", "2", "--out", "runs", "--run-id", "r", "-j", "2", cwd=home)
    assert out.returncode == 0, out.stdout + out.stderr
    return home


@pytest.mark.browser
def test_every_trace_carries_its_plan_hash_and_a_world_of_its_own(played):
    run = played / "runs" / "r"
    plan = json.loads((run / "plan.json").read_text())
    traces = [json.loads(p.read_text()) for p in sorted((run / "trials").glob("*.json"))]
    assert [t["plan_hash"] for t in traces] == [plan["plan_hash"]] * 2
    assert [t["world"] for t in traces] == [f"r-{plan['world_key']}-SEL-01-t{n}" for n in (1, 2)]


@pytest.mark.browser
def test_resume_refuses_changed_case_files_and_force_replan_plays_the_rest_from_any_folder(played, tmp_path):
    run = played / "runs" / "r"
    old_hash = json.loads((run / "plan.json").read_text())["plan_hash"]
    (run / "trials" / "SEL-01.t2.json").unlink()
    case = played / "suite" / "SEL-01.yaml"
    case.write_text(case.read_text().replace("title:", "title: (edited)", 1))
    refused = cli("run", "--resume", str(run), cwd=tmp_path)  # another folder than where the run started
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert (
        "changed since the run was planned: suite/SEL-01.yaml" in refused.stderr and "--force-replan" in refused.stderr
    )
    assert not (run / "trials" / "SEL-01.t2.json").exists()
    replanned = cli("run", "--resume", str(run), "--force-replan", cwd=tmp_path)
    assert replanned.returncode == 0, replanned.stdout + replanned.stderr
    plan = json.loads((run / "plan.json").read_text())
    assert plan["replanned_from"] == [old_hash] and plan["plan_hash"] != old_hash
    hashes = [json.loads(p.read_text())["plan_hash"] for p in sorted((run / "trials").glob("*.json"))]
    assert hashes == [old_hash, plan["plan_hash"]]
    assert cli("report", str(run)).returncode == 0


@pytest.mark.browser
def test_a_resume_keeps_the_runs_clock_and_suite_files_and_its_id_in_a_renamed_folder(played, tmp_path):
    """The plan fixes suite.yaml, the catalog, the time zone and the locale: a resume that would change one is
    refused (exit 2, naming it). A copied and renamed run directory resumes under the plan's run id."""
    import shutil

    renamed = played / "runs" / "copied"
    shutil.copytree(played / "runs" / "r", renamed)
    plan = json.loads((renamed / "plan.json").read_text())
    assert plan["browser_context"] == {"timezone_id": "Asia/Taipei", "locale": "zh-TW"}
    assert [f["file"] for f in plan["suite_files"]] == ["suite/suite.yaml", "suite/catalog.json"]
    (renamed / "trials" / "SEL-01.t2.json").unlink()
    clock = cli("run", "--resume", str(renamed), "--timezone", "America/Los_Angeles", cwd=tmp_path)
    assert clock.returncode == 2 and clock.stderr.count("\n") == 1, clock.stdout + clock.stderr
    assert "planned in time zone Asia/Taipei, locale zh-TW" in clock.stderr and "America/Los_Angeles" in clock.stderr
    config = played / "suite" / "suite.yaml"
    kept = config.read_text()
    config.write_text(kept.replace("Asia/Taipei", "Europe/Paris"))
    try:
        edited = cli("run", "--resume", str(renamed), cwd=tmp_path)
    finally:
        config.write_text(kept)
    assert edited.returncode == 2, edited.stdout + edited.stderr
    assert "changed since the run was planned: suite/suite.yaml" in edited.stderr
    assert not (renamed / "trials" / "SEL-01.t2.json").exists()
    resumed = cli("run", "--resume", str(renamed), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    trace = json.loads((renamed / "trials" / "SEL-01.t2.json").read_text())
    assert trace["run_id"] == "r" and trace["timezone_id"] == "Asia/Taipei"
    assert cli("report", str(renamed)).returncode == 0


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        ({"world_key": "ab;rm -rf"}, "world_key"),
        ({"world_key": "ab\r\ncd"}, "world_key"),
        ({"world_key": "a/b"}, "world_key"),
        ({"trials_per_case": -1}, "trials_per_case: -1"),
        ({"run_id": "../elsewhere"}, "run_id"),
        ({"trials": [{"case_id": "A", "trial_index": 0, "trial_id": "../A.t1"}]}, "trial_id '../A.t1' is not A.t1"),
        ({"trials": [{"case_id": "A/B", "trial_index": 0, "trial_id": "A/B.t1"}]}, "is not a case id"),
        ({"shard": {"index": 3, "count": 2, "planned_trials": 2}}, "shard: 3/2"),
    ],
)
def test_a_plan_no_run_writes_is_refused_by_every_reader(tmp_path, edit, said):
    run = tmp_path / "run"
    _run(run, ids=("A",))
    plan = json.loads((run / "plan.json").read_text())
    (run / "plan.json").write_text(json.dumps({**plan, **edit}))
    for args in (("report", str(run)), ("run", "--resume", str(run))):
        out = cli(*args)
        assert out.returncode == 2 and out.stderr.count("\n") == 1, (args, out.stderr)
        assert "not a run plan" in out.stderr and said in out.stderr, (args, out.stderr)


def test_force_and_force_replan_have_help_and_go_where_they_belong(tmp_path):
    run_help = cli("run", "--help").stdout
    assert "--force " in run_help and "--force-replan" in run_help
    alone = cli("run", "SEL-01", "--force-replan", "--out", str(tmp_path))
    assert alone.returncode == 2 and "--force-replan goes with --resume" in alone.stderr
    both = cli("run", "--resume", str(tmp_path), "--force")
    assert both.returncode == 2 and "give one of them" in both.stderr
