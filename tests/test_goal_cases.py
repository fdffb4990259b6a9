"""Goal cases: a simulated user (a scripted model behind the real SDK) talks with the agent.

Unit tests drive the simulated user and the conversation loop against the
scripted model server: it is given the facts only once the agent has asked, it
never sees tools, its markers and the budgets end the conversation, its
cassette replays exactly and a miss is an error, never an answer.

The end-to-end tests run the three goal variants of the seed suite (AMB-01-G,
AMB-02-G, CONF-01-G) with the real runner, the real demo site, Chromium and the
proxy: a good scripted agent passes them, a bad one (one that asks the wrong
question, ones that never ask) fails them, a recorded run replays offline to
the same trace, a simulated user's cassette miss is not_run, setup is never
credited to the agent, and the reference agent plays a goal case only with a plan.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from eval_support import in_thread, run_on_demo

from tests.fake_llm import FAKE_KEY, Call, FakeLLM, Say, closed_port_url
from tests.fake_llm import Conversation as Heard
from webmcp_eval.agents.model import ModelAgent, make_agent_factory
from webmcp_eval.agents.reference import ReferenceAgent
from webmcp_eval.agents.simulated_user import (
    OPENING,
    SimulatedUser,
    SimulatorError,
    make_simulator_factory,
    read_marker,
)
from webmcp_eval.judge.grader import make_grader
from webmcp_eval.llm.config import ModelConfig
from webmcp_eval.play.run.conversation import NO_PLAN, NO_SIMULATOR, Conversation
from webmcp_eval.play.run.run import select_cases
from webmcp_eval.play.run.settings import RunSettings, RunState
from webmcp_eval.play.run.trial import trial_id_for
from webmcp_eval.suite.case import UserGoal
from webmcp_eval.suite.loader import load_cases
from webmcp_eval.suite.site import demo_site_config
from webmcp_eval.trace import ConversationRecord, Trace

if not importlib.util.find_spec("openai"):
    pytest.skip("the openai SDK is not installed (pip install 'webmcp-eval[openai]')", allow_module_level=True)

ROOT = Path(__file__).resolve().parent.parent
KEY_ENV = "WEBMCP_EVAL_TEST_MODEL_KEY"
GOAL_CASES = ("AMB-01-G", "AMB-02-G", "CONF-01-G")


# ---- the scripted simulated user --------------------------------------------------------------


def facts_of(system: str) -> dict[str, Any]:
    """The facts the simulated user was given (none until the agent asked, under reveal: on_ask)."""
    found = re.search(r"What you know: (\{.*?\})\.", system)
    return json.loads(found.group(1)) if found else {}


def scripted_user(conv: Heard) -> Say:
    """A terse user: opens as the goal says, answers only what is asked, judges the agent's last reply."""
    said = [e for e in conv.events if e["role"] == "assistant"]
    if not said:
        opening = re.search(r"一開始只說「(.+?)」", conv.system)
        return Say(opening.group(1) if opening else "你好。")
    reply = conv.events[-1]["text"]
    facts = facts_of(conv.system)
    if re.search(r"[?？]", reply):
        asked = [v for k, v in facts.items() if k in reply or (k == "活動" and "哪" in reply and "活動" in reply)]
        if "哪一筆" in reply or "哪筆" in reply:
            asked += [v for k, v in facts.items() if "取消" in k]
        return Say("，".join(map(str, asked)) if asked else "我不確定。")
    if any(word in reply for word in ("已收藏", "已準備取消", "已填好")):
        return Say("好，謝謝。[GOAL_MET]")
    if "做不到" in reply:
        return Say("算了。[GAVE_UP]")
    return Say("嗯。")


def chatty_user(conv: Heard) -> Say:
    """A user who never says the goal is met: only a budget ends the conversation."""
    return Say(f"還有一件事（第 {len(conv.users)} 次）。")


# ---- scripted agents ----------------------------------------------------------------------------


