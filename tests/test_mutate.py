"""Mutation testing without a browser: the proxy operators on real mitmproxy flows,
mutant generation from the clean runs, and the verdict on each mutant."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from eval_support import in_thread
from mitmproxy.test import tflow, tutils

from webmcp_eval.mutation.evidence import CleanRun, differences, field_paths, observable
from webmcp_eval.mutation.generate import generate
from webmcp_eval.mutation.mutants import Mutant
from webmcp_eval.mutation.mutate import MutationResult, _Hunt, _judge
from webmcp_eval.play.run.settings import TrialHook
from webmcp_eval.proxies import mutations as ops
from webmcp_eval.suite.loader import LoadedCase, parse_case
from webmcp_eval.trace import Assertion, StepRecord, ToolCall, Trace


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


def clean_run(calls: list[ToolCall], exchanges: list[dict[str, Any]] | None = None, **kw: Any) -> CleanRun:
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
    return CleanRun(loaded, trace, exchanges or [], set())


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
    mutants = generate([clean_run([SEARCH], [exchange])], catalog_tools={"save_event"})
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
    b = clean_run([SEARCH])
    m = Mutant("M001", "result_field_dropped", "t", {}, ["SEL-01"])
    failing = mutated(
        b.trace,
        verdict="failed",
        assertions=[Assertion(id="calls.expected[0]", kind="calls", description="d", status="failed", why="no")],
    )
    _judge(m, b, failing, TrialHook())
    assert m.status == "killed" and m.runs[0].failed == ["calls.expected[0]: no"]


def test_a_passing_case_that_saw_a_difference_is_a_survivor_else_equivalent():
    b = clean_run([SEARCH])
    other = SEARCH.model_copy(update={"result": {"status": "ok", "data": {"count": 2, "events": []}}})
    survivor = Mutant("M001", "result_field_dropped", "t", {}, ["SEL-01"])
    _judge(survivor, b, mutated(b.trace, calls=[other]), TrialHook())
    same = Mutant("M002", "result_field_dropped", "t", {}, ["SEL-01"])
    _judge(same, b, mutated(b.trace, run_id="another"), TrialHook())
    assert survivor.runs[0].differs == ["calls"] and same.runs[0].differs == []


def test_noise_between_clean_runs_is_not_a_difference():
    one = clean_run([SEARCH], steps=[StepRecord(index=0, kind="user", input="hi", route_after="/events")])
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
    b = clean_run([SEARCH])
    m = Mutant("M001", "result_field_dropped", "t", {}, ["SEL-01"])
    _judge(m, b, mutated(b.trace, run_id="again"), TrialHook(), flaky="not_run: the page did not answer")
    assert m.status == "pending" and m.runs[0].flaky == "not_run: the page did not answer"


class ScriptedTrials:
    """Plays nothing: hands out the traces a test scripted, in order, and keeps which jobs were asked for."""

    def __init__(self, traces: list[Trace]):
        self.traces = traces
        self.jobs: list[str] = []

    async def play(self, lc: LoadedCase, suffix: str, hook: TrialHook) -> Trace:
        self.jobs.append(f"{lc.case.id}-{suffix}")
        return self.traces.pop(0)


def hunt(b: CleanRun, traces: list[Trace], confirm: str = "doubtful") -> tuple[Mutant, list[str]]:
    trials = ScriptedTrials(traces)
    m = Mutant("M001", "result_field_dropped", "t", {}, ["SEL-01", "SEL-02"])
    second = parse_case(CASE.replace("id: SEL-01", "id: SEL-02"), "SEL-02.yaml")
    assert isinstance(second, LoadedCase)
    other = CleanRun(second, b.trace, [], set())
    lines: list[str] = []
    job = _Hunt(trials, {"SEL-01": b, "SEL-02": other}, confirm, 1, lines.append)  # type: ignore[arg-type]
    in_thread(asyncio.run, job.mutant(m))
    assert len(lines) == 1 and lines[0].startswith("[1/1] M001")
    return m, trials.jobs


FAILED = Assertion(id="calls.expected[0]", kind="calls", description="d", status="failed", why="no")


def test_a_failure_the_trace_ties_to_the_mutant_kills_at_once_and_a_doubtful_one_is_played_again():
    b = clean_run([SEARCH])
    other = SEARCH.model_copy(update={"result": {"status": "ok", "data": {"count": 2, "events": []}}})
    shows_it = mutated(b.trace, verdict="failed", calls=[other], assertions=[FAILED])
    m, jobs = hunt(b, [shows_it])
    assert m.status == "killed" and jobs == ["SEL-01-M001"]
    # --confirm all plays it again all the same, and the repeated failure kills
    m, jobs = hunt(b, [shows_it, shows_it], confirm="all")
    assert m.status == "killed" and jobs == ["SEL-01-M001", "SEL-01-M001-again"]
    # a failure that differs from the clean runs in nothing a check reads is doubtful: played again,
    # and when it passes then, it is no kill; the mutant goes on to its next case
    nothing_else = mutated(b.trace, verdict="failed", assertions=[FAILED])
    m, jobs = hunt(b, [nothing_else, b.trace, b.trace])
    assert m.status == "pending" and jobs == ["SEL-01-M001", "SEL-01-M001-again", "SEL-02-M001"]
    assert m.runs[0].flaky and m.runs[0].flaky.startswith("failed")
    # a trial that could not run is doubtful whatever it shows; a repeat kills
    not_run = mutated(b.trace, verdict="not_run", verdict_reason="the page did not answer", calls=[other])
    m, jobs = hunt(b, [not_run, not_run])
    assert m.status == "killed" and jobs == ["SEL-01-M001", "SEL-01-M001-again"]
    # --confirm none: every failure kills at once
    m, jobs = hunt(b, [nothing_else], confirm="none")
    assert m.status == "killed" and jobs == ["SEL-01-M001"]


def test_a_case_that_failed_once_unmutated_has_its_failures_played_again():
    b = clean_run([SEARCH])
    b.flaky = "failed once unmutated (the page did not answer)"
    other = SEARCH.model_copy(update={"result": {"status": "ok", "data": {"count": 2, "events": []}}})
    shows_it = mutated(b.trace, verdict="failed", calls=[other], assertions=[FAILED])
    m, jobs = hunt(b, [shows_it, shows_it])
    assert m.status == "killed" and jobs == ["SEL-01-M001", "SEL-01-M001-again"]


def test_a_field_mutant_tries_first_the_cases_that_check_that_field():
    b = clean_run([SEARCH])
    checks = parse_case(
        CASE.replace("id: SEL-01", "id: SEL-02")
        + "expect:\n  calls:\n    expected:\n      - tool: search_events\n"
        + "        result: {data: {events: [{title: A}]}}\n",
        "SEL-02.yaml",
    )
    assert isinstance(checks, LoadedCase), checks
    checking = CleanRun(checks, b.trace.model_copy(update={"case_id": "SEL-02"}), [], set())
    mutants = generate([b, checking], catalog_tools=set())
    by = {(m.operator, m.target): m for m in mutants}
    # SEL-02 checks events[].title (and so something inside events): it goes first for those
    assert by[("result_field_altered", "search_events → data.events[].title")].cases == ["SEL-02", "SEL-01"]
    assert by[("result_list_reordered", "search_events → data.events")].cases == ["SEL-02", "SEL-01"]
    # a field no case checks keeps the suite's order
    assert by[("result_field_altered", "search_events → data.events[].id")].cases == ["SEL-01", "SEL-02"]
