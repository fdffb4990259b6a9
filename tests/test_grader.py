"""The model grader and people's labels: a scripted grader on loopback judges the rubric criteria of
NO-02, AMB-01 and RECOVERY-01 from the whole trace, its cassette replays offline, and calibration
against labels decides whether it may gate.

One real run (real Chromium, site and proxy) records; everything after it grades the recorded
traces again without a browser.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
from pathlib import Path

import pytest

from tests.eval_support import in_thread, play
from tests.fake_grader import lenient_grader, prose_grader, scripted_grader
from tests.fake_llm import FAKE_KEY, FakeLLM, closed_port_url
from webmcp_eval.judge import checks
from webmcp_eval.judge.grader import Gate, ModelGrader, grader_record, make_grader, parse_verdicts, regrade
from webmcp_eval.judge.labels import (
    Agreement,
    LabelsFile,
    calibrate,
    calibration_text,
    gate_for,
    label_trials,
    trials_to_label,
)
from webmcp_eval.llm.config import ModelConfig
from webmcp_eval.play.run.settings import RunState
from webmcp_eval.suite.case import Case
from webmcp_eval.trace import Trace

pytestmark = pytest.mark.skipif(not importlib.util.find_spec("openai"), reason="the openai SDK is not installed")
KEY_ENV = "WEBMCP_EVAL_TEST_GRADER_KEY"
RUBRIC_CASES = ("NO-02", "AMB-01", "RECOVERY-01")
PRICES = {"scripted-": {"input": 1.0, "output": 4.0}}


def _grader(api_base: str, model: str, mode: str, cassettes: Path, gates: bool = True) -> ModelGrader:
    os.environ[KEY_ENV] = FAKE_KEY
    grader = make_grader(
        ModelConfig("openai", model, api_base=api_base, api_key_env=KEY_ENV, cassette=mode, cassette_dir=cassettes)
    )
    grader.prices.prices.update(PRICES)
    grader.gate = Gate(gates, "test: calibrated" if gates else "test: not calibrated")
    return grader


@pytest.fixture(scope="module")
def llm():
    with FakeLLM(
        {"scripted-grader": scripted_grader, "lenient-grader": lenient_grader, "prose-grader": prose_grader}
    ) as server:
        yield server


@pytest.fixture(scope="module")
def cassettes(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("grader-cassettes")


@pytest.fixture(scope="module")
def recorded(llm, cassettes, tmp_path_factory) -> list[Trace]:
    grader = _grader(llm.openai_base, "scripted-grader", "record", cassettes)
    return play(tmp_path_factory.mktemp("graded"), RUBRIC_CASES, state=RunState(grader=grader))


def _rubric(trace: Trace) -> dict[str, tuple[str, bool]]:
    return {a.id: (a.status, a.gates) for a in trace.assertions if a.grader == "model"}


@pytest.mark.browser
def test_the_grader_judges_every_rubric_criterion_as_model_evidence(recorded):
    for trace in recorded:
        rubric = _rubric(trace)
        assert len(rubric) == 2, trace.assertions
        assert all(status == "passed" and gates for status, gates in rubric.values()), rubric
        assert all(a.kind == "rubric" for a in trace.assertions if a.grader == "model")
        assert all(a.grader == "code" for a in trace.assertions if a.kind != "rubric")  # the checks stay code
        assert trace.verdict == "passed", trace.verdict_reason
        log = trace.grader
        assert log["grader"] == "openai:scripted-grader:v1" and log["gates"]
        assert log["tokens"]["input"] > 0 and log["cost_usd"] > 0
        assert set(log["verdicts"]) == {k.removeprefix("answer.rubric.") for k in rubric}
        assert all(v["reasoning"] for v in log["verdicts"].values())


@pytest.mark.browser
def test_the_grader_sees_the_execution_record_not_only_the_answer(recorded, llm):
    bodies = [r["body"] for r in llm.requests if r["model"] == "scripted-grader"]
    recovery = next(b for b in bodies if '"RECOVERY-01"' in b["messages"][1]["content"])
    text = recovery["messages"][1]["content"]
    for part in ('"calls"', "TEMPORARILY_UNAVAILABLE", '"catalog"', '"aria_snapshot"', '"final_answer"'):
        assert part in text
    assert FAKE_KEY not in text


@pytest.mark.browser
def test_the_cassette_replays_the_verdicts_offline(recorded, cassettes):
    offline = _grader(closed_port_url() + "/v1", "scripted-grader", "replay", cassettes)
    for trace in recorded:
        case = Case.model_validate(trace.case)
        assertions, log = in_thread(asyncio.run, offline.grade_trial(case, trace))
        assert [(a.id, a.status, a.why) for a in assertions] == [
            (a.id, a.status, a.why) for a in trace.assertions if a.grader == "model"
        ]
        assert log["verdicts"] == trace.grader["verdicts"]


def _bad_answer(trace: Trace, answer: str) -> tuple[Case, Trace]:
    return Case.model_validate(trace.case), trace.model_copy(update={"ai_result": answer})


@pytest.mark.browser
def test_meaning_not_wording_a_keyword_pass_is_a_rubric_fail_and_gates_only_when_calibrated(recorded, llm, cassettes):
    no02 = next(t for t in recorded if t.case_id == "NO-02")
    case, trace = _bad_answer(no02, "我無法確定，但這個系列應該有 3 個部分。")  # has 無法: the keyword list passes
    code = checks.evaluate(case, trace)
    assert all(a.status == "passed" for a in code if a.kind == "answer")
    for gates, verdict in ((True, "failed"), (False, "passed")):
        grader = _grader(llm.openai_base, "scripted-grader", "off", cassettes, gates=gates)
        rubric, _ = in_thread(asyncio.run, grader.grade_trial(case, trace))
        assert {a.id: a.status for a in rubric}["answer.rubric.says_cannot_know"] == "failed"
        assert checks.verdict(code + rubric)[0] == verdict
        assert all(a.gates is gates for a in rubric)


@pytest.mark.browser
def test_a_grader_that_cannot_answer_is_not_run_never_passed(recorded, llm, cassettes):
    case, trace = _bad_answer(recorded[0], "另一個回答")
    miss = _grader(closed_port_url() + "/v1", "scripted-grader", "replay", cassettes)  # not in the cassette
    down = _grader(closed_port_url() + "/v1", "scripted-grader", "off", cassettes)
    prose = _grader(llm.openai_base, "prose-grader", "off", cassettes)
    for grader, why in ((miss, "not in the cassette"), (down, "could not answer"), (prose, "no JSON object")):
        rubric, log = in_thread(asyncio.run, grader.grade_trial(case, trace))
        assert rubric and all(a.status == "not_run" for a in rubric), rubric
        assert why in rubric[0].why and why in log["error"]
        assert FAKE_KEY not in str(log)


def test_parse_verdicts_takes_only_pass_or_fail_for_known_criteria():
    text = '```json\n{"criteria": [{"id": "a", "verdict": "PASS", "reasoning": "ok"}, {"id": "b", "verdict": "maybe"},'
    text += ' {"id": "zz", "verdict": "pass"}]}\n```'
    verdicts, problem = parse_verdicts(text, ["a", "b"])
    assert problem is None and verdicts == {"a": {"verdict": "pass", "reasoning": "ok"}}
    assert parse_verdicts("{not json}", ["a"])[1].startswith("the grader's answer is not valid JSON")


# ---- people's labels and calibration -------------------------------------------------------------


def test_cohens_kappa_and_the_confusion_matrix():
    a = Agreement()
    for person, model, n in (("pass", "pass", 20), ("pass", "fail", 5), ("fail", "pass", 10), ("fail", "fail", 15)):
        for _ in range(n):
            a.add(person, model)
    # p_o = 0.7; p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5; kappa = (0.7 - 0.5) / 0.5
    assert a.matrix() == [[20, 5], [10, 15]] and a.kappa == pytest.approx(0.4)
    same = Agreement()
    for _ in range(4):
        same.add("pass", "pass")
    assert same.kappa is None  # one label only: chance agreement is total, kappa is undefined


@pytest.mark.browser
def test_label_then_calibrate_a_grader_that_agrees_and_one_that_does_not(recorded, llm, cassettes, tmp_path):
    # People label the recorded trials and two made-bad variants of each (answers a person fails).
    bad = {"NO-02": "這個系列有 3 個部分。", "AMB-01": "已幫你報名第一個活動。", "RECOVERY-01": "還有 12 個名額。"}
    traces = list(recorded)
    for t in recorded:
        for n in (1, 2):
            traces.append(t.model_copy(update={"ai_result": bad[t.case_id], "trial_id": f"{t.trial_id}-bad{n}"}))
    path = tmp_path / "labels.json"
    labels = LabelsFile(min_labels=6)
    # A person's judgement: a bad answer fails both criteria, except that "還有 12 個名額" leaks no internals.
    answers = iter(
        ["p", "p"] if "-bad" not in t.trial_id else ["f", "p"] if t.case_id == "RECOVERY-01" else ["f", "f"]
        for t in traces
    )
    answers = iter([a for pair in answers for a in pair])
    shown: list[str] = []
    failing = traces[-1].model_copy(update={"verdict": "failed"})
    chosen = trials_to_label([*traces[:-1], failing], sample=2)
    assert chosen[0] is failing and len(chosen) == 3  # the failing trial first, then a sample of two
    assert label_trials(traces, labels, path, lambda _q: next(answers), shown.append, "tester") == len(traces)
    assert any("answer: 還有 12 個名額。" in s for s in shown)
    saved = LabelsFile.load(path)
    assert len(saved.trials) == 9 and saved.trials[0].labels and saved.trials[0].record["rubric"]
    assert saved.trials[0].graders  # the scripted grader's verdicts from the run came along

    good = _grader(llm.openai_base, "scripted-grader", "off", cassettes)
    lenient = _grader(llm.openai_base, "lenient-grader", "off", cassettes)
    for grader in (good, lenient):
        in_thread(asyncio.run, regrade(grader, saved))
    saved.save(path)
    agree, disagree = calibrate(saved, good.id), calibrate(saved, lenient.id)
    assert agree.overall.n == 18 and agree.overall.kappa == pytest.approx(1.0) and agree.gates
    assert disagree.overall.matrix() == [[8, 0], [10, 0]] and disagree.overall.kappa == pytest.approx(0.0)
    assert not disagree.gates and "below the suite's 0.6" in disagree.why
    assert gate_for(path, good.id)[0] and not gate_for(path, lenient.id)[0]
    assert "NO-02 says_cannot_know" in calibration_text(agree)
    assert "may NOT gate" in calibration_text(disagree)


def test_the_committed_labels_give_a_kappa():
    labels = LabelsFile.load(Path(__file__).resolve().parent.parent / "cases" / "labels.json")
    graders = {g for t in labels.trials for g in t.graders}
    assert labels.trials and graders
    for g in graders:
        assert calibrate(labels, g).overall.kappa is not None


def test_a_record_of_a_trial_without_rubric():
    case = Case(id="NO-09", behaviour="no_tool", title="t", start_route="/events", steps=[{"user": "hi"}])
    trace = Trace(run_id="r", trial_id="NO-09.t1", case_id="NO-09", behaviour="no_tool", start_route="/events")
    record = grader_record(case, trace)
    assert record["rubric"] == [] and record["final_answer"] == "" and record["case"]["user_messages"] == ["hi"]


@pytest.mark.browser
def test_the_label_command_walks_the_trials_in_the_terminal(recorded, tmp_path):
    import subprocess
    import sys

    from webmcp_eval.trace import write_trace

    for trace in recorded:
        write_trace(trace, tmp_path / "run" / "trials")
    labels = tmp_path / "labels.json"
    root = Path(__file__).resolve().parent.parent
    cmd = [sys.executable, "-m", "webmcp_eval.cli", "label", str(tmp_path / "run"), "--labels", str(labels)]
    # p, then a typo (asked again), f; then the next trial: skip, pass; then quit.
    out = subprocess.run(cmd, cwd=root, input="p\nx\nf\ns\np\nq\n", capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "please answer p, f, s or q" in out.stdout and "labels saved in" in out.stdout
    first, second = LabelsFile.load(labels).trials
    assert list(first.labels.values()) == ["pass", "fail"] and list(second.labels.values()) == ["pass"]
    assert first.labeller == "" and first.record["final_answer"] and first.graders
    again = subprocess.run(cmd, cwd=root, input="q\n", capture_output=True, text=True, timeout=60)
    assert f"== {first.trial} " not in again.stdout and f"== {second.trial} " not in again.stdout  # labelled: skipped


def test_the_results_layer_keeps_model_grader_verdicts_out_of_the_code_checks_rate():
    from webmcp_eval.results.run_results import TrialFigures
    from webmcp_eval.trace import Assertion

    trace = Trace(run_id="r", trial_id="NO-02.t1", case_id="NO-02", behaviour="no_tool", start_route="/events")
    trace.assertions = [
        Assertion(id="calls.max", kind="calls", description="d", status="passed"),
        Assertion(id="answer.rubric.x", kind="rubric", description="d", status="failed", grader="model"),
    ]
    figures = TrialFigures.of(trace)
    assert (figures.assertions_passed, figures.assertions_counted, figures.assertions_not_run) == (1, 1, 0)


def test_the_html_report_shows_what_a_model_grader_spent_in_its_own_column(tmp_path):
    from webmcp_eval.report.html import render_html
    from webmcp_eval.results.run_results import results_of
    from webmcp_eval.trace import Assertion

    trace = Trace(run_id="r", trial_id="NO-02.t1", case_id="NO-02", behaviour="no_tool", start_route="/events")
    trace.verdict = "passed"
    trace.assertions = [
        Assertion(id="calls.max", kind="calls", description="d", status="passed"),
        Assertion(id="answer.rubric.x", kind="rubric", description="d", status="passed", grader="model"),
    ]
    trace.grader = {"model": "judge-1", "tokens": {"input": 900, "output": 334}, "cost_usd": 0.0123}
    html = render_html(results_of([trace]), report_dir=tmp_path)
    head = html[html.index('<table class="cases">') : html.index("</thead>")]
    assert '<th colspan="4" class="series-head">deterministic</th>' in head  # the code checks spend nothing
    assert '<th colspan="5" class="series-head">model-grader model on deterministic</th>' in head
    assert head.count('<th class="num">tokens · $ / trial</th>') == 2  # the grader's and the (empty) agent's
    assert '<td class="num">1234 · $0.0123</td>' in html.replace(",", "")
    assert "none: no model" in html  # the code checks' cost table
