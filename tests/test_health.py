"""Suite health: broken tasks, saturated cases, and capability apart from regression."""

from __future__ import annotations

from webmcp_eval.results.health import BROKEN, SATURATED, health_lines, suite_health
from webmcp_eval.trace import Trace


def _trials(case: str, verdicts: str, kind: str = "agent", purpose: str | None = None) -> list[Trace]:
    """One trace per letter: p passed, f failed, n not_run."""
    names = {"p": "passed", "f": "failed", "n": "not_run"}
    return [
        Trace(
            run_id="r",
            trial_id=f"{case}.t{i + 1}",
            case_id=case,
            behaviour="selection",
            start_route="/",
            evidence_kind=kind,  # type: ignore[arg-type]
            agent="openai" if kind == "agent" else "reference",
            model="m" if kind == "agent" else None,
            case={"purpose": purpose} if purpose else {},
            verdict=names[v],  # type: ignore[arg-type]
        )
        for i, v in enumerate(verdicts)
    ]


def test_zero_percent_over_enough_trials_is_probably_a_broken_task():
    health = suite_health(_trials("A-01", "fffff") + _trials("B-01", "ffff") + _trials("C-01", "ffffp"), 5)
    flags = {c.case_id: c.flag for c in health.cases}
    assert flags == {"A-01": BROKEN, "B-01": None, "C-01": None}  # B-01: 4 trials are not enough to say


def test_not_run_is_no_evidence_either_way():
    health = suite_health(_trials("A-01", "fffnn") + _trials("B-01", "pppnnnn"), 3)
    assert {c.case_id: (c.ran, c.flag) for c in health.cases} == {"A-01": (3, BROKEN), "B-01": (3, SATURATED)}


def test_every_agent_trial_passing_is_saturated_but_the_reference_agent_passing_is_not():
    traces = _trials("A-01", "ppppp") + _trials("B-01", "ppppp", kind="deterministic")
    traces += _trials("C-01", "pppp") + _trials("C-01", "f", kind="deterministic")
    assert {c.case_id: c.flag for c in suite_health(traces, 5).cases} == {"A-01": SATURATED, "B-01": None, "C-01": None}


def test_capability_and_regression_are_shown_apart():
    traces = _trials("A-01", "ppfff", purpose="capability") + _trials("B-01", "ppppp", purpose="regression")
    traces += _trials("C-01", "pf")
    health = suite_health(traces, 5)
    assert health.groups() == {"capability": (1, 2, 5), "regression": (1, 5, 5), "unlabelled": (1, 1, 2)}
    lines = health_lines(health)
    assert "capability: 1 case(s), 2/5 trials passed (40%)" in lines
    assert "regression: 1 case(s), 5/5 trials passed (100%)" in lines
    assert any(line.startswith("B-01: saturated: regression only (5/5") for line in lines)
    assert health.to_json()["groups"]["capability"] == {"cases": 1, "passed": 2, "trials": 5}


def test_the_seed_cases_say_their_purpose_where_it_is_clear():
    from pathlib import Path

    from webmcp_eval.suite.loader import load_cases

    loaded, problems = load_cases([Path(__file__).resolve().parent.parent / "cases"])
    purpose = {lc.case.id: lc.case.purpose for lc in loaded}
    assert not problems
    assert {c for c, p in purpose.items() if p == "capability"} == {
        *("AMB-01", "AMB-02", "NO-02", "RECOVERY-01"),
        *("AMB-01-G", "AMB-02-G"),  # the goal variants of the two clarification cases
    }
    assert {c for c, p in purpose.items() if p == "regression"} == {"SEL-01", "ARG-01", "ORD-01", "NO-01"}


def test_every_view_shows_capability_and_regression_apart(tmp_path):
    import json

    from webmcp_eval.report.html import render_html
    from webmcp_eval.report.writers import series_lines, summary_json
    from webmcp_eval.results.run_results import results_of

    traces = (
        _trials("A-01", "ppfff", purpose="capability")
        + _trials("A-02", "fffff", purpose="capability")
        + _trials("B-01", "ppppp", purpose="regression")
        + _trials("C-01", "pffff")
    )
    results = results_of(traces)
    agent = results.series[0]
    assert agent.by_purpose == {"capability": (2, 0.2), "regression": (1, 1.0), "unlabelled": (1, 0.2)}
    line = "  by purpose (case pass rate): capability 20.0% (2 case(s)) · regression 100.0% (1 case(s))"
    assert line + " · unlabelled 20.0% (1 case(s))" in series_lines(agent)
    data = json.loads(json.dumps(summary_json(results)))
    assert data["series"][0]["by_purpose"]["capability"] == {"case_pass_rate": 0.2, "n_cases": 2}
    assert {c["case_id"]: c["purpose"] for c in data["series"][0]["cases"]}["C-01"] is None
    from webmcp_eval.report.reporters import markdown

    assert "| agent openai (m) | regression | 1 | 100.0% |" in markdown(results)
    html = render_html(results, report_dir=tmp_path)
    assert '<span data-purpose="regression">regression 100.0% (1 case(s))</span>' in html
    import xml.etree.ElementTree as ET

    from webmcp_eval.report.writers import write_junit

    write_junit(results, tmp_path / "j.xml")
    purposes = {
        tc.get("name"): p.get("value")
        for tc in ET.parse(tmp_path / "j.xml").getroot().iter("testcase")
        for p in tc.iter("property")
        if p.get("name") == "purpose"
    }
    assert purposes["A-01.t1"] == "capability" and purposes["B-01.t5"] == "regression"
    assert not any(name.startswith("C-01") for name in purposes)  # an unlabelled case says nothing
    # a suite that labels no case shows no purpose groups
    assert results_of(_trials("C-01", "pp")).series[0].by_purpose == {}
