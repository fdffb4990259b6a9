"""One trial in its series: which evidence it is, its verdict on that evidence, and what the views show of it;
and trials counted by verdict. The rules are webmcp_eval/results/run_results.py's."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from webmcp_eval.trace import Assertion, Trace, assertions_verdict

PASS_K = (3, 5)  # pass@1 is the case pass rate itself
VERDICTS = ("passed", "failed", "not_run")
CODE_KINDS = ("deterministic", "agent", "control", "simulated_user")  # judged by code checks (control: null agent)
CONTROL = "control"
MODEL_GRADER = "model-grader"
HUMAN_LABEL = "human-label"
EVIDENCE_KINDS = (*CODE_KINDS, MODEL_GRADER, HUMAN_LABEL)
# people's labels per trial, from the suite's labels file: (run id, trial id) -> {criterion id: "pass" | "fail"}
Labels = dict[tuple[str, str], dict[str, str]]

SeriesKey = tuple[str, ...]


def series_key(trace: Trace) -> SeriesKey:
    """Which evidence a trial is: ``("deterministic",)``, or ``(kind, agent, model)`` for any other kind."""
    if trace.evidence_kind == "deterministic":
        return ("deterministic",)
    return (trace.evidence_kind, trace.agent, trace.model or "")


def series_label(key: SeriesKey) -> str:
    if len(key) == 1:
        return key[0]
    kind, agent, model = key
    if kind in (MODEL_GRADER, HUMAN_LABEL):  # agent: the grader (or "people"), model: the series judged
        return f"{kind} {agent} on {model}"
    return f"{kind} {agent}" + (f" ({model})" if model else "")


def model_grader_of(trace: Trace) -> str:
    """The model grader that judged the trial's rubric criteria ("" when none did)."""
    graders = [
        str(a.evidence.get("grader") or "")
        for a in trace.assertions
        if a.grader == "model" and isinstance(a.evidence, dict)
    ]
    return str(trace.grader.get("grader") or "") or next((g for g in graders if g), "model")


def evidence_verdict(trace: Trace, assertions: Sequence[Assertion]) -> tuple[str, str]:
    """A trial's verdict on one kind of evidence: passed only when each of ``assertions`` passed.

    A trial that could not run for another reason than missing evidence (its
    browser, site, agent or harness failed) is not_run whatever the assertions.
    """
    if trace.verdict == "not_run" and trace.not_run_kind != "evidence":
        return "not_run", trace.verdict_reason
    return assertions_verdict(list(assertions), "no assertion of this kind of evidence")


def label_assertions(trace: Trace, labels: dict[str, str]) -> list[Assertion]:
    """People's pass/fail per rubric criterion of a trial, as assertions judged by a person."""
    rubric = ((trace.case.get("expect") or {}).get("answer") or {}).get("rubric") or []
    words = {str(c.get("id")): str(c.get("criterion") or "") for c in rubric if isinstance(c, dict)}
    return [
        Assertion(
            id=f"answer.rubric.{cid}",
            kind="rubric",
            description=words.get(cid) or cid,
            status="passed" if value == "pass" else "failed",
            why=f"labelled {value} by a person",
            grader="human",
        )
        for cid, value in sorted(labels.items())
        if value in ("pass", "fail")
    ]


def tokens_total(trace: Trace) -> int | None:
    """The trial's tokens: ``total`` when the agent gave it, else input + output; None without any."""
    if not trace.tokens:
        return None
    if "total" in trace.tokens:
        return int(trace.tokens["total"])
    return int(trace.tokens.get("input", 0)) + int(trace.tokens.get("output", 0))


