"""People's labels on rubric criteria, and how well a model grader agrees with them.

The order for what code cannot check (docs/design.md, "Who judges"): people judge a batch of trials
against the fixed rubric first; that batch calibrates the model grader; the
model grader may gate a run only while it agrees with people well enough.

The labels file lives beside the suite (``cases/labels.json``). It holds the
threshold the suite sets (``min_kappa``), and per labelled trial: what the
grader saw (the record, so a trial can be re-read and re-graded without its
run directory), the person's pass/fail per criterion, and the verdicts of each
model grader that judged it (by grader id). ``webmcp-eval label`` adds to it;
``webmcp-eval calibrate`` reports Cohen's kappa, the confusion matrix and the
agreement per criterion; ``run --grader`` asks :func:`gate_for` whether the
grader's verdicts may decide.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from webmcp_eval.data_file import FileProblem, load_json
from webmcp_eval.errors import InvalidInput
from webmcp_eval.trace import Trace, write_atomic

LABELS_FORMAT = "webmcp-eval labels"
LABELS_FILE = "labels.json"
DEFAULT_MIN_KAPPA = 0.6  # "substantial" agreement (Landis & Koch 1977)
DEFAULT_MIN_LABELS = 10

Mark = Literal["pass", "fail"]


class LabelledTrial(BaseModel):
    model_config = ConfigDict(extra="forbid")

    case: str
    trial: str
    run_id: str
    record: dict[str, Any]  # what the grader saw (webmcp_eval.judge.grader.grader_record)
    labels: dict[str, Mark] = Field(default_factory=dict)  # criterion id -> the person's verdict
    graders: dict[str, dict[str, Mark]] = Field(default_factory=dict)  # grader id -> criterion id -> verdict
    labeller: str = ""
    labelled_at: str = ""
    note: str = ""


class LabelsError(InvalidInput, ValueError):
    """A labels file that cannot be read (a folder, not JSON, not a labels file): one line that names it, exit 2,
    the same in every command that reads it (label, calibrate, report, compare)."""


class LabelsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: str = LABELS_FORMAT
    version: int = 1
    min_kappa: float = Field(default=DEFAULT_MIN_KAPPA, description="below this a model grader may not gate a run")
    min_labels: int = Field(default=DEFAULT_MIN_LABELS, description="labelled criteria a calibration needs")
    trials: list[LabelledTrial] = Field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> LabelsFile:
        if path.is_dir():
            raise LabelsError(f"{path}: a folder, not a labels file (give a .json file, new or existing)")
        if not path.is_file():
            return cls()
        try:
            return cls.model_validate(load_json(path))
        except FileProblem as err:
            raise LabelsError(err.at(path)) from None
        except ValueError as err:
            raise LabelsError(f"{path}: not a labels file: {str(err).splitlines()[0]}") from None

    def save(self, path: Path) -> None:
        write_atomic(path, self.model_dump_json(indent=2) + "\n")

    def find(self, run_id: str, trial: str) -> LabelledTrial | None:
        return next((t for t in self.trials if t.run_id == run_id and t.trial == trial), None)


# ---- agreement -----------------------------------------------------------------------------


@dataclass
class Agreement:
    """Cohen's kappa of (person, model) pairs, with the confusion matrix (rows: person, columns: model)."""

    n: int = 0
    both_pass: int = 0
    person_pass_model_fail: int = 0
    person_fail_model_pass: int = 0
    both_fail: int = 0

    def add(self, person: str, model: str) -> None:
        self.n += 1
        if person == "pass":
            self.both_pass += model == "pass"
            self.person_pass_model_fail += model == "fail"
        else:
            self.person_fail_model_pass += model == "pass"
            self.both_fail += model == "fail"

    @property
    def observed(self) -> float | None:
        return (self.both_pass + self.both_fail) / self.n if self.n else None

    @property
    def kappa(self) -> float | None:
        """(p_o - p_e) / (1 - p_e); None when chance agreement is total (one label only: kappa is undefined)."""
        if not self.n:
            return None
        person_pass = (self.both_pass + self.person_pass_model_fail) / self.n
        model_pass = (self.both_pass + self.person_fail_model_pass) / self.n
        expected = person_pass * model_pass + (1 - person_pass) * (1 - model_pass)
        if expected >= 1:
            return None
        return ((self.observed or 0.0) - expected) / (1 - expected)

    def matrix(self) -> list[list[int]]:
        return [[self.both_pass, self.person_pass_model_fail], [self.person_fail_model_pass, self.both_fail]]


