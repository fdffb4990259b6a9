"""Infrastructure retries: a trial that could not run because the machinery failed is played again.

Only a ``not_run`` whose kind is ``infrastructure`` (a crashed or lost browser, a site that was
unreachable or answered 5xx) is retried. A ``failed`` trial never is: pass@k and pass^k measure
exactly that, and a retry into a pass would be a wrong verdict. Nor is a not_run of another kind
(a checker error, a missing site hook, no tools at the start route): it would fail the same way again.

Every attempt keeps its trace. The last one is the trial's trace, in ``trials/`` as always, and
lists the earlier ones; each earlier attempt's trace moves to ``attempts/<trial id>.a<N>.json``
(webmcp_eval/rundir/attempts.py).
``--resume --rerun-not-run`` keeps them the same way: the not_run trace it plays again becomes an
earlier attempt of the new one, never overwritten.
"""

from __future__ import annotations

from webmcp_eval.trace import Trace


def retryable(trace: Trace) -> bool:
    """Is this trial's outcome the machinery's, so that another attempt may run it?"""
    return trace.verdict == "not_run" and trace.not_run_kind == "infrastructure"
