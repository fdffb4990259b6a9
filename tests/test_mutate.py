"""Mutation testing without a browser: the proxy operators on real mitmproxy flows,
mutant generation from a baseline, and the verdict on each mutant."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mitmproxy.test import tflow, tutils

from proxies import mutations as ops
from runner.mutation.mutate import (
    Baseline,
    Mutant,
    MutationResult,
    _judge,
    differences,
    field_paths,
    generate,
    observable,
)
from runner.play.run.trial import TrialHook
from runner.suite.loader import LoadedCase, parse_case
from runner.trace import Assertion, StepRecord, ToolCall, Trace


def flow(method: str = "GET", path: str = "/api/events", status: int = 200, body: Any = None, req: Any = None):
    f = tflow.tflow(
        req=tutils.treq(method=method.encode(), path=path.encode(), content=json.dumps(req).encode() if req else b""),
        resp=tutils.tresp(status_code=status, content=json.dumps(body).encode()),
    )
    f.response.headers["content-type"] = "application/json"
    f.request.headers["content-type"] = "application/json"
    return f


def test_path_template_hides_ids():
    assert ops.path_template("/api/events/evt-a7k2p9") == "/api/events/*"
    assert ops.path_template("/api/registrations/reg-h8k1/cancel") == "/api/registrations/*/cancel"
    assert ops.path_template("/api/events") == "/api/events"


def test_param_ignored_drops_only_its_parameter():
    rewrite = ops.ParamIgnored(path="/api/events", param="level")
    f = flow(path="/api/events?city=taipei&level=beginner")
    rewrite.request(f)
    assert f.request.path == "/api/events?city=taipei" and rewrite.fired == 1
    other = flow(path="/api/saved?level=beginner")
    rewrite.request(other)
    assert other.request.path == "/api/saved?level=beginner" and rewrite.fired == 1


def test_unauthorized_becomes_an_empty_success():
    rewrite = ops.UnauthorizedAsSuccess(
        method="GET", path="/api/registrations", success={"registrations": [{"id": "r"}], "n": 1}
    )
    f = flow(path="/api/registrations", status=401, body={"status": "error", "code": "SESSION_EXPIRED"})
    rewrite.response(f)
    assert f.response.status_code == 200 and json.loads(f.response.content) == {"registrations": [], "n": 1}
    ok = flow(path="/api/registrations", status=200, body={"registrations": []})
    rewrite.response(ok)
    assert rewrite.fired == 1


def test_error_leaks_adds_internals_to_error_messages_only():
    rewrite = ops.ErrorLeaks(path="/api/*")
    f = flow(status=503, body={"status": "error", "message": "稍後再試"})
    rewrite.response(f)
    assert "sqlite3" in json.loads(f.response.content)["message"]
    fine = flow(status=200, body={"message": "ok"})
    rewrite.response(fine)
    assert json.loads(fine.response.content) == {"message": "ok"} and rewrite.fired == 1


def test_a_repeated_write_is_answered_as_a_first_one():
    rewrite = ops.RepeatAnsweredFresh(path="/api/saved")
    answers = []
    for _ in range(2):
        f = flow("POST", "/api/saved", body={"saved": True, "alreadySaved": True}, req={"eventId": "e"})
        rewrite.response(f)
        answers.append(json.loads(f.response.content))
    assert answers == [{"saved": True, "alreadySaved": True}, {"saved": True, "alreadySaved": False}]
    assert rewrite.fired == 1


def test_the_observer_records_and_changes_nothing():
    observer = ops.Observer()
    f = flow(path="/api/events?city=taipei", body={"count": 1})
    observer.response(f)
    (x,) = observer.exchanges
    assert x["template"] == "/api/events" and x["query"] == {"city": "taipei"} and x["response_json"] == {"count": 1}


# ---- generation and judging ------------------------------------------------------------

CASE = """\
id: SEL-01
behaviour: selection
title: t
start_route: /events
steps:
  - user: hi
