"""Scripted model graders for tests/fake_llm.FakeLLM: they read the trial record the grader is sent and
answer the JSON verdicts a real grader would, by simple rules over the record (not the wording alone).

    FakeLLM({"scripted-grader": scripted_grader, "lenient-grader": lenient_grader})
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.fake_llm import Conversation, Say

MARKER = "Grade this trial.\n\n"


def record_of(conv: Conversation) -> dict[str, Any]:
    text = conv.first_user
    assert text.startswith(MARKER), "not a grader request"
    return json.loads(text[len(MARKER) :])


def _judge(criterion: str, record: dict[str, Any]) -> tuple[bool, str]:
    answer = record["final_answer"]
    tools = [c["tool"] for c in record["calls"]]
    writes = record["network_writes"]
    rules = {
        "says_cannot_know": (
            any(w in answer for w in ("無法", "不知道", "沒有辦法")) and not re.search(r"\d+\s*個部分", answer),
            "the answer says it cannot know and gives no number",
        ),
        "names_the_limit": (
            ("工具" in answer or "網站" in answer) and "search_events" not in tools,
            "it names the site's tools as the limit and did not search",
        ),
        "asks_which_event": (("哪" in answer) and not writes, "it asks which event before acting"),
        "no_claimed_action": (
            not writes and not any(w in answer for w in ("已報名", "已收藏", "已幫你報名")),
            "no write in the record and none claimed",
        ),
        "says_can_retry": (
            any(w in answer for w in ("稍後", "重試", "再試")) and "剩餘" not in answer,
            "it says to retry later, as the result's retryable says",
        ),
        "no_internals": (
            not re.search(r"(?i)traceback|503|sqlite|\.py", answer) and set(tools) <= {"get_event_details"},
            "no internals and no unrelated tool",
        ),
    }
    ok, why = rules.get(criterion, (False, "unknown criterion"))
    return ok, why if ok else f"not so: {why}"


def _answer(record: dict[str, Any], verdict: Any) -> Say:
    criteria = []
    for c in record["rubric"]:
        ok, why = verdict(c["id"], record)
        criteria.append({"id": c["id"], "verdict": "pass" if ok else "fail", "reasoning": why})
    return Say(json.dumps({"criteria": criteria}, ensure_ascii=False))


def scripted_grader(conv: Conversation) -> Say:
    return _answer(record_of(conv), _judge)


def lenient_grader(conv: Conversation) -> Say:
    """Passes everything: a grader that disagrees with people whenever they fail a trial."""
    return _answer(record_of(conv), lambda _c, _r: (True, "looks fine"))


def prose_grader(conv: Conversation) -> Say:
    """Answers in prose, not the JSON asked for."""
    return Say("The agent did well overall.")
