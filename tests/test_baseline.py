"""The do-nothing control: the null agent over the seed suite, `validate --control`, `run --control none`,
the `null_agent` mark and the "passes with no agent" flag in every report.

The seed-suite test iterates over whatever cases `cases/` holds, so a case added later is held to the
same rule: the null agent fails it, or the case says why doing nothing is right there.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from eval_support import CASES, cli

from webmcp_eval.results.health import BROKEN, suite_health
from webmcp_eval.results.run_results import results_of
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.rundir.plan import make_plan, read_plan, write_plan
from webmcp_eval.rundir.reading import control_dirs, read_run, read_traces
from webmcp_eval.suite.loader import case_files, load_cases
from webmcp_eval.trace import Trace, write_trace

SILENT = """id: SILENT-01
behaviour: no_tool
title: 只問不做，但答案沒被檢查
start_route: /events
steps:
  - user: 今天天氣如何？不要操作網站。
    reply: 我無法得知天氣。
expect:
  calls: {max_calls: 0}
  network:
    writes: {total: 0}
  state: {unchanged: true}
"""
# a scripted human step that, with no agent, may wait out its time-out for a control that never comes
WAITING_STEPS = ("click", "press", "wait_for")
REASON = "only that nothing is written is asserted here; the answer is judged by people"


def _run_dir(out: Path) -> Path:
    [run] = [p for p in out.iterdir() if p.is_dir()]
    return run


@pytest.mark.browser
def test_the_null_agent_fails_every_seed_case_except_those_marked(tmp_path):
    # Some cases script a human step that, with no agent, waits out a time-out (a click on a control only a tool
    # call shows: 10 s; a wait_for the case bounds: 5-10 s). Those cases are given first, so their waits start at
    # once and overlap the other trials' work (eight workers; the plan keeps the order the files are given in)
    # instead of trailing at the end; the run is the whole suite either way.
    files = case_files([CASES])
    loaded, problems = load_cases(files)
    assert not problems and loaded
    waits = {lc.file for lc in loaded if any(getattr(s, "action", None) in WAITING_STEPS for s in lc.case.steps)}
    ordered = sorted(files, key=lambda f: str(f) not in waits)
    out = cli("validate", *map(str, ordered), "--control", "--out", str(tmp_path), "-j", "8")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "control (the null agent): passes" in out.stdout and "0 unexplained" in out.stdout
    traces = {t.case_id: t for t in read_traces(_run_dir(tmp_path))}
    assert set(traces) == {lc.case.id for lc in loaded}  # every case of the suite, whatever it holds today
    for lc in loaded:
        t = traces[lc.case.id]
        assert t.evidence_kind == "control" and t.agent == "none" and t.calls == []
        if lc.case.null_agent:
            assert lc.case.null_agent.reason.strip(), lc.case.id
            continue
        assert t.verdict != "passed", f"{lc.case.id} passes with no agent: {t.verdict_reason}"
        # a silent agent may leave a scripted human step nothing to click: that step fails, named
        assert t.verdict == "failed", (lc.case.id, t.verdict_reason)


@pytest.mark.browser
def test_an_unexplained_pass_fails_validate_and_a_marked_one_is_flagged_in_every_report(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(CASES / "catalog.json", suite)
    shutil.copy(CASES / "NO-01.yaml", suite)
    (suite / "suite.yaml").write_text(
        "site: demo\ncatalog: catalog.json\nmin_cases_per_behaviour: 1\n"
        "behaviours:\n  no_tool: stops when no tool fits\n",
        encoding="utf-8",
    )
    case = suite / "SILENT-01.yaml"
    case.write_text(SILENT, encoding="utf-8")
    # a worker per case (two cases) in every run below: each trial's waits overlap the other's work
    out = cli("validate", str(suite), "--control", "--out", str(tmp_path / "v1"), "-j", "2")
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"{case}: SILENT-01 passes with no agent, and the case does not say why" in out.stderr
    assert "NO-01" not in out.stderr
    assert "SILENT-01: passes with no agent (unexplained: add null_agent)" in out.stdout

    case.write_text(SILENT + f"null_agent: {{passes: true, reason: {REASON}}}\n", encoding="utf-8")
    out = cli("validate", str(suite), "--control", "--out", str(tmp_path / "v2"), "-j", "2")
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"SILENT-01: passes with no agent (why: {REASON})" in out.stdout

    runs = tmp_path / "runs"
    md = tmp_path / "summary.md"
    played = cli("run", "--suite", str(suite), "--control", "none", "--out", str(runs), "--run-id", "r", "-j", "2")
    played_md = cli("report", str(runs / "r"), "--markdown", str(md))
    assert played.returncode == 0, played.stdout + played.stderr  # the control's failure on NO-01 gates nothing
    flag = f"SILENT-01: passes with no agent (the null agent passed it; why: {REASON})"
    for text in (played.stdout, played_md.stdout, md.read_text(encoding="utf-8")):
        assert flag in " ".join(text.split())
    summary = json.loads((runs / "r" / "summary.json").read_text(encoding="utf-8"))
    assert summary["passes_with_no_agent"] == [{"case": "SILENT-01", "seen": True, "explained": True, "reason": REASON}]
    assert sorted(s["label"] for s in summary["series"]) == ["control none", "deterministic"]
    junit = ET.parse(runs / "r" / "junit.xml")
    props = [p.get("value") for p in junit.iter("property") if p.get("name") == "passes_with_no_agent"]
    assert props and all(flag == p for p in props)
    html = (runs / "r" / "report.html").read_text(encoding="utf-8")
    assert "Passes with no agent" in html and REASON in html
    health = json.loads((runs / "r" / "health.json").read_text(encoding="utf-8"))["control"]
    assert health["passes_with_no_agent"] == [{"case": "SILENT-01", "reason": REASON, "explained": True}]
    assert played_md.returncode == 0 and "control none" in played_md.stdout
    again = cli("rejudge", str(runs / "r"), "--suite", str(suite), "-o", str(runs / "again"))
    assert again.returncode == 0, again.stdout + again.stderr  # the control beside the run is judged again too
    assert {t.evidence_kind for t in read_traces(runs / "again" / "again-control")} == {"control"}
    assert flag in " ".join(again.stdout.split()) and "verdict changes: 0 of 4 trial(s)" in again.stdout


def _trace(case_id: str, kind: str, verdict: str, null_agent: dict | None = None) -> Trace:
    case = {"id": case_id, **({"null_agent": null_agent} if null_agent else {})}
    return Trace(
        run_id="r",
        trial_id=f"{case_id}.t1",
        case_id=case_id,
        case=case,
        behaviour="no_tool",
        start_route="/events",
        evidence_kind=kind,
        agent={"control": "none", "deterministic": "reference"}[kind],
        verdict=verdict,
        not_run_kind="infrastructure" if verdict == "not_run" else None,
    )


def test_the_flag_says_whether_the_case_explains_it_and_the_control_never_decides_health_or_exit():
    said = {"passes": True, "reason": "nothing to do"}
    traces = [
        _trace("A", "deterministic", "passed"),
        _trace("A", "control", "passed"),  # passes silently, says nothing: unexplained
        _trace("B", "deterministic", "passed", said),
        _trace("B", "control", "failed", said),  # says so, though the control failed it here
        _trace("C", "deterministic", "passed"),
        _trace("C", "control", "not_run"),
    ]
    results = results_of(traces)
    flags = {n.case_id: n for n in results.passes_with_no_agent}
    assert set(flags) == {"A", "B"}
    assert flags["A"].seen and not flags["A"].reason and "unexplained" in flags["A"].text()
    assert not flags["B"].seen and "the case says the null agent passes it; why: nothing to do" in flags["B"].text()
    assert results.counts.failed == 1 and results.gate_counts.failed == 0 and results.gate_counts.not_run == 0
    only_control = results_of([t for t in traces if t.evidence_kind == "control"])
    assert only_control.gate_counts.failed == 1  # a run of the null agent alone is judged on it
    health = suite_health(traces * 5, min_trials=5)
    assert not any(c.flag == BROKEN for c in health.cases)  # the null agent failing is no sign of a broken task
    assert health.control.unexplained == ["A"] and health.control.not_judged == {"C": ""}
    assert any("C: not judged by the control" in line for line in health.control.lines())


def _old_run_with_its_control(root: Path) -> Path:
    """A run played with ``--baseline none`` before the rename: the null agent's run in ``r-baseline/``, its plan's
    and traces' evidence kind ``baseline``."""
    run = root / "r"
    cases = [("A", "cases/A.yaml"), ("B", "cases/B.yaml")]
    write_plan(run, make_plan("r", cases, 1, agent="reference", model=None, evidence_kind="deterministic"))
    old = run / "r-baseline"
    plan = make_plan("r-baseline", cases, 1, agent="none", model=None, evidence_kind="control")
    old.mkdir(parents=True)
    RunDir(old).plan.write_text(json.dumps({**plan, "evidence_kind": "baseline"}), encoding="utf-8")
    for cid in ("A", "B"):
        write_trace(_trace(cid, "deterministic", "passed").model_copy(update={"run_id": "r"}), RunDir(run).trials)
        path = write_trace(_trace(cid, "control", "failed").model_copy(update={"run_id": "r-baseline"}), old / "trials")
        path.write_text(path.read_text(encoding="utf-8").replace('"control"', '"baseline"'), encoding="utf-8")
    return run


