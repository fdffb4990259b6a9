"""The run report's trend: this run beside the earlier runs of the same suite in the same runs folder.

An earlier run is read from what it wrote when it ended, never from its traces: its plan (when it was planned,
which cases), run.json (the site, its revision) and summary.json (the rates and each case's verdicts, as
webmcp_eval/report/writers.py wrote them). The run itself comes from its results, through the same
``series_json``, so both sides of a row are one shape. A run of another case set, or without this run's kind
of evidence, is not comparable and is named apart; a folder that cannot be read is skipped with its reason.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from webmcp_eval.data_file import RUN_FILE_DEPTH, FileProblem, load_json
from webmcp_eval.report.writers import series_json
from webmcp_eval.results.run_results import Results
from webmcp_eval.results.text import interval
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.rundir.plan import PlanError, RunPlan, read_plan
from webmcp_eval.rundir.run_info import read_run_info

LIMIT = 10  # earlier runs shown at most: the last ten, oldest first


@dataclass(frozen=True)
class TrendRun:
    """One run as the trend shows it: a row of the table and a column of the case grid."""

    run_id: str
    created_at: str  # the plan's ISO time
    base_url: str
    revision: str  # the site's name and revision as run.json recorded them ("" when it did not)
    mean: float | None  # the case pass rate of the series (None: no trial ran)
    low: float | None  # its 95% interval, as the Summary's (clustered SE)
    high: float | None
    trials: Mapping[str, int]  # passed, failed, not_run
    outcomes: Mapping[str, str]  # case id -> passed | failed | not_run
    counts: Mapping[str, str]  # case id -> "passed/ran" for the mark's title
    current: bool = False

    @property
    def when(self) -> str:
        try:
            return datetime.fromisoformat(self.created_at).strftime("%Y-%m-%d %H:%M")
        except ValueError:
            return self.created_at


@dataclass
class Trend:
    """The trend section: the runs oldest to newest (this run last), the cases of the grid, what was left out."""

    series: str  # the label of the evidence followed (the run's first series)
    folder: str  # where the earlier runs were looked for
    runs: list[TrendRun] = field(default_factory=list)
    cases: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)  # runs not comparable, one line each
    skipped: list[str] = field(default_factory=list)  # folders that could not be read, one line each

    @property
    def earlier(self) -> int:
        return len(self.runs) - 1


def _case_outcome(case: Mapping[str, Any]) -> str:
    """A case's verdict in a series, as CaseResult.verdict says it: failed when a trial failed, passed when one
    passed, else not_run."""
    return "failed" if case.get("failed") else "passed" if case.get("passed") else "not_run"


def _run_row(plan: RunPlan, info: Mapping[str, Any], series: Mapping[str, Any], current: bool = False) -> TrendRun:
    """A run's row from its plan, run.json and its series as summary.json has it."""
    rate = series.get("case_pass_rate")
    rate = rate if isinstance(rate, dict) else {}
    mean, se = rate.get("mean"), rate.get("clustered_se")
    low, high = interval(mean, se) if isinstance(mean, float | int) and isinstance(se, float | int) else (None, None)
    site = info.get("site")
    site = site if isinstance(site, dict) else {}
    revision = " @ ".join(str(v) for v in (site.get("name"), site.get("revision")) if v)
    cases = [c for c in series.get("cases", []) if isinstance(c, dict) and isinstance(c.get("case_id"), str)]
    return TrendRun(
        run_id=plan["run_id"],
        created_at=plan["created_at"],
        base_url=str(info.get("base_url") or ""),
        revision=revision,
        mean=float(mean) if isinstance(mean, float | int) else None,
        low=low,
        high=high,
        trials={k: int(series.get(k) or 0) for k in ("passed", "failed", "not_run")},
        outcomes={c["case_id"]: _case_outcome(c) for c in cases},
        counts={c["case_id"]: f"{c.get('passed', 0)}/{c.get('passed', 0) + c.get('failed', 0)}" for c in cases},
        current=current,
    )


def _keep(heap: list[tuple[str, str, Any]], item: tuple[str, str, Any], limit: int) -> None:
    """Keep the ``limit`` newest items (by plan time, then folder name) of a heap: the scan holds no more than
    that whatever the size of the folder."""
    heapq.heappush(heap, item)
    if len(heap) > limit:
        heapq.heappop(heap)


