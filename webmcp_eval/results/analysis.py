"""Why runs failed, across runs: failing trials grouped by failing assertion and message (``webmcp-eval analyze``).

Read-only over the traces: nothing here judges a trial or changes a verdict.

- A **group** is one failing assertion id with one message (its ``why``, with
  numbers written as ``N`` so "3 seen" and "2 seen" are one pattern), over every
  run given: how many failing trials show it, in which cases and runs, with a
  link to each trace file.
- Each case that failed somewhere gets a **pattern** over the runs (given oldest
  first): ``every`` run it was played in, ``some`` runs, or ``new`` (failed in the
  last run only, and played and not failed in an earlier one).

Only trials whose verdict is ``failed`` count, and only their failed assertions
that gate the verdict (an advisory model grader's failures are not why a trial failed).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.trace import Assertion, Trace

NUMBER = re.compile(r"\d+(?:\.\d+)?")
PATTERNS = ("every", "some", "new")


@dataclass(frozen=True)
class FailingTrial:
    run: str  # the run's directory name, as given
    run_index: int  # its place among the runs given (0: the oldest)
    case_id: str
    trial_id: str
    trace_file: Path  # the trace's file
    why: str  # the assertion's own message, unnormalised


@dataclass
class FailureGroup:
    assertion: str  # the assertion id, e.g. calls.expected[0]
    kind: str
    description: str
    message: str  # the why, numbers as N
    trials: list[FailingTrial] = field(default_factory=list)
    explanation: dict[str, Any] | None = None  # a model's reading (webmcp_eval/judge/analyst.py), when asked

    @property
    def key(self) -> str:
        """A stable name for the group (cassettes, anchors): a digest of assertion and message."""
        digest = hashlib.sha256(f"{self.assertion}\n{self.message}".encode()).hexdigest()[:12]
        return f"{re.sub(r'[^A-Za-z0-9_.-]', '_', self.assertion)}-{digest}"

    @property
    def cases(self) -> list[str]:
        return sorted({t.case_id for t in self.trials})

    @property
    def runs(self) -> list[str]:
        return list(dict.fromkeys(t.run for t in sorted(self.trials, key=lambda t: t.run_index)))


@dataclass(frozen=True)
class CasePattern:
    case_id: str
    pattern: str  # every, some or new
    failed_in: tuple[str, ...]  # runs where a trial of it failed
    played_in: tuple[str, ...]  # runs where a trial of it ran (passed or failed)
    failed_trials: int


@dataclass
class Analysis:
    runs: list[str]
    trials: int  # every trial read
    failed_trials: int
    groups: list[FailureGroup]
    cases: list[CasePattern]

    def cases_with(self, pattern: str) -> list[CasePattern]:
        return [c for c in self.cases if c.pattern == pattern]


def message_of(assertion: Assertion) -> str:
    """The assertion's message as a pattern: whitespace collapsed, numbers as N."""
    return NUMBER.sub("N", " ".join(assertion.why.split()))


def failing_assertions(trace: Trace) -> list[Assertion]:
    return [a for a in trace.assertions if a.status == "failed" and a.gates]


def analyse(runs: Sequence[tuple[str, Path, Sequence[Trace]]]) -> Analysis:
    """``runs``: (name, directory, traces) per run, oldest first."""
    groups: dict[tuple[str, str], FailureGroup] = {}
    played: dict[str, list[str]] = {}
    failed: dict[str, list[str]] = {}
    failed_trials: dict[str, int] = {}
    total = n_failed = 0
    for index, (name, directory, traces) in enumerate(runs):
        for trace in sorted(traces, key=lambda t: t.trial_id):
            total += 1
            if trace.verdict in ("passed", "failed"):
                played.setdefault(trace.case_id, []).append(name)
            if trace.verdict != "failed":
                continue
            n_failed += 1
            failed.setdefault(trace.case_id, []).append(name)
            failed_trials[trace.case_id] = failed_trials.get(trace.case_id, 0) + 1
            for a in failing_assertions(trace):
                group = groups.setdefault(
                    (a.id, message_of(a)), FailureGroup(a.id, a.kind, a.description, message_of(a))
                )
                path = RunDir(directory).trace(trace.trial_id)
                group.trials.append(FailingTrial(name, index, trace.case_id, trace.trial_id, path, a.why))
    names = [name for name, _, _ in runs]
    cases = [
        CasePattern(
            case_id,
            _pattern(names, set(failed[case_id]), set(played.get(case_id, []))),
            tuple(n for n in names if n in failed[case_id]),
            tuple(n for n in names if n in played.get(case_id, [])),
            failed_trials[case_id],
        )
        for case_id in sorted(failed)
    ]
    ordered = sorted(groups.values(), key=lambda g: (-len(g.trials), g.assertion, g.message))
    return Analysis(names, total, n_failed, ordered, cases)


def _pattern(runs: list[str], failed_in: set[str], played_in: set[str]) -> str:
    """every: failed in each run it was played in; new: failed only in the last, played earlier; else some."""
    if failed_in >= played_in:
        return "every"
    if len(runs) > 1 and failed_in == {runs[-1]} and played_in - failed_in:
        return "new"
    return "some"