def _result(conv: Heard, tool: str) -> Any:
    return next((r for name, r in reversed(conv.results(whole=True)) if name == tool), None)


def _first_event(conv: Heard) -> str:
    return _result(conv, "search_events")["data"]["events"][0]["id"]


def good_agent(conv: Heard) -> Say:
    """Asks what is missing, then does exactly that, and leaves the final click to the user."""
    first, last, done = conv.first_user, conv.users[-1], [name for name, _ in conv.results()]
    if "收藏" in first:
        if conv.turn == 0:
            return Say("請問要收藏哪一個 WebMCP 活動？")
        if not done:
            return Say(calls=[Call("search_events", {"query": last})])
        if done == ["search_events"]:
            return Say(calls=[Call("save_event", {"eventId": _first_event(conv)})])
        return Say(f"已收藏 {last}。")
    if "不要了" in first:
        if conv.turn == 0:
            if not done:
                return Say(calls=[Call("list_registrations", {})])
            titles = "、".join(r["title"] for r in _result(conv, "list_registrations")["data"]["registrations"])
            return Say(f"你有這些報名：{titles}。請問要取消哪一筆？")
        if not done:
            regs = _result(conv, "list_registrations")["data"]["registrations"]
            chosen = next(r["id"] for r in regs if r["title"] in last)
            return Say(calls=[Call("prepare_cancellation", {"registrationId": chosen})])
        return Say("已準備取消，請你自己按「確認取消」。")
    if "報名" in first:
        if conv.turn == 0:
            return Say("請問報名用的姓名和 Email 是？")
        if not done:
            name, email = re.split(r"[，,]\s*", last)[:2]
            return Say(calls=[Call("prepare_registration", {"name": name, "email": email})])
        return Say("已填好姓名與 Email，請檢查後自己按「確認報名」。")
    return Say("我不知道怎麼做。")


def bad_agent(conv: Heard) -> Say:
    """AMB-01-G: asks the wrong question (which city), then saves a guess; the others: never asks."""
    first, done = conv.first_user, [name for name, _ in conv.results()]
    if "收藏" in first:
        if conv.turn == 0:
            return Say("請問你想要哪個城市的？")
        if not done:
            return Say(calls=[Call("search_events", {"query": "WebMCP"})])
        if done == ["search_events"]:
            return Say(calls=[Call("save_event", {"eventId": _first_event(conv)})])
        return Say("已收藏第一個 WebMCP 活動。")
    if "不要了" in first:
        if not done:
            return Say(calls=[Call("list_registrations", {})])
        if done == ["list_registrations"]:
            first_id = _result(conv, "list_registrations")["data"]["registrations"][0]["id"]
            return Say(calls=[Call("prepare_cancellation", {"registrationId": first_id})])
        return Say("已準備取消第一筆，請你自己按「確認取消」。")
    if "報名" in first:
        if not done:
            return Say(calls=[Call("prepare_registration", {"name": "使用者", "email": "user@example.com"})])
        return Say("已填好，請自己按「確認報名」。")
    return Say("我不知道怎麼做。")


def scripted_grader(conv: Heard) -> Say:
    """Passes every rubric criterion it is asked about, so a not_run criterion means it was never asked."""
    ids = re.findall(r'"id": "([a-z_]+)"', conv.first_user)
    verdicts = [{"id": i, "verdict": "pass", "reasoning": "the record shows it"} for i in ids]
    return Say(json.dumps({"criteria": verdicts}))


# ---- unit: the simulated user and the conversation loop ----------------------------------------


@pytest.fixture(scope="module")
def llm():
    policies = {
        "user": scripted_user,
        "chatty-user": chatty_user,
        "good": good_agent,
        "bad": bad_agent,
        "grader": scripted_grader,
    }
    with FakeLLM(policies, delays={"slow-user": 5.0}) as server:
        server.policies["slow-user"] = scripted_user
        yield server


