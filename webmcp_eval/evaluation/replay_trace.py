"""``webmcp-eval replay``: play a recorded trace again and compare.

Same start route, the same tool calls with the same arguments in the same
order, answered by the trace's fixture (offline, the default) or by a live
deployment (``--live``, to detect drift). Every tool result is compared with
the recorded one, the case's checks are evaluated again, and the outcome is
written without timings, so two offline replays are byte-identical.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path

from webmcp_eval.agents.protocol import AgentReport, ToolHost
from webmcp_eval.suite.case import Case, UserStep
from webmcp_eval.suite.loader import LoadedCase
from webmcp_eval.trace import Assertion, Trace, write_atomic


class TraceAgent:
    """Plays back what a trace's agent did: its calls per step and its replies."""

    name = "replay"
    model: str | None = None

    def __init__(self, recorded: Trace):
        self.recorded = recorded
        self.evidence_kind = recorded.evidence_kind
        self.name = recorded.agent  # the evidence is the recorded agent's; the log says it was replayed
        self.model = recorded.model

    def start_trial(self, trial_id: str) -> None:
        return None

    def assertions(self) -> list[Assertion]:
        return []  # the recorded agent's are in the recorded trace; a replay adds none of its own

    async def turn(self, step: UserStep, host: ToolHost) -> str:
        for call in (c for c in self.recorded.calls if c.step == host.step):
            await host.call(call.tool, call.args)
        record = next((s for s in self.recorded.steps if s.index == host.step), None)
        return (record.reply if record else None) or ""

    def report(self) -> AgentReport:
        return {"log": {"replayed_from": self.recorded.trial_id}}


def case_of(trace: Trace, trace_path: Path) -> LoadedCase:
    """The case as it was run (embedded in the trace), so the trace replays on its own."""
    if not trace.case:
        raise ValueError(f"{trace.trial_id}: the trace carries no case (recorded by an older webmcp-eval)")
    return LoadedCase(Case.model_validate(trace.case), case_file_near(trace.case_file, trace_path), {})


def case_file_near(case_file: str, trace_path: Path) -> str:
    """The recorded case file, found from here or, when it was relative to the folder the run was played
    in, from a folder above the trace (the recorded run directory moved, or shipped inside the package)."""
    if Path(case_file).is_absolute() or Path(case_file).is_file():
        return case_file
    for folder in trace_path.resolve().parents:
        if (folder / case_file).is_file():
            return str(folder / case_file)
    raise ValueError(f"its case file {case_file} is found neither here nor under a folder above the trace")


def result_diffs(recorded: Trace, replayed: Trace) -> list[str]:
    """A readable diff per call whose result differs from the recorded one."""
    out: list[str] = []
    for i in range(max(len(recorded.calls), len(replayed.calls))):
        a = recorded.calls[i] if i < len(recorded.calls) else None
        b = replayed.calls[i] if i < len(replayed.calls) else None
        if a is None or b is None:
            out.append(f"call #{i}: {'only in the replay' if a is None else 'not made in the replay'}")
            continue
        left, right = _pretty(a.result, a.error), _pretty(b.result, b.error)
        if left != right:
            diff = difflib.unified_diff(left.splitlines(), right.splitlines(), "recorded", "replayed", lineterm="", n=1)
            out.append(f"call #{i} {a.tool}({json.dumps(a.args, ensure_ascii=False, sort_keys=True)}):")
            out.extend(f"  {line}" for line in diff)
    return out


def _pretty(result: object, error: str | None) -> str:
    return json.dumps({"result": result, "error": error}, ensure_ascii=False, sort_keys=True, indent=1)


@dataclass
class ReplayOutcome:
    recorded: Trace
    replayed: Trace
    diffs: list[str]

    @property
    def same_verdict(self) -> bool:
        return self.recorded.verdict == self.replayed.verdict

    def as_json(self) -> str:
        """The outcome without timings or paths: identical for identical replays."""
        r = self.replayed
        data = {
            "trial": self.recorded.trial_id,
            "case_id": r.case_id,
            "recorded_verdict": self.recorded.verdict,
            "verdict": r.verdict,
            "verdict_reason": r.verdict_reason,
            "site_revision": r.site_revision,
            "calls": [{"tool": c.tool, "args": c.args, "result": c.result, "error": c.error} for c in r.calls],
            "ai_result": r.ai_result,
            "writes": [{"method": m.method, "path": m.path} for m in r.network.writes],
            "assertions": [{"id": a.id, "status": a.status, "why": a.why} for a in r.assertions],
            "result_diffs": self.diffs,
        }
        return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n"

    def write(self, directory: Path) -> Path:
        path = directory / f"{self.recorded.trial_id}.replay.json"
        write_atomic(path, self.as_json())
        return path
