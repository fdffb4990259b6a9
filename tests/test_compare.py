"""webmcp_eval/results/compare.py: paired per-case comparison of two runs (docs/statistics.md's example pinned),
and the power text. No browser: traces are built directly."""

from __future__ import annotations

import pytest

from webmcp_eval.results.compare import CostSummary, compare_runs, power_analysis, power_text, render_compare
from webmcp_eval.results.power import cases_needed, min_detectable_difference
from webmcp_eval.trace import Assertion, Trace

SEED_DIFFS = [0, 0, 0, 0, 0, 0, 0, 1, 1, 0]  # docs/statistics.md: only cases 8 and 9 went fail -> pass
CASES = [f"C{i:02d}" for i in range(1, 11)]


def trial(
    run: str,
    case: str,
    verdict: str,
    *,
    index: int = 0,
    kind: str = "deterministic",
    agent: str = "reference",
    model: str | None = None,
    behaviour: str | None = None,
    **kw,
) -> Trace:
    passed = verdict == "passed"
    return Trace(
        run_id=run,
        trial_id=f"{case}.t{index + 1}",
        trial_index=index,
        case_id=case,
        behaviour=behaviour or f"beh{case[-1]}",
        start_route="/",
        verdict=verdict,
        evidence_kind=kind,
        agent=agent,
        model=model,
        duration_ms=1000.0,
        assertions=[
            Assertion(id="a", kind="calls", description="a", status="passed", why=""),
            Assertion(id="b", kind="answer", description="b", status="passed" if passed else "failed", why=""),
        ],
        **kw,
    )


def seed_runs() -> tuple[list[Trace], list[Trace]]:
    a = [trial("layer3", c, "failed" if d else "passed") for c, d in zip(CASES, SEED_DIFFS, strict=True)]
    b = [trial("layer6", c, "passed") for c in CASES]
    # C01..C07 and C10 pass in both; to make the example less trivial, C03 fails in both
    a[2] = trial("layer3", "C03", "failed")
    b[2] = trial("layer6", "C03", "failed")
    return a, b


def test_seed_004_example() -> None:
    a, b = seed_runs()
    result = compare_runs(a, b)
    det = result.get("deterministic")
    assert det is not None and det.paired is not None
    p = det.paired
    assert p.n == 10
    assert [c.diff for c in det.cases] == SEED_DIFFS
    assert f"{p.mean:+.2f}" == "+0.20"
    assert f"{p.ci_low:+.2f}" == "-0.06" and f"{p.ci_high:+.2f}" == "+0.46"
    assert not det.distinguishable and not result.distinguishable
    assert [c.case_id for c in det.flipped_up] == ["C08", "C09"]
    assert det.flipped_down == ()
    assert det.sentence.endswith("the difference is not distinguishable from noise.")
    assert "95% interval \u22120.06 … +0.46" in det.sentence
    text = render_compare(result)
    assert "mean difference +0.20, 95% CI \u22120.06 … +0.46" in text
    assert "fail → pass (2): C08, C09" in text
    assert "pass → fail (0): none" in text
    assert "A = run layer3" in text and "B = run layer6" in text
    assert text == result.text()


def test_rates_are_shown_side_by_side() -> None:
    a, b = seed_runs()
    det = compare_runs(a, b).get("deterministic")
    assert det.mean_a == pytest.approx(0.7) and det.mean_b == pytest.approx(0.9)
    # per-assertion: a failing trial passes 1 of 2 assertions
    assert det.assertion_rate_a == pytest.approx((7 * 1 + 3 * 0.5) / 10)
    assert det.assertion_rate_b == pytest.approx((9 * 1 + 0.5) / 10)
    text = render_compare(compare_runs(a, b))
    assert "case pass rate      A 70.0%   B 90.0%   over 10 paired cases" in text
    assert "per-assertion rate  A 85.0%   B 95.0%" in text


def test_a_distinguishable_regression_is_said_plainly() -> None:
    cases = [f"R{i:02d}" for i in range(20)]
    a = [trial("a", c, "passed") for c in cases]
    b = [trial("b", c, "failed" if i < 12 else "passed") for i, c in enumerate(cases)]
    det = compare_runs(a, b, label_a="main", label_b="branch").get("deterministic")
    assert det.distinguishable
    assert det.paired.mean == pytest.approx(-0.6)
    assert det.sentence.startswith("deterministic: run B's case pass rate is 0.60 lower than run A's over 20")
    assert "distinguishable from noise" in det.sentence and "not distinguishable" not in det.sentence
    assert [c.case_id for c in det.flipped_down] == cases[:12]
    text = render_compare(compare_runs(a, b, label_a="main", label_b="branch"))
    assert text.startswith("A = main\nB = branch")
    assert "pass → fail (12): R00, R01" in text


def test_cases_only_in_one_run_and_not_run_cases_are_left_out_and_listed() -> None:
    a, b = seed_runs()
    a.append(trial("layer3", "ONLY-A", "passed"))
    b.append(trial("layer6", "ONLY-B", "failed"))
    a.append(trial("layer3", "SKIP", "not_run"))
    b.append(trial("layer6", "SKIP", "passed"))
    det = compare_runs(a, b).get("deterministic")
    assert det.paired.n == 10
    assert det.only_in_a == ("ONLY-A",) and det.only_in_b == ("ONLY-B",)
    assert det.not_run_in_a == ("SKIP",) and det.not_run_in_b == ()
    assert f"{det.paired.mean:+.2f}" == "+0.20"  # the dropped cases change nothing
    text = render_compare(compare_runs(a, b))
    assert "only in A (1, left out): ONLY-A" in text
    assert "only in B (1, left out): ONLY-B" in text
    assert "not run in A (1, left out): SKIP" in text