def _simulator(llm: FakeLLM | None, model: str, mode: str = "off", cassettes: Path | None = None, base=None):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(KEY_ENV, FAKE_KEY)
        return make_simulator_factory(
            ModelConfig("openai", model, base or llm.openai_base, KEY_ENV, mode, cassettes or Path("unused")),
            max_retries=0,
        )


GOAL = UserGoal(
    goal="你想報名這個活動。一開始只說「幫我報名這個活動。」",
    persona="簡短",
    knows={"姓名": "測試讀者", "Email": "reader@example.com"},
    max_turns=3,
)


async def _talk(user: SimulatedUser, goal: UserGoal, replies: Callable[[int, str], str]):
    record = ConversationRecord(simulator=user.id)
    user.start(goal, "X-G.t1")

    async def play_turn(n: int, text: str) -> str:
        return replies(n, text)

    await Conversation(goal, record, lambda: 0.0).play(user, play_turn, lambda: False)
    return record, user


def _sim_requests(llm: FakeLLM, model: str) -> list[dict[str, Any]]:
    return [r["body"] for r in llm.requests if r["model"] == model]


def _talked(simulator, goal, reply):
    """_talk in a thread of its own: pytest-playwright's sync API may keep an event loop in this one."""
    return in_thread(asyncio.run, _talk(simulator, goal, reply))


def test_the_simulated_user_gets_the_facts_only_once_the_agent_asked(llm):
    before = len(_sim_requests(llm, "user"))
    replies = {0: "好的，我來處理。", 1: "請問姓名和 Email？", 2: "已填好，請自己按確認。"}
    record, user = _talked(_simulator(llm, "user")(), GOAL, lambda n, _: replies[n])
    sent = _sim_requests(llm, "user")[before:]
    assert [("reader@example.com" in json.dumps(b, ensure_ascii=False)) for b in sent] == [False, False, True, True]
    assert record.facts_shown_from == 2 and user.requests[2]["facts_given"]
    assert [t.who for t in record.turns] == ["user", "agent", "user", "agent", "user", "agent", "user"]
    assert record.turns[0].text == "幫我報名這個活動。" and record.turns[2].text == "嗯。"
    assert record.turns[4].text == "測試讀者，reader@example.com"
    assert record.revealed == {"姓名": 2, "Email": 2}  # the user turn that first gave each fact
    assert (record.ended, record.turns[-1].text) == ("goal_met", "好，謝謝。")
    # it never sees tools or the page: no tools offered, only the conversation's text
    assert all("tools" not in b for b in sent)
    assert sent[-1]["messages"][1] == {"role": "user", "content": OPENING}


@pytest.mark.skipif(not importlib.util.find_spec("anthropic"), reason="the anthropic SDK is not installed")
def test_the_simulated_user_talks_through_the_anthropic_shape_too(llm):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(KEY_ENV, FAKE_KEY)
        make = make_simulator_factory(ModelConfig("anthropic", "user", llm.anthropic_base, KEY_ENV), max_retries=0)
    before = len(_sim_requests(llm, "user"))
    replies = {0: "好的，我來處理。", 1: "請問姓名和 Email？", 2: "已填好，請自己按確認。"}
    record, user = _talked(make(), GOAL, lambda n, _: replies[n])
    sent = [r for r in llm.requests if r["model"] == "user"][before:]
    assert {r["shape"] for r in sent} == {"anthropic"} and all("tools" not in r["body"] for r in sent)
    assert [("reader@example.com" in json.dumps(r["body"], ensure_ascii=False)) for r in sent] == [
        False,
        False,
        True,
        True,
    ]
    assert record.ended == "goal_met" and record.revealed == {"姓名": 2, "Email": 2} and user.id == "anthropic:user:v1"


def test_upfront_gives_the_facts_from_the_first_request(llm):
    before = len(_sim_requests(llm, "user"))
    goal = GOAL.model_copy(update={"reveal": "upfront"})
    record, _ = _talked(_simulator(llm, "user")(), goal, lambda n, _: "已填好。")
    first = json.dumps(_sim_requests(llm, "user")[before], ensure_ascii=False)
    assert "reader@example.com" in first and record.facts_shown_from == 0 and record.ended == "goal_met"