@dataclass
class Calibration:
    grader: str
    min_kappa: float
    min_labels: int
    overall: Agreement = field(default_factory=Agreement)
    per_criterion: dict[str, Agreement] = field(default_factory=dict)  # "CASE criterion" -> agreement
    unjudged: int = 0  # labels the grader gave no verdict for

    @property
    def gates(self) -> bool:
        kappa = self.overall.kappa
        return self.overall.n >= self.min_labels and kappa is not None and kappa >= self.min_kappa

    @property
    def why(self) -> str:
        kappa = self.overall.kappa
        shown = "undefined" if kappa is None else f"{kappa:.2f}"
        if self.overall.n < self.min_labels:
            return f"{self.overall.n} labelled criteria for {self.grader}, the suite needs {self.min_labels}"
        if not self.gates:
            return f"Cohen's kappa {shown} with people's labels is below the suite's {self.min_kappa:g}"
        return f"Cohen's kappa {shown} over {self.overall.n} labels (suite threshold {self.min_kappa:g})"


def calibrate(labels: LabelsFile, grader_id: str) -> Calibration:
    cal = Calibration(grader_id, labels.min_kappa, labels.min_labels)
    for t in labels.trials:
        verdicts = t.graders.get(grader_id, {})
        for criterion, person in t.labels.items():
            model = verdicts.get(criterion)
            if model is None:
                cal.unjudged += 1
                continue
            cal.overall.add(person, model)
            cal.per_criterion.setdefault(f"{t.case} {criterion}", Agreement()).add(person, model)
    return cal


def graders_in(labels: LabelsFile) -> list[str]:
    return sorted({g for t in labels.trials for g in t.graders})


def calibration_text(cal: Calibration) -> str:
    def k(a: Agreement) -> str:
        return "undefined" if a.kappa is None else f"{a.kappa:.2f}"

    m = cal.overall.matrix()
    lines = [
        f"grader {cal.grader}: Cohen's kappa {k(cal.overall)} over {cal.overall.n} labelled criteria "
        f"(observed agreement {0 if cal.overall.observed is None else cal.overall.observed:.0%})",
        "  confusion (rows: people, columns: model)   model pass  model fail",
        f"    people pass                               {m[0][0]:>10}  {m[0][1]:>10}",
        f"    people fail                               {m[1][0]:>10}  {m[1][1]:>10}",
        "  per criterion:",
    ]
    for name, a in sorted(cal.per_criterion.items()):
        lines.append(f"    {name:<40} n={a.n:<3} agreement {a.observed:.0%}  kappa {k(a)}")
    if cal.unjudged:
        lines.append(f"  {cal.unjudged} label(s) this grader has no verdict for")
    verdict = "may gate a run" if cal.gates else "may NOT gate a run (its verdicts are advisory)"
    lines.append(f"  → {verdict}: {cal.why}")
    return "\n".join(lines)


def gate_for(labels_path: Path, grader_id: str) -> tuple[bool, str]:
    """May this grader's verdicts decide a run? (yes/no, why) from the suite's labels file."""
    try:
        labels = LabelsFile.load(labels_path)
    except ValueError as err:
        return False, str(err)
    if not labels.trials:
        return False, f"no labels at {labels_path}: label trials first (webmcp-eval label RUN_DIR)"
    cal = calibrate(labels, grader_id)
    return cal.gates, cal.why


# ---- labelling in the terminal ------------------------------------------------------------


def trials_to_label(traces: list[Trace], sample: int, seed: int = 0) -> list[Trace]:
    """Every failing trial with rubric criteria, then a seeded sample of the others."""
    with_rubric = [t for t in traces if _rubric(t) and t.verdict != "not_run"]
    failing = [t for t in with_rubric if t.verdict == "failed"]
    rest = [t for t in with_rubric if t.verdict != "failed"]
    random.Random(seed).shuffle(rest)
    return failing + rest[:sample]


def _rubric(trace: Trace) -> list[dict[str, Any]]:
    return list(((trace.case.get("expect") or {}).get("answer") or {}).get("rubric") or [])


def show_trial(trace: Trace) -> str:
    """What a person reads before judging: the request, the calls and the answer (the grader's verdict hidden)."""
    lines = [f"== {trace.trial_id} ({trace.run_id}) · {trace.case_id} {trace.title} · verdict {trace.verdict}"]
    for message in trace.prompt:
        lines.append(f"  user: {message}")
    for c in trace.calls:
        outcome = c.error or json.dumps(c.result, ensure_ascii=False)[:300]
        lines.append(f"  call #{c.index} {c.tool}({json.dumps(c.args, ensure_ascii=False)}) → {outcome}")
    if not trace.calls:
        lines.append("  (no tool calls)")
    if trace.network.writes:
        writes = ", ".join(f"{m.method} {m.path}" for m in trace.network.writes)
        lines.append(f"  writes: {writes}")
    lines.append(f"  answer: {trace.ai_result or '(none)'}")
    return "\n".join(lines)


