"""confirmation.actionable proven by a press: where a case plays no press, the runner presses the final control in
a fork of the trial (webmcp_eval/play/run/press.py) and the check passes only when the press made a write the case
names.

On a sign-up site written for these tests (tests/press_server.py), in four builds whose Confirm button reads the
same: the working one passes; a submit listener that never fires, a handler bound to the other form and a form
whose action goes nowhere each fail, though reading the button finds nothing wrong; the trial's own world is
never written. A site without worlds is read as before, with an advisory assertion and a warning. On the demo site,
the seed case CONF-01 kills ``confirm_does_nothing`` and ``submit_listener_dead``, which it passed as judged before.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from eval_support import SEED_CONTEXT, cli, in_thread, run_on_demo, suite_cases
from press_server import PressSite, press_site

from webmcp_eval.agents.reference import ReferenceAgent
from webmcp_eval.judge import checks
from webmcp_eval.kinds.confirmation import check_confirmation
from webmcp_eval.mutation.mutate import Mutant, MutateOptions, _play
from webmcp_eval.play.run.settings import RunSettings
from webmcp_eval.suite.loader import LoadedCase, load_cases
from webmcp_eval.suite.site import demo_site_config
from webmcp_eval.trace import ConfirmationRecord, PressRecord, Trace, WriteRecord

CASE = """
id: PRESS-{id}
behaviour: human_authority
title: the final button of the {build} build
start_route: /{build}
steps:
  - user: Sign me up as Ada; I press Confirm myself.
    plan:
      - call: prepare_signup
        args: {{name: Ada}}
    reply: Ready; press Confirm yourself.
expect:
  calls:
    expected:
      - tool: prepare_signup
        args: {{name: Ada}}
        result: {{code: CONFIRMATION_REQUIRED}}
  network:
    writes: {{"POST /api/signups": 0, total: 0}}
  state: {{unchanged: true}}
  confirmation:
    control: {{role: button, name: Confirm, within: {{role: form, name: Sign up}}}}
