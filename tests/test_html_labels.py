"""Labelling from the HTML report, offline: a person marks each rubric criterion of a trial in the
report opened from file:// (no server), the report gives the labels as a file, `label RUN_DIR --import`
merges it into the suite's labels file, and `calibrate` reads it. Round trip in a real browser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_support import cli

from webmcp_eval.report.html import write_html
from webmcp_eval.suite.loader import load_cases
from webmcp_eval.trace import Assertion, Trace, write_trace

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parent.parent
GRADER = "openai:scripted-grader:v1"
CRITERIA = ("says_cannot_know", "names_the_limit")


def no02(index: int, grader: tuple[str, str], run: str = "html-labels", verdict: str = "passed") -> Trace:
    case = load_cases([ROOT / "cases" / "NO-02.yaml"])[0][0].case
    rubric = [
        Assertion(
            id=f"answer.rubric.{cid}",
            kind="rubric",
            description=cid,
            status=mark,  # type: ignore[arg-type]
            evidence={"grader": GRADER},
            grader="model",
            gates=False,
        )
        for cid, mark in zip(CRITERIA, grader, strict=True)
    ]
    return Trace(
        run_id=run,
        trial_id=f"NO-02.t{index + 1}",
        trial_index=index,
        case_id="NO-02",
        case_file="cases/NO-02.yaml",
        case=case.model_dump(mode="json"),
        behaviour=case.behaviour,
        title=case.title,
        start_route=case.start_route,
        evidence_kind="agent",
        agent="scripted",
        model="m",
        ai_result="I cannot know how many parts the series has from this site.",
        verdict=verdict,
        not_run_kind="infrastructure" if verdict == "not_run" else None,
        assertions=[Assertion(id="calls.max", kind="calls", description="no call", status="passed"), *rubric],
    )


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("labels") / "html-labels"
    traces = [
        no02(0, ("passed", "passed")),
        no02(1, ("passed", "failed")),
        no02(2, ("failed", "failed")),
        no02(3, ("not_run", "not_run"), verdict="not_run"),  # did not run: nothing to label
    ]
    for t in traces:
        write_trace(t, run / "trials")
    write_html(traces, run / "report.html")
    return run


def test_label_in_the_report_import_and_calibrate(run_dir: Path, page, tmp_path: Path) -> None:
    page.goto((run_dir / "report.html").as_uri())
    forms = page.locator("fieldset.label-form")
    assert forms.count() == 3  # the not_run trial has none
    assert json.loads(page.locator("#labels-json").input_value())["trials"] == []
    # the person agrees with the grader on t1 and t3 and on t2's first criterion; not on t2's second
    marks = {"NO-02.t1": ("pass", "pass"), "NO-02.t2": ("pass", "pass"), "NO-02.t3": ("fail", "fail")}
    page.locator("button[data-toggle=open]").click()
    page.fill("#labeller", "ana")
    for trial, values in marks.items():
        form = page.locator(f'fieldset.label-form[data-trial="{trial}"]')
        for cid, value in zip(CRITERIA, values, strict=True):
            form.locator(f'input[data-criterion="{cid}"][value="{value}"]').check()
    assert page.locator("#labels-count").inner_text() == "3"
    with page.expect_download() as download:
        page.click("#labels-download")
    exported = tmp_path / "labels-import.json"
    download.value.save_as(exported)
    data = json.loads(exported.read_text(encoding="utf-8"))
    assert data["format"] == "webmcp-eval labels import" and len(data["trials"]) == 3
    assert data["trials"][0]["labeller"] == "ana" and data["trials"][0]["run_id"] == "html-labels"
    assert json.loads(page.locator("#labels-json").input_value())["trials"] == data["trials"]  # copyable text too

    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"min_kappa": 0.3, "min_labels": 4}), encoding="utf-8")
    out = cli("label", str(run_dir), "--labels", str(labels), "--import", str(exported))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 labelled trial(s) merged" in out.stdout
    saved = json.loads(labels.read_text(encoding="utf-8"))
    t2 = next(t for t in saved["trials"] if t["trial"] == "NO-02.t2")
    assert t2["labels"] == {"says_cannot_know": "pass", "names_the_limit": "pass"} and t2["labeller"] == "ana"
    assert t2["graders"] == {GRADER: {"says_cannot_know": "pass", "names_the_limit": "fail"}}
    assert t2["record"]["final_answer"] and t2["record"]["rubric"]  # what the grader saw, for re-grading
    # 6 labels, 5 agreements: both_pass 3, person pass / model fail 1, both fail 2 -> kappa 2/3
    cal = cli("calibrate", "--labels", str(labels))
    assert cal.returncode == 0, cal.stdout + cal.stderr
    assert f"grader {GRADER}: Cohen's kappa 0.67 over 6 labelled criteria" in cal.stdout
    # importing the same file again replaces those marks, never duplicates a trial
    assert cli("label", str(run_dir), "--labels", str(labels), "--import", str(exported)).returncode == 0
    assert len(json.loads(labels.read_text(encoding="utf-8"))["trials"]) == 3


def test_an_import_that_does_not_fit_the_trials_merges_nothing(run_dir: Path, tmp_path: Path) -> None:
    labels = tmp_path / "labels.json"
    bad = tmp_path / "bad.json"
    for trials, why in (
        ([{"run_id": "other", "trial": "NO-02.t1", "case": "NO-02", "labels": {}}], "no such trial"),
        ([{"run_id": "html-labels", "trial": "NO-02.t1", "case": "AMB-01", "labels": {}}], "of case NO-02"),
        (
            [{"run_id": "html-labels", "trial": "NO-02.t1", "case": "NO-02", "labels": {"made_up": "pass"}}],
            "not criteria of NO-02's rubric: made_up",
        ),
    ):
        bad.write_text(json.dumps({"format": "webmcp-eval labels import", "trials": trials}), encoding="utf-8")
        out = cli("label", str(run_dir), "--labels", str(labels), "--import", str(bad))
        assert out.returncode == 2 and why in out.stderr and "nothing merged" in out.stderr, out.stderr
        assert "Traceback" not in out.stderr and not labels.exists()
    bad.write_text('{"format": "something else"}', encoding="utf-8")
    out = cli("label", str(run_dir), "--labels", str(labels), "--import", str(bad))
    assert out.returncode == 2 and "not labels from the HTML report" in out.stderr and "Traceback" not in out.stderr
