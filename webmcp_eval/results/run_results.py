"""The results of one run or several merged: every figure a report shows, computed once.

Traces (and each run's plan, when it has one) go in; a :class:`Results` comes
out, and every view renders it without computing anything of its own: the
console table, ``summary.json``, JUnit, the HTML report, the Markdown summary
and ``compare``.

Results are keyed by **series**, and a series key starts with the evidence
kind: ``("deterministic",)`` for the reference agent playing the case's plan
and ``("agent", agent, model)`` for a model or harness driving the tools, both
judged by code checks; ``("model-grader", grader, of)`` for a model grader's
verdicts on the rubric criteria of the trials of series ``of``; and
``("human-label", "people", of)`` for people's labels of those criteria, when
a labels file is given. Evidence of different series is never pooled into one
rate: there is no figure over all series except the counts of trials.

A trial's verdict **within a series** is judged on that series' assertions
only: code-checked assertions for deterministic and agent series, the model
grader's for its series, the labels for people's. A model grader that fails a
trial (even one that gates the trial's own verdict) leaves the code-checked
series' verdict and score as the code checks made them, and the other way round.
A trial that could not run (its browser, site or harness failed) is not_run in
every series it is in.

The rules, one each, used by every view:

* **not_run** trials are no evidence: left out of every rate and of pass@k,
  counted and shown. A case whose trials all were not_run has no rates.
* **Assertions counted** are those that ran (passed or failed), in trials that
  ran; an assertion that could not run is shown as not run, never in a rate.
* **Case pass rate** of a case: passed / trials that ran (the gate). The
  **per-assertion pass rate** of a case: passed / counted assertions over its
  trials that ran (the diagnosis). Suite figures are means over cases, each
  case weighing the same, with standard errors clustered by behaviour
  (:mod:`webmcp_eval.results.stats`).
* **pass@k / pass^k** for k in 3 and 5, when some case of the series has at
  least k trials that ran; a case with fewer is left out of that k.
* **Tokens** of a trial: its ``total`` when the agent gave one, else input +
  output. **Cost** (time, tool calls, tokens, money) counts every trial,
  not_run ones too: it is what the run spent.
* **Retried**: a trial whose trace is a later attempt (``--retries``, webmcp_eval/retry.py): it could not
  run at first for an infrastructure reason. Its last attempt is its verdict; every view lists it.
* **Flaky**: a case of the deterministic series (the reference agent plays the same plan every
  time) that passed in some trials and failed in others: the site behaved differently.
* **Completeness**: a run directory with ``plan.json`` is complete when every
  planned trial has a trace, else "incomplete: N of M trials"; without a plan
  (runs from before plans) its completeness is unknown, never "complete".
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from webmcp_eval import as_user_knows
from webmcp_eval.results.completeness import Completeness, RunStatus, plan_series
from webmcp_eval.results.cost import CostSummary
from webmcp_eval.results.stats import CaseScore, SuiteScore, signed
from webmcp_eval.results.text import interval, interval_text, money, num, pct, pts, seconds
from webmcp_eval.results.trial_figures import (
    CONTROL,
    EVIDENCE_KINDS,
    HUMAN_LABEL,
    MODEL_GRADER,
    PASS_K,
    Counts,
    Labels,
    SeriesKey,
    TrialFigures,
    evidence_verdict,
    grader_series,
    label_assertions,
    model_grader_of,
    series_key,
    series_label,
    tokens_total,
)
from webmcp_eval.rundir.plan import RunPlan
from webmcp_eval.trace import Trace

__all__ = [
    "CONTROL",
    "NO_AGENT",
    "NoAgentPass",
    "as_results",
    "CaseResult",
    "Completeness",
    "CostSummary",
    "Counts",
    "EVIDENCE_KINDS",
    "HUMAN_LABEL",
    "Labels",
    "MODEL_GRADER",
    "Results",
    "RunInput",
    "RunStatus",
    "SeriesKey",
    "SeriesResult",
    "TrialFigures",
    "build_results",
    "evidence_verdict",
    "grader_series",
    "label_assertions",
    "model_grader_of",
    "null_agent_reason",
    "plan_series",
    "interval",
    "interval_text",
    "money",
    "num",
    "pct",
    "pts",
    "results_of",
    "seconds",
    "series_key",
    "series_label",
    "series_order",
    "signed",
    "tokens_total",
]

# --------------------------------------------------------------------------- cases and series


@dataclass(frozen=True)
class CaseResult:
    """One case in one series: its trials, counts, both rates, pass@k / pass^k and cost."""

    case_id: str
    behaviour: str
    title: str
    case_file: str
    trials: tuple[TrialFigures, ...]
    counts: Counts
    score: CaseScore | None  # None when no trial ran
    assertions_passed: int  # over the trials that ran
    assertions_counted: int
    pass_at: dict[int, float | None]
    pass_hat: dict[int, float | None]
    cost: CostSummary
    missing: tuple[str, ...] = ()  # planned trial ids without a trace
    purpose: str = ""  # the case's purpose: capability, regression, or "" (unlabelled)

    @property
    def case_pass_rate(self) -> float | None:
        return self.score.case_pass_rate if self.score else None

    @property
    def assertion_pass_rate(self) -> float | None:
        return self.score.assertion_pass_rate if self.score else None

    @property
    def flaky(self) -> bool:
        """The reference agent's plan passed in some trials and failed in others: the site is not deterministic.

        (An agent's series varies by its own nature: there it is what pass@k and pass^k measure.)
        """
        return self.series_kind == "deterministic" and self.counts.passed > 0 and self.counts.failed > 0

    def flaky_text(self) -> str:
        return f"{self.case_id}: passed {self.counts.passed} of {self.counts.ran} trials under the reference agent"

    @property
    def series_kind(self) -> str:
        return self.trials[0].series[0] if self.trials else ""

    @property
    def verdict(self) -> str:
        """failed when a trial failed; passed when one passed; else not_run (nothing ran)."""
        return "failed" if self.counts.failed else "passed" if self.counts.passed else "not_run"


@dataclass(frozen=True)
class SeriesResult:
    """One kind of evidence (deterministic, or one agent and model): its cases and suite figures."""

    key: SeriesKey
    cases: tuple[CaseResult, ...]
    counts: Counts
    score: SuiteScore | None  # None when no trial ran
    ks: tuple[int, ...]
    cost: CostSummary
    assertions_passed: int
    assertions_counted: int

    @property
    def label(self) -> str:
        return series_label(self.key)

    @property
    def kind(self) -> str:
        return self.key[0]

    @property
    def traces(self) -> list[Trace]:
        return [f.trace for c in self.cases for f in c.trials]

    @property
    def is_model(self) -> bool:
        return self.kind != "deterministic" and any(t.tokens or t.cost_usd is not None or t.model for t in self.traces)

    def case(self, case_id: str) -> CaseResult | None:
        return next((c for c in self.cases if c.case_id == case_id), None)

    @property
    def by_purpose(self) -> dict[str, tuple[int, float | None]]:
        """purpose -> (cases, mean case pass rate over those that ran): capability and regression apart.

        Empty when no case says its purpose; cases that do not are "unlabelled"."""
        if not any(c.purpose for c in self.cases):
            return {}
        groups: dict[str, list[CaseResult]] = defaultdict(list)
        for c in self.cases:
            groups[c.purpose or "unlabelled"].append(c)
        out = {}
        for purpose, cases in sorted(groups.items()):
            rates = [r for c in cases if (r := c.case_pass_rate) is not None]
            out[purpose] = (len(cases), sum(rates) / len(rates) if rates else None)
        return out


NO_AGENT = "passes with no agent"


@dataclass(frozen=True)
class NoAgentPass:
    """A case the do-nothing control passes: measured (the null agent passed it here) or said by the case."""

    case_id: str
    reason: str  # the case's null_agent reason; "" when the case does not say why
    seen: bool  # the null agent passed it in these results (False: only the case says so)

    def text(self) -> str:
        how = "the null agent passed it" if self.seen else "the case says the null agent passes it"
        why = f"why: {self.reason}" if self.reason else "unexplained: the case does not say why (null_agent)"
        return f"{self.case_id}: {NO_AGENT} ({how}; {why})"


def null_agent_reason(trace: Trace) -> str:
    """The reason a case gives for the null agent passing it ("" when it gives none)."""
    said = trace.case.get("null_agent")
    return str(said.get("reason") or "") if isinstance(said, dict) and said.get("passes") else ""


@dataclass(frozen=True)
class Results:
    series: tuple[SeriesResult, ...]
    trials: tuple[TrialFigures, ...]  # in the order given (run order)
    counts: Counts  # trials by verdict over every series: counts only, never a rate
    completeness: Completeness
    case_ids: tuple[str, ...]

    @property
    def traces(self) -> list[Trace]:
        return [f.trace for f in self.trials]

    @property
    def run_ids(self) -> list[str]:
        return sorted({t.run_id for t in self.traces} | {r.run_id for r in self.completeness.runs if r.run_id})

    @property
    def repeated(self) -> bool:
        """Some case has more than one trial (or planned trial) in a series: one row per case, not per trial."""
        return any(len(c.trials) + len(c.missing) > 1 for s in self.series for c in s.cases)

    def get(self, key: SeriesKey | str) -> SeriesResult | None:
        want = (key,) if isinstance(key, str) else key
        return next((s for s in self.series if s.key == want), None)

    @property
    def problems(self) -> list[TrialFigures]:
        """Trials that did not pass, in run order."""
        return [f for f in self.trials if f.trace.verdict != "passed"]

    @property
    def retried(self) -> list[TrialFigures]:
        """Trials played again after an infrastructure failure, in run order."""
        return [f for f in self.trials if f.retried]

    @property
    def flaky(self) -> list[CaseResult]:
        """Cases the reference agent passed only sometimes (see CaseResult.flaky)."""
        return [c for s in self.series for c in s.cases if c.flaky]

    @property
    def passes_with_no_agent(self) -> list[NoAgentPass]:
        """Cases the null agent passed in these results, or that say it passes them (``null_agent``)."""
        seen = {c.case_id for s in self.series if s.kind == CONTROL for c in s.cases if c.counts.passed}
        reasons: dict[str, str] = {}
        for f in self.trials:
            reasons[f.trace.case_id] = reasons.get(f.trace.case_id) or null_agent_reason(f.trace)
        return [
            NoAgentPass(cid, reasons.get(cid, ""), cid in seen)
            for cid in self.case_ids
            if cid in seen or reasons.get(cid)
        ]

    def no_agent(self, case_id: str) -> NoAgentPass | None:
        return next((n for n in self.passes_with_no_agent if n.case_id == case_id), None)

    @property
    def gate_counts(self) -> Counts:
        """The counts an exit code is judged on: the control played beside an agent (run --control) is
        expected to fail, so it decides nothing unless it is all there is."""
        chosen = [t for t in self.traces if t.evidence_kind != CONTROL]
        return Counts.of(chosen, missing=self.counts.missing) if chosen else self.counts


@dataclass
class RunInput:
    """The traces of one run directory and its plan (None: a run from before plans)."""

    traces: Sequence[Trace]
    plan: RunPlan | None = None
    run_id: str = ""


def _status(run: RunInput) -> RunStatus:
    run_id = run.run_id or (run.plan["run_id"] if run.plan else "") or next((t.run_id for t in run.traces), "")
    if run.plan is None:
        return RunStatus(run_id=run_id, planned=None, traced=len(run.traces))
    have = {t.trial_id for t in run.traces}
    missing = tuple(p for p in run.plan["trials"] if p["trial_id"] not in have)
    return RunStatus(
        run_id=run_id, planned=len(run.plan["trials"]), traced=len(run.plan["trials"]) - len(missing), missing=missing
    )


def _missing_series(run: RunInput) -> SeriesKey:
    """A missing trial belongs to the series its run's traces are (else the plan's)."""
    keys = Counter(series_key(t) for t in run.traces)
    return keys.most_common(1)[0][0] if keys else plan_series(run.plan) if run.plan else ("deterministic",)


def _case_result(
    case_id: str, figures: list[TrialFigures], missing: list[str], info: dict[str, tuple[str, str, str]]
) -> CaseResult:
    # Trial order, not the order the runs or shards were read in: a merge lists trials as the whole run does.
    figures = sorted(figures, key=lambda f: (f.trace.trial_index, f.trace.trial_id, f.trace.run_id))
    purpose = next((str(f.trace.case.get("purpose") or "") for f in figures if f.trace.case), "")
    counted = [f for f in figures if f.verdict != "not_run"]
    score = (
        CaseScore.from_trials((f.verdict == "passed", f.assertions_passed, f.assertions_counted) for f in counted)
        if counted
        else None
    )
    traces = [f.trace for f in figures]
    behaviour, title, case_file = info[case_id]
    return CaseResult(
        case_id=case_id,
        behaviour=behaviour,
        title=title,
        case_file=case_file,
        trials=tuple(figures),
        counts=Counts.of_figures(figures, missing=len(missing)),
        score=score,
        assertions_passed=sum(f.assertions_passed for f in counted),
        assertions_counted=sum(f.assertions_counted for f in counted),
        pass_at={k: score.pass_at(k) if score and score.n >= k else None for k in PASS_K},
        pass_hat={k: score.pass_hat(k) if score and score.n >= k else None for k in PASS_K},
        cost=_cost(figures[0].kind if figures else "", traces),
        missing=tuple(missing),
        purpose=purpose,
    )


def _cost(kind: str, traces: Sequence[Trace]) -> CostSummary:
    """What a series spent: the trials', a model grader's judging, or nothing counted for people's labels."""
    if kind == MODEL_GRADER:
        return CostSummary.of_grader(traces)
    if kind == HUMAN_LABEL:
        return CostSummary(len(traces), len({t.case_id for t in traces}), 0.0, 0, None, None)
    return CostSummary.of(traces)


