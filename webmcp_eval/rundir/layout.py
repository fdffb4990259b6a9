"""A run directory's layout: every file and folder of one run, named in this one place.

``RunDir(path)`` has a property or method per file (``plan``, ``trials``, ``trace(trial_id)``,
``summary``, ...); every other module asks it instead of spelling a name, so a file is renamed
here once. It only names paths: reading and writing them is for the modules beside it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path, PurePath


class RunDir:
    """The files of the run directory at ``path``."""

    PLAN = "plan.json"  # what the run means to play, written before the first trial
    RUN_INFO = "run.json"  # where and how it was played
    LOCK = ".lock"  # held while a run or a resume plays into it
    TRIALS = "trials"  # one trace per trial, <trial id>.json: the verdicts
    ATTEMPTS = "attempts"  # earlier attempts of a retried trial, <trial id>.a<N>.json
    SCREENSHOTS = "screenshots"  # <artifact name>.png
    PLAYWRIGHT = "playwright"  # Playwright's trace.zip per trial (--trace), <artifact name>.zip
    SUMMARY = "summary.json"  # the JSON report
    JUNIT = "junit.xml"  # the JUnit XML report
    REPORT_HTML = "report.html"  # the HTML report
    HEALTH = "health.json"  # suite health
    MUTATION = "mutation.json"  # the mutation score (mutate)
    ANALYSIS_HTML = "analysis.html"  # the failure analysis of the last run analysed (analyze)
    CONTROL_SUFFIX = "-control"  # run --control: the null agent's run in <run id>-control/
    OLD_CONTROL_SUFFIX = "-baseline"  # its folder's name before the rename: still found, still cleared

    OWN_FILES = (PLAN, RUN_INFO)  # the run's own record: never a report's target
    OWN_DIRS = (TRIALS, ATTEMPTS, SCREENSHOTS, PLAYWRIGHT)  # the traces and what they link to
    ARTIFACT_DIRS = (SCREENSHOTS, PLAYWRIGHT, ATTEMPTS)  # beside trials/, named in the traces by relative links
    REPORTS = (SUMMARY, JUNIT, REPORT_HTML)  # what run writes into the directory after its trials
    NOT_TRACES = (SUMMARY, RUN_INFO)  # JSON files that are never a trace, wherever they lie

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunDir) and other.path == self.path

    def __hash__(self) -> int:
        return hash(self.path)

    @property
    def plan(self) -> Path:
        return self.path / self.PLAN

    @property
    def run_info(self) -> Path:
        return self.path / self.RUN_INFO

    @property
    def lock(self) -> Path:
        return self.path / self.LOCK

    @property
    def trials(self) -> Path:
        return self.path / self.TRIALS

    def trace(self, trial_id: str) -> Path:
        """The trace file of a trial: its verdict."""
        return self.trials / f"{trial_id}.json"

    @property
    def attempts(self) -> Path:
        return self.path / self.ATTEMPTS

    def attempt(self, trial_id: str, attempt: int) -> Path:
        """An earlier attempt's trace, set aside from trials/."""
        return self.attempts / f"{trial_id}.a{attempt}.json"

    @property
    def screenshots(self) -> Path:
        return self.path / self.SCREENSHOTS

    def screenshot(self, name: str) -> Path:
        return self.screenshots / f"{name}.png"

    @property
    def playwright(self) -> Path:
        return self.path / self.PLAYWRIGHT

    def playwright_trace(self, name: str) -> Path:
        return self.playwright / f"{name}.zip"

    @property
    def summary(self) -> Path:
        return self.path / self.SUMMARY

    @property
    def junit(self) -> Path:
        return self.path / self.JUNIT

    @property
    def report_html(self) -> Path:
        return self.path / self.REPORT_HTML

    @property
    def health(self) -> Path:
        return self.path / self.HEALTH

    @property
    def mutation(self) -> Path:
        return self.path / self.MUTATION

    @property
    def analysis_html(self) -> Path:
        return self.path / self.ANALYSIS_HTML

    @classmethod
    def control_id(cls, run_id: str) -> str:
        """The run id of the null agent's run played beside run ``run_id`` (run --control none)."""
        return f"{run_id}{cls.CONTROL_SUFFIX}"

    def control(self, run_id: str) -> RunDir:
        """The null agent's run played beside run ``run_id``, in a sub-directory of its own."""
        return RunDir(self.path / self.control_id(run_id))

    def has_traces(self) -> bool:
        return self.trials.is_dir()

    def trace_paths(self) -> list[Path]:
        """The trace files directly in trials/, in name order (temp files of a killed write included)."""
        return sorted(self.trials.glob("*.json")) if self.has_traces() else []

    @staticmethod
    def link_from_trace(path: Path) -> str:
        """A file of the run as a trace links it: relative to trials/ (``../screenshots/x.png``)."""
        return f"../{path.parent.name}/{path.name}"

    @classmethod
    def relative_trace(cls, trial_id: str, run_id: str | None = None) -> str:
        """A trace's path relative to its run directory, or to the runs' root when the run id is given."""
        inside = f"{cls.TRIALS}/{trial_id}.json"
        return f"{run_id}/{inside}" if run_id else inside

    @classmethod
    def is_trace_file(cls, path: PurePath) -> bool:
        """A trace file, wherever its run lies: a JSON file in a trials/ folder (a killed write's temp file is not)."""
        if path.name.startswith(".") or path.name in cls.NOT_TRACES:
            return False
        return path.parent.name == cls.TRIALS

    def owns(self, target: Path) -> bool:
        """A file of the run itself (its plan, run.json, a trace, an attempt, an artifact): no report replaces it."""
        root, resolved = self.path.resolve(), target.resolve()
        if not resolved.is_relative_to(root):
            return False
        parts = resolved.relative_to(root).parts
        return bool(parts) and (parts[-1] in self.OWN_FILES or any(p in self.OWN_DIRS for p in parts[:-1]))

    def holds_run(self) -> bool:
        """A plan or a trace is here: the directory is some run's."""
        return self.plan.exists() or any(self.trials.glob("*.json"))

    def only_plan(self) -> bool:
        """Nothing but (at most) the plan: a run that stopped before its first trial wrote anything."""
        return {p.name for p in self.path.iterdir()} <= {self.PLAN}

    def clear(self, run_id: str) -> None:
        """Remove what a run leaves here (run --force): plan, run.json, reports, traces, artifacts, its control
        (under its folder name of today or of before the rename)."""
        for name in (*self.OWN_FILES, *self.REPORTS):
            (self.path / name).unlink(missing_ok=True)
        for name in self.OWN_DIRS:
            shutil.rmtree(self.path / name, ignore_errors=True)
        for suffix in (self.CONTROL_SUFFIX, self.OLD_CONTROL_SUFFIX):
            shutil.rmtree(self.path / f"{run_id}{suffix}", ignore_errors=True)
