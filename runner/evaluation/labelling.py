"""label and calibrate: people's labels of rubric criteria, and the graders' agreement with them."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from runner.errors import EXIT_FAILED, EXIT_OK, InvalidInput, UsageError
from runner.evaluation.loading import seed_suite_note
from runner.evaluation.output import console, errors
from runner.evaluation.players import grader_of
from runner.evaluation.reporting import labels_path, run_input

if TYPE_CHECKING:
    from runner.judge.labels import LabelsFile
    from runner.trace import Trace


def label_command(args: argparse.Namespace) -> int:
    """Walk failing and sampled trials in the terminal; people's pass/fail per rubric criterion."""
    from runner.judge.labels import LabelsFile, label_trials, trials_to_label

    path = labels_path(args)
    if not args.labels and seed_suite_note():  # never write into the installed package's seed suite
        raise UsageError("no cases/ here to keep labels.json beside: give --labels FILE")
    try:
        labels = LabelsFile.load(path)
        traces = [t for d in args.run_dirs for t in run_input(d).traces]
    except ValueError as err:  # a labels file that cannot be read, or a run directory (RunDirError)
        raise InvalidInput(str(err)) from None
    if args.import_file:
        return _import_labels(args, traces, labels, path)
    chosen = trials_to_label(traces, args.sample, args.seed)
    if not chosen:
        raise InvalidInput("no trial with rubric criteria to label in " + " ".join(args.run_dirs))
    console.print(f"{len(chosen)} trial(s) to label (failing ones first, then a sample); labels go to {path}")
    try:
        done = label_trials(chosen, labels, path, input, lambda text: console.print(text, markup=False), args.labeller)
    except (EOFError, KeyboardInterrupt):
        done = None
    console.print(f"labels saved in {path}" + (f" ({done} trial(s) labelled now)" if done is not None else ""))
    return EXIT_OK


def _import_labels(args: argparse.Namespace, traces: list[Trace], labels: LabelsFile, path: Path) -> int:
    """label RUN_DIR… --import FILE: merge labels made in the HTML report; with a problem, merge nothing."""
    from runner.judge.labels import LabelsImport, import_labels

    try:
        source = LabelsImport.read(Path(args.import_file))
    except ValueError as err:
        raise InvalidInput(str(err)) from None
    merged, problems = import_labels(source, traces, labels, args.import_file)
    for line in problems:
        errors.print(line, markup=False, highlight=False, soft_wrap=True)
    if problems:
        raise InvalidInput(f"nothing merged into {path}")
    labels.save(path)
    console.print(f"{merged} labelled trial(s) merged into {path}", markup=False, highlight=False)
    return EXIT_OK


def calibrate_command(args: argparse.Namespace) -> int:
    """Agreement of model graders with people's labels; re-grades the labelled trials with --grader."""
    from runner.judge.labels import LabelsFile, calibrate, calibration_text, graders_in

    path = labels_path(args)
    try:
        labels = LabelsFile.load(path)
        grader = grader_of(args)
    except ValueError as err:
        raise InvalidInput(str(err)) from None
    if not labels.trials:
        raise InvalidInput(f"no labels in {path}: label trials first (webmcp-eval label RUN_DIR)")
    if grader is not None:
        from runner.judge.grader import regrade

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
    return EXIT_OK if all(c.gates for c in results) else EXIT_FAILED