def _series_result(key: SeriesKey, cases: list[CaseResult]) -> SeriesResult:
    scored = [(c.case_id, c.behaviour, c.score) for c in cases if c.score is not None]
    max_n = max((s.n for _, _, s in scored), default=0)
    ks = tuple(k for k in PASS_K if k <= max_n)
    traces = [f.trace for c in cases for f in c.trials]
    return SeriesResult(
        key=key,
        cases=tuple(cases),
        counts=Counts(
            passed=sum(c.counts.passed for c in cases),
            failed=sum(c.counts.failed for c in cases),
            not_run=sum(c.counts.not_run for c in cases),
            missing=sum(c.counts.missing for c in cases),
            retried=sum(c.counts.retried for c in cases),
        ),
        score=SuiteScore.from_cases(scored, ks=ks) if scored else None,
        ks=ks,
        cost=_cost(key[0], traces),
        assertions_passed=sum(c.assertions_passed for c in cases),
        assertions_counted=sum(c.assertions_counted for c in cases),
    )


def series_order(key: SeriesKey) -> tuple[int, SeriesKey]:
    """Deterministic first, then agents, then model graders, then people's labels."""
    kind = EVIDENCE_KINDS.index(key[0]) if key[0] in EVIDENCE_KINDS else len(EVIDENCE_KINDS)
    return (kind, key)


