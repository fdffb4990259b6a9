"""What the figures keep of a trial: its trace without the records only its own page shows.

Every summary (the console table, summary.json, JUnit, the case and series figures, suite health, the
HTML report's tables) reads a trial's identity, verdict, assertions, case, cost and counts, never its
steps, its calls' arguments and answers, the page, the state, the logs or the network's records. A run
or a report of many trials keeps a :class:`KeptTrace` per trial (a few KB: its memory grows by that,
not by whole traces), and the one view that shows a trial's records, the HTML report's trial section,
reads each trial's whole trace again from its file, one at a time (:func:`whole_trace`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import Field

from webmcp_eval.trace import Assertion, NetworkRecord, ToolCall, Trace, read_trace

__all__ = ["KeptTrace", "kept_trace", "read_traces_kept", "whole_trace"]

# the records no summary reads: left out of a KeptTrace (they stay in the trace's file)
LEFT_OUT = (
    "steps",
    "registrations",
    "live_tools",
    "ai_result",
    "ui",
    "state",
    "confirmation",
    "untrusted_rendering",
    "consistency",
    "witness",
    "page_errors",
    "settles",
    "catalog_hints",
    "catalog_schemas",
    "tool_instructions",
    "agent_log",
    "harness",
    "conversation",
    "setup",
    "timings",
)


class KeptTrace(Trace):
    """A trace as the figures keep it: no records of its page, state and logs; calls without their arguments
    and answers; code checks without their evidence. ``file``: where the whole trace is (None: nowhere)."""

    file: Path | None = Field(default=None, exclude=True)


def kept_trace(trace: Trace, file: Path | None = None, cases: dict[str, dict[str, Any]] | None = None) -> KeptTrace:
    """The trace as the figures keep it. ``cases``: one dict per distinct case as run, shared by the trials
    that ran the same case (a run plays each case many times; the copies would be its largest part)."""
    if isinstance(trace, KeptTrace):
        return trace
    fields = {name: getattr(trace, name) for name in type(trace).model_fields if name not in LEFT_OUT}
    fields["calls"] = [ToolCall.model_construct(index=c.index, step=c.step, tool=c.tool) for c in trace.calls]
    network = trace.network
    fields["network"] = NetworkRecord.model_construct(
        requests=network.requests, writes=network.writes, write_counts=network.write_counts, available=network.available
    )
    fields["assertions"] = [_kept_assertion(a) for a in trace.assertions]
    if cases is not None:
        fields["case"] = cases.setdefault(json.dumps(trace.case, sort_keys=True, default=str), trace.case)
    return KeptTrace.model_construct(_fields_set=set(trace.model_fields_set), file=file, **fields)


def _kept_assertion(a: Assertion) -> Assertion:
    """A code check without its evidence (no summary reads it); a grader's keeps it (it names the grader)."""
    if a.grader != "code" or a.evidence is None:
        return a
    return a.model_copy(update={"evidence": None})


def whole_trace(trace: Trace) -> Trace:
    """The whole trace: read again from its file when the figures kept only a :class:`KeptTrace`."""
    if isinstance(trace, KeptTrace) and trace.file is not None:
        return read_trace(trace.file)
    return trace


def read_traces_kept(files: Iterable[Path]) -> Iterator[KeptTrace]:
    """The traces of ``files`` as the figures keep them, read one at a time: each whole trace is dropped
    before the next file is read, so reading many costs one whole trace and a KeptTrace each."""
    cases: dict[str, dict[str, Any]] = {}
    for path in files:
        yield kept_trace(read_trace(path), path, cases)