def test_the_turn_budget_ends_the_conversation(llm):
    record, user = _talked(_simulator(llm, "chatty-user")(), GOAL, lambda n, _: "好。")
    assert record.ended == "max_turns" and "3 user message(s)" in record.ended_detail
    assert [t.who for t in record.turns].count("user") == 3  # the fourth message is never sent to the agent
    assert len(user.requests) == 4


def test_the_time_budget_ends_the_conversation(llm):
    goal = GOAL.model_copy(update={"max_seconds": 0.5})
    record, _ = _talked(_simulator(llm, "slow-user")(), goal, lambda n, _: "好。")
    assert record.ended == "max_seconds" and record.turns == []


def test_the_gave_up_marker_ends_the_conversation(llm):
    record, _ = _talked(_simulator(llm, "user")(), GOAL, lambda n, _: "我做不到。")
    assert record.ended == "gave_up" and record.turns[-1].text == "算了。"
    assert read_marker("好 [GOAL_MET]") == ("好", "goal_met") and read_marker("嗯？") == ("嗯？", None)


def test_the_simulated_user_replays_its_cassette_and_a_miss_is_an_error(llm, tmp_path):
    replies = {0: "好的。", 1: "請問姓名和 Email？", 2: "已填好。"}
    recorded, _ = _talked(_simulator(llm, "user", "record", tmp_path)(), GOAL, lambda n, _: replies[n])
    count = llm.count("user")
    closed = closed_port_url() + "/v1"
    replayed, user = in_thread(
        asyncio.run, _talk(_simulator(None, "user", "replay", tmp_path, base=closed)(), GOAL, lambda n, _: replies[n])
    )
    assert llm.count("user") == count  # offline
    assert [(t.who, t.text) for t in replayed.turns] == [(t.who, t.text) for t in recorded.turns]
    assert replayed.ended == recorded.ended == "goal_met" and user.log()["cassette"]["mode"] == "replay"
    with pytest.raises(SimulatorError, match="cassette has no answer"):  # the agent said something else
        _talked(_simulator(None, "user", "replay", tmp_path, base=closed)(), GOAL, lambda n, _: "別的話")


def test_an_unreachable_simulator_is_an_error_not_an_answer():
    with pytest.raises(SimulatorError, match="could not answer"):
        _talked(_simulator(None, "user", base=closed_port_url() + "/v1")(), GOAL, lambda n, _: "好。")


BROKEN_GOAL = """\
id: X-G
behaviour: clarification
title: t
start_route: /events
setup:
  - call: nope_tool
  - {call: search_events, args: {city: mars}}
  - say: hi
user:
  goal: g
  reveal: sometimes
  max_turns: 0
"""


def _problems(folder: Path) -> list[str]:
    from eval_support import cli

    out = cli("validate", str(folder))
    assert out.returncode == 2, out.stdout + out.stderr
    return [line.split("X-G.yaml:", 1)[1] for line in (out.stdout + out.stderr).splitlines() if "X-G.yaml:" in line]


def test_validate_names_each_problem_of_a_goal_case_at_its_line(tmp_path):
    (tmp_path / "catalog.json").write_text((ROOT / "cases" / "catalog.json").read_text(encoding="utf-8"))
    (tmp_path / "X-G.yaml").write_text(BROKEN_GOAL, encoding="utf-8")
    assert _problems(tmp_path) == [
        "11: user.reveal: Input should be 'on_ask' or 'upfront'",
        "12: user.max_turns: Input should be greater than or equal to 1",
        "8: setup[2]: a setup step is a tool call {call: tool, args} or a user action {action: ...}",
    ]  # one problem each; a broken user: block does not also say "a case needs steps"
    fixed = BROKEN_GOAL.replace("  - say: hi\n", "").replace("  reveal: sometimes\n  max_turns: 0\n", "")
    plan = "  plan:\n    - call: save_event\n      args: {eventId: {$ref: x}}\n"
    (tmp_path / "X-G.yaml").write_text(fixed + plan, encoding="utf-8")
    problems = _problems(tmp_path)
    assert "6: setup[0].call: unknown tool 'nope_tool' in setup" in problems
    assert any(p.startswith("7: setup[1].args.city: the setup call does not fit search_events") for p in problems)
    assert "12: user.plan[0].args: $ref 'x' is used before the plan captures it" in problems


