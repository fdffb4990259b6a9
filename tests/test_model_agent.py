"""Model agents: the real SDKs against scripted OpenAI- and Anthropic-shaped servers on loopback.

Unit tests drive the agent loop against an in-memory tool host. The end-to-end
tests run the real runner (real Chromium, the real demo site, the real proxy)
with model agents: a correct scripted model passes SEL-01 and ORD-02; scripted
bad models fail the right case with the right assertion; a recorded run
replays to the same trace; a changed prompt misses loudly; an unreachable
endpoint is not_run. Every provider whose SDK is installed is tested: in one
run, trial t1 of a case is played by the first provider, t2 by the second.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.eval_support import run_on_demo
from tests.fake_llm import FAKE_KEY, Call, Conversation, FakeLLM, Say, closed_port_url
from webmcp_eval.agents.model import (
    DEFAULT_SYSTEM_PROMPT,
    ModelAgent,
    ModelConfigError,
    agent_assertions,
    make_agent_factory,
)
from webmcp_eval.agents.protocol import AgentError, ToolInfo
from webmcp_eval.llm.cassette import Cassette, describe_rerecord, differences
from webmcp_eval.llm.config import ModelConfig
from webmcp_eval.llm.providers import safe_tool_name
from webmcp_eval.play.run.run import select_cases
from webmcp_eval.play.run.settings import RunSettings
from webmcp_eval.play.run.trial import trial_id_for
from webmcp_eval.suite.case import UserStep
from webmcp_eval.suite.loader import load_cases
from webmcp_eval.trace import ToolCall, Trace

PROVIDERS = [k for k in ("openai", "anthropic") if importlib.util.find_spec(k)]
if not PROVIDERS:
    pytest.skip(
        "neither the openai nor the anthropic SDK is installed (pip install 'webmcp-eval[openai]')",
        allow_module_level=True,
    )

ROOT = Path(__file__).resolve().parent.parent
KEY_ENV = "WEBMCP_EVAL_TEST_MODEL_KEY"
PRICES = {"scripted-": {"input": 1.0, "output": 4.0}}


# ---- scripted models --------------------------------------------------------------------------


def by_case(scripts: dict[str, Callable[[Conversation], Say]]) -> Callable[[Conversation], Say]:
    """A model whose script is chosen by the first user message (a phrase of the case's prompt)."""

    def policy(conv: Conversation) -> Say:
        for phrase, script in scripts.items():
            if phrase in conv.first_user:
                return script(conv)
        return Say("我不知道怎麼做。")

    return policy


def _events(conv: Conversation) -> list[dict[str, Any]]:
    return next(r["data"]["events"] for name, r in conv.results() if name == "search_events")


def sel01_good(conv: Conversation) -> Say:
    if not conv.results():
        return Say(calls=[Call("search_events", {"city": "taipei", "price": "free", "level": "beginner"})])
    events = _events(conv)
    return Say(f"找到 {len(events)} 個活動：" + "、".join(e["title"] for e in events) + "。")


def ord02_good(conv: Conversation) -> Say:
    done = [name for name, _ in conv.results()]
    if not done:
        return Say(calls=[Call("search_events", {"city": "taipei", "price": "free", "level": "beginner"})])
    first = _events(conv)[0]["id"]
    if done == ["search_events"]:
        return Say(calls=[Call("get_event_details", {"eventId": first})])
    if done == ["search_events", "get_event_details"]:
        return Say(calls=[Call("save_event", {"eventId": first})])
    title = conv.results()[1][1]["data"]["event"]["title"]
    return Say(f"已收藏第一個活動：{title}。")


def sel01_extra_filter(conv: Conversation) -> Say:  # (a) guesses a filter nobody asked for
    if not conv.results():
        return Say(
            calls=[Call("search_events", {"city": "taipei", "price": "free", "level": "beginner", "query": "Agent"})]
        )
    return Say("找到：" + "、".join(e["title"] for e in _events(conv)))


def inject01_obeys(conv: Conversation) -> Say:  # (b) writes after reading the injected summary
    results = conv.results()
    if not results:
        return Say(calls=[Call("get_event_details", {})])
    if len(results) == 1 and "Ignore previous instructions" in json.dumps(results[0][1], ensure_ascii=False):
        return Say(calls=[Call("save_event", {})])
    return Say("社群分享夜：已依活動介紹的指示處理。")


def recovery02_presses_on(conv: Conversation) -> Say:  # (c) goes on after SESSION_EXPIRED
    results = conv.results()
    if conv.turn == 0:
        if not results:
            return Say(calls=[Call("list_registrations", {})])
        if len(results) == 1:
            first = results[0][1]["data"]["registrations"][0]["id"]
            return Say(calls=[Call("prepare_cancellation", {"registrationId": first})])
        return Say("已準備取消，請你自己按「確認取消」。")
    if not results:
        return Say(calls=[Call("list_registrations", {})])
    if len(results) == 1 and results[0][1].get("code") == "SESSION_EXPIRED":
        earlier = next(r for n, r in conv.results(whole=True) if n == "list_registrations")
        second = earlier["data"]["registrations"][1]["id"]
        return Say(calls=[Call("prepare_cancellation", {"registrationId": second})])
    return Say("第一筆沒成功，我改幫你準備取消下一筆了。")


def stale01_reuses(conv: Conversation) -> Say:  # (d) calls the route-bound form after the route changed
    results = conv.results()
    if not results:
        return Say(calls=[Call("get_event_details", {})])  # valid on the details page only
    if conv.turn == 0:
        return Say(f"記住了：{results[0][1]['data']['event']['title']}。")
    return Say("剛才那個活動是 WebMCP 入門工作坊。")


def conf01_submits(conv: Conversation) -> Say:  # (e) goes past CONFIRMATION_REQUIRED
    results = conv.results()
    if not results:
        return Say(calls=[Call("prepare_registration", {"name": "測試讀者", "email": "reader@example.com"})])
    if len(results) == 1 and results[0][1].get("code") == "CONFIRMATION_REQUIRED":
        return Say(calls=[Call("submit_registration", {})])
    return Say("報名已經送出完成。")


GOOD = by_case({"適合入門者的活動": sel01_good, "查看第一個活動，然後替我收藏": ord02_good})
BAD = by_case(
    {
        "適合入門者的活動": sel01_extra_filter,
        "整理這個活動的重點": inject01_obeys,
        "準備取消第一筆報名": recovery02_presses_on,
        "先記住這個活動": stale01_reuses,
        "請幫我報名這個活動": conf01_submits,
    }
)


# ---- running the real runner with model agents --------------------------------------------------


def _in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """Run fn in its own thread: pytest-playwright's sync API may keep an event loop in this one."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


def _cases(*ids: str):
    loaded, problems = load_cases([ROOT / "cases"])
    assert not problems, problems
    return select_cases(loaded, list(ids), None, [])


def _factory(kind: str, llm: FakeLLM | None, model: str, mode: str, cassettes: Path, **kw: Any):
    base = kw.pop("api_base", None) or (llm.openai_base if kind == "openai" else llm.anthropic_base)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(KEY_ENV, FAKE_KEY)
        return make_agent_factory(
            ModelConfig(kind, model, base, KEY_ENV, mode, cassettes / kind), prices=PRICES, max_retries=0, **kw
        )


def _run(out: Path, ids: tuple[str, ...], choose: Callable[[str, str], Callable[[], ModelAgent]]) -> list[Trace]:
    """Trial t<i+1> of every case is played by PROVIDERS[i]; ``choose(case, provider)`` gives its factory.

    The runner asks the factory for one agent per trial, in job order; the
    wrapper names each agent's trial (its cassette) the way the runner does.
    """
    cases = _cases(*ids)
    jobs = iter([(lc.case.id, i) for lc in cases for i in range(len(PROVIDERS))])
    factories: dict[tuple[str, str], Callable[[], ModelAgent]] = {}

    def factory() -> ModelAgent:
        case_id, i = next(jobs)
        key = (case_id, PROVIDERS[i])
        if key not in factories:
            factories[key] = choose(*key)
        agent = factories[key]()
        agent.trial_id = trial_id_for(case_id, i)
        return agent

    # Four workers: a trial mostly waits (page, tools, the model's answers), and four overlap; no test here looks at
    # a screenshot, so the trials failing on purpose take none.
    options = RunSettings(
        out_root=out, run_id="run", trials=len(PROVIDERS), workers=4, agent_factory=factory, screenshots="off"
    )
    return _in_thread(asyncio.run, run_on_demo(cases, options)).traces


def _trace(traces: list[Trace], case_id: str, provider: str) -> Trace:
    t = next(t for t in traces if t.case_id == case_id and t.trial_index == PROVIDERS.index(provider))
    assert t.agent == provider
    return t


def _statuses(trace: Trace) -> dict[str, str]:
    return {a.id: a.status for a in trace.assertions + agent_assertions(trace.agent_log)}


@pytest.fixture(scope="module")
def llm():
    with FakeLLM({"scripted-good": GOOD, "scripted-bad": BAD}) as server:
        yield server


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("model-agents")


@pytest.fixture(scope="module")
def recorded(llm, store) -> list[Trace]:
    return _run(
        store / "recorded",
        ("SEL-01", "ORD-02"),
        lambda case, kind: _factory(kind, llm, "scripted-good", "record", store / "cassettes"),
    )


@pytest.fixture(scope="module")
def replayed(llm, store, recorded) -> tuple[list[Trace], int, int]:
    before = llm.count()
    closed = closed_port_url()  # replay must not need the endpoint at all
    traces = _run(
        store / "replayed",
        ("SEL-01", "ORD-02"),
        lambda case, kind: _factory(
            kind,
            None,
            "scripted-good",
            "replay",
            store / "cassettes",
            api_base=closed + ("/v1" if kind == "openai" else ""),
        ),
    )
    return traces, before, llm.count()


@pytest.fixture(scope="module")
def bad_run(llm, store, recorded) -> list[Trace]:
    def choose(case: str, kind: str):
        if case == "NO-01":
            return _factory(kind, llm, "scripted-good", "off", store / "none", api_base=closed_port_url())
        if case == "ORD-02":  # replay the recording with another system prompt
            return _factory(
                kind,
                None,
                "scripted-good",
                "replay",
                store / "cassettes",
                system_prompt=DEFAULT_SYSTEM_PROMPT + " Be brief.",
                api_base=closed_port_url(),
            )
        return _factory(kind, llm, "scripted-bad", "off", store / "none")

    ids = ("SEL-01", "INJECT-01", "RECOVERY-02", "STALE-01", "CONF-01", "NO-01", "ORD-02")
    return _run(store / "bad", ids, choose)


# ---- a correct model passes ------------------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("case_id", ["SEL-01", "ORD-02"])
def test_a_correct_model_passes(recorded, provider, case_id):
    trace = _trace(recorded, case_id, provider)
    assert trace.verdict == "passed", trace.verdict_reason
    assert trace.evidence_kind == "agent" and trace.model == "scripted-good"
    assert all(a.status == "passed" for a in agent_assertions(trace.agent_log))
    assert trace.network.available and trace.state.available  # the proxy and the state hook judged it


@pytest.mark.browser
@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_trace_carries_prompt_tokens_latency_and_cost(recorded, provider):
    trace = _trace(recorded, "ORD-02", provider)
    log = trace.agent_log
    assert log["system_prompt"] == DEFAULT_SYSTEM_PROMPT and log["provider"] == provider
    steps = log["steps"]
    assert len(steps) == 4  # search, details, save, answer
    assert [c["tool"] for s in steps for c in s["calls"]] == ["search_events", "get_event_details", "save_event"]
    assert steps[0]["new_messages"][0] == {"role": "user", "content": trace.prompt[0]}
    for s in steps:
        assert s["tokens"]["input"] > 0 and s["tokens"]["output"] > 0 and s["latency_ms"] >= 0
        assert s["cost_usd"] == pytest.approx((s["tokens"]["input"] * 1.0 + s["tokens"]["output"] * 4.0) / 1e6)
    assert trace.tokens == {
        "input": sum(s["tokens"]["input"] for s in steps),
        "output": sum(s["tokens"]["output"] for s in steps),
    }
    assert trace.cost_usd == pytest.approx(sum(s["cost_usd"] for s in steps))
    assert log["price"]["model_prefix"] == "scripted-"
    assert trace.ai_result == "已收藏第一個活動：前端 Agent 新手夜。"


@pytest.mark.browser
@pytest.mark.parametrize("provider", PROVIDERS)
def test_tool_results_reach_the_model_as_the_page_gave_them(recorded, llm, provider):
    trace = _trace(recorded, "SEL-01", provider)
    sent = [
        r["body"]
        for r in llm.requests
        if r["shape"] == provider
        and "適合入門者" in json.dumps(r["body"], ensure_ascii=False)
        and r["model"] == "scripted-good"
    ]
    last = sent[-1]["messages"][-1]
    content = last["content"] if provider == "openai" else last["content"][0]["content"]
    assert json.loads(content) == trace.calls[0].result


# ---- record, then replay --------------------------------------------------------------------------


def _comparable(trace: Trace) -> dict[str, Any]:
    # What the test itself changed: the cassette mode, and the endpoint (replay points at a closed port).
    # A call's document id is made by the page on every load.
    # Replay adds its own assertion (every request was answered), as the proxy's replay does.
    log = {k: v for k, v in trace.agent_log.items() if k not in ("cassette", "agent_seconds", "api_base")}
    log["assertions"] = [a for a in log["assertions"] if a["id"] != "agent.cassette"]
    return {
        "verdict": trace.verdict,
        "assertions": [(a.id, a.status, a.why) for a in trace.assertions if a.id != "agent.cassette"],
        "calls": [c.model_dump(exclude={"started_ms", "duration_ms", "document"}) for c in trace.calls],
        "steps": [s.model_dump(exclude={"duration_ms"}) for s in trace.steps],
        "ai_result": trace.ai_result,
        "tokens": trace.tokens,
        "cost_usd": trace.cost_usd,
        "writes": trace.network.write_counts,
        "agent_log": log,
    }


@pytest.mark.browser
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("case_id", ["SEL-01", "ORD-02"])
def test_record_then_replay_gives_the_same_trace(recorded, replayed, provider, case_id):
    traces, _, _ = replayed
    rec, rep = _trace(recorded, case_id, provider), _trace(traces, case_id, provider)
    assert rep.verdict == "passed", (rep.verdict_reason, rep.agent_log["stopped"])
    assert _comparable(rep) == _comparable(rec)
    assert rep.agent_log["cassette"]["mode"] == "replay" and rec.agent_log["cassette"]["mode"] == "record"
    assert {a.id: a.status for a in agent_assertions(rep.agent_log)} == {
        "agent.limits": "passed",
        "agent.cassette": "passed",
    }


@pytest.mark.browser
def test_replay_never_contacts_the_endpoint(replayed):
    _, before, after = replayed
    assert before > 0 and after == before


@pytest.mark.browser
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_cassette_is_readable_secret_free_text(recorded, store, provider):
    path = store / "cassettes" / provider / f"ORD-02.t{PROVIDERS.index(provider) + 1}.json"
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    assert data["trial"] == path.stem and data["provider"] == provider and data["model"] == "scripted-good"
    assert [i["n"] for i in data["interactions"]] == [1, 2, 3, 4]
    assert all({"key", "request", "response", "latency_ms"} <= set(i) for i in data["interactions"])
    assert "前端 Agent 新手夜" in text  # unescaped: a reviewer can read it
    assert FAKE_KEY not in text and "Bearer" not in text


# ---- bad models fail the right case with the right assertion --------------------------------------

BAD_CASES = [
    ("extra_filter", "SEL-01", {"calls.expected[0]"}),
    ("write_after_injection", "INJECT-01", {"calls.forbidden[2]", "network.writes[total]", "state.unchanged"}),
    ("presses_on_after_expiry", "RECOVERY-02", {"calls.forbidden[0]"}),
    ("stale_route_bound_call", "STALE-01", {"calls.expected[1]"}),
    ("submits_past_confirmation", "CONF-01", {"calls.exact", "calls.catalog"}),
]


@pytest.mark.browser
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(("what", "case_id", "must_fail"), BAD_CASES, ids=[b[0] for b in BAD_CASES])
def test_a_bad_model_fails_the_right_case(bad_run, provider, what, case_id, must_fail):
    trace = _trace(bad_run, case_id, provider)
    failed = {a.id for a in trace.assertions if a.status == "failed"}
    assert trace.verdict == "failed", f"{what}: {trace.verdict}: {trace.verdict_reason}"
    assert must_fail <= failed, f"{what}: expected {must_fail} among the failed {failed}"
    assert all(a.why for a in trace.assertions if a.id in must_fail)
    assert _statuses(trace)["agent.limits"] == "passed"  # it failed the case, not its budget


@pytest.mark.browser
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_made_up_tool_is_refused_logged_and_not_corrected(bad_run, provider):
    trace = _trace(bad_run, "CONF-01", provider)
    made_up = trace.calls[1]
    assert made_up.tool == "submit_registration" and made_up.refused and not made_up.in_catalog
    assert "not in the active catalog" in made_up.error
    step = trace.agent_log["steps"][1]
    assert step["calls"][0]["refused"] == made_up.error  # the model read the refusal
    assert _statuses(trace)["confirmation.pressed"] == "passed"  # and nothing was submitted
    assert trace.write_total == 0


@pytest.mark.browser
@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_catalog_is_refreshed_after_the_route_changes(bad_run, llm, provider):
    trace = _trace(bad_run, "STALE-01", provider)
    assert trace.steps[2].route_before == "/events"
    bodies = [
        r["body"]
        for r in llm.requests
        if r["shape"] == provider and "先記住這個活動" in json.dumps(r["body"], ensure_ascii=False)
    ]

    def details_schema(body):
        tools = body.get("tools", [])
        tool = next(t for t in tools if (t.get("function") or t)["name"] == "get_event_details")
        return (tool.get("function") or {}).get("parameters") or tool.get("input_schema")

    assert details_schema(bodies[0])["properties"] == {}  # the details page: the page's own event
    assert "eventId" in details_schema(bodies[-1])["properties"]  # the list: takes an ID
    assert "search_events" in trace.agent_log["steps"][-1]["tools"]
    assert trace.calls[1].args == {} and trace.calls[1].result["code"] == "INVALID_ARGUMENT"


@pytest.mark.browser
@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_unreachable_endpoint_is_not_run(bad_run, provider):
    trace = _trace(bad_run, "NO-01", provider)
    assert trace.verdict == "not_run"
    assert "unreachable" in trace.verdict_reason and "127.0.0.1" in trace.verdict_reason


@pytest.mark.browser
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_changed_prompt_misses_the_cassette_loudly(bad_run, provider):
    trace = _trace(bad_run, "ORD-02", provider)
    assert trace.verdict == "failed" and not trace.calls
    stopped = trace.agent_log["stopped"]
    assert stopped["reason"] == "cassette_miss"
    where = "messages[0].content" if provider == "openai" else "system"  # where each API keeps the system prompt
    assert (
        f"{where}: recorded '…Answer in the user's language.' → now '…Answer in the user's language. Be brief.'"
        in (stopped["detail"])
    )
    assert "Re-record: webmcp-eval run ORD-02 --agent " + provider in stopped["detail"]
    assert "--model-cassette record" in stopped["detail"]
    assert _statuses(trace)["agent.cassette"] == "failed"
    assert "agent stopped" in trace.ai_result


@pytest.mark.browser
def test_no_key_reaches_a_trace_or_a_cassette(recorded, replayed, bad_run, store):
    for path in store.rglob("*.json"):
        assert FAKE_KEY not in path.read_text(encoding="utf-8"), path


# ---- the loop, without a browser -------------------------------------------------------------------


class FakeHost:
    """The tool host's contract in memory: a catalog, and calls refused when not in it."""

    def __init__(self, tools: list[ToolInfo], answer: Callable[[str, dict], Any] | None = None):
        self.tools = tools
        self.answer = answer or (lambda name, args: {"status": "ok", "code": "OK", "data": {"tool": name}})
        self.calls: list[ToolCall] = []
        self.step = 0

    async def catalog(self) -> list[ToolInfo]:
        return list(self.tools)

    async def call(self, name: str, args: dict | None = None) -> ToolCall:
        record = ToolCall(index=len(self.calls), step=self.step, tool=name, args=dict(args or {}))
        self.calls.append(record)
        names = {t.name for t in self.tools}
        if name not in names:
            record.refused, record.in_catalog = True, False
            record.error = f"refused: {name!r} is not in the active catalog ({', '.join(sorted(names))})"
        else:
            record.result = self.answer(name, record.args)
        return record


def _agent(llm: FakeLLM, model: str, kind: str = PROVIDERS[0], **kw: Any) -> ModelAgent:
    mode, cassettes = kw.pop("mode", "off"), kw.pop("cassettes", Path("/nonexistent"))
    agent = _factory(kind, llm, model, mode, cassettes, **kw)()
    agent.trial_id = "UNIT-01.t1"
    return agent


def _turn(agent: ModelAgent, host: FakeHost, text: str = "做點事") -> str:
    return _in_thread(asyncio.run, agent.turn(UserStep(user=text), host))


TOOLS = [
    ToolInfo(name="events.search", description="搜尋", input_schema={"type": "object", "properties": {}}),
    ToolInfo(name="ping", description="", input_schema=None, read_only=True),
]


def test_tool_names_the_provider_refuses_are_mapped_reversibly():
    assert safe_tool_name("search_events") == "search_events"
    mapped = safe_tool_name("events.search")
    assert mapped.startswith("events_search_") and mapped != safe_tool_name("events/search")
    assert safe_tool_name("事件" * 40) == safe_tool_name("事件" * 40) and len(safe_tool_name("事件" * 40)) <= 64
    seen: list[list[str]] = []

    def model(conv: Conversation) -> Say:
        seen.append(conv.tool_names)
        return Say(calls=[Call(mapped, {})]) if not conv.results() else Say("好了")

    with FakeLLM({"m": model}) as llm:
        for kind in PROVIDERS:
            host = FakeHost(TOOLS)
            agent = _agent(llm, "m", kind)
            assert _turn(agent, host) == "好了"
            assert [c.tool for c in host.calls] == ["events.search"]  # the page's own name
            assert agent.report()["log"]["tool_names"] == {mapped: "events.search"}
    assert seen[0] == sorted([mapped, "ping"])


def test_a_stale_or_made_up_name_goes_to_the_host_unchanged_and_the_refusal_back():
    def model(conv: Conversation) -> Say:
        return (
            Say(calls=[Call("cancel_everything", {"all": True})])
            if not conv.results()
            else Say("結果：" + json.dumps(conv.results()[0][1], ensure_ascii=False))
        )

    with FakeLLM({"m": model}) as llm:
        host = FakeHost(TOOLS)
        reply = _turn(_agent(llm, "m"), host)
    assert host.calls[0].tool == "cancel_everything" and host.calls[0].refused
    assert "not in the active catalog" in reply


def test_arguments_that_are_not_an_object_are_not_executed_and_the_model_is_told():
    def model(conv: Conversation) -> Say:
        if not conv.results():
            return Say(calls=[Call("ping", "{not json")])
        return Say("錯誤：" + json.dumps(conv.results()[0][1], ensure_ascii=False))

    with FakeLLM({"m": model}) as llm:
        host = FakeHost(TOOLS)
        agent = _agent(llm, "m", "openai" if "openai" in PROVIDERS else PROVIDERS[0])
        reply = _turn(agent, host)
    if agent.name == "openai":
        assert host.calls == [] and "the call was not made" in reply
        assert agent.steps[0]["calls"][0]["not_executed"].startswith("arguments are not valid JSON")
    else:  # Anthropic's tool_use input is always an object: the page answers whatever it was given
        assert host.calls[0].args == {"_raw": "{not json"}


def _looping(conv: Conversation) -> Say:
    return Say(calls=[Call("ping", {})])


def test_the_step_limit_stops_the_agent_with_a_failed_assertion():
    with FakeLLM({"loop": _looping}) as llm:
        agent = _agent(llm, "loop", max_steps=3)
        host = FakeHost(TOOLS)
        reply = _turn(agent, host)
        assert "stopped" in reply and "step limit" in reply
        assert len(host.calls) == 3 and llm.count() == 3
        assert _turn(agent, host, "再一次") == reply and llm.count() == 3  # no request after a stop
    log = agent.report()["log"]
    assert log["stopped"]["reason"] == "steps" and log["turns"][1]["skipped"]
    (limits,) = agent_assertions(log)
    assert limits.id == "agent.limits" and limits.status == "failed" and "3 model requests" in limits.why


def test_the_token_limit_stops_the_agent():
    with FakeLLM({"loop": _looping}) as llm:
        agent = _agent(llm, "loop", max_tokens=50)
        reply = _turn(agent, FakeHost(TOOLS))
    assert "token limit" in reply and llm.count() == 1
    assert agent.report()["tokens"]["input"] >= 50


def test_the_time_limit_stops_the_agent_even_mid_request():
    with FakeLLM({"slow": _looping}, delays={"slow": 0.6}) as llm:
        agent = _agent(llm, "slow", max_seconds=1.0)
        reply = _turn(agent, FakeHost(TOOLS))
    assert "time limit" in reply
    assert agent.stopped["reason"] == "time" and 0.9 < agent.agent_seconds < 2.5


@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_wrong_key_is_not_run_and_the_key_is_never_shown(kind):
    with FakeLLM({"m": _looping}, api_key="the-right-key") as llm:
        agent = _agent(llm, "m", kind)
        with pytest.raises(AgentError) as err:
            _turn(agent, FakeHost(TOOLS))
    assert "401" in str(err.value) and FAKE_KEY not in str(err.value)
    assert FAKE_KEY not in json.dumps(agent.report(), ensure_ascii=False) and FAKE_KEY not in repr(agent.provider)


def test_replay_misses_say_what_changed_and_identical_requests_replay_in_order(tmp_path):
    def model(conv: Conversation) -> Say:
        return Say(calls=[Call("ping", {})]) if len(conv.results()) < 2 else Say("完成")

    with FakeLLM({"m": model}) as llm:
        rec = _agent(llm, "m", mode="record", cassettes=tmp_path)
        assert _turn(rec, FakeHost(TOOLS), "第一句") == "完成"
    rep = _agent(llm, "m", mode="replay", cassettes=tmp_path)
    assert _turn(rep, FakeHost(TOOLS), "第一句") == "完成"
    assert [s["key"] for s in rep.steps] == [s["key"] for s in rec.steps]
    miss = _agent(llm, "m", mode="replay", cassettes=tmp_path)
    reply = _turn(miss, FakeHost(TOOLS), "第二句")
    detail = miss.stopped["detail"]
    assert "stopped" in reply and "not in the cassette" in detail
    assert "'第一句' → now '第二句'" in detail and "Re-record: webmcp-eval run UNIT-01 --agent" in detail
    nothing = _agent(llm, "m", mode="replay", cassettes=tmp_path / "empty")
    _turn(nothing, FakeHost(TOOLS))
    assert "no model cassette at" in nothing.stopped["detail"]


def test_differences_name_the_changed_paths():
    a = {"model": "x", "messages": [{"role": "user", "content": "hello world"}], "temperature": 0}
    b = {"model": "x", "messages": [{"role": "user", "content": "hello there"}, {"role": "user", "content": "+"}]}
    diffs = differences(a, b)
    assert "messages[0].content: recorded 'hello world' → now 'hello there'" in diffs
    assert any(d.startswith("messages[1]: now") for d in diffs)
    assert "temperature: recorded 0, now absent" in diffs


def test_a_rerecorded_cassette_says_what_changed_since_the_last_recording(tmp_path):
    path = tmp_path / "UNIT-01.t1.json"

    def record(requests_and_answers):
        cassette = Cassette.open_record(path, {"model": "m"}, [])
        for request, answer in requests_and_answers:
            cassette.add(request, {"text": answer}, 1.0)
        return cassette

    user = {"role": "user", "content": "台北、免費"}
    ask = {"model": "m", "messages": [user]}
    follow = {"model": "m", "messages": [user, {"role": "tool", "content": "3 場"}]}
    first = record([(ask, "search"), (follow, "三場活動")])
    assert first.rerecorded() is None  # nothing was there before
    same = Cassette.open_record(path, {"model": "m"}, [])
    same.add(ask, {"text": "search", "id": "chatcmpl-new", "usage": {"total_tokens": 9}}, 1.0)  # fresh ids only
    same.add(follow, {"text": "三場活動"}, 1.0)
    assert same.rerecorded()["same"] == 2 and describe_rerecord(same.rerecorded()) is None

    changed_tool = {**follow, "messages": [follow["messages"][0], {"role": "tool", "content": "5 場"}]}
    again = record([(ask, "search again"), (changed_tool, "五場活動"), (ask, "extra")])
    summary = again.rerecorded()
    assert summary["previous"] == 2 and summary["same"] == 0 and summary["added"] == 1
    assert summary["answers_changed"] == [1]  # the same request, answered differently
    assert summary["requests_changed"][0]["n"] == 2
    assert "messages[1].content: recorded '3 場' → now '5 場'" in summary["requests_changed"][0]["differences"]
    line = describe_rerecord(summary)
    assert line and "0 of 2 unchanged" in line and "1 request(s) changed, 1 answer(s) changed, 1 added" in line


def test_configuration_errors_are_usage_errors(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelConfigError, match=r"needs a key in \$OPENAI_API_KEY"):
        make_agent_factory(ModelConfig("openai", "gpt-4o-mini", None, None, "off", tmp_path))
    with pytest.raises(ModelConfigError, match="unknown agent"):
        make_agent_factory(ModelConfig("gemini", "x", None, None, "off", tmp_path))
    with pytest.raises(ModelConfigError, match="--model-cassette"):
        make_agent_factory(ModelConfig("openai", "x", "http://127.0.0.1:9", None, "sometimes", tmp_path))
    make_agent_factory(ModelConfig("openai", "gpt-4o-mini", None, None, "replay", tmp_path))  # replay needs no key
    local = make_agent_factory(ModelConfig("openai", "llama", "http://127.0.0.1:9/v1", None, "off", tmp_path))()
    assert local.model == "llama" and local.report()["cost_usd"] is None  # no price for a local model
    monkeypatch.setitem(sys.modules, "openai", None)  # the SDK is not installed
    with pytest.raises(ModelConfigError, match=r"pip install 'webmcp-eval\[openai\]'"):
        make_agent_factory(ModelConfig("openai", "x", "http://127.0.0.1:9/v1", None, "off", tmp_path))


def test_a_price_file_sets_the_cost(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("m: {input: 2.0, output: 10.0}\n", encoding="utf-8")

    def model(conv: Conversation) -> Say:
        return Say("好")

    with FakeLLM({"m": model}) as llm:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv(KEY_ENV, FAKE_KEY)
            kind = PROVIDERS[0]
            base = llm.openai_base if kind == "openai" else llm.anthropic_base
            agent = make_agent_factory(ModelConfig(kind, "m", base, KEY_ENV, "off", tmp_path), prices=prices)()
        _turn(agent, FakeHost(TOOLS))
    report = agent.report()
    t = report["tokens"]
    assert report["cost_usd"] == pytest.approx((t["input"] * 2.0 + t["output"] * 10.0) / 1e6)
    assert report["log"]["price"]["source"] == str(prices)


@pytest.mark.parametrize("kind", PROVIDERS)
def test_the_key_comes_from_the_environment_once_and_is_never_reported(monkeypatch, tmp_path, kind):
    env = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}[kind]
    monkeypatch.setenv(env, "sk-from-env-1234")
    factory = make_agent_factory(ModelConfig(kind, "m", None, None, "off", tmp_path))  # the hosted API: a key is needed
    monkeypatch.delenv(env)
    agent = factory()
    assert agent.provider._api_key == "sk-from-env-1234" and os.environ.get(env) is None
    assert "sk-from-env-1234" not in json.dumps(agent.report()) + repr(agent.provider)


def test_history_turns_reach_the_model_as_the_conversation_so_far():
    """Earlier user/model/tool turns of a case are the conversation before its message; the page is not called."""
    from webmcp_eval.suite.case import UserStep as Step

    seen: list[Conversation] = []

    def model(conv: Conversation) -> Say:
        seen.append(conv)
        earlier = conv.results(whole=True)
        return Say("之前的結果：" + json.dumps(earlier[0][1], ensure_ascii=False) if earlier else "沒有歷史")

    step = Step.model_validate(
        {
            "history": [
                {"user": "找活動"},
                {"call": "ping", "args": {}, "result": {"status": "ok", "n": 3}},
                {"model": "找到三個"},
            ],
            "user": "第一個是什麼？",
        }
    )
    with FakeLLM({"m": model}) as llm:
        for kind in PROVIDERS:
            host = FakeHost(TOOLS)
            reply = _in_thread(asyncio.run, _agent(llm, "m", kind).turn(step, host))
            assert '"n": 3' in reply and host.calls == []
            assert seen[-1].users == ["找活動", "第一個是什麼？"]
        host = FakeHost(TOOLS)
        assert _in_thread(asyncio.run, _agent(llm, "m").turn(Step(user="hi"), host)) == "沒有歷史"


def test_an_empty_message_after_a_tools_answer_lets_the_model_go_on_from_it():
    """A conversation that ends with a tool's answer (an evals.json mid-trajectory): no new user message is sent."""
    from webmcp_eval.suite.case import UserStep as Step

    seen: list[Conversation] = []

    def model(conv: Conversation) -> Say:
        seen.append(conv)
        return Say("已處理")

    step = Step.model_validate(
        {"history": [{"user": "套用折扣碼"}, {"call": "ping", "args": {}, "result": {"error": "expired"}}], "user": ""}
    )
    with FakeLLM({"m": model}) as llm:
        for kind in PROVIDERS:
            host = FakeHost(TOOLS)
            assert _in_thread(asyncio.run, _agent(llm, "m", kind).turn(step, host)) == "已處理"
            assert seen[-1].users == ["套用折扣碼"] and seen[-1].events[-1]["role"] == "tool", seen[-1].events
