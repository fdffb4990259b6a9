"""The run plan: written before any trial; an incomplete run says so; --resume and --last-failed.

The Ctrl-C test is a real subprocess sent SIGINT, as a terminal sends it to
the whole foreground process group.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from eval_support import ROOT, cli

from webmcp_eval.rundir.plan import PlanError, make_plan, missing_trials, read_plan, write_plan
from webmcp_eval.rundir.reading import read_traces
from webmcp_eval.trace import Trace, write_trace


def _plan(run_dir: Path, ids: tuple[str, ...], trials: int = 1) -> dict:
    plan = make_plan(
        run_dir.name,
        [(i, f"cases/{i}.yaml") for i in ids],
        trials,
        agent="reference",
        model=None,
        evidence_kind="deterministic",
    )
    write_plan(run_dir, plan)
    return plan


def _trace(run_dir: Path, trial_id: str, verdict: str) -> None:
    case_id = trial_id.rsplit(".t", 1)[0]
    trace = Trace(
        run_id=run_dir.name,
        trial_id=trial_id,
        case_id=case_id,
        case_file=f"cases/{case_id}.yaml",
        behaviour="selection",
        start_route="/events",
        verdict=verdict,
        verdict_reason="made up for the test",
    )
    write_trace(trace, run_dir / "trials")


def test_the_plan_has_exactly_the_agreed_shape(tmp_path):
    plan = _plan(tmp_path, ("SEL-01", "SEL-02"), trials=2)
    on_disk = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
    assert on_disk == plan == read_plan(tmp_path)
    assert set(on_disk) == {
        "run_id",
        "created_at",
        "cases",
        "trials_per_case",
        "trials",
        "agent",
        "model",
        "evidence_kind",
        "root",  # relative case files start here: the run resumes from any folder
        "world_key",  # every world of the run is named with it: two runs with one id never share one
    }
    assert [{k: c[k] for k in ("id", "file")} for c in on_disk["cases"]] == [
        {"id": "SEL-01", "file": "cases/SEL-01.yaml"},
        {"id": "SEL-02", "file": "cases/SEL-02.yaml"},
    ]
    assert on_disk["trials"][1] == {"case_id": "SEL-01", "trial_index": 1, "trial_id": "SEL-01.t2"}
    assert len(on_disk["trials"]) == 4 and on_disk["trials_per_case"] == 2


def test_reading_a_plan(tmp_path):
    assert read_plan(tmp_path) is None  # a run made before plans
    (tmp_path / "plan.json").write_text('{"run_id": 3}', encoding="utf-8")
    with pytest.raises(PlanError, match="run_id"):
        read_plan(tmp_path)
    plan = _plan(tmp_path, ("SEL-01",), trials=3)
    _trace(tmp_path, "SEL-01.t1", "passed")
    _trace(tmp_path, "SEL-01.t2", "not_run")
    traces = read_traces(tmp_path)
    assert [t["trial_id"] for t in missing_trials(plan, traces)] == ["SEL-01.t3"]
    assert [t["trial_id"] for t in missing_trials(plan, traces, rerun_not_run=True)] == ["SEL-01.t2", "SEL-01.t3"]


@pytest.mark.parametrize(("verdicts", "code"), [(["passed"], 3), (["failed"], 1)])
def test_report_of_an_incomplete_run_says_so_and_is_not_ok(tmp_path, verdicts, code):
    run = tmp_path / "run"
    _plan(run, ("SEL-01", "SEL-02", "NO-01"))
    for i, verdict in enumerate(verdicts):
        _trace(run, ("SEL-01.t1", "SEL-02.t1")[i], verdict)
    out = cli("report", str(run))
    assert out.returncode == code, out.stderr
    assert "incomplete: 1 of 3 trials" in out.stdout
    assert f"webmcp-eval run --resume {run}" in out.stderr


def test_report_of_a_complete_run_is_ok(tmp_path):
    run = tmp_path / "run"
    _plan(run, ("SEL-01",))
    _trace(run, "SEL-01.t1", "passed")
    out = cli("report", str(run))
    assert out.returncode == 0, out.stderr
    assert "complete: 1 of 1 trials" in out.stdout and "incomplete" not in out.stdout + out.stderr


@pytest.mark.browser
def test_ctrl_c_keeps_the_traces_marks_the_run_incomplete_and_resume_finishes_it(tmp_path):
    """SIGINT to the process group mid-run: one line, exit 130, traces kept, a partial report; then --resume."""
    run = tmp_path / "int"
    cmd = [sys.executable, "-m", "webmcp_eval.cli", "run", "SEL-01", "SEL-02", "--trials", "2"]
    cmd += ["--out", str(tmp_path), "--run-id", "int"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        cmd,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
        # as from a terminal: a shell's background job (`pytest &`) ignores SIGINT, and its children inherit that
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdout and proc.stderr
    seen = []
    for line in proc.stdout:  # the first trial's progress line: the run is under way, the plan written
        seen.append(line)
        if re.match(r"\[\s*[1-3]/4\]", line):
            break
    else:  # the output ended without a progress line of an unfinished run: say what it printed instead
        proc.wait(timeout=60)
        pytest.fail(f"no progress line before the run ended (exit {proc.returncode}):\n{''.join(seen)}")
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal does on Ctrl-C
    rest, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr + rest and "TargetClosedError" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    done = len(read_traces(run))
    assert 1 <= done < 4
    assert lines[0].startswith(f"interrupted: incomplete: {done} of 4 trials")
    assert f"webmcp-eval run --resume {run}" in lines[0]
    assert len(read_plan(run)["trials"]) == 4
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert summary["completeness"]["state"] == "incomplete"
    assert (summary["completeness"]["traced"], summary["completeness"]["planned"]) == (done, 4)
    assert (run / "report.html").is_file()

    report = cli("report", str(run))
    assert report.returncode == 3 and f"incomplete: {done} of 4 trials" in report.stdout

    resumed = cli("run", "--resume", str(run))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"{4 - done} planned trial(s) of {run}" in resumed.stdout
    assert sorted(t.trial_id for t in read_traces(run)) == [f"SEL-0{c}.t{i}" for c in (1, 2) for i in (1, 2)]
    assert cli("report", str(run)).returncode == 0
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert len(summary["trials"]) == 4 and summary["completeness"]["state"] == "complete"


@pytest.mark.browser
def test_last_failed_reruns_the_failed_cases_of_the_latest_run(tmp_path):
    older, latest = tmp_path / "older", tmp_path / "latest"
    _plan(older, ("SEL-01",))
    _trace(older, "SEL-01.t1", "failed")
    plan = _plan(latest, ("SEL-02", "NO-01"))
    plan["created_at"] = "2999-01-01T00:00:00+00:00"  # newer than the older run, whatever the clock says
    write_plan(latest, plan)
    _trace(latest, "SEL-02.t1", "failed")
    _trace(latest, "NO-01.t1", "passed")
    out = cli("run", "--last-failed", "--out", str(tmp_path), "--run-id", "again")
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"--last-failed: 1 failed case(s) of {latest}: SEL-02" in out.stdout
    assert [t.trial_id for t in read_traces(tmp_path / "again")] == ["SEL-02.t1"]
    # the report run writes has its trend: the older run is of other cases, the latest planned after this one
    trend = (tmp_path / "again" / "report.html").read_text(encoding="utf-8").split('<section id="trend">')[1]
    assert "No earlier run of these cases" in trend.split("</section>")[0]
    assert "not comparable: older: another case set" in trend and "latest" not in trend.split("</section>")[0]


@pytest.mark.browser
def test_rerun_not_run_keeps_the_not_run_trace_as_an_earlier_attempt(tmp_path):
    """--resume --rerun-not-run plays a not_run trial again; its old trace is an attempt, not overwritten."""
    run = tmp_path / "rerun"
    _plan(run, ("SEL-01",))
    _trace(run, "SEL-01.t1", "not_run")
    out = cli("run", "--resume", str(run), "--rerun-not-run")
    assert out.returncode == 0, out.stdout + out.stderr
    [trace] = read_traces(run)
    assert trace.verdict == "passed" and trace.attempt == 2
    [earlier] = trace.earlier_attempts
    assert earlier.attempt == 1 and earlier.verdict == "not_run" and earlier.reason == "made up for the test"
    kept = Trace.model_validate_json((run / "attempts" / "SEL-01.t1.a1.json").read_text(encoding="utf-8"))
    assert kept.verdict == "not_run" and kept.trial_id == "SEL-01.t1"
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert len(summary["trials"]) == 1
