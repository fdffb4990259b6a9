"""Memory flat in the number of trials, checked by counting objects (never by time or resident size).

A run keeps of each trial what the figures read (a KeptTrace: webmcp_eval/rundir/kept.py), never the whole
trace once it is written, nor the proxy's state of a trial that ended. ``report`` reads the traces one at a
time, and its HTML report reads each trial's whole trace again while it writes that trial's section: a
bounded number of whole traces (those of the sections just written) is alive when the next is read. The
kept traces make the same reports, byte for byte, as the whole traces they were made of. bench/memory.py
measures the resident sizes.
"""

from __future__ import annotations

import asyncio
import gc
import json
import shutil
import weakref
from pathlib import Path
from typing import Any

import pytest
from eval_support import SEED_CONTEXT, in_thread, run_on_demo, suite_cases

import webmcp_eval.rundir.kept as kept_module
from webmcp_eval.agents.reference import ReferenceAgent
from webmcp_eval.play.run.settings import RunSettings
from webmcp_eval.proxies.addon import FlowState, TrialState
from webmcp_eval.report.html import render_html, write_html
from webmcp_eval.report.writers import summary_json
from webmcp_eval.results.run_results import RunInput, build_results, results_of
from webmcp_eval.rundir.kept import KeptTrace, kept_trace, read_traces_kept, whole_trace
from webmcp_eval.rundir.reading import read_run
from webmcp_eval.trace import Trace, read_trace

DAY26 = Path(__file__).resolve().parent.parent / "traces" / "day26"


def _alive(kind: type) -> int:
    """Objects of exactly this type that are still alive (not a subclass: a KeptTrace is no whole trace)."""
    gc.collect()
    return sum(type(o) is kind for o in gc.get_objects())


def _copies(tmp_path: Path, count: int) -> Path:
    """A run directory of ``count`` traces copied from the day-26 run, each under its own trial id (no plan)."""
    run = tmp_path / "run"
    (run / "trials").mkdir(parents=True)
    shutil.copytree(DAY26 / "screenshots", run / "screenshots")
    shutil.copy(DAY26 / "run.json", run / "run.json")
    sources = sorted((DAY26 / "trials").glob("*.json"))
    for i in range(count):
        data = json.loads(sources[i % len(sources)].read_text())
        data["trial_id"] = f"{data['case_id']}.t{i + 1}"
        data["trial_index"] = i
        (run / "trials" / f"{data['trial_id']}.json").write_text(json.dumps(data))
    return run


class _CountingReads:
    """read_trace as kept.py calls it, counting the whole traces still alive each time one more is read."""

    def __init__(self) -> None:
        self.made: list[weakref.ref[Trace]] = []
        self.alive_at_read: list[int] = []

    def __call__(self, path: Path) -> Trace:
        gc.collect()
        self.alive_at_read.append(sum(ref() is not None for ref in self.made))
        trace = read_trace(path)
        self.made.append(weakref.ref(trace))
        return trace


def test_a_kept_trace_keeps_what_the_figures_read_and_no_record_of_the_page() -> None:
    path = DAY26 / "trials" / "SEL-01.t1.json"
    whole = read_trace(path)
    kept = kept_trace(whole, path)
    assert isinstance(kept, KeptTrace) and kept.file == path
    assert whole.steps and whole.registrations and whole.ui.screenshot and whole.witness.events  # what it leaves
    assert not kept.steps and not kept.registrations and kept.ui.screenshot is None and not kept.witness.events
    assert len(kept.calls) == len(whole.calls) and all(c.result is None and not c.args for c in kept.calls)
    assert kept.calls[0].tool == whole.calls[0].tool
    assert (kept.write_total, kept.network.available) == (whole.write_total, whole.network.available)
    assert [(a.id, a.status, a.why) for a in kept.assertions] == [(a.id, a.status, a.why) for a in whole.assertions]
    assert "file" not in kept.model_dump()  # never written into a trace or a summary
    assert whole_trace(kept) == whole  # read again from its file
    assert whole_trace(whole) is whole  # a whole trace is itself