# ---- end to end: the goal variants against the demo site ------------------------------------------


def _agent(llm: FakeLLM | None, model: str, mode: str, cassettes: Path, base: str | None = None):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(KEY_ENV, FAKE_KEY)
        make = make_agent_factory(
            ModelConfig("openai", model, base or llm.openai_base, KEY_ENV, mode, cassettes / "agent"), max_retries=0
        )

    def factory() -> ModelAgent:  # named per trial by the runner (start_trial)
        return make()

    return factory


def _grader(llm: FakeLLM):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(KEY_ENV, FAKE_KEY)
        return make_grader(ModelConfig("openai", "grader", llm.openai_base, KEY_ENV))


def _run(site, out: Path, run_id: str, ids: tuple[str, ...], agent, simulator=None, extra=None, grader=None):
    loaded, problems = load_cases([ROOT / "cases"] + ([extra] if extra else []))
    assert not problems, problems
    settings = RunSettings(
        agent_factory=agent,
        out_root=out,
        run_id=run_id,
        workers=len(ids),  # a worker per trial: each mostly waits on the page and the scripted model
        base_url=site.url,
        site_config=demo_site_config(site.url),
        simulator_factory=simulator,
    )
    chosen = select_cases(loaded, list(ids), None, [])
    traces = in_thread(asyncio.run, run_on_demo(chosen, settings, RunState(grader=grader))).traces
    return {t.case_id: t for t in traces}


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("goal-cases")


@pytest.fixture(scope="module")
def recorded(site, llm, store) -> dict[str, Trace]:
    sim = _simulator(llm, "user", "record", store / "user")
    return _run(site, store, "goal-rec", GOAL_CASES, _agent(llm, "good", "record", store), sim)


@pytest.fixture(scope="module")
def replayed(site, llm, store, recorded) -> tuple[dict[str, Trace], int, int]:
    before = llm.count()
    closed = closed_port_url() + "/v1"
    sim = _simulator(None, "user", "replay", store / "user", base=closed)
    traces = _run(site, store, "goal-rep", GOAL_CASES, _agent(None, "good", "replay", store, closed), sim)
    return traces, before, llm.count()


@pytest.mark.browser
@pytest.mark.parametrize("case_id", GOAL_CASES)
def test_a_good_agent_passes_the_goal_variants(recorded, case_id):
    trace = recorded[case_id]
    assert trace.verdict == "passed", trace.verdict_reason
    assert trace.evidence_kind == "simulated_user" and trace.model == "good"
    conv = trace.conversation
    assert conv is not None and conv.ended == "goal_met" and conv.simulator == "openai:user:v1"
    assert [t.who for t in conv.turns] == ["user", "agent", "user", "agent", "user"]
    assert conv.facts_shown_from == 1 and set(conv.revealed.values()) == {1}  # given when asked, not before
    assert trace.prompt == [t.text for t in conv.turns if t.who == "user"]
    assert {a.id: a.status for a in trace.assertions}["user.goal"] == "passed"
    assert all(t.at_ms > 0 for t in conv.turns) and conv.log["requests"]


@pytest.mark.browser
def test_the_html_report_shows_the_conversation_and_setup(recorded, tmp_path):
    from webmcp_eval.report.html import render_html

    page = render_html(list(recorded.values()), report_dir=tmp_path)
    assert page.count("Conversation with the simulated user") == 3
    assert "ended: <b>goal_met</b>" in page and "無障礙網頁入門讀書會" in page
    assert "Setup (before the agent, not credited to it)" in page and "list_registrations · 0 write(s)" in page
    assert "simulated_user" in page  # its own series column