@dataclass(frozen=True)
class TrialFigures:
    """What the views show of one trial."""

    trace: Trace
    series: SeriesKey
    assertions_passed: int
    assertions_counted: int  # passed or failed: the assertions that ran
    assertions_not_run: int
    tokens: int | None
    tool_calls: int
    writes: int | None  # None when the proxy was off
    verdict: str = "not_run"  # the trial's verdict on this series' evidence (see evidence_verdict)
    reason: str = ""
    assertions: tuple[Assertion, ...] = ()  # this series' assertions of the trial

    @property
    def kind(self) -> str:
        return self.series[0]

    @property
    def attempts(self) -> int:
        return self.trace.attempt

    @property
    def retried(self) -> bool:
        """Played again after an infrastructure failure (--retries); its earlier attempts are in the trace."""
        return self.trace.attempt > 1

    def retry_text(self) -> str:
        """ "2 attempts; attempt 1: not_run (infrastructure): …", or "" for a trial played once."""
        if not self.retried:
            return ""
        first = "; ".join(
            f"attempt {a.attempt}: {a.verdict} ({a.kind}): {a.reason}" for a in self.trace.earlier_attempts
        )
        return f"{self.attempts} attempts; {first}"

    @classmethod
    def of(cls, trace: Trace) -> TrialFigures:
        """The trial in its code-checked series (deterministic or agent): code-checked assertions only.

        A model grader's verdicts are another kind of evidence (:meth:`graded`): never pooled with
        the code checks, neither in the rates nor in the series' verdict of the trial.
        """
        checked = [a for a in trace.assertions if a.grader == "code"]
        # Only a grader that gated the trial's verdict can have made it differ from the code checks' own.
        pooled = any(a.grader != "code" and a.gates for a in trace.assertions)
        return cls.graded(trace, series_key(trace), checked, judge=pooled)

    @classmethod
    def graded(
        cls, trace: Trace, series: SeriesKey, assertions: Sequence[Assertion], judge: bool = True
    ) -> TrialFigures:
        """The trial in ``series``, judged on ``assertions`` alone (``judge=False``: the trace's verdict is theirs)."""
        counted = sum(a.status != "not_run" for a in assertions)
        verdict, reason = evidence_verdict(trace, assertions) if judge else (trace.verdict, trace.verdict_reason)
        grader = series[0] in (MODEL_GRADER, HUMAN_LABEL)
        return cls(
            trace=trace,
            series=series,
            assertions_passed=sum(a.status == "passed" for a in assertions),
            assertions_counted=counted,
            assertions_not_run=len(assertions) - counted,
            tokens=grader_tokens(trace) if series[0] == MODEL_GRADER else None if grader else tokens_total(trace),
            tool_calls=0 if grader else len(trace.calls),
            writes=None if grader or not trace.network.available else trace.write_total,
            verdict=verdict,
            reason=reason,
            assertions=tuple(assertions),
        )


def grader_tokens(trace: Trace) -> int | None:
    used = trace.grader.get("tokens") or {}
    if not isinstance(used, dict) or not used:
        return None
    return int(used.get("total") or (int(used.get("input", 0)) + int(used.get("output", 0))))


def grader_series(trace: Trace, labels: Labels | None = None) -> list[TrialFigures]:
    """The trial in the grader series it belongs to: its model grader's verdicts, people's labels."""
    of = series_label(series_key(trace))
    out = []
    judged = [a for a in trace.assertions if a.grader == "model"]
    if judged:
        out.append(TrialFigures.graded(trace, (MODEL_GRADER, model_grader_of(trace), of), judged))
    labelled = (labels or {}).get((trace.run_id, trace.trial_id))
    if labelled:
        out.append(TrialFigures.graded(trace, (HUMAN_LABEL, "people", of), label_assertions(trace, labelled)))
    return out


@dataclass(frozen=True)
class Counts:
    """Trials by verdict; ``missing``: planned trials with no trace; ``retried``: trials played more than once."""

    passed: int = 0
    failed: int = 0
    not_run: int = 0
    missing: int = 0
    retried: int = 0

    @classmethod
    def of(cls, traces: Iterable[Trace], missing: int = 0) -> Counts:
        traces = list(traces)
        c = Counter(t.verdict for t in traces)
        retried = sum(t.attempt > 1 for t in traces)
        return cls(passed=c["passed"], failed=c["failed"], not_run=c["not_run"], missing=missing, retried=retried)

    @classmethod
    def of_figures(cls, figures: Iterable[TrialFigures], missing: int = 0) -> Counts:
        """Trials by their verdict within one series."""
        figures = list(figures)
        c = Counter(f.verdict for f in figures)
        retried = sum(f.retried for f in figures)
        return cls(passed=c["passed"], failed=c["failed"], not_run=c["not_run"], missing=missing, retried=retried)

    @property
    def trials(self) -> int:
        """Trials with a trace."""
        return self.passed + self.failed + self.not_run

    @property
    def ran(self) -> int:
        return self.passed + self.failed

    def as_dict(self) -> dict[str, int]:
        verdicts = {"trials": self.trials, "passed": self.passed, "failed": self.failed, "not_run": self.not_run}
        return verdicts | ({"missing": self.missing} if self.missing else {}) | {"retried": self.retried}