"""


def baseline(calls: list[ToolCall], exchanges: list[dict[str, Any]] | None = None, **kw: Any) -> Baseline:
    loaded = parse_case(CASE, "SEL-01.yaml")
    assert isinstance(loaded, LoadedCase)
    trace = Trace(
        run_id="r",
        trial_id="SEL-01.t1",
        case_id="SEL-01",
        behaviour="selection",
        start_route="/events",
        calls=calls,
        verdict="passed",
        registrations=[
            {"type": "register", "name": "search_events", "route": "/events", "annotations": {"readOnlyHint": True}}
        ],
        **kw,
    )
    return Baseline(loaded, trace, exchanges or [], set())


SEARCH = ToolCall(
    index=0,
    step=0,
    tool="search_events",
    args={"city": "taipei"},
    result={"status": "ok", "data": {"count": 2, "events": [{"id": "a", "title": "A"}, {"id": "b", "title": "B"}]}},
)


def test_field_paths_walk_objects_and_list_items():
    paths = dict(field_paths(SEARCH.result["data"]))
    assert paths == {"count": "scalar", "events": "list", "events[].id": "scalar", "events[].title": "scalar"}


def test_generate_targets_what_the_cases_touch():
    exchange = {
        "method": "GET",
        "path": "/api/events",
        "template": "/api/events",
        "query": {"city": "taipei"},
        "status": 200,
        "request_json": None,
        "request_type": "",
        "response_json": {"events": []},
    }
    mutants = generate([baseline([SEARCH], [exchange])], catalog_tools={"save_event"})
    by = {(m.operator, m.target): m for m in mutants}
    assert by[("result_field_altered", "search_events → data.events[].title")].cases == ["SEL-01"]
    assert by[("result_list_reordered", "search_events → data.events")].cases == ["SEL-01"]
    assert by[("filter_ignored", "GET /api/events ?city")].params == {"path": "/api/events", "param": "city"}
    assert by[("readonly_writes", "search_events + POST /")].cases == ["SEL-01"]
    # a tool no case calls, and a route no case leaves: nobody can see those mutants
    assert by[("result_field_altered", "save_event → any field (never called)")].status == "unseen"
    assert by[("stale_tool", "search_events")].status == "unseen"
    hook = by[("result_field_altered", "search_events → data.events[].title")].hook()
    assert hook.init_script and hook.init_script.startswith("const MUTANT = {")
    assert isinstance(by[("filter_ignored", "GET /api/events ?city")].hook().proxy, ops.ParamIgnored)


def mutated(trace: Trace, **changes: Any) -> Trace:
    return trace.model_copy(update=changes)


def test_a_failing_case_kills_a_mutant():
    b = baseline([SEARCH])
    m = Mutant("M001", "result_field_dropped", "t", {}, ["SEL-01"])
    failing = mutated(
        b.trace,
        verdict="failed",
        assertions=[Assertion(id="calls.expected[0]", kind="calls", description="d", status="failed", why="no")],
    )
    _judge(m, b, failing, TrialHook())
    assert m.status == "killed" and m.runs[0].failed == ["calls.expected[0]: no"]


def test_a_passing_case_that_saw_a_difference_is_a_survivor_else_equivalent():
    b = baseline([SEARCH])
    other = SEARCH.model_copy(update={"result": {"status": "ok", "data": {"count": 2, "events": []}}})
    survivor = Mutant("M001", "result_field_dropped", "t", {}, ["SEL-01"])
    _judge(survivor, b, mutated(b.trace, calls=[other]), TrialHook())
    same = Mutant("M002", "result_field_dropped", "t", {}, ["SEL-01"])
    _judge(same, b, mutated(b.trace, run_id="another"), TrialHook())
    assert survivor.runs[0].differs == ["calls"] and same.runs[0].differs == []


def test_noise_between_baseline_runs_is_not_a_difference():
    one = baseline([SEARCH], steps=[StepRecord(index=0, kind="user", input="hi", route_after="/events")])
    two = mutated(one.trace, steps=[StepRecord(index=0, kind="user", input="hi", route_after="/events?x")])
    assert differences(observable(one.trace), observable(two), set()) == ["steps"]
    assert differences(observable(one.trace), observable(two), {"steps"}) == []


def test_the_score_counts_killed_over_run_and_leaves_out_equivalent_and_unseen(tmp_path: Path):
    states = ["killed", "killed", "killed", "survived", "equivalent", "unseen"]
    mutants = [Mutant(f"M{i}", "stale_tool", "t", {}, [], s) for i, s in enumerate(states)]
    result = MutationResult(mutants, {}, tmp_path)
    assert result.run == 4 and result.score == 0.75
    data = result.to_json()
    assert data["equivalent"] == 1 and data["unseen"] == 1 and len(data["mutants"]) == 6


def test_a_failure_that_does_not_repeat_is_not_a_kill():
    b = baseline([SEARCH])
    m = Mutant("M001", "result_field_dropped", "t", {}, ["SEL-01"])
    _judge(m, b, mutated(b.trace, run_id="again"), TrialHook(), flaky="not_run: the page did not answer")
    assert m.status == "pending" and m.runs[0].flaky == "not_run: the page did not answer"