def test_a_run_played_before_the_rename_finds_its_control_in_the_old_folder(tmp_path):
    run = _old_run_with_its_control(tmp_path)
    old = run / "r-baseline"
    assert '"baseline"' in (old / "plan.json").read_text(encoding="utf-8")
    plan = read_plan(old)
    assert plan is not None and plan["evidence_kind"] == "control"
    assert control_dirs(run) == [old]
    traces, _, _ = read_run(str(run))
    assert {t.run_id for t in traces} == {"r"}  # the control's traces are its own run, never the agent's
    report = cli("report", str(run), "--json", str(tmp_path / "s.json"))
    assert report.returncode == 0, report.stdout + report.stderr  # the control's failures gate nothing
    summary = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert sorted(s["label"] for s in summary["series"]) == ["control none", "deterministic"]
    compared = cli("compare", str(run), str(run))
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert "control" not in compared.stdout  # compare pairs the runs, not the control played beside them
    RunDir(run).clear("r")  # run --force removes the control under its old name too
    assert not old.exists()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("null_agent: passes", "null_agent: Value error, write it as {passes: true, reason:"),
        ("null_agent: {passes: true}", "null_agent.reason: required field is missing"),
        ("null_agent: {passes: true, reason: ' '}", "null_agent.reason: Value error, say why the null agent"),
        ("null_agent: {passes: false, reason: x}", "null_agent.passes:"),
    ],
)
def test_a_bad_null_agent_mark_is_reported_at_its_line(tmp_path, line, message):
    suite = tmp_path / "suite"
    shutil.copytree(CASES, suite)
    path = suite / "NO-01.yaml"
    text = path.read_text(encoding="utf-8").rstrip("\n") + "\n"
    path.write_text(text + line + "\n", encoding="utf-8")
    out = cli("validate", str(suite))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    where = f"{path}:{text.count(chr(10)) + 1}: {message}"
    assert where in out.stderr, out.stderr


def test_the_schema_describes_the_null_agent_mark():
    schema = json.loads(cli("schema").stdout)
    mark = schema["$defs"]["NullAgentPass"]
    assert mark["required"] == ["passes", "reason"] and "null_agent" in schema["properties"]
