"""The second witness: the shim's log against the DevTools WebMCP domain's events."""

from __future__ import annotations

import pytest

from webmcp_eval.agents.reference import ReferenceAgent
from webmcp_eval.judge.checks import check_calls
from webmcp_eval.play.page.surface.log import ShimEvent, parse_event
from webmcp_eval.play.page.witness import compare_witness
from webmcp_eval.suite.case import CallExpectations
from webmcp_eval.trace import Trace, WitnessRecord


def shim_call(name: str, args: dict, declarative: bool = False) -> ShimEvent:
    return parse_event({"type": "call", "name": name, "args": args, **({"declarative": True} if declarative else {})})


def invoked(name: str, args: dict) -> dict:
    return {"event": "toolInvoked", "toolName": name, "input": args}


def test_the_same_imperative_calls_agree():
    w = compare_witness([shim_call("search", {"q": "a"})], [invoked("search", {"q": "a"})], True)
    assert w.available and w.disagreements == []


def test_different_arguments_of_an_imperative_call_disagree_both_ways():
    w = compare_witness([shim_call("search", {"q": "a"})], [invoked("search", {"q": "b"})], True)
    assert w.disagreements == [
        'the shim saw 1× search {"q": "a"}; DevTools did not',
        'DevTools saw 1× search {"q": "b"}; the shim did not',
    ]


def test_a_form_agrees_when_it_holds_what_the_agent_sent():
    # the shim reads the filled form: fields the agent left alone keep their defaults
    form = shim_call("subscribe", {"email": "a@x.example", "topic": "news"}, declarative=True)
    assert compare_witness([form], [invoked("subscribe", {"email": "a@x.example"})], True).disagreements == []
    other = compare_witness([form], [invoked("subscribe", {"email": "a@x.example", "topic": "offers"})], True)
    assert len(other.disagreements) == 2


def test_a_call_only_devtools_saw_disagrees():
    w = compare_witness([], [invoked("book", {"n": 2})], True)
    assert w.disagreements == ['DevTools saw 1× book {"n": 2}; the shim did not']


def test_without_the_devtools_domain_there_is_no_second_witness():
    assert compare_witness([shim_call("a", {})], [], False) == WitnessRecord(available=False)


def witness_assertion(witness: WitnessRecord) -> tuple[str, str]:
    trace = Trace(run_id="r", trial_id="X-01.t1", case_id="X-01", behaviour="selection", start_route="/")
    trace.witness = witness
    assertions, _ = check_calls(CallExpectations(witness_agrees=True), trace)
    (a,) = [a for a in assertions if a.id == "calls.witness"]
    return a.status, a.why


def test_witness_agrees_passes_fails_or_cannot_run():
    assert witness_assertion(compare_witness([], [], True))[0] == "passed"
    status, why = witness_assertion(compare_witness([], [invoked("book", {})], True))
    assert status == "failed" and "DevTools saw 1× book" in why
    status, why = witness_assertion(WitnessRecord(available=False))
    assert status == "not_run" and "no DevTools WebMCP domain" in why


def test_witness_is_no_assertion_unless_asked():
    trace = Trace(run_id="r", trial_id="X-01.t1", case_id="X-01", behaviour="selection", start_route="/")
    trace.witness = compare_witness([], [invoked("book", {})], True)
    assertions, _ = check_calls(CallExpectations(), trace)
    assert "calls.witness" not in {a.id for a in assertions}


@pytest.mark.browser  # a real run: it starts Chromium
def test_on_the_demo_site_devtools_sees_the_shims_calls(tmp_path):
    """The demo's imperative tools, with the witness asked to agree: it must pass (and can fail: above)."""
    import asyncio

    import pytest
    from eval_support import in_thread, run_on_demo, suite_cases

    from webmcp_eval.play.run.settings import RunSettings
    from webmcp_eval.suite.case import Case
    from webmcp_eval.suite.loader import LoadedCase

    pytest.importorskip("playwright")
    (original,) = suite_cases("SEL-01")
    data = original.case.model_dump(mode="json", exclude_defaults=True)
    data["expect"]["calls"]["witness_agrees"] = True
    asked = LoadedCase(Case.model_validate(data), original.file, original.lines)
    options = RunSettings(ReferenceAgent, out_root=tmp_path, run_id="witness")
    (trace,) = in_thread(asyncio.run, run_on_demo([asked], options)).traces
    assert trace.verdict == "passed", trace.verdict_reason
    (a,) = [a for a in trace.assertions if a.id == "calls.witness"]
    assert a.status == "passed" and not trace.warnings
