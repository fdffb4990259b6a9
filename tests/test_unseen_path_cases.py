"""The seed cases for paths no case used to reach: an error answer from search_events, save_event and both
prepare tools (RECOVERY-03..06), a tool whose route is left inside the page (STALE-03, STALE-04, CONF-03) and
a cancel repeated through the page after its answer was lost (REPEAT-03).

Each is played against the mutant that used to be unseen on that path, and must kill it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from eval_support import SEED_CONTEXT, in_thread, suite_cases

from webmcp_eval.mutation.mutants import Mutant
from webmcp_eval.mutation.mutate import MutateOptions, _play
from webmcp_eval.suite.loader import CaseLoadError, parse_case
from webmcp_eval.suite.site import demo_site_config

# case, operator, params, an assertion that must fail
KILLS = [
    ("RECOVERY-03", "error_leaks", {"tool": "search_events"}, "calls.expected[0]"),
    ("RECOVERY-04", "error_leaks", {"tool": "save_event"}, "calls.expected[0]"),
    ("RECOVERY-05", "error_leaks", {"tool": "prepare_registration"}, "calls.expected[0]"),
    ("RECOVERY-06", "error_leaks", {"tool": "prepare_cancellation"}, "calls.expected[0]"),
    ("STALE-03", "stale_tool", {"tool": "list_registrations"}, "calls.stale"),
    ("STALE-03", "stale_tool", {"tool": "prepare_cancellation"}, "calls.stale"),
    ("STALE-04", "stale_tool", {"tool": "search_events"}, "calls.stale"),
    ("CONF-03", "stale_tool", {"tool": "prepare_registration"}, "calls.stale"),
    ("REPEAT-03", "repeat_not_idempotent", {"path": "/api/registrations/*/cancel"}, "ui[0]"),
]


@pytest.mark.browser
def test_each_new_case_kills_the_mutant_that_was_unseen_on_its_path(site, tmp_path: Path):
    pairs = []
    for i, (case_id, operator, params, _) in enumerate(KILLS):
        (loaded,) = suite_cases(case_id)
        pairs.append((loaded, f"K{i}", Mutant(f"K{i}", operator, "t", params, [case_id]).hook()))
    options = MutateOptions(out_root=tmp_path, run_id="unseen", workers=2, browser_context=SEED_CONTEXT)
    traces = in_thread(asyncio.run, _play(pairs, options, "unseen", demo_site_config(site.url)))
    for i, (case_id, operator, params, must_fail) in enumerate(KILLS):
        trace = traces[f"{case_id}-K{i}"]
        failed = {a.id: a.why for a in trace.assertions if a.status == "failed"}
        assert trace.verdict == "failed", f"{operator} {params} survived {case_id}: {trace.verdict_reason}"
        assert must_fail in failed, f"{operator} {params} on {case_id}: {failed}"


CASE = """\
id: REPEAT-09
behaviour: idempotency
title: t
start_route: /registrations
steps:
  - action: fault
    path: /api/registrations/*/cancel
    lose_answer: true
    status: 502
  - user: hi
"""


def test_a_fault_takes_lose_answer_as_its_one_effect():
    with pytest.raises(CaseLoadError) as err:
        parse_case(CASE, "REPEAT-09.yaml")
    assert str(err.value) == (
        "REPEAT-09.yaml:6: steps[0]: Value error, a fault needs exactly one of status, delay_ms, drop, duplicate "
        "or lose_answer"
    )
    good = parse_case(CASE.replace("    status: 502\n", ""), "REPEAT-09.yaml")
    assert good.case.steps[0].lose_answer is True