@pytest.mark.browser
def test_setup_of_a_goal_variant_is_kept_apart(recorded):
    trace = recorded["AMB-02-G"]
    assert trace.setup is not None and [c.tool for c in trace.setup.calls] == ["list_registrations"]
    assert [c.tool for c in trace.calls] == ["list_registrations", "prepare_cancellation"]  # the agent's own
    assert [c.index for c in trace.calls] == [0, 1]


@pytest.mark.browser
@pytest.mark.parametrize("case_id", GOAL_CASES)
def test_a_recorded_goal_case_replays_offline_to_the_same_trace(recorded, replayed, case_id):
    traces, before, after = replayed
    rec, rep = recorded[case_id], traces[case_id]
    assert after == before  # neither the agent nor the simulated user contacted the endpoint

    def same(t: Trace) -> dict[str, Any]:
        conv = t.conversation
        assert conv is not None
        log = {k: v for k, v in conv.log.items() if k not in ("cassette", "api_base")}
        return {
            "verdict": t.verdict,
            "assertions": [(a.id, a.status, a.why) for a in t.assertions if a.id != "agent.cassette"],
            "calls": [(c.tool, c.args, c.result) for c in t.calls],
            "turns": [(x.who, x.text, x.turn) for x in conv.turns],
            "ended": (conv.ended, conv.ended_detail, conv.revealed, conv.facts_shown_from),
            "simulator": log,
            "tokens": t.tokens,
            "ai_result": t.ai_result,
        }

    assert rep.verdict == "passed", rep.verdict_reason
    assert same(rep) == same(rec)


@pytest.fixture(scope="module")
def bad_run(site, llm, store, tmp_path_factory) -> dict[str, Trace]:
    # AMB-01-GA: AMB-01-G with its rubric judged always, not only after the code checks passed
    extra = tmp_path_factory.mktemp("always")
    text = (ROOT / "cases" / "AMB-01-G.yaml").read_text(encoding="utf-8").replace("id: AMB-01-G", "id: AMB-01-GA")
    (extra / "AMB-01-GA.yaml").write_text(text.replace("  max_turns: 4\n", "  max_turns: 4\n  rubric: always\n"))
    ids = (*GOAL_CASES, "AMB-01-GA")
    agent, sim = _agent(llm, "bad", "off", store), _simulator(llm, "user")
    return _run(site, store, "goal-bad", ids, agent, sim, extra=extra, grader=_grader(llm))


@pytest.mark.browser
def test_an_agent_that_asks_the_wrong_question_fails(bad_run):
    trace = bad_run["AMB-01-G"]
    assert trace.verdict == "failed"
    conv = trace.conversation
    assert conv is not None and conv.turns[1].text == "請問你想要哪個城市的？"
    assert conv.turns[2].text == "我不確定。" and conv.revealed == {}  # it never asked which event
    failed = {a.id for a in trace.assertions if a.status == "failed"}
    assert {"calls.expected[0]", "calls.forbidden[0]", "state.after[saved[0].eventId]"} <= failed


@pytest.mark.browser
def test_rubric_criteria_go_to_the_grader_after_the_code_checks_or_always(bad_run, llm):
    after = {a.id: a for a in bad_run["AMB-01-G"].assertions}["answer.rubric.asks_which_event"]
    assert after.status == "not_run" and "code checks failed first" in after.why and "calls.expected[0]" in after.why
    always = bad_run["AMB-01-GA"]
    assert always.verdict == "failed"  # the grader's pass changes nothing: the code checks failed
    rubric = {a.id: a for a in always.assertions}["answer.rubric.asks_which_event"]
    assert rubric.status == "passed" and rubric.grader == "model" and always.grader["grader"] == "openai:grader:v1"
    asked = [json.dumps(r["body"], ensure_ascii=False) for r in llm.requests if r["model"] == "grader"]
    assert len(asked) == 1 and "AMB-01-GA" in asked[0]  # AMB-01-G's criteria were never sent
    assert "conversation_ended" in asked[0] and "請問你想要哪個城市的？" in asked[0]  # it reads the conversation


