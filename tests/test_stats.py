"""webmcp_eval.results.stats: docs/statistics.md's worked examples, cross-checks against numpy/scipy,
edge cases. numpy and scipy are test-only dependencies."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from webmcp_eval.results.paired import paired_difference
from webmcp_eval.results.power import cases_needed, min_detectable_difference
from webmcp_eval.results.stats import (
    Z_95,
    CaseScore,
    SuiteScore,
    clustered_se,
    mean_se,
    pass_at_k,
    pass_hat_k,
)

SEED_C = [3, 3, 2, 3, 3, 3, 1, 1, 3, 3]  # docs/statistics.md: passing trials of 3 per case
SEED_DIFFS = [0, 0, 0, 0, 0, 0, 0, 1, 1, 0]  # docs/statistics.md: per-case differences of two versions


# --------------------------------------------------------------------------- docs/statistics.md


def test_seed_004_pass_at_3_and_pass_hat_3() -> None:
    at = sum(pass_at_k(3, c, 3) for c in SEED_C) / len(SEED_C)
    hat = sum(pass_hat_k(3, c, 3) for c in SEED_C) / len(SEED_C)
    assert f"{at:.2f}" == "1.00"
    assert f"{hat:.2f}" == "0.70"
    assert hat == pytest.approx(0.7, abs=1e-12)


def test_seed_004_through_suite_score() -> None:
    rows = [(f"q{i:02d}", "review", CaseScore(n=3, c=c)) for i, c in enumerate(SEED_C, 1)]
    suite = SuiteScore.from_cases(rows, ks=[3])
    assert suite.pass_at[3].mean == pytest.approx(1.0)
    assert suite.pass_hat[3].mean == pytest.approx(0.7)
    assert suite.pass_at[3].n_cases == 10 and suite.pass_at[3].excluded == ()
    assert suite.assertion_pass is None  # no assertion counts given


def _seed_runs() -> tuple[dict[str, float], dict[str, float]]:
    # Layer 3 scored 6/10, layer 6 scored 8/10: only cases 8 and 9 went from wrong to right.
    a = {f"q{i:02d}": float(i in (1, 2, 3, 4, 5, 6)) for i in range(1, 11)}
    b = {cid: a[cid] + d for cid, d in zip(sorted(a), SEED_DIFFS, strict=True)}
    return a, b


def test_seed_004_paired_difference() -> None:
    a, b = _seed_runs()
    pd = paired_difference(a, b)
    assert [b[c] - a[c] for c in sorted(a)] == SEED_DIFFS
    assert f"{pd.mean:+.1f}" == "+0.2"
    assert f"{pd.ci_low:+.2f}" == "-0.06"
    assert f"{pd.ci_high:+.2f}" == "+0.46"
    # the seed prints m - 1.96*se with se from mean_se
    m, se = mean_se(SEED_DIFFS)
    assert pd.ci_low == pytest.approx(m - 1.96 * se) and pd.ci_high == pytest.approx(m + 1.96 * se)
    assert pd.n == 10
    assert pd.flipped_up == ("q08", "q09") and pd.flipped_down == ()
    assert pd.dropped == ()
    assert not pd.distinguishable
    assert pd.verdict == "+0.20 (95% CI \u22120.06 \u2026 +0.46) over 10 paired cases: not distinguishable from noise."


# --------------------------------------------------------------------------- pass@k, pass^k


def _brute(n: int, c: int, k: int) -> tuple[float, float]:
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(outcomes, k))
    return (sum(any(s) for s in subsets) / len(subsets), sum(all(s) for s in subsets) / len(subsets))


def test_pass_at_k_and_pass_hat_k_match_enumeration_of_all_k_subsets() -> None:
    checked = 0
    for n in range(1, 9):
        for c in range(n + 1):
            for k in range(1, n + 1):
                at, hat = _brute(n, c, k)
                assert pass_at_k(n, c, k) == pytest.approx(at, abs=1e-12), (n, c, k)
                assert pass_hat_k(n, c, k) == pytest.approx(hat, abs=1e-12), (n, c, k)
                checked += 1
    assert checked == sum(n * (n + 1) for n in range(1, 9))


def test_pass_at_k_random_against_enumeration() -> None:
    rng = np.random.default_rng(4)
    for _ in range(50):
        n = int(rng.integers(1, 11))
        c = int(rng.integers(0, n + 1))
        k = int(rng.integers(1, n + 1))
        at, hat = _brute(n, c, k)
        assert pass_at_k(n, c, k) == pytest.approx(at, abs=1e-12)
        assert pass_hat_k(n, c, k) == pytest.approx(hat, abs=1e-12)


def test_pass_at_k_known_values_and_k_1_is_the_pass_rate() -> None:
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_hat_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)  # 1 - C(3,2)/C(4,2) = 1 - 3/6
    assert pass_hat_k(4, 3, 2) == pytest.approx(0.5)  # C(3,2)/C(4,2) = 3/6
    assert pass_at_k(200, 1, 100) == pytest.approx(0.5)  # big binomials stay exact


def test_pass_at_k_is_1_when_fewer_than_k_failures() -> None:
    assert pass_at_k(5, 3, 3) == 1.0  # n - c = 2 < 3
    assert pass_at_k(5, 2, 3) < 1.0  # n - c = 3 = k: the all-failure subset exists


def test_all_pass_and_all_fail() -> None:
    for n in (1, 3, 8):
        for k in range(1, n + 1):
            assert pass_at_k(n, n, k) == 1.0 and pass_hat_k(n, n, k) == 1.0
            assert pass_at_k(n, 0, k) == 0.0 and pass_hat_k(n, 0, k) == 0.0


def test_pass_at_k_grows_and_pass_hat_k_shrinks_with_k() -> None:
    at = [pass_at_k(10, 4, k) for k in range(1, 11)]
    hat = [pass_hat_k(10, 4, k) for k in range(1, 11)]
    assert all(x < y for x, y in zip(at[:6], at[1:7], strict=True))  # strictly up until it reaches 1
    assert all(x >= y for x, y in zip(hat, hat[1:], strict=False))
    assert hat[3] > 0 and hat[4] == 0


@pytest.mark.parametrize("fn", [pass_at_k, pass_hat_k])
def test_k_larger_than_n_raises_with_a_message(fn) -> None:
    with pytest.raises(ValueError, match=r"k = 4 is larger than the number of trials n = 3"):
        fn(3, 2, 4)


@pytest.mark.parametrize("fn", [pass_at_k, pass_hat_k])
@pytest.mark.parametrize(
    ("n", "c", "k", "msg"),
    [
        (3, 4, 1, "cannot exceed"),
        (0, 0, 1, "n \\(trials\\) must be >= 1"),
        (3, 1, 0, "k must be >= 1"),
        (3, -1, 1, "must be >= 0"),
        (3.0, 1, 1, "must be an integer"),
    ],
)
def test_bad_counts_raise(fn, n, c, k, msg) -> None:
    with pytest.raises(ValueError, match=msg):
        fn(n, c, k)


# --------------------------------------------------------------------------- mean_se


def test_mean_se_matches_scipy_sem_on_random_data() -> None:
    rng = np.random.default_rng(2024)
    for size in (2, 3, 7, 50, 500):
        xs = rng.random(size)
        m, se = mean_se(xs.tolist())
        assert m == pytest.approx(float(np.mean(xs)), rel=1e-12)
        assert se == pytest.approx(float(sps.sem(xs)), rel=1e-12)
        assert se == pytest.approx(float(np.std(xs, ddof=1) / math.sqrt(size)), rel=1e-12)
    binary = rng.integers(0, 2, 40).astype(float)
    assert mean_se(binary.tolist())[1] == pytest.approx(float(sps.sem(binary)), rel=1e-12)


def test_mean_se_edge_cases() -> None:
    assert mean_se([0.7]) == (0.7, 0.0)  # n = 1: SE reported as 0
    assert mean_se([1, 1, 1]) == (1.0, 0.0)  # all pass
    assert mean_se([0, 0]) == (0.0, 0.0)  # all fail
    assert mean_se(iter([0.0, 1.0])) == (0.5, pytest.approx(0.5))  # any iterable
    with pytest.raises(ValueError, match="at least one value"):
        mean_se([])
    with pytest.raises(ValueError, match="not a finite number"):
        mean_se([0.5, float("nan")])


# --------------------------------------------------------------------------- clustered_se


def _numpy_cluster_sandwich(x: np.ndarray, groups: np.ndarray, small_sample: bool) -> float:
    """Cluster-robust SE of the intercept of x ~ 1, in matrix form: (X'X)^-1 M (X'X)^-1."""
    design = np.ones((len(x), 1))
    bread = np.linalg.inv(design.T @ design)
    resid = x - design @ (bread @ design.T @ x)
    labels = np.unique(groups)
    meat = np.zeros((1, 1))
    for g in labels:
        score = design[groups == g].T @ resid[groups == g]
        meat += np.outer(score, score)
    cov = bread @ meat @ bread
    if small_sample:
        cov *= len(labels) / (len(labels) - 1)
    return float(np.sqrt(cov[0, 0]))


@pytest.mark.parametrize("small_sample", [True, False])
def test_clustered_se_matches_numpy_sandwich(small_sample: bool) -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        n = int(rng.integers(4, 60))
        g = int(rng.integers(2, min(n, 10) + 1))
        groups = rng.integers(0, g, n)
        groups[:g] = np.arange(g)  # every label used
        x = rng.random(n) + 0.5 * groups  # clusters differ in level
        m, cse = clustered_se(x.tolist(), [f"b{v}" for v in groups], small_sample=small_sample)
        assert m == pytest.approx(float(np.mean(x)), rel=1e-12)
        assert cse == pytest.approx(_numpy_cluster_sandwich(x, groups, small_sample), rel=1e-10)


def test_clustered_se_miller_formula_written_out() -> None:
    # SE² = SE_CLT² (population variance) + (1/n²) · sum_c sum_i sum_{j≠i} (x_i - m)(x_j - m)
    rng = np.random.default_rng(11)
    x = rng.integers(0, 2, 30).astype(float)
    groups = np.repeat(np.arange(6), 5)
    r = x - x.mean()
    cross = sum(r[i] * r[j] for i in range(30) for j in range(30) if i != j and groups[i] == groups[j])
    expected = math.sqrt((r @ r) / 30**2 + cross / 30**2)
    assert clustered_se(x.tolist(), groups.tolist(), small_sample=False)[1] == pytest.approx(expected)
    assert clustered_se(x.tolist(), groups.tolist())[1] == pytest.approx(expected * math.sqrt(6 / 5))


def test_clustered_se_singletons_equal_mean_se_and_grouping_matters() -> None:
    rng = np.random.default_rng(3)
    x = rng.random(25).tolist()
    assert clustered_se(x, list(range(25)))[1] == pytest.approx(mean_se(x)[1], rel=1e-12)
    # correlated within cluster: five identical blocks of five -> clustering widens the SE
    blocked = [v for v in (0.0, 0.2, 0.5, 0.9, 1.0) for _ in range(5)]
    labels = [i // 5 for i in range(25)]
    assert clustered_se(blocked, labels)[1] > 2 * mean_se(blocked)[1]


def test_clustered_se_edge_cases() -> None:
    assert clustered_se([0.2, 0.9, 0.4], ["a", "a", "a"]) == (pytest.approx(0.5), 0.0)  # one cluster
    with pytest.raises(ValueError, match="at least one value"):
        clustered_se([], [])
    with pytest.raises(ValueError, match="differ in length: 2 values, 1 cluster labels"):
        clustered_se([1.0, 0.0], ["a"])


# --------------------------------------------------------------------------- CaseScore


def test_case_score_two_rates_from_trials() -> None:
    # docs/statistics.md: 16 assertions, 15 pass in each of 3 trials -> 94% per assertion, 0 case passes
    cs = CaseScore.from_trials([(False, 15, 16)] * 3)
    assert cs.n == 3 and cs.c == 0
    assert cs.case_pass_rate == 0.0
    assert cs.assertion_pass_rate == pytest.approx(15 / 16)
    assert f"{cs.assertion_pass_rate:.0%}" == "94%"


def test_case_score_assertion_rate_pools_over_trials() -> None:
    cs = CaseScore.from_trials([(False, 15, 16), (True, 4, 4), (False, 0, 0)])
    assert cs.assertion_pass_rate == pytest.approx(19 / 20)  # pooled, not mean(15/16, 1)
    assert cs.case_pass_rate == pytest.approx(1 / 3)
    assert cs.pass_at(2) == pytest.approx(pass_at_k(3, 1, 2))
    assert cs.pass_hat(1) == pytest.approx(1 / 3)


def test_case_score_edge_cases() -> None:
    assert CaseScore.from_trials([(False, 0, 0), (False, 0, 0)]).assertion_pass_rate is None
    assert CaseScore(n=2, c=1).assertion_pass_rate is None
    single = CaseScore.from_trials([(True, 3, 3)])
    assert (single.case_pass_rate, single.assertion_pass_rate, single.pass_at(1), single.pass_hat(1)) == (1, 1, 1, 1)
    with pytest.raises(ValueError, match="k = 2 is larger than the number of trials n = 1"):
        single.pass_at(2)
    with pytest.raises(ValueError, match="at least one trial"):
        CaseScore.from_trials([])
    with pytest.raises(ValueError, match=r"n \(trials\) must be >= 1"):
        CaseScore(n=0, c=0)
    with pytest.raises(ValueError, match="cannot exceed"):
        CaseScore(n=2, c=3)
    with pytest.raises(ValueError, match="one \\(passed, total\\) pair per trial"):
        CaseScore(n=2, c=0, assertions=((1, 2),))
    with pytest.raises(ValueError, match="must be in \\[0, total"):
        CaseScore(n=1, c=0, assertions=((3, 2),))
    with pytest.raises(ValueError, match="a case pass needs every assertion passed"):
        CaseScore.from_trials([(True, 3, 4)])


# --------------------------------------------------------------------------- SuiteScore


def _suite_rows() -> list[tuple[str, str, CaseScore]]:
    return [
        ("SEL-01", "selection", CaseScore.from_trials([(True, 4, 4), (True, 4, 4), (False, 3, 4)])),
        ("SEL-02", "selection", CaseScore.from_trials([(False, 1, 4), (False, 2, 4), (False, 2, 4)])),
        ("CONF-01", "confirmation", CaseScore.from_trials([(True, 2, 2), (True, 2, 2)])),
        ("CONF-02", "confirmation", CaseScore.from_trials([(False, 0, 0), (False, 0, 0), (False, 0, 0)])),
        ("NO-01", "refusal", CaseScore.from_trials([(True, 5, 5)])),
        ("NO-02", "refusal", CaseScore.from_trials([(False, 16, 20), (True, 20, 20), (False, 19, 20)])),
    ]


def test_suite_score_against_numpy_and_scipy() -> None:
    rows = _suite_rows()
    suite = SuiteScore.from_cases(rows, ks=[1, 2, 3])
    case_rates = np.array([2 / 3, 0, 1, 0, 1, 1 / 3])
    behaviours = np.array([0, 0, 1, 1, 2, 2])
    assert suite.n_cases == 6
    assert suite.case_pass.mean == pytest.approx(case_rates.mean())
    assert suite.case_pass.se == pytest.approx(float(sps.sem(case_rates)))
    assert suite.case_pass.clustered_se == pytest.approx(_numpy_cluster_sandwich(case_rates, behaviours, True))
    assert suite.case_pass.n_clusters == 3 and suite.case_pass.excluded == ()

    # CONF-02 has no assertions: left out of the per-assertion rate, and said so
    a_rates = np.array([11 / 12, 5 / 12, 1, 1, 55 / 60])
    assert suite.assertion_pass is not None
    assert suite.assertion_pass.excluded == ("CONF-02",)
    assert suite.assertion_pass.n_cases == 5
    assert suite.assertion_pass.mean == pytest.approx(a_rates.mean())
    assert suite.assertion_pass.se == pytest.approx(float(sps.sem(a_rates)))
    assert suite.assertion_pass.clustered_se == pytest.approx(
        _numpy_cluster_sandwich(a_rates, np.array([0, 0, 1, 2, 2]), True)
    )
    # the gate and the diagnosis differ: per-assertion looks far better
    assert suite.assertion_pass.mean > suite.case_pass.mean + 0.3


def test_suite_score_by_behaviour() -> None:
    suite = SuiteScore.from_cases(_suite_rows())
    assert list(suite.by_behaviour) == ["confirmation", "refusal", "selection"]
    sel = suite.by_behaviour["selection"]
    assert sel.cases == ("SEL-01", "SEL-02")
    assert sel.case_pass.mean == pytest.approx(1 / 3) and sel.case_pass.n == 2
    assert sel.case_pass.se == pytest.approx(float(sps.sem([2 / 3, 0])))
    assert sel.assertion_pass is not None and sel.assertion_pass.mean == pytest.approx((11 / 12 + 5 / 12) / 2)
    conf = suite.by_behaviour["confirmation"]
    assert conf.assertion_pass is not None and conf.assertion_pass.n == 1  # CONF-02 has none
    assert conf.assertion_pass.mean == 1.0 and conf.assertion_pass.se == 0.0


def test_suite_score_pass_at_k_excludes_cases_with_too_few_trials() -> None:
    suite = SuiteScore.from_cases(_suite_rows(), ks=[3, 1, 2])
    assert list(suite.pass_at) == [1, 2, 3]
    k3 = suite.pass_at[3]
    assert k3.excluded == ("CONF-01", "NO-01") and k3.n_cases == 4
    assert k3.mean == pytest.approx(np.mean([1, 0, 0, 1]))
    assert suite.pass_hat[3].mean == pytest.approx(0.0)
    k2 = suite.pass_hat[2]
    assert k2.excluded == ("NO-01",) and k2.n_cases == 5
    expected = [pass_hat_k(3, 2, 2), 0, 1, 0, pass_hat_k(3, 1, 2)]
    assert k2.mean == pytest.approx(np.mean(expected))
    assert k2.se == pytest.approx(float(sps.sem(expected)))
    assert suite.pass_at[1].mean == pytest.approx(suite.case_pass.mean)  # pass@1 is the case pass rate


def test_suite_score_all_excluded_and_errors() -> None:
    rows = [("A", "x", CaseScore(n=1, c=1)), ("B", "y", CaseScore(n=2, c=0))]
    suite = SuiteScore.from_cases(rows, ks=[5])
    assert suite.pass_at[5].mean is None and suite.pass_at[5].excluded == ("A", "B")
    assert suite.assertion_pass is None
    with pytest.raises(ValueError, match="at least one case"):
        SuiteScore.from_cases([])
    with pytest.raises(ValueError, match="'A' appears more than once"):
        SuiteScore.from_cases(rows + [("A", "x", CaseScore(n=1, c=0))])
    with pytest.raises(ValueError, match="k must be >= 1"):
        SuiteScore.from_cases(rows, ks=[0])


# --------------------------------------------------------------------------- paired_difference


def test_paired_difference_against_numpy_on_random_runs() -> None:
    rng = np.random.default_rng(99)
    ids = [f"C{i:03d}" for i in range(80)]
    base = rng.random(80)
    a = dict(zip(ids, np.clip(base + rng.normal(0, 0.1, 80), 0, 1).tolist(), strict=True))
    b = dict(zip(ids, np.clip(base + 0.05 + rng.normal(0, 0.1, 80), 0, 1).tolist(), strict=True))
    del a["C000"], b["C001"]
    pd = paired_difference(a, b)
    common = sorted(set(a) & set(b))
    d = np.array([b[c] - a[c] for c in common])
    assert pd.n == 78 and pd.only_in_a == ("C001",) and pd.only_in_b == ("C000",)
    assert pd.mean == pytest.approx(d.mean())
    assert pd.se == pytest.approx(float(sps.sem(d)))
    assert pd.ci_low == pytest.approx(d.mean() - Z_95 * sps.sem(d))
    assert len(pd.flipped_up) == int((d > 0).sum()) and len(pd.flipped_down) == int((d < 0).sum())
    # pairing: far smaller than the SE of two independent means
    independent = math.sqrt(sps.sem([a[c] for c in common]) ** 2 + sps.sem([b[c] for c in common]) ** 2)
    assert pd.se < independent / 3
    assert pd.distinguishable and pd.ci_low > 0
    assert pd.verdict.endswith("distinguishable from noise (b is higher). 2 cases not in both runs dropped.")


def test_paired_difference_regression_and_flips() -> None:
    a = {f"c{i}": 1.0 for i in range(12)}
    b = {**a, "c0": 0.0, "c1": 0.0, "c2": 0.0, "c3": 0.0, "c4": 0.0, "c5": 0.0}
    pd = paired_difference(a, b)
    assert pd.flipped_down == ("c0", "c1", "c2", "c3", "c4", "c5") and pd.flipped_up == ()
    assert pd.mean == pytest.approx(-0.5) and pd.ci_high < 0
    se = math.sqrt((12 * 0.25 / 11) / 12)  # six -1s and six 0s: s² = 12·0.25/11
    assert pd.se == pytest.approx(se)
    assert f"{-0.5 - 1.96 * se:.2f}, {-0.5 + 1.96 * se:.2f}" == "-0.80, -0.20"
    assert pd.verdict.startswith("\u22120.50 (95% CI \u22120.80 \u2026 \u22120.20) over 12 paired cases")
    assert pd.verdict.endswith("distinguishable from noise (b is lower).")


def test_paired_difference_edge_cases() -> None:
    same = paired_difference({"x": 1.0, "y": 0.0}, {"x": 1.0, "y": 0.0})
    assert (same.mean, same.se, same.distinguishable) == (0.0, 0.0, False)
    assert same.verdict == "+0.00 (95% CI +0.00 \u2026 +0.00) over 2 paired cases: not distinguishable from noise."
    one = paired_difference({"x": 0.0, "y": 1.0}, {"x": 1.0})
    assert one.n == 1 and not one.distinguishable and one.only_in_a == ("y",)
    assert one.verdict == (
        "+1.00 over 1 paired case: too few cases to tell a difference from noise. 1 case not in both runs dropped."
    )
    with pytest.raises(ValueError, match="none in common \\(1 cases in a, 1 in b\\)"):
        paired_difference({"x": 1.0}, {"y": 1.0})
    with pytest.raises(ValueError, match="none in common \\(0 cases in a, 0 in b\\)"):
        paired_difference({}, {})
    with pytest.raises(ValueError, match="not a finite number"):
        paired_difference({"x": 1.0, "y": 0.0}, {"x": float("inf"), "y": 0.0})


# --------------------------------------------------------------------------- power


def _scipy_n(p_a: float, p_b: float, alpha: float, power: float, trials: int, rho: float) -> int:
    va, vb = p_a * (1 - p_a) / trials, p_b * (1 - p_b) / trials
    var = va + vb - 2 * rho * math.sqrt(va * vb)
    z = sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(power)
    return max(2, math.ceil(z**2 * var / (p_b - p_a) ** 2))


def test_cases_needed_textbook_two_proportion_value() -> None:
    # two independent proportions 0.5 vs 0.6, alpha 0.05 two-sided, power 0.8: 385 per arm
    assert cases_needed(0.5, 0.1, paired=False) == 385
    assert cases_needed(0.5, 0.1, paired=True, correlation=0.0) == 385


def test_cases_needed_against_scipy_ppf_formula() -> None:
    rng = np.random.default_rng(5)
    for _ in range(200):
        p = float(rng.uniform(0.05, 0.9))
        delta = float(rng.uniform(0.02, 0.95 - p)) * (1 if rng.random() < 0.7 else -min(1.0, p / 0.95))
        alpha = float(rng.choice([0.01, 0.05, 0.1]))
        power = float(rng.choice([0.8, 0.9]))
        trials = int(rng.integers(1, 6))
        rho = float(rng.uniform(0, 0.9))
        assert cases_needed(p, delta, alpha, power, trials, paired=True, correlation=rho) == _scipy_n(
            p, p + delta, alpha, power, trials, rho
        )
        assert cases_needed(p, delta, alpha, power, trials, paired=False) == _scipy_n(
            p, p + delta, alpha, power, trials, 0.0
        )


def test_cases_needed_directions() -> None:
    assert cases_needed(0.6, 0.1, correlation=0.7) < cases_needed(0.6, 0.1, correlation=0.0)  # pairing helps
    assert cases_needed(0.6, 0.1, trials=3) < cases_needed(0.6, 0.1, trials=1)
    assert cases_needed(0.6, 0.05) > 3 * cases_needed(0.6, 0.1)
    assert cases_needed(0.6, 0.1, power=0.9) > cases_needed(0.6, 0.1, power=0.8)
    assert cases_needed(0.0, 1.0) == 2  # zero variance: the floor of 2 cases


def test_cases_needed_bad_arguments() -> None:
    with pytest.raises(ValueError, match="delta must be a non-zero"):
        cases_needed(0.5, 0.0)
    with pytest.raises(ValueError, match="is not a pass rate"):
        cases_needed(0.9, 0.2)
    with pytest.raises(ValueError, match="base_rate must be in"):
        cases_needed(1.2, -0.1)
    with pytest.raises(ValueError, match="alpha must be in"):
        cases_needed(0.5, 0.1, alpha=0.0)
    with pytest.raises(ValueError, match="power must be in"):
        cases_needed(0.5, 0.1, power=1.0)
    with pytest.raises(ValueError, match="trials must be >= 1"):
        cases_needed(0.5, 0.1, trials=0)
    with pytest.raises(ValueError, match="correlation must be in"):
        cases_needed(0.5, 0.1, correlation=1.5)


@pytest.mark.parametrize(
    ("n", "p", "trials", "rho"),
    [(10, 0.3, 1, 0.5), (20, 0.5, 3, 0.0), (100, 0.7, 1, 0.3), (400, 0.2, 5, 0.8), (30, 0.0, 1, 0.5)],
)
def test_min_detectable_difference_against_scipy_and_inverse_of_cases_needed(n, p, trials, rho) -> None:
    mdd = min_detectable_difference(n, p, trials=trials, correlation=rho)
    assert mdd is not None and 0 < mdd <= 1 - p
    z = sps.norm.ppf(0.975) + sps.norm.ppf(0.8)
    pb = p + mdd
    va, vb = p * (1 - p) / trials, pb * (1 - pb) / trials
    assert z * math.sqrt((va + vb - 2 * rho * math.sqrt(va * vb)) / n) == pytest.approx(mdd, rel=1e-9)
    assert cases_needed(p, mdd * (1 + 1e-9), trials=trials, correlation=rho) <= n
    assert cases_needed(p, mdd * 0.999, trials=trials, correlation=rho) > n


def test_min_detectable_difference_closed_form_when_variance_is_flat() -> None:
    # base rate 0.5: p(1-p) barely moves near 0.5, so the closed form at the base rate is close
    mdd = min_detectable_difference(2000, 0.5, paired=False)
    closed = (sps.norm.ppf(0.975) + sps.norm.ppf(0.8)) * math.sqrt(2 * 0.25 / 2000)
    assert mdd == pytest.approx(closed, rel=5e-3)


def test_power_for_seed_004_ten_cases() -> None:
    # 10 cases, one trial each, base rate 0.6 (layer 3 scored 6/10): at 80% power not even a
    # jump to 10/10 is reliably detected; the +0.2 seen would need 41 paired cases (rho 0.5).
    assert min_detectable_difference(10, 0.6) is None
    assert min_detectable_difference(10, 0.6, correlation=0.0) is None
    assert cases_needed(0.6, 0.2) == 41
    assert cases_needed(0.6, 0.2, correlation=0.0) == 79
    mdd = min_detectable_difference(40, 0.6)
    assert mdd is not None and 0.19 < mdd < 0.21


def test_min_detectable_difference_none_and_errors() -> None:
    assert min_detectable_difference(2, 0.9, correlation=0.0) is None  # not even 0.9 -> 1.0
    with pytest.raises(ValueError, match="no improvement left"):
        min_detectable_difference(10, 1.0)
    with pytest.raises(ValueError, match="n_cases must be >= 1"):
        min_detectable_difference(0, 0.5)


def test_power_is_achieved_in_simulation_with_paired_difference() -> None:
    # Independent Bernoulli runs (rho = 0): with cases_needed cases, the paired_difference
    # verdict should call the difference distinguishable in about 80% of repetitions.
    p, delta = 0.5, 0.2
    n = cases_needed(p, delta, correlation=0.0)
    assert n == _scipy_n(p, p + delta, 0.05, 0.8, 1, 0.0)
    rng = np.random.default_rng(12345)
    ids = [f"c{i}" for i in range(n)]
    hits = 0
    reps = 1500
    for _ in range(reps):
        a = dict(zip(ids, (rng.random(n) < p).astype(float).tolist(), strict=True))
        b = dict(zip(ids, (rng.random(n) < p + delta).astype(float).tolist(), strict=True))
        hits += paired_difference(a, b).distinguishable
    assert 0.75 <= hits / reps <= 0.86
