"""A goal case's conversation: the simulated user and the agent take turns until one of them ends it.

The simulated user (webmcp_eval/agents/simulated_user.py) writes a message; the agent
plays it as a user turn through the trial (its calls go to the page as in any
case); its reply goes back to the simulated user. It ends when the simulated
user writes a marker (goal met, gave up), when a budget of the case runs out
(``max_turns`` user messages, ``max_seconds`` for the whole conversation), or
when the agent stopped at its own limits. Every turn (who, what, when) and the
reason it ended go into the trace's ``conversation``.

The reference agent has no conversation: it plays the goal's ``plan`` as one
scripted turn, or the trial is ``not_run`` (deterministic evidence needs a plan).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Literal

from webmcp_eval.agents.simulated_user import SimulatedUser, SimulatorError
from webmcp_eval.suite.case import UserGoal
from webmcp_eval.trace import Assertion, ConversationRecord, ConversationTurn, Trace

PlayTurn = Callable[[int, str], Awaitable[str]]  # (user turn, message) -> the agent's reply

NO_PLAN = (
    "the reference agent cannot play a goal case without a plan (user.plan): deterministic evidence "
    "needs the calls written down"
)
NO_SIMULATOR = (
    "a goal case needs a simulated user for a model agent: run with --user-simulator openai|anthropic --user-model M"
)


class Conversation:
    def __init__(self, goal: UserGoal, record: ConversationRecord, clock_ms: Callable[[], float]):
        self.goal = goal
        self.record = record
        self.clock_ms = clock_ms

    def add(self, who: Literal["user", "agent"], text: str, turn: int) -> None:
        self.record.turns.append(ConversationTurn(who=who, text=text, at_ms=self.clock_ms(), turn=turn))
        if who == "user":
            for fact, value in self.goal.knows.items():
                if fact not in self.record.revealed and str(value) and str(value) in text:
                    self.record.revealed[fact] = turn

    def end(self, reason: str, detail: str) -> None:
        self.record.ended, self.record.ended_detail = reason, detail

    async def play_scripted(self, play_turn: PlayTurn) -> None:
        """The reference agent (or the null agent): the goal as one message, the goal's plan as its calls."""
        self.add("user", self.goal.goal, 0)
        self.add("agent", await play_turn(0, self.goal.goal), 0)
        self.end("scripted", "no simulated user: the goal was the one message (the reference agent plays its plan)")

    async def play(self, user: SimulatedUser, play_turn: PlayTurn, agent_stopped: Callable[[], bool]) -> None:
        """Turns until a marker, a budget or the agent's limits end it; SimulatorError when the user cannot answer."""
        try:
            await self._turns(user, play_turn, agent_stopped)
        finally:  # also when it could not go on: the trace shows how far it got
            self.record.facts_shown_from = user.facts_shown_from
            self.record.log = user.log()

    async def _turns(self, user: SimulatedUser, play_turn: PlayTurn, agent_stopped: Callable[[], bool]) -> None:
        goal = self.goal
        started = time.monotonic()
        turns: list[tuple[str, str]] = []
        n = 0
        while True:
            remaining = goal.max_seconds - (time.monotonic() - started)
            if remaining <= 0:
                return self.end("max_seconds", f"the conversation's {goal.max_seconds:g} s ran out")
            try:
                text, marker = await user.next_message(turns, timeout=remaining)
            except TimeoutError:
                return self.end("max_seconds", f"the conversation's {goal.max_seconds:g} s ran out")
            if marker:
                if text:
                    self.add("user", text, n)
                return self.end(marker, f"the simulated user ended it: {marker} after {n} agent repl(ies)")
            if n >= goal.max_turns:
                return self.end("max_turns", f"{goal.max_turns} user message(s) used and the goal not met")
            if not text:
                raise SimulatorError("the simulated user wrote an empty message without a marker")
            self.add("user", text, n)
            turns.append(("user", text))
            reply = await play_turn(n, text)
            self.add("agent", reply, n)
            turns.append(("agent", reply))
            n += 1
            if agent_stopped():
                return self.end("agent_stopped", "the agent stopped at its own limits")


def conversation_assertions(trace: Trace) -> list[Assertion]:
    """The user's own account: a goal case passes this only when the simulated user said its goal was met."""
    conv = trace.conversation
    if conv is None or conv.ended in ("scripted", "", "simulator_error"):
        return []
    met = conv.ended == "goal_met"
    return [
        Assertion(
            id="user.goal",
            kind="conversation",
            description="the simulated user ended the conversation with its goal met "
            "(not given up, not out of turns or time)",
            status="passed" if met else "failed",
            why=f"ended: {conv.ended} ({conv.ended_detail})",
            evidence={"ended": conv.ended, "turns": len(conv.turns)},
        )
    ]