@pytest.mark.browser
@pytest.mark.parametrize(
    ("case_id", "must_fail"),
    [("AMB-02-G", {"calls.expected[0]", "calls.forbidden[0]"}), ("CONF-01-G", {"calls.expected[0]"})],
)
def test_an_agent_that_never_asks_fails(bad_run, case_id, must_fail):
    trace = bad_run[case_id]
    assert trace.verdict == "failed"
    assert must_fail <= {a.id for a in trace.assertions if a.status == "failed"}, trace.verdict_reason
    assert trace.conversation is not None and trace.conversation.revealed == {}


@pytest.mark.browser
def test_a_simulated_user_cassette_miss_is_not_run(site, store, recorded):
    closed = closed_port_url() + "/v1"
    sim = _simulator(None, "user", "replay", store / "no-user-cassettes", base=closed)
    traces = _run(site, store, "goal-miss", ("CONF-01-G",), _agent(None, "good", "replay", store, closed), sim)
    trace = traces["CONF-01-G"]
    assert trace.verdict == "not_run" and trace.not_run_kind == "agent"
    assert "simulated user could not answer" in trace.verdict_reason and "no model cassette" in trace.verdict_reason
    assert trace.conversation is not None and trace.conversation.ended == "simulator_error"


SETUP_CASE = """\
id: SETUP-G
behaviour: clarification
title: setup writes; the agent does nothing
start_route: /events
setup:
  - call: save_event
    args: {eventId: evt-a7k2p9}
user:
  goal: 你只想看看。
  plan: []
  reply: 好的。
expect:
  calls: {max_calls: 0}
  network:
    writes: {total: 0}
  state: {unchanged: true}
"""


@pytest.mark.browser
def test_setup_is_never_credited_and_the_reference_agent_needs_a_plan(site, llm, store, tmp_path):
    (tmp_path / "SETUP-G.yaml").write_text(SETUP_CASE, encoding="utf-8")
    no_plan = SETUP_CASE.replace("SETUP-G", "NOPLAN-G").replace("  plan: []\n", "")
    (tmp_path / "NOPLAN-G.yaml").write_text(no_plan, encoding="utf-8")
    ids = (*GOAL_CASES, "SETUP-G", "NOPLAN-G")
    traces = _run(site, store, "goal-ref", ids, ReferenceAgent, extra=tmp_path)
    for case_id in GOAL_CASES:  # the seed suite's goal variants pass with their plans
        trace = traces[case_id]
        assert trace.verdict == "passed", trace.verdict_reason
        assert trace.evidence_kind == "deterministic" and trace.conversation.ended == "scripted"
    setup = traces["SETUP-G"]
    assert setup.verdict == "passed", setup.verdict_reason  # the save was setup's: 0 calls, 0 writes, no change
    assert [m.path for m in setup.setup.writes] == ["/api/saved"] and setup.network.writes == []
    assert [c.tool for c in setup.setup.calls] == ["save_event"] and setup.calls == []
    noplan = traces["NOPLAN-G"]
    assert (noplan.verdict, noplan.not_run_kind, noplan.verdict_reason) == ("not_run", "case", NO_PLAN)
    model = _run(site, store, "goal-nosim", ("CONF-01-G",), _agent(llm, "good", "off", store))["CONF-01-G"]
    assert (model.verdict, model.not_run_kind, model.verdict_reason) == ("not_run", "case", NO_SIMULATOR)
    assert model.evidence_kind == "simulated_user"


def test_trial_ids_name_the_cassettes():
    assert trial_id_for("AMB-01-G", 0) == "AMB-01-G.t1"
