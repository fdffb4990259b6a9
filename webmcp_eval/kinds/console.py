"""``expect.console``: the page's own errors during the trial.

``console: {errors: N}`` holds the page to at most N errors of its own, counted from its start route to
the verdict (the trace's ``page_errors``): each uncaught exception or rejected promise of its scripts, and
each ``console.error()`` call. The browser's notes on a request that failed (a 404, a blocked request) are
not the page's: a request is the network's evidence (``expect.network``). ``errors: 0`` is a page that
runs clean while the agent uses it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from webmcp_eval.kinds import Captures, Evidence, Kind, assertion
from webmcp_eval.trace import Assertion, Trace

SHOWN = 5  # errors named in an assertion's why


class ConsoleExpectation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    errors: int = Field(
        ge=0,
        description="at most this many errors of the page during the trial: uncaught exceptions, rejected "
        "promises and console.error() calls (0: none)",
    )


def check_console(exp: ConsoleExpectation, trace: Trace, captures: Captures) -> list[Assertion]:
    desc = ("no error" if exp.errors == 0 else f"at most {exp.errors} error(s)") + " on the page"
    found = trace.page_errors
    if found is None:
        why = "the page's errors were not recorded"
        return [assertion("console.errors", "console", desc, None, _stopped(trace) or why)]
    listing = "; ".join(f"{e.source}: {e.text[:160]}" for e in found[:SHOWN])
    listing += f"; … and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
    evidence = [e.model_dump() for e in found]
    if len(found) > exp.errors:  # more than allowed already: the rest of the trial cannot undo it
        return [assertion("console.errors", "console", desc, False, f"{len(found)} error(s): {listing}", evidence)]
    if trace.stopped:  # the trial stopped before its end: the page was not heard to the end
        return [assertion("console.errors", "console", desc, None, _stopped(trace), evidence)]
    why = f"{len(found)} error(s): {listing}" if found else "no error"
    return [assertion("console.errors", "console", desc, True, why, evidence)]


def _stopped(trace: Trace) -> str:
    return f"not reached: the trial stopped first ({trace.stopped[:160]})" if trace.stopped else ""


def unheard(exp: ConsoleExpectation, trace: Trace) -> str:
    if trace.page_errors is None:
        return "the page's errors were not recorded in this trial (a trace made before they were kept)"
    return ""


ERRORS = Evidence(
    "console",
    ("page_errors",),
    lambda t: [e.model_dump() for e in t.page_errors] if t.page_errors is not None else None,
)

KIND = Kind(
    "console",
    ConsoleExpectation,
    check_console,
    (ERRORS,),
    unheard,
    description="the page's own errors during the trial (uncaught exceptions, rejected promises, "
    "console.error() calls): {errors: N} allows at most N",
)
