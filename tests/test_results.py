"""webmcp_eval/results/run_results.py: every figure the views show, pinned against hand-computed traces, and the
views (console, summary.json, JUnit, HTML, Markdown) agreeing on a mixed deterministic + agent
run that is incomplete and has a not_run trial. No browser: traces are built directly."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from eval_support import cli

from webmcp_eval.report.writers import summary_json
from webmcp_eval.results.compare import compare_runs
from webmcp_eval.results.run_results import Counts, RunInput, build_results, interval_text, results_of, tokens_total
from webmcp_eval.rundir.plan import RunPlan, read_plan, write_plan
from webmcp_eval.trace import Assertion, ToolCall, Trace, write_trace

ROOT = Path(__file__).resolve().parent.parent
BEHAVIOUR = {"A": "b1", "B": "b1", "C": "b2", "D": "b2"}
AGENT = {"evidence_kind": "agent", "agent": "openai", "model": "m1"}


def trial(run: str, case: str, index: int, verdict: str, passed: int, failed: int = 0, not_run: int = 0, **kw) -> Trace:
    statuses = ["passed"] * passed + ["failed"] * failed + ["not_run"] * not_run
    return Trace(
        run_id=run,
        trial_id=f"{case}.t{index + 1}",
        trial_index=index,
        case_id=case,
        case_file=f"cases/{case}.yaml",
        behaviour=BEHAVIOUR[case],
        title=f"case {case}",
        start_route="/",
        verdict=verdict,
        verdict_reason="site down" if verdict == "not_run" else f"{failed} assertion(s) failed",
        duration_ms=1000.0,
        assertions=[
            Assertion(id=f"a{i}", kind="calls", description=f"a{i}", status=s, why=f"why {i}")
            for i, s in enumerate(statuses)
        ],
        **kw,
    )


def det_traces() -> list[Trace]:
    calls = [ToolCall(index=i, step=0, tool="search_events") for i in range(2)]
    return [
        trial("det", "A", 0, "passed", 3, calls=calls),
        trial("det", "A", 1, "failed", 2, 1, 1),
        trial("det", "A", 2, "passed", 3),
        trial("det", "B", 0, "not_run", 1, 0, 1),  # partial evidence: no rate counts it
        *(trial("det", "C", i, "passed", 2) for i in range(3)),
        trial("det", "D", 0, "passed", 1),
    ]


def agent_traces() -> list[Trace]:
    money = {"cost_usd": 0.01, **AGENT}
    return [
        trial("agent", "A", 0, "failed", 1, 2, tokens={"input": 100, "output": 50}, **money),
        trial("agent", "A", 1, "passed", 3, tokens={"total": 200, "input": 120, "output": 80}, **money),
        trial("agent", "C", 0, "passed", 2, tokens={"input": 10, "output": 5}, **money),
        trial("agent", "D", 0, "failed", 0, 1, tokens={"input": 20, "output": 10}, **money),
        # C.t2 was planned and has no trace: the agent run is incomplete
    ]


def plan(run: str, trials: dict[str, int], **who) -> RunPlan:
    return RunPlan(
        **{
            "run_id": run,
            "created_at": "2026-12-03T09:00:00+00:00",
            "cases": [{"id": c, "file": f"cases/{c}.yaml"} for c in trials],
            "trials_per_case": max(trials.values()),
            "trials": [
                {"case_id": c, "trial_index": i, "trial_id": f"{c}.t{i + 1}"}
                for c, n in trials.items()
                for i in range(n)
            ],
            "agent": who.get("agent", "reference"),
            "model": who.get("model"),
            "evidence_kind": who.get("evidence_kind", "deterministic"),
        }
    )


DET_PLAN = {"A": 3, "B": 1, "C": 3, "D": 1}
AGENT_PLAN = {"A": 2, "C": 2, "D": 1}


def mixed():
    return build_results(
        [
            RunInput(det_traces(), plan("det", DET_PLAN)),
            RunInput(agent_traces(), plan("agent", AGENT_PLAN, **AGENT)),
        ]
    )


# --------------------------------------------------------------------------- the figures, by hand


def test_series_are_keyed_by_evidence_and_never_pooled() -> None:
    r = mixed()
    assert [s.key for s in r.series] == [("deterministic",), ("agent", "openai", "m1")]
    assert [s.label for s in r.series] == ["deterministic", "agent openai (m1)"]
    # D: one deterministic pass, one agent failure -- 1.0 and 0.0, never a pooled 0.5
    assert r.get("deterministic").case("D").case_pass_rate == 1.0
    assert r.get(("agent", "openai", "m1")).case("D").case_pass_rate == 0.0
    assert r.counts == Counts(passed=8, failed=3, not_run=1, missing=1)  # counts are all that spans series


def test_deterministic_series_by_hand() -> None:
    det = mixed().get("deterministic")
    assert det.counts == Counts(passed=6, failed=1, not_run=1)
    a, b, c, d = det.cases
    # A: 2 of 3 trials pass; assertions 3/3 + 2/3 (one not run, not counted) + 3/3 = 8/9
    assert (a.case_pass_rate, a.assertions_passed, a.assertions_counted) == (pytest.approx(2 / 3), 8, 9)
    assert a.assertion_pass_rate == pytest.approx(8 / 9)
    assert (a.pass_at[3], a.pass_hat[3], a.pass_at[5]) == (1.0, 0.0, None)
    # B: its only trial did not run: counted, shown, in no rate
    assert (b.counts.not_run, b.score, b.case_pass_rate, b.assertions_counted, b.verdict) == (
        1,
        None,
        None,
        0,
        "not_run",
    )
    assert (c.case_pass_rate, c.assertion_pass_rate, c.pass_hat[3]) == (1.0, 1.0, 1.0)
    assert (d.case_pass_rate, d.pass_at[3]) == (1.0, None)  # one trial: no pass@3
    sc = det.score
    # case pass over A, C, D: (2/3, 1, 1) -> mean 8/9, SE 1/9; clustered (b1: A; b2: C, D, CR1) 4/27
    assert (sc.n_cases, sc.case_pass.mean, sc.case_pass.se) == (3, pytest.approx(8 / 9), pytest.approx(1 / 9))
    assert sc.case_pass.clustered_se == pytest.approx(4 / 27)
    # per-assertion over A, C, D: (8/9, 1, 1) -> mean 26/27, SE 1/27, clustered 4/81
    assert sc.assertion_pass.mean == pytest.approx(26 / 27) and sc.assertion_pass.se == pytest.approx(1 / 27)
    assert sc.assertion_pass.clustered_se == pytest.approx(4 / 81)
    assert det.ks == (3,)  # no case has 5 trials
    assert (sc.pass_at[3].mean, sc.pass_at[3].se, sc.pass_hat[3].mean, sc.pass_hat[3].se) == (1.0, 0.0, 0.5, 0.5)
    assert sc.pass_at[3].excluded == ("D",)
    assert sc.by_behaviour["b1"].case_pass.mean == pytest.approx(2 / 3) and sc.by_behaviour["b2"].case_pass.mean == 1
    assert (det.assertions_passed, det.assertions_counted) == (15, 16)
    assert (det.cost.trials, det.cost.cases, det.cost.wall_ms, det.cost.tool_calls) == (8, 4, 8000.0, 2)
    assert (det.cost.tokens, det.cost.cost_usd) == (None, None)


def test_agent_series_by_hand() -> None:
    ag = mixed().get(("agent", "openai", "m1"))
    assert ag.counts == Counts(passed=2, failed=2, not_run=0, missing=1)
    a, c, d = ag.cases
    assert (a.case_pass_rate, a.assertions_passed, a.assertions_counted) == (0.5, 4, 6)
    assert (c.case_pass_rate, c.counts.missing, c.missing) == (1.0, 1, ("C.t2",))
    assert (d.case_pass_rate, d.assertion_pass_rate) == (0.0, 0.0)
    sc = ag.score
    # case pass (0.5, 1, 0): mean 0.5, SE sqrt(0.25 / 3); per behaviour the residuals cancel: clustered SE 0
    assert (sc.case_pass.mean, sc.case_pass.se, sc.case_pass.clustered_se) == (
        0.5,
        pytest.approx(math.sqrt(0.25 / 3)),
        pytest.approx(0.0),
    )
    # per-assertion (4/6, 1, 0): mean 5/9, SE sqrt(7)/9, clustered 2/27
    assert sc.assertion_pass.mean == pytest.approx(5 / 9) and sc.assertion_pass.se == pytest.approx(math.sqrt(7) / 9)
    assert sc.assertion_pass.clustered_se == pytest.approx(2 / 27)
    assert ag.ks == () and sc.pass_at == {}
    # tokens: 150 + 200 (its total, not 400) + 15 + 30; money 4 × 0.01
    assert (ag.cost.tokens, ag.cost.tokens_per_trial) == (395, pytest.approx(395 / 4))
    assert (ag.cost.cost_usd, ag.cost.cost_per_trial) == (pytest.approx(0.04), pytest.approx(0.01))


def test_tokens_prefer_total_else_input_plus_output() -> None:
    t = det_traces()[0]
    assert tokens_total(t) is None
    assert tokens_total(t.model_copy(update={"tokens": {"input": 120, "output": 80, "total": 200}})) == 200
    assert tokens_total(t.model_copy(update={"tokens": {"input": 5, "output": 5, "cache_read": 100}})) == 10


def test_an_incomplete_run_says_so() -> None:
    r = mixed()
    assert r.completeness.state == "incomplete"
    assert (r.completeness.planned, r.completeness.traced) == (13, 12)
    assert r.completeness.text() == "incomplete: 12 of 13 trials (1 planned trial(s) have no trace: C.t2)"
    only_det = build_results([RunInput(det_traces(), plan("det", DET_PLAN))])
    assert only_det.completeness.text() == "complete: 8 of 8 trials"


def test_a_run_without_a_plan_is_not_called_complete() -> None:
    r = results_of(det_traces())
    assert r.completeness.state == "unknown" and "completeness unknown" in r.completeness.text()
    assert r.counts.missing == 0
    assert summary_json(r)["completeness"]["planned"] is None


def test_a_run_killed_before_any_trial_has_every_trial_missing() -> None:
    r = build_results([RunInput([], plan("agent", AGENT_PLAN, **AGENT))])
    assert r.completeness.text().startswith("incomplete: 0 of 5 trials")
    (ag,) = r.series
    assert ag.key == ("agent", "openai", "m1") and ag.counts.missing == 5 and ag.score is None


def test_a_malformed_plan_is_an_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "plan.json").write_text('{"run_id": "x"}', encoding="utf-8")
    with pytest.raises(ValueError, match="plan.json: not a run plan"):
        read_plan(tmp_path)
    assert read_plan(tmp_path / "nowhere") is None


def test_summary_json_counts_assertions_that_ran() -> None:
    data = summary_json(mixed(), {"run_id": "x"})
    by_id = {(t["run_id"], t["trial_id"]): t for t in data["trials"]}
    a2 = by_id[("det", "A.t2")]
    assert (a2["assertions_passed"], a2["assertions_counted"], a2["assertions_not_run"]) == (2, 3, 1)
    assert "case_pass_rate" not in data["summary"]  # no pooled rate
    assert data["summary"] == {
        "trials": 12,
        "passed": 8,
        "failed": 3,
        "not_run": 1,
        "missing": 1,
        "retried": 0,
        "completeness": "incomplete",
    }
    assert data["run_id"] == "x" and data["completeness"]["missing"] == ["C.t2"]


def test_compare_pairs_two_models_but_never_deterministic_with_agent() -> None:
    other = [t.model_copy(update={"model": "m2", "run_id": "agent2"}) for t in agent_traces()]
    two_models = compare_runs(agent_traces(), other)
    (s,) = two_models.series
    assert s.label == "agent openai (m1) (A) vs agent openai (m2) (B)" and s.paired.n == 3
    apart = compare_runs(det_traces(), agent_traces())
    assert not apart.comparable and [s.paired for s in apart.series] == [None, None]
    assert "share no kind of evidence" in apart.text()


# --------------------------------------------------------------------------- every view agrees


@pytest.fixture(scope="module")
def mixed_dirs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("mixed")
    dirs = []
    for name, traces, planned, who in (
        ("det", det_traces(), DET_PLAN, {}),
        ("agent", agent_traces(), AGENT_PLAN, AGENT),
    ):
        run = root / name
        for t in traces:
            write_trace(t, run / "trials")
        write_plan(run, plan(name, planned, **who))
        dirs.append(run)
    return dirs[0], dirs[1]


def test_console_json_junit_html_and_markdown_agree_on_a_mixed_run(mixed_dirs, tmp_path: Path) -> None:
    det, agent = mixed_dirs
    out = cli(
        "report",
        str(det),
        str(agent),
        "--out",
        str(tmp_path / "merged"),
        "--json",
        str(tmp_path / "s.json"),
        "--junit",
        str(tmp_path / "j.xml"),
        "--markdown",
        str(tmp_path / "s.md"),
    )
    assert out.returncode == 1, out.stdout + out.stderr  # a trial failed
    console = out.stdout
    data = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    junit = ET.parse(tmp_path / "j.xml").getroot()
    html = (tmp_path / "merged" / "report.html").read_text(encoding="utf-8")
    md = (tmp_path / "s.md").read_text(encoding="utf-8")

    # completeness: the same sentence everywhere
    sentence = "incomplete: 12 of 13 trials (1 planned trial(s) have no trace: C.t2)"
    assert sentence in console and data["completeness"]["text"] == sentence and sentence in html and sentence in md
    # counts per series
    expected = {"deterministic": (6, 1, 1, 0), "agent openai (m1)": (2, 2, 0, 1)}
    js = {s["label"]: s for s in data["series"]}
    suites = {s.get("name"): s for s in junit.iter("testsuite")}
    for label, (p, f, n, m) in expected.items():
        text = f"{p} passed, {f} failed, {n} not_run" + (f", {m} missing" if m else "")
        assert f"{label}: {text}" in console
        assert (js[label]["passed"], js[label]["failed"], js[label]["not_run"], js[label].get("missing", 0)) == (
            p,
            f,
            n,
            m,
        )
        suite = suites[f"webmcp-eval.{label}"]
        assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == (
            str(p + f + n + m),
            str(f),
            str(n + m),
        )
        card = html.split(f'class="card series" data-series="{label}"', 1)[1].split('<div class="card', 1)[0]
        assert f"{p} passed, {f} failed, {n} not_run trial(s)" in card
        assert f"| {label} | {text} |" in md
    assert {(s.get("name"), s.get("tests")) for s in junit.iter("testsuite")} == {
        ("webmcp-eval.deterministic", "8"),
        ("webmcp-eval.agent openai (m1)", "5"),
    }
    assert junit.get("tests") == "13" and junit.get("failures") == "3" and junit.get("skipped") == "2"
    # the rates, each series on its own
    for label, case, case_se, assertion in (
        ("deterministic", "88.9%", "14.8", "96.3%"),
        ("agent openai (m1)", "50.0%", "0.0", "55.6%"),
    ):
        assert f"{js[label]['case_pass_rate']['mean'] * 100:.1f}%" == case
        assert f"{js[label]['assertion_pass_rate']['mean'] * 100:.1f}%" == assertion
        assert f"{js[label]['case_pass_rate']['clustered_se'] * 100:.1f}" == case_se
        card = html.split(f'class="card series" data-series="{label}"', 1)[1].split('<div class="card', 1)[0]
        assert f">{case}</td>" in card and f">{assertion}</td>" in card and f">{case_se}</td>" in card
        rate = js[label]["case_pass_rate"]
        assert f"<td>{interval_text(rate['mean'], rate['clustered_se'])}</td>" in card
        assert f"| {case} ± {case_se} | {assertion} ± " in md
    assert (
        "case pass rate 88.9% ± 11.1 (clustered by behaviour ± 14.8) · per-assertion pass rate 96.3% ± 3.7" in console
    )
    assert "pass@3 1.00 pass^3 0.50" in console and js["deterministic"]["pass_hat"]["3"]["mean"] == 0.5
    assert (
        "case pass rate 50.0% ± 28.9 (clustered by behaviour ± 0.0) · per-assertion pass rate 55.6% ± 29.4" in console
    )
    # D in the case table: 100% deterministic, 0% agent; nowhere a pooled 50%
    d_rows = [line for line in console.splitlines() if re.match(r"│ D\s", line)]
    assert len(d_rows) == 2 and "100.0%" in d_rows[0] and "0.0%" in d_rows[1]
    d_json = [c["case_pass_rate"] for s in data["series"] for c in s["cases"] if c["case_id"] == "D"]
    assert d_json == [1.0, 0.0]
    # tokens: one rule (395 over 4 agent trials) in JSON and HTML
    assert js["agent openai (m1)"]["cost"]["tokens"] == 395
    assert ">395</td>" in html.split('data-series="agent openai (m1)"', 1)[1].split("</table>", 2)[1]
    # the missing trial is a skipped JUnit testcase
    missing = [tc for tc in suites["webmcp-eval.agent openai (m1)"].iter("testcase") if tc.get("name") == "C.t2"]
    assert len(missing) == 1 and "no trace" in missing[0].find("skipped").get("message")


def test_report_of_an_incomplete_run_exits_non_zero(mixed_dirs, tmp_path: Path) -> None:
    _, agent = mixed_dirs
    only_passes = tmp_path / "agent"
    (only_passes / "trials").mkdir(parents=True)
    (only_passes / "plan.json").write_bytes((agent / "plan.json").read_bytes())
    for name in ("A.t2.json", "C.t1.json"):
        (only_passes / "trials" / name).write_bytes((agent / "trials" / name).read_bytes())
    out = cli("report", str(only_passes))
    assert out.returncode == 3, out.stdout + out.stderr
    assert "incomplete: 2 of 5 trials" in out.stdout


def test_compare_refuses_to_pair_deterministic_with_agent(mixed_dirs) -> None:
    det, agent = mixed_dirs
    out = cli("compare", str(det), str(agent))
    assert out.returncode == 2
    assert "share no kind of evidence" in out.stdout and "never paired" in out.stderr
    assert "Traceback" not in out.stderr


# --------------------------------------------------------------------------- reporters


def test_reporters_hear_begin_every_trial_and_end_and_one_that_cannot_write_stops_none(tmp_path: Path) -> None:
    from rich.console import Console

    from webmcp_eval.report.reporters import Reporters, ReportTargets, build_reporters

    class Recorder:  # a new view is one class with these three methods
        def __init__(self) -> None:
            self.events: list[str] = []

        def begin(self, plan: RunPlan | None) -> None:
            self.events.append(f"begin {len(plan['trials'])}")

        def trial_done(self, trace: Trace) -> None:
            self.events.append(trace.trial_id)

        def end(self, results) -> None:
            self.events.append(f"end {results.counts.trials}")

    console = Console(record=True, width=200)
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    built = build_reporters(
        ReportTargets(
            console=console,
            progress=True,
            files={"markdown": [tmp_path / "a-file" / "s.md", tmp_path / "s.md"], "json": [tmp_path / "s.json"]},
        )
    )
    recorder = Recorder()
    reporters = Reporters([*built.reporters, recorder])
    traces = agent_traces()
    reporters.begin(plan("agent", AGENT_PLAN, **AGENT))
    for t in traces:
        reporters.trial_done(t)
    problems = reporters.end(build_results([RunInput(traces, plan("agent", AGENT_PLAN, **AGENT))]))
    assert recorder.events == ["begin 5", "A.t1", "A.t2", "C.t1", "D.t1", "end 4"]
    assert len(problems) == 1 and "a-file" in problems[0]  # the others were still written
    assert (tmp_path / "s.json").is_file()
    out = console.export_text()
    assert "[  1/5] failed  A.t1" in out and "[  4/5] failed  D.t1" in out
    md = (tmp_path / "s.md").read_text(encoding="utf-8")
    assert md.startswith("## ❌ webmcp-eval: 2 passed, 2 failed, 0 not_run, 1 missing\n")
    assert "_incomplete: 4 of 5 trials (1 planned trial(s) have no trace: C.t2)_" in md
    assert "| agent openai (m1) | 2 passed, 2 failed, 0 not_run, 1 missing | 50.0% ± 0.0 | 55.6% ± 7.4 | 3 |" in md
    assert "- **D.t1** failed (cases/D.yaml): a0: why 0" in md
