"""rejudge: a real run's stored traces judged again with the current case files, into a new run directory.

One real run (reference agent, real Chromium, the shared demo site, the proxy) of two seed cases is
judged again with the seed suite as it is, and with copies of it edited the ways a person edits
cases: an expectation changed, a case renamed away, a UI target added that the trial never observed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from eval_support import CASES, cli, play

from webmcp_eval.rundir.reading import read_traces
from webmcp_eval.suite.site import demo_site_config

IDS = ("SEL-01", "NO-01")


@pytest.fixture(scope="module")
def run_dir(site, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: ANN001 - the shared SiteServer
    out = tmp_path_factory.mktemp("rejudge")
    traces = play(out, IDS, site_config=demo_site_config(site.url), screenshots="only-on-failure", workers=2)
    assert [t.verdict for t in traces] == ["passed", "passed"], [t.verdict_reason for t in traces]
    return out / "run"


def _suite(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    shutil.copytree(CASES, suite)
    return suite


def _edit(path: Path, change) -> None:  # noqa: ANN001 - a function over the case's mapping
    case = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(case)
    path.write_text(yaml.safe_dump(case, allow_unicode=True, sort_keys=False), encoding="utf-8")


def _files(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


@pytest.mark.browser
def test_rejudge_with_nothing_changed_is_identical_and_leaves_the_old_run_alone(run_dir, tmp_path):
    before = _files(run_dir)
    new = tmp_path / "again"
    out = cli("rejudge", str(run_dir), "-o", str(new))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "verdict changes: 0 of 2 trial(s); 0 more with changed assertions" in " ".join(out.stdout.split())
    assert _files(run_dir) == before  # never written to
    old, again = read_traces(run_dir), read_traces(new)
    assert [(t.trial_id, t.verdict) for t in again] == [(t.trial_id, t.verdict) for t in old]
    for a, b in zip(old, again, strict=True):
        assert b.run_id == "again" and b.rejudged["from_run"] == a.run_id and b.rejudged["verdict"] == a.verdict
        assert (b.calls, b.ui, b.network, b.state, b.ai_result) == (a.calls, a.ui, a.network, a.state, a.ai_result)
        assert [(x.id, x.status) for x in b.assertions] == [(x.id, x.status) for x in a.assertions]
    assert {"summary.json", "junit.xml", "report.html", "plan.json", "run.json"} <= {p.name for p in new.iterdir()}
    assert json.loads((new / "plan.json").read_text(encoding="utf-8"))["run_id"] == "again"
    compared = cli("compare", str(run_dir), str(new))
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert "no difference in case pass rate over 2 paired cases" in compared.stdout
    assert cli("report", str(new)).returncode == 0
    taken = cli("rejudge", str(run_dir), "-o", str(new))  # never over an existing run
    assert taken.returncode == 2 and "not empty" in taken.stderr and "Traceback" not in taken.stderr


@pytest.mark.browser
def test_an_edited_expectation_changes_the_verdict(run_dir, tmp_path):
    suite = _suite(tmp_path)
    _edit(suite / "SEL-01.yaml", lambda c: c["expect"]["answer"]["contains"].append("Taipei 101"))
    _edit(suite / "NO-01.yaml", lambda c: c["expect"]["calls"].update(max_calls=1))  # looser: still passes
    new = tmp_path / "edited"
    out = cli("rejudge", str(run_dir), "--suite", str(suite), "-o", str(new))
    assert out.returncode == 1, out.stdout + out.stderr
    text = " ".join(out.stdout.split())
    assert "verdict changes: 1 of 2 trial(s)" in text
    assert "passed → failed" in text and "answer.contains[3]: new, failed" in text
    by_id = {t.case_id: t for t in read_traces(new)}
    assert by_id["SEL-01"].verdict == "failed" and "Taipei 101" in by_id["SEL-01"].verdict_reason
    assert by_id["SEL-01"].case["expect"]["answer"]["contains"][-1] == "Taipei 101"  # judged by the case as it is
    assert by_id["NO-01"].verdict == "passed"
    assert json.loads((new / "summary.json").read_text(encoding="utf-8"))["summary"]["failed"] == 1


@pytest.mark.browser
def test_a_trace_whose_case_is_gone_is_refused_or_kept_as_not_run(run_dir, tmp_path):
    suite = _suite(tmp_path)
    (suite / "NO-01.yaml").rename(suite / "NO-09.yaml")
    _edit(suite / "NO-09.yaml", lambda c: c.update(id="NO-09"))
    new = tmp_path / "gone"
    out = cli("rejudge", str(run_dir), "--suite", str(suite), "-o", str(new))
    assert out.returncode == 2, out.stdout + out.stderr
    [line] = out.stderr.strip().splitlines()
    assert "NO-01.t1.json: case NO-01 is not in the suite" in line and "--keep-going" in line
    assert not new.exists()  # nothing written
    kept = cli("rejudge", str(run_dir), "--suite", str(suite), "-o", str(new), "--keep-going")
    assert kept.returncode == 3, kept.stdout + kept.stderr  # not_run and nothing failed: exit codes as report
    by_id = {t.case_id: t for t in read_traces(new)}
    assert by_id["NO-01"].verdict == "not_run" and by_id["NO-01"].not_run_kind == "case"
    assert "is not in the suite" in by_id["NO-01"].verdict_reason
    assert by_id["SEL-01"].verdict == "passed"


@pytest.mark.browser
def test_a_ui_target_the_trial_never_observed_makes_it_not_run(run_dir, tmp_path):
    suite = _suite(tmp_path)
    target = {"target": {"role": "heading", "name": "活動詳情"}}
    _edit(suite / "SEL-01.yaml", lambda c: c["expect"]["ui"].append(target))
    index = len(yaml.safe_load((suite / "SEL-01.yaml").read_text(encoding="utf-8"))["expect"]["ui"]) - 1
    new = tmp_path / "unseen"
    out = cli("rejudge", str(run_dir), "--suite", str(suite), "-o", str(new))
    assert out.returncode == 2 and "never observed" in out.stderr and not new.exists(), out.stderr
    kept = cli("rejudge", str(run_dir), "--suite", str(suite), "-o", str(new), "--keep-going")
    assert kept.returncode == 3, kept.stdout + kept.stderr
    sel = next(t for t in read_traces(new) if t.case_id == "SEL-01")
    assert sel.verdict == "not_run" and f"ui[{index}] heading '活動詳情' was never observed" in sel.verdict_reason


@pytest.mark.browser
def test_reordered_ui_expectations_are_judged_on_what_was_observed(run_dir, tmp_path):
    suite = _suite(tmp_path)
    _edit(suite / "SEL-01.yaml", lambda c: c["expect"]["ui"].reverse())
    _edit(suite / "NO-01.yaml", lambda c: c.update(steps=[{**c["steps"][0], "user": "另一個問題"}]))
    new = tmp_path / "reordered"
    out = cli("rejudge", str(run_dir), "--suite", str(suite), "-o", str(new), "--keep-going")
    by_id = {t.case_id: t for t in read_traces(new)}
    assert by_id["SEL-01"].verdict == "passed", by_id["SEL-01"].verdict_reason
    assert by_id["NO-01"].verdict == "not_run" and "steps changed" in by_id["NO-01"].verdict_reason
    assert out.returncode == 3


def test_rejudge_of_what_is_not_a_run_is_one_line(tmp_path):
    out = cli("rejudge", str(tmp_path / "nothing"))
    assert out.returncode == 2 and "not a run directory" in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_without_a_catalog_a_rule_the_seen_tools_cannot_fire_is_not_run_again():
    from webmcp_eval.judge.rejudge import judged_again, rejudge
    from webmcp_eval.suite.case import Case
    from webmcp_eval.trace import Trace

    case = Case.model_validate(
        {
            "id": "X-01",
            "behaviour": "no_tool",
            "title": "x",
            "start_route": "/events",
            "steps": [{"user": "hi"}],
            "expect": {"calls": {"max_calls": 0, "forbidden": [{"tool": "search_events", "args": {"cityy": "x"}}]}},
        }
    )
    seen = {"search_events": [{"type": "object", "properties": {"city": {"type": "string"}}}]}
    trace = Trace(run_id="r", trial_id="X-01.t1", case_id="X-01", behaviour="no_tool", start_route="/events")
    trace.live_tools, trace.verdict = seen, "passed"
    never = rejudge(trace, case, "x.yaml", "new", live_rules=True)
    assert never.verdict == "not_run" and never.not_run_kind == "case"
    assert never.verdict_reason.startswith("can never fire: ") and "cityy" in never.verdict_reason
    assert judged_again(never)  # played to the end: a fixed case judges it again
    assert rejudge(trace, case, "x.yaml", "new", live_rules=False).verdict == "passed"  # a catalog checked it
    fixed = case.model_copy(deep=True)
    fixed.expect.calls.forbidden[0].args = {"city": "x"}
    assert rejudge(never, fixed, "x.yaml", "newer", live_rules=True).verdict == "passed"
