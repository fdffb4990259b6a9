"""Grader evidence as series of its own: code-checked (deterministic), agent, model-grader and
human-label evidence are never pooled, and a trial's verdict within a series is judged on that
series' assertions only. Pinned on hand-built traces of a mixed run, through the results layer
and every view (console, summary.json, JUnit, HTML, Markdown, compare). No browser."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from eval_support import cli

from webmcp_eval.results.compare import compare_runs
from webmcp_eval.results.run_results import results_of
from webmcp_eval.trace import Assertion, Trace, write_trace

ROOT = Path(__file__).resolve().parent.parent
GRADER = "openai:grader-m:v1"
AGENT = {"evidence_kind": "agent", "agent": "scripted", "model": "m1"}
AGENT_LABEL = "agent scripted (m1)"
GRADER_LABEL = f"model-grader {GRADER} on {AGENT_LABEL}"
HUMAN_LABEL = f"human-label people on {AGENT_LABEL}"
RUBRIC = {"expect": {"answer": {"rubric": [{"id": "c1", "criterion": "says X"}, {"id": "c2", "criterion": "asks Y"}]}}}


def code(*statuses: str) -> list[Assertion]:
    return [Assertion(id=f"a{i}", kind="calls", description=f"a{i}", status=s) for i, s in enumerate(statuses)]


def model(*statuses: str, gates: bool = True) -> list[Assertion]:
    return [
        Assertion(
            id=f"answer.rubric.c{i + 1}",
            kind="rubric",
            description=f"c{i + 1}",
            status=s,
            why=f"grader says {s}",
            evidence={"grader": GRADER},
            grader="model",
            gates=gates,
        )
        for i, s in enumerate(statuses)
    ]


def trial(case: str, index: int, verdict: str, assertions: list[Assertion], run: str = "r1", **kw) -> Trace:
    graded = any(a.grader == "model" for a in assertions)
    return Trace(
        run_id=run,
        trial_id=f"{case}.t{index + 1}",
        trial_index=index,
        case_id=case,
        case_file=f"cases/{case}.yaml",
        behaviour="b_" + case,
        title=f"case {case}",
        start_route="/",
        case=RUBRIC if graded else {},
        verdict=verdict,
        verdict_reason="browser crashed" if verdict == "not_run" else verdict,
        not_run_kind="infrastructure" if verdict == "not_run" else None,
        duration_ms=1000.0,
        assertions=assertions,
        grader={"grader": GRADER, "latency_ms": 50.0, "tokens": {"input": 100, "output": 20}, "cost_usd": 0.001}
        if graded
        else {},
        **kw,
    )


def mixed_run(run: str = "r1", flip_grader: bool = False) -> list[Trace]:
    """Reference trials (code only) and agent trials a model grader judged; two trials not_run.

    The trace's own verdict pools the gating grader with the code checks (N.t1 and N.t2 both fail);
    the series must not."""
    fail, ok = ("passed", "failed"), ("passed", "passed")
    g1, g2 = (ok, fail) if flip_grader else (fail, ok)
    return [
        trial("A", 0, "passed", code("passed", "passed"), run),
        trial("A", 1, "not_run", [], run),
        trial("N", 0, "failed", code("passed", "passed") + model(*g1), run, **AGENT),  # grader fails it
        trial("N", 1, "failed", code("passed", "failed") + model(*g2), run, **AGENT),  # code fails it
        trial("N", 2, "not_run", code("not_run") + model("not_run", "not_run"), run, **AGENT),  # crashed
        trial("M", 0, "passed", code("passed") + model("passed", "passed"), run, **AGENT),
    ]


LABELS = {("r1", "N.t1"): {"c1": "pass", "c2": "pass"}, ("r1", "N.t2"): {"c1": "fail"}}


def test_each_kind_of_evidence_is_a_series_of_its_own() -> None:
    results = results_of(mixed_run(), labels=LABELS)
    assert [s.label for s in results.series] == ["deterministic", AGENT_LABEL, GRADER_LABEL, HUMAN_LABEL]
    det, agent, grader, human = results.series
    # code-checked, reference agent: A.t1 passed, A.t2 not_run (no rate)
    assert (det.counts.passed, det.counts.failed, det.counts.not_run) == (1, 0, 1)
    assert det.score.case_pass.mean == 1.0 and (det.assertions_passed, det.assertions_counted) == (2, 2)
    # code-checked agent: N.t1 passed (the grader's fail is not a code check's), N.t2 failed, N.t3 not_run
    assert (agent.counts.passed, agent.counts.failed, agent.counts.not_run) == (2, 1, 1)
    assert agent.case("N").case_pass_rate == 0.5 and agent.case("M").case_pass_rate == 1.0
    assert agent.score.case_pass.mean == 0.75
    assert (agent.assertions_passed, agent.assertions_counted) == (4, 5)  # 2 + 1 of N, 1 of M; not_run left out
    assert agent.score.assertion_pass.mean == pytest.approx((3 / 4 + 1) / 2)
    # the model grader: N.t1 failed, N.t2 passed (its code failure is not the grader's), N.t3 not_run
    assert (grader.counts.passed, grader.counts.failed, grader.counts.not_run) == (2, 1, 1)
    assert [f.verdict for f in grader.case("N").trials] == ["failed", "passed", "not_run"]
    assert grader.case("N").case_pass_rate == 0.5 and grader.score.case_pass.mean == 0.75
    assert (grader.assertions_passed, grader.assertions_counted) == (5, 6)
    assert grader.cost.tokens == 480 and grader.cost.cost_usd == pytest.approx(0.004) and grader.cost.tool_calls == 0
    # people's labels: N.t1 passed, N.t2 failed; unlabelled trials are not in the series
    assert (human.counts.passed, human.counts.failed, human.counts.not_run) == (1, 1, 0)
    assert human.case("M") is None and human.score.case_pass.mean == 0.5
    # the counts over everything stay the traces' own verdicts (exit code): never a rate
    assert (results.counts.passed, results.counts.failed, results.counts.not_run) == (2, 2, 2)


def test_a_grader_failure_leaves_the_code_series_alone_and_the_other_way_round() -> None:
    def figures(assertions: list[Assertion], verdict: str) -> tuple:
        r = results_of([trial("N", 0, verdict, assertions, **AGENT)])
        agent, grader = r.get(("agent", "scripted", "m1")), r.series[1]
        return (
            (agent.counts.passed, agent.counts.failed, agent.score.case_pass.mean, agent.assertions_passed),
            (grader.counts.passed, grader.counts.failed, grader.score.case_pass.mean, grader.assertions_passed),
        )

    all_pass = figures(code("passed", "passed") + model("passed", "passed"), "passed")
    grader_fails = figures(code("passed", "passed") + model("passed", "failed"), "failed")
    code_fails = figures(code("passed", "failed") + model("passed", "passed"), "failed")
    assert grader_fails[0] == all_pass[0] == (1, 0, 1.0, 2)  # the code series: as the code checks made it
    assert grader_fails[1] == (0, 1, 0.0, 1)  # the grader series: failed
    assert code_fails[1] == all_pass[1] == (1, 0, 1.0, 2)  # the grader series: as the grader judged
    assert code_fails[0] == (0, 1, 0.0, 1)
    # an advisory grader (not calibrated) is still its own series, and still not the code's
    advisory = figures(code("passed", "passed") + model("failed", "failed", gates=False), "passed")
    assert advisory == ((1, 0, 1.0, 2), (0, 1, 0.0, 0))


def test_compare_pairs_grader_series_with_grader_series_only() -> None:
    result = compare_runs(results_of(mixed_run("r1")), results_of(mixed_run("r2", flip_grader=True)))
    by = {s.key[0]: s for s in result.series}
    assert set(by) == {"deterministic", "agent", "model-grader"}
    assert by["agent"].paired.mean == 0.0  # the code checks saw the same trials
    # the grader flipped N: t1 failed → passed, t2 passed → failed; N stays 0.5 but the key pairs its own
    assert by["model-grader"].key[0] == "model-grader" and by["model-grader"].paired.n == 2


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("evidence")
    run = root / "r1"
    for t in mixed_run():
        write_trace(t, run / "trials")
    labels = {
        "trials": [
            {"case": "N", "trial": trial_id, "run_id": run_id, "record": {}, "labels": marks}
            for (run_id, trial_id), marks in LABELS.items()
        ]
    }
    (root / "labels.json").write_text(json.dumps(labels), encoding="utf-8")
    return run, root / "labels.json"


def test_every_view_shows_the_four_series_apart(run_dir, tmp_path: Path) -> None:
    run, labels = run_dir
    out = cli(
        "report",
        str(run),
        "--labels",
        str(labels),
        "--json",
        str(tmp_path / "s.json"),
        "--junit",
        str(tmp_path / "j.xml"),
        "--markdown",
        str(tmp_path / "s.md"),
        "--html",
        str(tmp_path / "r.html"),
    )
    assert out.returncode == 1, out.stdout + out.stderr  # the traces' own verdicts: two failed
    data = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    junit = ET.parse(tmp_path / "j.xml").getroot()
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    md = (tmp_path / "s.md").read_text(encoding="utf-8")
    js = {s["label"]: s for s in data["series"]}
    suites = {s.get("name"): s for s in junit.iter("testsuite")}
    expected = {
        "deterministic": ("deterministic", 1, 0, 1, 1.0),
        AGENT_LABEL: ("agent", 2, 1, 1, 0.75),
        GRADER_LABEL: ("model-grader", 2, 1, 1, 0.75),
        HUMAN_LABEL: ("human-label", 1, 1, 0, 0.5),
    }
    assert list(js) == list(expected)
    for label, (kind, p, f, n, rate) in expected.items():
        text = f"{p} passed, {f} failed, {n} not_run"
        assert f"{label}: {text}" in out.stdout
        assert js[label]["evidence_kind"] == kind
        assert (js[label]["passed"], js[label]["failed"], js[label]["not_run"]) == (p, f, n)
        assert js[label]["case_pass_rate"]["mean"] == rate
        suite = suites[f"webmcp-eval.{label}"]
        assert (suite.get("failures"), suite.get("skipped")) == (str(f), str(n))
        assert f'class="card series" data-series="{label}"' in html
        assert f"| {label} | {text} |" in md

    # JUnit: N.t1 is a pass for the code checks and a failure for the grader, N.t2 the other way round
    def outcome(label: str, name: str) -> str:
        tc = next(tc for tc in suites[f"webmcp-eval.{label}"].iter("testcase") if tc.get("name") == name)
        return "failed" if tc.find("failure") is not None else "not_run" if tc.find("skipped") is not None else "passed"

    assert [outcome(AGENT_LABEL, t) for t in ("N.t1", "N.t2", "N.t3")] == ["passed", "failed", "not_run"]
    assert [outcome(GRADER_LABEL, t) for t in ("N.t1", "N.t2", "N.t3")] == ["failed", "passed", "not_run"]
    failure = next(tc for tc in suites[f"webmcp-eval.{GRADER_LABEL}"].iter("testcase") if tc.get("name") == "N.t1")
    assert "answer.rubric.c2" in failure.find("failure").text and "a0" not in failure.find("failure").text
    n_cases = {s["label"]: c for s in data["series"] for c in s["cases"] if c["case_id"] == "N"}
    assert [t["verdict"] for t in n_cases[GRADER_LABEL]["trials"]] == ["failed", "passed", "not_run"]
    assert [t["verdict"] for t in n_cases[AGENT_LABEL]["trials"]] == ["passed", "failed", "not_run"]
    # without labels, no human-label series
    bare = cli("report", str(run), "--labels", str(tmp_path / "none.json"))
    assert bare.returncode == 2 and "no such file" in bare.stderr and "Traceback" not in bare.stderr


def test_compare_shows_the_grader_series_apart(run_dir, tmp_path: Path) -> None:
    run, labels = run_dir
    other = tmp_path / "r2"
    for t in mixed_run("r2", flip_grader=True):
        write_trace(t, other / "trials")
    out = cli("compare", str(run), str(other), "--labels", str(labels))
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"[{AGENT_LABEL}]" in out.stdout and f"[{GRADER_LABEL}]" in out.stdout
    assert f"[{HUMAN_LABEL}]" in out.stdout  # only run A has labels: nothing paired, said so


def test_a_trial_that_could_not_run_keeps_its_criteria_as_not_run_in_the_grader_series(tmp_path: Path) -> None:
    from webmcp_eval.judge.grader import make_grader
    from webmcp_eval.llm.config import ModelConfig
    from webmcp_eval.suite.loader import load_cases

    grader = make_grader(ModelConfig("openai", "g", cassette="replay", cassette_dir=tmp_path))
    case = load_cases([ROOT / "cases" / "NO-02.yaml"])[0][0].case
    rubric, log = grader.unjudged(case, "the site answered 502")
    assert rubric and {a.status for a in rubric} == {"not_run"} and {a.grader for a in rubric} == {"model"}
    assert "did not run (the site answered 502)" in rubric[0].why and log["grader"] == grader.id
    crashed = trial("N", 0, "not_run", rubric, **AGENT)
    grader_series = results_of([crashed]).series[1]
    assert grader_series.kind == "model-grader" and grader_series.counts.not_run == 1 and grader_series.score is None