def test_repeated_trials_compare_case_pass_rates() -> None:
    a = [trial("a", "X", v, index=i) for i, v in enumerate(["passed", "failed", "failed"])]
    a += [trial("a", "Y", "passed", index=i) for i in range(3)]
    b = [trial("b", "X", "passed", index=i) for i in range(3)]
    b += [trial("b", "Y", v, index=i) for i, v in enumerate(["passed", "passed", "not_run"])]
    det = compare_runs(a, b).get("deterministic")
    x, y = det.cases
    assert (x.rate_a, x.rate_b, x.trials_a, x.trials_b) == (pytest.approx(1 / 3), 1.0, 3, 3)
    assert (y.rate_a, y.rate_b, y.trials_b) == (1.0, 1.0, 2)  # not_run is no evidence
    text = render_compare(compare_runs(a, b))
    assert "better in B (1): X (0.33 → 1.00)" in text


def test_evidence_kinds_are_never_mixed() -> None:
    a, b = seed_runs()
    b += [trial("layer6", c, "failed", kind="agent", agent="openai", model="m1") for c in CASES]
    result = compare_runs(a, b)
    assert [s.label for s in result.series] == ["deterministic", "agent openai (m1)"]
    det = result.get("deterministic")
    assert f"{det.paired.mean:+.2f}" == "+0.20"  # the agent's failures do not leak in
    agent = result.get(("agent", "openai", "m1"))
    assert agent.paired is None and agent.reason == "run A has no trials of this kind"
    assert "nothing can be compared" in agent.sentence
    assert "[agent openai (m1)]" in render_compare(result)


def test_one_common_case_is_never_distinguishable() -> None:
    det = compare_runs([trial("a", "X", "failed")], [trial("b", "X", "passed")]).get("deterministic")
    assert det.paired.n == 1 and not det.distinguishable
    assert "only 1 case ran in both runs" in det.sentence


def test_no_shared_case() -> None:
    result = compare_runs([trial("a", "X", "passed")], [trial("b", "Y", "passed")])
    det = result.get("deterministic")
    assert det.paired is None and det.reason == "the runs share no case"
    assert render_compare(compare_runs([], [])).endswith("Neither run has any trial: nothing to compare.")


def test_cost_beside_score() -> None:
    a = [
        trial(
            "a",
            "X",
            "passed",
            kind="agent",
            agent="openai",
            model="m",
            tokens={"input": 100, "output": 50},
            cost_usd=0.01,
            index=i,
        )
        for i in range(2)
    ]
    c = CostSummary.of(a)
    assert (c.trials, c.cases, c.tokens, c.tokens_per_trial, c.tokens_per_case) == (2, 1, 300, 150, 300)
    assert c.cost_per_trial == pytest.approx(0.01) and c.cost_per_case == pytest.approx(0.02)
    assert c.wall_ms_per_trial == 1000 and c.wall_ms_per_case == 2000
    assert "tokens 150/trial, 300/case" in c.text() and "$0.0100/trial, $0.0200/case" in c.text()
    assert "tokens" not in CostSummary.of([trial("a", "X", "passed")]).text()
    text = render_compare(compare_runs(a, a))
    assert "cost A: 2 trial(s), 1 case(s) · wall 1.0s/trial, 2.0s/case" in text


# --------------------------------------------------------------------------- power


def test_power_numbers_come_from_stats() -> None:
    r = power_analysis(0.7, 0.1, trials=1, n_cases=20)
    assert r.needed == {k: cases_needed(0.7, 0.1, trials=k) for k in (1, 3, 5)}
    assert r.mdd == min_detectable_difference(20, 0.7, trials=1)
    assert r.mdd_by_trials[3] == min_detectable_difference(20, 0.7, trials=3)
    text = power_text(r)
    assert f"you need {cases_needed(0.7, 0.1)} cases with 1 trial each" in text
    assert f"3 → {cases_needed(0.7, 0.1, trials=3)} ({3 * cases_needed(0.7, 0.1, trials=3)} trials)" in text
    mdd = min_detectable_difference(20, 0.7)
    assert f"smallest improvement this suite can detect is +{mdd:.2f}" in text
    assert "paired runs" in text and "correlation 0.5" in text


def test_power_text_with_only_one_question() -> None:
    only_n = power_text(power_analysis(0.5, n_cases=10, trials=3))
    assert "To detect" not in only_n and "With 10 cases and 3 trial(s) each" in only_n
    only_delta = power_text(power_analysis(0.5, -0.2, paired=False))
    assert "from 0.50 to 0.30" in only_delta and "two independent runs" in only_delta and "With " not in only_delta
    assert power_analysis(0.5, 0.1, trials=2).needed.keys() == {1, 2, 3, 5}


def test_power_when_nothing_is_detectable() -> None:
    assert min_detectable_difference(2, 0.5) is None
    assert "no improvement up to a pass rate of 1.00 is detectable" in power_text(power_analysis(0.5, n_cases=2))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"base_rate": 0.5},
        {"base_rate": 1.5, "delta": 0.1},
        {"base_rate": 0.9, "delta": 0.2},
        {"base_rate": 0.5, "delta": 0.0},
        {"base_rate": 1.0, "n_cases": 10},
        {"base_rate": 0.5, "delta": 0.1, "trials": 0},
    ],
)
def test_power_rejects_bad_arguments(kwargs) -> None:
    with pytest.raises(ValueError):
        power_analysis(**kwargs)
