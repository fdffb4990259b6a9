"""Benchmark (not a test): how long the checks take to match calls to expected calls.

Times ``check_calls`` (the real checks, argument matchers included) on:

  unordered  — N expected calls in one {unordered: [...]} group, the trace in reverse order;
  set        — N expected calls under order: set, the trace in reverse order;
  6+save+6   — 6 lookups, a save, 6 lookups, expected [save, {unordered: 6 lookups}].

Prints the median of R repeats for each, in milliseconds.

Usage: .venv/bin/python bench/call_matching.py [-n 50] [-r 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from webmcp_eval.judge.checks import check_calls  # noqa: E402
from webmcp_eval.suite.case import CallExpectations  # noqa: E402
from webmcp_eval.trace import ToolCall, Trace  # noqa: E402


def trace(calls: list[tuple[str, dict[str, Any]]]) -> Trace:
    records = [ToolCall(index=i, step=0, tool=tool, args=args) for i, (tool, args) in enumerate(calls)]
    return Trace(run_id="b", trial_id="B.t1", case_id="B", behaviour="ordering", start_route="/", calls=records)


def shapes(n: int) -> dict[str, tuple[CallExpectations, Trace]]:
    picks = [{"tool": "pick", "args": {"n": k}} for k in range(n)]
    reverse = trace([("pick", {"n": k}) for k in reversed(range(n))])
    lookups = [("lookup", {"id": f"evt-{k}"}) for k in range(6)]
    return {
        f"{n} calls, one unordered group": (
            CallExpectations.model_validate({"expected": [{"unordered": picks}]}),
            reverse,
        ),
        f"{n} calls, order: set": (CallExpectations.model_validate({"order": "set", "expected": picks}), reverse),
        "6 lookups + save + 6 lookups": (
            CallExpectations.model_validate(
                {"expected": [{"tool": "save"}, {"unordered": [{"tool": t, "args": a} for t, a in lookups]}]}
            ),
            trace([*lookups, ("save", {}), *lookups]),
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=50, help="expected calls in the large shapes (default 50)")
    parser.add_argument("-r", "--repeats", type=int, default=5)
    args = parser.parse_args()
    for name, (exp, tr) in shapes(args.n).items():
        times, statuses = [], set()
        for _ in range(args.repeats):
            began = time.perf_counter()
            out, _ = check_calls(exp, tr)
            times.append((time.perf_counter() - began) * 1000)
            statuses = {a.status for a in out if a.kind == "calls"}
        print(f"{name:34} {statistics.median(times):8.1f} ms   verdicts: {', '.join(sorted(statuses))}")


if __name__ == "__main__":
    main()