def test_kept_traces_of_one_case_share_its_case() -> None:
    path = DAY26 / "trials" / "SEL-01.t1.json"
    cases: dict[str, dict[str, Any]] = {}
    first, second = (kept_trace(read_trace(path), path, cases) for _ in range(2))
    assert first.case is second.case and first.case == read_trace(path).case
    assert len(cases) == 1


def test_report_reads_the_traces_of_a_run_one_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _copies(tmp_path, 6)
    reads = _CountingReads()
    monkeypatch.setattr(kept_module, "read_trace", reads)
    traces, plan, _ = read_run(str(run), kept=True)
    assert len(reads.alive_at_read) == 6 and max(reads.alive_at_read) == 0  # each dropped before the next is read
    assert all(isinstance(t, KeptTrace) for t in traces) and len(traces) == 6
    assert _alive_whole(reads) == 0  # the run read keeps none of them


def test_the_html_report_reads_each_whole_trace_while_it_writes_its_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _copies(tmp_path, 6)
    traces, plan, _ = read_run(str(run), kept=True)
    results = build_results([RunInput(traces, plan)])
    reads = _CountingReads()
    monkeypatch.setattr(kept_module, "read_trace", reads)
    page = write_html(results, run / "report.html")
    assert len(reads.alive_at_read) == 6  # once per trial, for its own section
    # the sections just written, at most (the template's loop keeps its previous item): never every trace at once
    assert max(reads.alive_at_read) <= 2
    assert "data:image/png;base64," in page.read_text()  # the whole trace's screenshot, embedded


def test_kept_traces_make_the_same_reports_as_whole_ones(tmp_path: Path) -> None:
    run = _copies(tmp_path, 4)
    whole = [read_trace(p) for p in sorted((run / "trials").glob("*.json"))]
    kept = list(read_traces_kept(sorted((run / "trials").glob("*.json"))))
    views = []
    for traces in (whole, kept):
        results = results_of(traces)
        html = render_html(results, report_dir=run, generated_at="then")
        views.append((html, json.dumps(summary_json(results, report_dir=run))))
    assert views[0] == views[1]


def _alive_whole(reads: _CountingReads) -> int:
    gc.collect()
    return sum(ref() is not None for ref in reads.made)


@pytest.mark.browser
def test_a_run_keeps_no_trace_and_no_proxy_state_of_trials_that_ended(tmp_path: Path) -> None:
    """Counted when each trial ends, over 8 trials with 2 workers: the whole traces and the proxy's trial and flow
    states alive are those of the trials in flight, however many have ended (the old runner kept every trace),
    and no kept trace is made until the traces are read back at the end."""
    counts: list[list[int]] = []

    def alive() -> list[int]:
        return [_alive(Trace), _alive(KeptTrace), _alive(TrialState), _alive(FlowState)]

    before = alive()  # what other tests of the session hold (a session fixture's traces) is there and stays

    def count(trace: Trace) -> None:
        counts.append([n - b for n, b in zip(alive(), before, strict=True)])

    settings = RunSettings(
        out_root=tmp_path,
        run_id="flat",
        trials=8,
        workers=2,
        agent_factory=ReferenceAgent,
        browser_context=SEED_CONTEXT,
    )
    result = in_thread(asyncio.run, run_on_demo(suite_cases("SEL-01"), settings, on_trial=count))
    assert len(counts) == 8
    whole, kept, trial_states, flows = (max(c[i] for c in counts) for i in range(4))
    assert whole <= 2, counts  # the trial just ended and the other worker's
    assert kept == 0, counts
    assert trial_states <= 3, counts  # the proxy's unattributed state and one per trial in flight
    assert flows <= 4, counts  # requests in flight, none left over from trials that ended
    ids = [f"SEL-01.t{i}" for i in range(1, 9)]
    assert result.files == [tmp_path / "flat" / "trials" / f"{i}.json" for i in ids]
    kept_back, whole_back = result.kept, result.traces  # read back from the files, in suite order
    assert [t.trial_id for t in kept_back] == ids and all(isinstance(t, KeptTrace) for t in kept_back)
    assert [t.trial_id for t in whole_back] == ids and all(type(t) is Trace for t in whole_back)
