"""The trace keeps the page's own errors (webmcp_eval/play/run/trial.py): uncaught exceptions and rejections and
console.error() calls, never the browser's notes on a request that failed (those are the network's)."""

from __future__ import annotations

from pathlib import Path

import pytest
from eval_support import play

from webmcp_eval.play.run.settings import RunState, TrialHook, TrialHooks
from webmcp_eval.trace import Trace

ERRS = """
addEventListener("load", () => {
  console.error("the page says", 1);
  console.warn("only a warning");
  fetch("/no-such-file-here");  // a 404: the browser notes it as an error, the network's evidence
  setTimeout(() => { throw new Error("boom in a handler"); }, 0);
  Promise.reject(new Error("nobody caught this"));
});
"""


@pytest.mark.browser
def test_the_trial_records_the_pages_errors_and_not_the_browsers_notes(tmp_path: Path) -> None:
    seam = TrialHooks(by_case={"NO-01": TrialHook(init_script=ERRS)})
    (trace,) = play(tmp_path, ("NO-01",), state=RunState(trial_hooks=seam))
    assert trace.verdict == "passed", trace.verdict_reason  # no case asks: they are evidence only
    assert trace.page_errors is not None
    assert {(e.source, e.text) for e in trace.page_errors} == {
        ("console", "the page says 1"),
        ("exception", "boom in a handler"),
        ("exception", "nobody caught this"),
    }


def test_a_trace_made_before_the_errors_were_kept_says_they_were_not_recorded() -> None:
    old = Trace(run_id="r", trial_id="X.t1", case_id="X", behaviour="b", start_route="/")
    assert old.page_errors is None and "page_errors" not in old.model_dump_json()