def _earlier_plans(folder: Path, own: Path, plan: RunPlan, limit: int, trend: Trend) -> list[tuple[Path, RunPlan]]:
    """The last ``limit`` run folders under ``folder`` of this run's cases planned before it, oldest first; the
    last ``limit`` of other cases and of unreadable plans go into the trend's notes. Only those are held while the
    folder is read: memory stays the same for ten earlier runs or a thousand."""
    cases = {c["id"] for c in plan["cases"]}
    kept: list[tuple[str, str, Any]] = []
    other: list[tuple[str, str, Any]] = []
    skipped: list[tuple[str, str, Any]] = []
    for d in folder.iterdir() if folder.is_dir() else ():
        if not d.is_dir() or d.resolve() == own or not RunDir(d).holds_run():
            continue  # this run, or no run at all (a merged report, anything else)
        try:
            earlier = read_plan(d)
        except (PlanError, OSError) as err:
            _keep(skipped, ("", d.name, f"{d.name}: {str(err).splitlines()[0]}"), limit)
            continue
        if earlier is None:
            _keep(skipped, ("", d.name, f"{d.name}: no plan.json (a run from before plans were written)"), limit)
        elif earlier["created_at"] > plan["created_at"]:
            continue  # planned after this run (one in the same second counts: plan times are to the second)
        elif (why := _comparable(earlier, cases, d)) is not None:
            _keep(other, (earlier["created_at"], d.name, why), limit)
        else:
            _keep(kept, (earlier["created_at"], d.name, (d, earlier)), limit)
    trend.other += [note for _, _, note in sorted(other)]
    trend.skipped += [note for _, _, note in sorted(skipped)]
    return [found for _, _, found in sorted(kept)]


def _comparable(plan: RunPlan, cases: set[str], d: Path) -> str | None:
    """Why a run is not one of this suite's (None: it is): another set of case ids."""
    theirs = {c["id"] for c in plan["cases"]}
    if theirs == cases:
        return None
    return (
        f"{d.name}: another case set ({len(theirs)} case(s); {len(theirs - cases)} not in this run, "
        f"{len(cases - theirs)} of this run's missing)"
    )


def _summary_series(d: Path) -> list[Any] | str:
    """The series of a run's summary.json, or why they cannot be had."""
    path = RunDir(d).summary
    try:
        summary = load_json(path, RUN_FILE_DEPTH)
    except FileProblem as err:
        return f"{d.name}: {err.at(path.name)} (write it: webmcp-eval report {d} --json {path})"
    listed = summary.get("series") if isinstance(summary, dict) else None
    return listed if isinstance(listed, list) else f"{d.name}: summary.json has no list of series"


def _earlier_row(d: Path, plan: RunPlan, key: list[Any], trend: Trend) -> TrendRun | None:
    """An earlier run's row, or None with a note: another case set or evidence (not comparable), or files that
    cannot be read (skipped)."""
    listed = _summary_series(d)
    if isinstance(listed, str):
        trend.skipped.append(listed)
        return None
    series = next((s for s in listed if isinstance(s, dict) and s.get("key") == key), None)
    if series is None:
        trend.other.append(f"{d.name}: no {trend.series} evidence")
        return None
    try:
        return _run_row(plan, read_run_info(d), series)
    except (TypeError, ValueError, AttributeError) as err:
        trend.skipped.append(f"{d.name}: summary.json is not one webmcp-eval wrote ({err})")
        return None


def read_trend(run_dir: Path, results: Results, folder: Path | None = None, limit: int = LIMIT) -> Trend | None:
    """This run beside the last ``limit`` earlier runs of the same cases under ``folder`` (by default the folder
    the run directory is in); None when the run has no plan or no series (nothing to follow)."""
    try:
        plan = read_plan(run_dir)
    except (PlanError, OSError):
        return None
    if plan is None or not results.series:
        return None
    first = results.series[0]
    folder = folder if folder is not None else run_dir.parent
    trend = Trend(series=first.label, folder=str(folder))
    own = series_json(first)
    earlier = _earlier_plans(folder, run_dir.resolve(), plan, limit, trend)
    rows = [_earlier_row(d, their_plan, list(own["key"]), trend) for d, their_plan in earlier]
    trend.runs = [*(r for r in rows if r is not None), _run_row(plan, read_run_info(run_dir), own, current=True)]
    trend.cases = sorted(c["id"] for c in plan["cases"])
    return trend
