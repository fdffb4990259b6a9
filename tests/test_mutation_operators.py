"""The mutation operators for coincidental passes: a displayed time shifted, a list that keeps its stale
items, an error result's flag flipped, a form that keeps the signed-in account's values.

For each, on the demo site: the seed case as it was (``tests/weaker_cases/``) passes the mutant, the
strengthened seed case fails it, for the reason named here.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from eval_support import SEED_CONTEXT, in_thread, suite_cases

from webmcp_eval.mutation.evidence import CleanRun
from webmcp_eval.mutation.generate import generate
from webmcp_eval.mutation.mutants import Mutant
from webmcp_eval.mutation.mutate import MutateOptions, _play
from webmcp_eval.play.run.settings import TrialHook
from webmcp_eval.suite.loader import LoadedCase, parse_case
from webmcp_eval.suite.site import demo_site_config
from webmcp_eval.trace import ToolCall, Trace

WEAKER = Path(__file__).parent / "weaker_cases"
ACCOUNT = {"name": "測試讀者", "email": "reader@example.com"}  # the demo's signed-in account

# operator, its params, the case, what the strengthened case's failure shows
OPERATORS = [
    ("time_shifted", {"hours": -8}, "SEL-02", "2027/01/09（週六） 06:00"),
    ("list_keeps_stale", {}, "SEL-01", "WebMCP 進階：權限與確認"),
    ("error_flag_flipped", {"tool": "list_registrations", "field": "retryable"}, "RECOVERY-02", "retryable"),
    ("prefill_wins", {"tool": "prepare_registration", "values": ACCOUNT}, "CONF-01", "測試讀者"),
]


@pytest.mark.browser
def test_each_operator_passes_the_weaker_case_and_the_strengthened_one_kills_it(site, tmp_path: Path):
    pairs = []
    for operator, params, case_id, _ in OPERATORS:
        hook = Mutant("M", operator, "t", params, [case_id]).hook
        (weaker,) = suite_cases(case_id, directory=WEAKER)
        (strong,) = suite_cases(case_id)
        pairs += [(weaker, f"{operator}-weaker", hook()), (strong, f"{operator}-strong", hook())]
    options = MutateOptions(out_root=tmp_path, run_id="ops", workers=2, browser_context=SEED_CONTEXT)
    traces = in_thread(asyncio.run, _play(pairs, options, "ops", demo_site_config(site.url)))
    for operator, _, case_id, shown in OPERATORS:
        weaker, strong = traces[f"{case_id}-{operator}-weaker"], traces[f"{case_id}-{operator}-strong"]
        assert weaker.verdict == "passed", f"{operator}: the weaker {case_id} {weaker.verdict_reason}"
        failed = [f"{a.id}: {a.why}" for a in strong.assertions if a.status == "failed"]
        assert strong.verdict == "failed" and failed, f"{operator}: the strengthened {case_id} {strong.verdict_reason}"
        seen = " ".join(failed + [f"{o.text} {o.value}" for o in strong.ui.observations])
        assert shown in seen, f"{operator}: {failed}"
    # the mutants did act on the weaker cases: they passed with the bug in front of them
    assert "06:00" in (traces["SEL-02-time_shifted-weaker"].ui.aria_snapshot or "")
    assert "WebMCP 進階：權限與確認" in (traces["SEL-01-list_keeps_stale-weaker"].ui.aria_snapshot or "")
    expired = traces["RECOVERY-02-error_flag_flipped-weaker"].calls[-1].result
    assert expired["code"] == "SESSION_EXPIRED" and expired["retryable"] is True
    # ... except the account's own values: given as the input, a form that keeps them looks right
    assert [o.value for o in traces["CONF-01-prefill_wins-weaker"].ui.observations] == list(ACCOUNT.values())


CASE = "id: X-01\nbehaviour: recovery\ntitle: t\nstart_route: /r\nsteps:\n  - user: hi\n"


def test_generation_finds_times_lists_error_flags_and_account_values():
    loaded = parse_case(CASE, "X-01.yaml")
    assert isinstance(loaded, LoadedCase)
    calls = [
        ToolCall(index=0, step=0, tool="list_items", args={}, result={"status": "ok", "data": {"items": [{"id": 1}]}}),
        ToolCall(
            index=1,
            step=0,
            tool="fill_form",
            args={"name": "Lin", "email": "lin@example.org", "note": "x"},
            result={"status": "error", "code": "SESSION_EXPIRED", "retryable": False, "message": "m"},
        ),
    ]
    trace = Trace(run_id="r", trial_id="X-01.t1", case_id="X-01", behaviour="recovery", start_route="/r", calls=calls)
    trace.ui.aria_snapshot = "- list:\n  - listitem: Jan 5, 19:00"
    session = {"method": "GET", "path": "/api/me", "template": "/api/me", "query": {}, "status": 200}
    session |= {"request_json": None, "request_type": "", "response_json": {"user": {"name": "Reader", "id": 7}}}
    by = {(m.operator, m.target): m for m in generate([CleanRun(loaded, trace, [session], set())], set())}
    assert by[("time_shifted", "every displayed date and time")].cases == ["X-01"]
    assert by[("list_keeps_stale", "every list the page refills")].cases == ["X-01"]
    assert by[("error_flag_flipped", "fill_form error → retryable")].params == {
        "tool": "fill_form",
        "field": "retryable",
    }
    prefill = by[("prefill_wins", "fill_form(name) ← the signed-in account's")]
    assert prefill.params == {"tool": "fill_form", "values": {"name": "Reader"}} and prefill.cases == ["X-01"]
    # a page with no time of day and no list shows neither bug
    trace.ui.aria_snapshot = "- heading: Hello"
    quiet = {m.operator: m.status for m in generate([CleanRun(loaded, trace, [], set())], set())}
    assert quiet["time_shifted"] == "unseen" and quiet["list_keeps_stale"] == "unseen" and "prefill_wins" not in quiet


def test_a_hook_carries_its_operator_into_the_page():
    hook = Mutant("M", "prefill_wins", "t", {"tool": "f", "values": ACCOUNT}, []).hook()
    assert isinstance(hook, TrialHook) and hook.init_script
    assert hook.init_script.startswith(
        'const MUTANT = {"op": "prefill_wins", "tool": "f", "values": {"name": "測試讀者"'
    )