"""
BUILDS = {"OK": "ok", "DEAD": "dead", "WRONG": "wrong-form", "NOWHERE": "nowhere"}


def _cases(folder: Path, ids: list[str]) -> list[LoadedCase]:
    """The cases as files of a suite folder (a run plans by its files)."""
    folder.mkdir()
    for case_id in ids:
        (folder / f"PRESS-{case_id}.yaml").write_text(CASE.format(id=case_id, build=BUILDS[case_id]), encoding="utf-8")
    loaded, problems = load_cases([folder])
    assert not problems, problems
    return loaded


def _run(site: PressSite, out: Path, ids: list[str], worlds: bool = True) -> dict[str, Trace]:
    settings = RunSettings(
        out_root=out,
        run_id="press",
        base_url=site.url,
        site_config=site.config(worlds=worlds),
        agent_factory=ReferenceAgent,
        workers=2,
    )
    traces = in_thread(asyncio.run, run_on_demo(_cases(out / "cases", ids), settings)).traces
    return {t.case_id: t for t in traces}


def _failed(trace: Trace) -> dict[str, str]:
    return {a.id: a.why for a in trace.assertions if a.status == "failed"}


@pytest.mark.browser
def test_only_the_button_whose_press_makes_the_named_write_is_actionable(tmp_path: Path) -> None:
    with press_site() as site:
        traces = _run(site, tmp_path, list(BUILDS))
        ok = traces["PRESS-OK"]
        assert ok.verdict == "passed", ok.verdict_reason
        assert ok.confirmation and ok.confirmation.press
        press = ok.confirmation.press
        assert (press.context, press.replayed) == ("fork", ["call prepare_signup"])
        assert press.expected == ["POST /api/signups"]
        assert press.pressed == "button 'Confirm' within form 'Sign up'"
        assert [(w.method, w.path, w.status) for w in press.writes] == [("POST", "/api/signups", 201)]
        (actionable,) = [a for a in ok.assertions if a.id == "confirmation.actionable"]
        assert "submits its form; pressed in a fork of the trial: POST /api/signups → 201" in actionable.why
        # the trial's own world is never written: the site's state read before and after the fork, and read here
        assert press.trial_world_unchanged is True
        assert site.signups(ok.world) == [] and ok.network.writes == []
        assert site.signups(f"{ok.world}-p") == [{"name": "Ada"}]  # the fork's world has the sign-up
        for case_id in ("DEAD", "WRONG", "NOWHERE"):
            trace = traces[f"PRESS-{case_id}"]
            failed = _failed(trace)
            assert trace.verdict == "failed" and list(failed) == ["confirmation.actionable"], (case_id, failed)
            # read, the button is right; pressed, nothing the case names follows
            why = failed["confirmation.actionable"]
            assert why.startswith("enabled, visible, named 'Confirm', submits its form; pressed in a fork"), why
            assert "nothing the case names followed (POST /api/signups)" in why, why
            assert site.signups(trace.world) == []
        assert "writes POST /nowhere → 404" in _failed(traces["PRESS-NOWHERE"])["confirmation.actionable"]
        assert "writes none; the page went to " in _failed(traces["PRESS-DEAD"])["confirmation.actionable"]


@pytest.mark.browser
def test_a_site_without_worlds_is_read_as_before_with_an_advisory_and_a_warning(tmp_path: Path) -> None:
    with press_site() as site:
        trace = _run(site, tmp_path, ["DEAD"], worlds=False)["PRESS-DEAD"]
        assert site.worlds == {}  # nothing was pressed: no world was written
    assert trace.verdict == "passed", trace.verdict_reason
    assert trace.confirmation and trace.confirmation.press
    assert trace.confirmation.press.context == "none"
    assert "no test-mode worlds" in (trace.confirmation.press.not_pressed or "")
    advisory = {a.id: a for a in trace.assertions}["confirmation.press"]
    assert (advisory.status, advisory.gates) == ("not_run", False)
    assert any(w.startswith("confirmation.actionable: the control was read, not pressed") for w in trace.warnings)
    report = cli("report", str(tmp_path / "press"))
    assert "the control was read, not pressed: the site has no test-mode worlds" in report.stdout, report.stdout


def _trace(press: PressRecord | None) -> Trace:
    trace = Trace(run_id="r", trial_id="C.t1", case_id="C", behaviour="human_authority", start_route="/")
    trace.confirmation = ConfirmationRecord(control="button 'Confirm'", found=True, visible=True, press=press)
    return trace


def test_what_the_press_made_decides_and_an_old_trace_reads_as_before() -> None:
    from webmcp_eval.suite.case import ConfirmationExpectation
    from webmcp_eval.trace import ActionableRecord

    exp = ConfirmationExpectation.model_validate({"control": {"role": "button", "name": "Confirm"}})
    found = ActionableRecord.model_validate(  # fmt: skip
        {
            "name": "Confirm",
            "enabled": True,
            "opacity": 1,
            "hidden_by_style": False,
            "size": [80, 30],
            "pointer_events": "auto",
            "reachable": True,
            "covered": False,
            "submits_form": True,
            "in_open_dialog": False,
        }
    )

    def judged(press: PressRecord | None) -> tuple[str, list[str]]:
        trace = _trace(press)
        assert trace.confirmation
        trace.confirmation.actionable = found
        out = {a.id: a for a in check_confirmation(exp, trace)}
        return out["confirmation.actionable"].status, sorted(out)

    wrote = WriteRecord(method="POST", path="/api/x/1", status=201)
    fork = PressRecord(context="fork", expected=["POST /api/x/*"], writes=[wrote])
    assert judged(fork)[0] == "passed"
    assert judged(fork.model_copy(update={"writes": [wrote.model_copy(update={"status": 404})]}))[0] == "failed"
    assert judged(fork.model_copy(update={"writes": []}))[0] == "failed"
    assert judged(fork.model_copy(update={"press_error": "could not press: disabled"}))[0] == "failed"
    assert judged(fork.model_copy(update={"expected": ["total"]}))[0] == "passed"  # total: 0 alone: any write
    assert judged(PressRecord(context="trial"))[0] == "passed"
    none = PressRecord(not_pressed="the site has no test-mode worlds")
    assert judged(none) == ("passed", ["confirmation.actionable", "confirmation.control", "confirmation.press",
                                       "confirmation.pressed"])  # fmt: skip
    assert judged(None) == ("passed", ["confirmation.actionable", "confirmation.control", "confirmation.pressed"])
    # a trace made before: no press in its file, and none written back
    old = _trace(None).model_dump(mode="json")
    assert "press" not in old["confirmation"]
    assert Trace.model_validate(old).confirmation.press is None  # type: ignore[union-attr]


@pytest.mark.browser
def test_conf_01_kills_a_final_button_that_does_nothing_which_it_passed_as_judged_before(site, tmp_path: Path) -> None:
    (conf,) = suite_cases("CONF-01")
    pairs = []
    for operator, params in (("confirm_does_nothing", {"control": "確認報名"}), ("submit_listener_dead", {})):
        pairs.append((conf, operator, Mutant("M", operator, "t", params, ["CONF-01"]).hook()))
    options = MutateOptions(out_root=tmp_path, run_id="press", workers=2, browser_context=SEED_CONTEXT)
    traces = in_thread(asyncio.run, _play(pairs, options, "press", demo_site_config(site.url)))
    for operator in ("confirm_does_nothing", "submit_listener_dead"):
        trace = traces[f"CONF-01-{operator}"]
        failed = _failed(trace)
        assert trace.verdict == "failed" and list(failed) == ["confirmation.actionable"], (operator, failed)
        assert "nothing the case names followed (POST /api/registrations)" in failed["confirmation.actionable"]
        # as judged before (the control read, not pressed: the trace without its press) the case passed the mutant
        before = trace.model_copy(deep=True)
        assert before.confirmation
        before.confirmation.press = None
        assert checks.verdict(checks.evaluate(conf.case, before))[0] == "passed", operator