def build_results(runs: Sequence[RunInput], labels: Labels | None = None) -> Results:
    """Everything the reports show, from the traces (and plans) of one or more run directories.

    ``labels``: people's labels of rubric criteria (the suite's labels file), a series of their own.
    """
    statuses = tuple(_status(r) for r in runs)
    traces = [t for r in runs for t in r.traces]
    info: dict[str, tuple[str, str, str]] = {}
    by_series: dict[SeriesKey, dict[str, list[TrialFigures]]] = defaultdict(lambda: defaultdict(list))
    missing: dict[SeriesKey, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    own: list[TrialFigures] = []
    for t in traces:
        info.setdefault(t.case_id, (t.behaviour, t.title, as_user_knows(t.case_file)))
        own.append(TrialFigures.of(t))  # one per trial: its series' and the run order's are the same
        for f in (own[-1], *grader_series(t, labels)):
            by_series[f.series][t.case_id].append(f)
    for run, status in zip(runs, statuses, strict=True):
        key = _missing_series(run)
        files = {c["id"]: c["file"] for c in run.plan["cases"]} if run.plan else {}
        for m in status.missing:
            info.setdefault(m["case_id"], ("", "", as_user_knows(files.get(m["case_id"], ""))))
            missing[key][m["case_id"]].append(m["trial_id"])
    case_ids = tuple(
        dict.fromkeys([*(t.case_id for t in traces), *(m["case_id"] for s in statuses for m in s.missing)])
    )
    series = []
    for key in sorted(set(by_series) | set(missing), key=series_order):
        ids = [cid for cid in case_ids if cid in by_series[key] or cid in missing[key]]
        rows = [_case_result(cid, by_series[key].get(cid, []), missing[key].get(cid, []), info) for cid in ids]
        series.append(_series_result(key, rows))
    return Results(
        series=tuple(series),
        trials=tuple(own),
        counts=Counts.of(traces, missing=sum(len(s.missing) for s in statuses)),
        completeness=Completeness(statuses),
        case_ids=case_ids,
    )


def results_of(traces: Sequence[Trace], plan: RunPlan | None = None, labels: Labels | None = None) -> Results:
    """The results of one run's traces (completeness unknown without its plan)."""
    return build_results([RunInput(list(traces), plan)], labels)


def as_results(results_or_traces: Results | Sequence[Trace]) -> Results:
    """Results as they are, or the results of one run's traces (what every view accepts)."""
    return results_or_traces if isinstance(results_or_traces, Results) else results_of(results_or_traces)
