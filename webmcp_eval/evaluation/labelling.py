"""label and calibrate: people's labels of rubric criteria, and the graders' agreement with them."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from webmcp_eval.errors import EXIT_FAILED, EXIT_OK, InvalidInput, Outcome, UsageError
from webmcp_eval.evaluation.loading import default_suite_dir, seed_suite_note
from webmcp_eval.evaluation.output import console, errors
from webmcp_eval.evaluation.players import GraderChoice, grader_of
from webmcp_eval.evaluation.reporting import run_input
from webmcp_eval.judge.grader import regrade
from webmcp_eval.judge.labels import (
    LabelsFile,
    LabelsImport,
    calibrate,
    calibration_text,
    graders_in,
    import_labels,
    label_trials,
    trials_to_label,
)
from webmcp_eval.trace import Trace


@dataclass(frozen=True)
class LabelRequest:
    """label: the run directories whose trials to label, where the labels go, the sample, or a file to import."""

    run_dirs: tuple[str, ...]
    labels: str | None = None  # default: labels.json beside the cases
    sample: int = 5
    seed: int = 0
    labeller: str = ""
    import_file: str | None = None

    def labels_path(self) -> Path:
        return Path(self.labels) if self.labels else default_suite_dir() / "labels.json"


@dataclass(frozen=True)
class CalibrateRequest:
    """calibrate: the labels file (in ``grader``), and the grader to re-grade its trials with (none: as stored)."""

    grader: GraderChoice = field(default_factory=GraderChoice)


def label_command(request: LabelRequest) -> Outcome:
    """Walk failing and sampled trials in the terminal; people's pass/fail per rubric criterion."""
    path = request.labels_path()
    if not request.labels and seed_suite_note():  # never write into the installed package's seed suite
        raise UsageError("no cases/ here to keep labels.json beside: give --labels FILE")
    labels = LabelsFile.load(path)  # LabelsError: a labels file that cannot be read
    traces = [t for d in request.run_dirs for t in run_input(d).traces]  # RunDirError: a run it cannot read
    if request.import_file:
        return _import_labels(request.import_file, traces, labels, path)
    chosen = trials_to_label(traces, request.sample, request.seed)
    if not chosen:
        raise InvalidInput("no trial with rubric criteria to label in " + " ".join(request.run_dirs))
    console.print(f"{len(chosen)} trial(s) to label (failing ones first, then a sample); labels go to {path}")
    try:
        done = label_trials(
            chosen, labels, path, input, lambda text: console.print(text, markup=False), request.labeller
        )
    except (EOFError, KeyboardInterrupt):
        done = None
    console.print(f"labels saved in {path}" + (f" ({done} trial(s) labelled now)" if done is not None else ""))
    return Outcome(EXIT_OK)


def _import_labels(import_file: str, traces: list[Trace], labels: LabelsFile, path: Path) -> Outcome:
    """label RUN_DIR… --import FILE: merge labels made in the HTML report; with a problem, merge nothing."""
    try:
        source = LabelsImport.read(Path(import_file))
    except ValueError as err:
        raise InvalidInput(str(err)) from None
    merged, problems = import_labels(source, traces, labels, import_file)
    for line in problems:
        errors.print(line, markup=False, highlight=False, soft_wrap=True)
    if problems:
        raise InvalidInput(f"nothing merged into {path}")
    labels.save(path)
    console.print(f"{merged} labelled trial(s) merged into {path}", markup=False, highlight=False)
    return Outcome(EXIT_OK)


def calibrate_command(request: CalibrateRequest) -> Outcome:
    """Agreement of model graders with people's labels; re-grades the labelled trials with --grader."""
    path = request.grader.labels_path()
    labels = LabelsFile.load(path)  # LabelsError: a labels file that cannot be read
    try:
        grader = grader_of(request.grader)
    except ValueError as err:
        raise InvalidInput(str(err)) from None
    if not labels.trials:
        raise InvalidInput(f"no labels in {path}: label trials first (webmcp-eval label RUN_DIR)")
    if grader is not None:
        asyncio.run(regrade(grader, labels))
        labels.save(path)
    ids = [grader.id] if grader is not None else graders_in(labels)
    if not ids:
        raise InvalidInput(f"{path}: no model grader has judged the labelled trials; calibrate with --grader")
    n = sum(len(t.labels) for t in labels.trials)
    console.print(
        f"{path}: {len(labels.trials)} labelled trial(s), {n} labelled criteria; suite threshold "
        f"kappa ≥ {labels.min_kappa:g} over ≥ {labels.min_labels} labels",
        highlight=False,
    )
    results = [calibrate(labels, g) for g in ids]
    for cal in results:
        console.print(calibration_text(cal), markup=False, highlight=False)
    return Outcome(EXIT_OK if all(c.gates for c in results) else EXIT_FAILED)