def label_trials(
    traces: list[Trace],
    labels: LabelsFile,
    path: Path,
    ask: Callable[[str], str],
    say: Callable[[str], None],
    labeller: str = "",
) -> int:
    """Walk the trials, ask pass/fail/skip per criterion, save after every trial; answer how many were labelled."""
    from webmcp_eval.judge.grader import grader_record
    from webmcp_eval.suite.case import Case

    done = 0
    for trace in traces:
        if labels.find(trace.run_id, trace.trial_id):
            continue
        say(show_trial(trace))
        entry = LabelledTrial(
            case=trace.case_id,
            trial=trace.trial_id,
            run_id=trace.run_id,
            record=grader_record(Case.model_validate(trace.case), trace),
            labeller=labeller,
        )
        for criterion in _rubric(trace):
            while True:
                answer = ask(f"  {criterion['id']}: {criterion['criterion']}\n  [p]ass / [f]ail / [s]kip / [q]uit > ")
                answer = answer.strip().lower()[:1]
                if answer in ("p", "f", "s", "q"):
                    break
                say("  please answer p, f, s or q")
            if answer == "q":
                return done
            if answer in ("p", "f"):
                entry.labels[criterion["id"]] = "pass" if answer == "p" else "fail"
        entry.graders = grader_marks(trace)
        if entry.labels:
            entry.labelled_at = datetime.now(UTC).isoformat(timespec="seconds")
            labels.trials.append(entry)
            labels.save(path)
            done += 1
    return done


def grader_marks(trace: Trace) -> dict[str, dict[str, Mark]]:
    """The model graders' pass/fail per criterion in a trial (grader id -> criterion id -> mark)."""
    out: dict[str, dict[str, Mark]] = {}
    for a in trace.assertions:
        grader = (a.evidence or {}).get("grader") if isinstance(a.evidence, dict) else None
        if a.grader == "model" and grader and a.status in ("passed", "failed"):
            out.setdefault(grader, {})[a.id.removeprefix("answer.rubric.")] = "pass" if a.status == "passed" else "fail"
    return out


# ---- labels made in the HTML report -------------------------------------------------------

IMPORT_FORMAT = "webmcp-eval labels import"  # what the HTML report's labelling controls produce


class ImportedLabel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    trial: str
    case: str
    labels: dict[str, Mark] = Field(default_factory=dict)
    labeller: str = ""
    labelled_at: str = ""


class LabelsImport(BaseModel):
    """The labels a person made in the HTML report (downloaded, or copied from its text box)."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["webmcp-eval labels import"]
    version: int = 1
    trials: list[ImportedLabel] = Field(default_factory=list)

    @classmethod
    def read(cls, path: Path) -> LabelsImport:
        try:
            return cls.model_validate(load_json(path))
        except FileProblem as err:
            raise ValueError(err.at(path)) from None
        except ValueError as err:  # validation: the first problem, one line
            raise ValueError(f"{path}: not labels from the HTML report: {str(err).splitlines()[0]}") from None


def import_labels(source: LabelsImport, traces: list[Trace], labels: LabelsFile, name: str) -> tuple[int, list[str]]:
    """Merge labels made in the HTML report into the labels file (in memory); (trials merged, problems).

    Each label needs its trial's trace (the record the grader saw is rebuilt from it, and the model
    graders' verdicts are read from it); a label for a trial not given, another case, or a criterion
    the case's rubric lacks is a problem, and with any problem nothing is merged. A trial already in
    the file keeps its other labels; the imported marks replace the same criteria's.
    """
    from webmcp_eval.judge.grader import grader_record
    from webmcp_eval.suite.case import Case

    by_trial = {(t.run_id, t.trial_id): t for t in traces}
    problems: list[str] = []
    for i, item in enumerate(source.trials):
        trace = by_trial.get((item.run_id, item.trial))
        where = f"{name}: trials[{i}] ({item.run_id} {item.trial})"
        if trace is None:
            problems.append(f"{where}: no such trial in the run directories given")
        elif trace.case_id != item.case:
            problems.append(f"{where}: the trial is of case {trace.case_id}, not {item.case}")
        elif unknown := sorted(set(item.labels) - {c.get("id") for c in _rubric(trace)}):
            problems.append(f"{where}: not criteria of {trace.case_id}'s rubric: {', '.join(unknown)}")
    if problems:
        return 0, problems
    merged = 0
    for item in source.trials:
        if not item.labels:
            continue
        trace = by_trial[(item.run_id, item.trial)]
        entry = labels.find(item.run_id, item.trial)
        if entry is None:
            entry = LabelledTrial(
                case=item.case,
                trial=item.trial,
                run_id=item.run_id,
                record=grader_record(Case.model_validate(trace.case), trace),
            )
            labels.trials.append(entry)
        entry.labels.update(item.labels)
        entry.graders.update(grader_marks(trace))
        entry.labeller = item.labeller or entry.labeller
        entry.labelled_at = item.labelled_at or datetime.now(UTC).isoformat(timespec="seconds")
        merged += 1
    return merged, []
