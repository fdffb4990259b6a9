"""The simulated user of a goal case: a model plays the user from the case's ``user:`` goal.

It talks through the same providers as the model agents (webmcp_eval/llm/providers.py)
and keeps the same model cassettes (webmcp_eval/llm/cassette.py), in a directory of
its own, so a replayed goal case is answered exactly as it was recorded, offline.

What it sees: the goal, the persona, the facts it may give and the
conversation (its own messages and the agent's replies) — never the tools, the
tool results or the page. Its request carries no tools.

``reveal: on_ask`` is kept by construction, not only by the prompt: the facts
are left out of its requests until the agent has asked the user something (a
reply with a question mark), so an opening message cannot give them.
``upfront`` gives them from the first request.

It ends the conversation by writing a marker: ``[GOAL_MET]`` or ``[GAVE_UP]``.
The runner ends it when a budget runs out (webmcp_eval/play/run/conversation.py). A
simulated user that cannot answer (an unreachable endpoint, a cassette miss in
replay) raises :class:`SimulatorError`: the trial is ``not_run``, never judged
on a conversation that did not happen.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from webmcp_eval.errors import InvalidInput
from webmcp_eval.llm.cassette import Cassette, CassetteError, CassetteMiss, cassette_key, cassette_path, replay_or_send
from webmcp_eval.llm.config import ModelConfig, Role
from webmcp_eval.llm.pricing import PriceTable
from webmcp_eval.llm.providers import EndpointTimeout, MissingSDK, Provider, ProviderError, public_base
from webmcp_eval.suite.case import UserGoal

SIMULATOR_PROMPT_VERSION = 1
MARKERS = {"[GOAL_MET]": "goal_met", "[GAVE_UP]": "gave_up"}
OPENING = "(The conversation begins. Write your first message to the assistant.)"
QUESTION = re.compile(r"[?？]")


class SimulatorError(Exception):
    """The simulated user could not answer: the trial cannot go on (not_run)."""


def system_prompt(goal: UserGoal, facts_shown: bool) -> str:
    """What the simulated user is told: goal, persona, the facts (when it may give them) and the markers."""
    lines = [
        "You play a person who uses a website's AI assistant. You are the user, not the assistant: write only "
        "what this person would type, one short message at a time, in the language of the goal.",
        f"Your goal: {goal.goal}",
    ]
    if goal.persona:
        lines.append(f"How you talk: {goal.persona}")
    if facts_shown and goal.knows:
        facts = json.dumps(goal.knows, ensure_ascii=False)  # in the case's order
        when = "Give a fact only when the assistant asks for it." if goal.reveal == "on_ask" else "You may say them."
        lines.append(f"What you know: {facts}. {when} Never invent other facts.")
    elif goal.knows:
        lines.append("Do not give details the assistant has not asked for.")
    lines.append(
        "When the assistant has done what you wanted (or has left you only your own final click), end your "
        "message with [GOAL_MET]. If it cannot or will not get there, end with [GAVE_UP]. Otherwise write no marker."
    )
    return "\n".join(lines)


def read_marker(text: str) -> tuple[str, str | None]:
    """The message without its marker, and the reason the marker gives (None: the conversation goes on)."""
    for marker, reason in MARKERS.items():
        if marker in text:
            return text.replace(marker, "").strip(), reason
    return text.strip(), None


@dataclass
class SimulatedUser:
    provider: Provider
    cassette_mode: str = "off"  # off | record | replay
    cassette_dir: Path = Path("cassettes/user")
    prices: PriceTable = field(default_factory=PriceTable)
    params: dict[str, Any] = field(default_factory=lambda: {"temperature": 0.0, "max_output_tokens": 512})
    secrets: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.start(None, "")

    @property
    def id(self) -> str:
        return f"{self.provider.kind}:{self.provider.model}:v{SIMULATOR_PROMPT_VERSION}"

    def start(self, goal: UserGoal | None, trial_id: str) -> None:
        """A new trial's conversation: forget the last one."""
        self.goal = goal
        self.trial_id = trial_id
        self.requests: list[dict[str, Any]] = []
        self.tokens = {"input": 0, "output": 0}
        self.cost: float | None = None
        self.facts_shown_from: int | None = None
        self.cassette: Cassette | None = None

    async def next_message(self, turns: list[tuple[str, str]], timeout: float) -> tuple[str, str | None]:
        """The user's next message after ``turns`` ((who, text), oldest first), and the marker's reason."""
        assert self.goal is not None, "start() the conversation first"
        if self.facts_shown_from is None and (
            self.goal.reveal == "upfront" or any(who == "agent" and QUESTION.search(text) for who, text in turns)
        ):
            self.facts_shown_from = len(self.requests)
        system = system_prompt(self.goal, self.facts_shown_from is not None)
        messages: list[dict[str, Any]] = [{"role": "user", "content": OPENING}]
        for who, text in turns:  # the simulator's own messages are its (assistant) side
            messages.append(
                {"role": "assistant", "content": text, "tool_calls": []}
                if who == "user"
                else {"role": "user", "content": text}
            )
        request = self.provider.build_request(system, messages, [], self.params)
        response, latency_ms = await self._send(request, timeout)
        turn = self.provider.parse(response)
        self._account(request, turn, latency_ms)
        return read_marker(turn.text)

    async def _send(self, request: dict[str, Any], timeout: float) -> tuple[dict[str, Any], float]:
        if self.cassette_mode != "off" and self.cassette is None:
            self.cassette = self._open_cassette()
        try:
            return await replay_or_send(
                self.cassette_mode,
                self._opened_cassette,
                request,
                self.rerecord_hint(),
                lambda: asyncio.wait_for(self.provider.send(request, timeout=timeout), timeout),
            )
        except CassetteMiss as miss:
            raise SimulatorError(f"the simulated user's cassette has no answer: {miss}") from None
        except EndpointTimeout:  # it was given what was left of the conversation's time: the budget ran out
            raise TimeoutError from None
        except MissingSDK as err:
            raise SimulatorError(str(err)) from None
        except ProviderError as err:
            raise SimulatorError(self._redact(f"the simulated user's model could not answer: {err}")) from None
        finally:
            if self.cassette_mode != "replay":
                await self.provider.aclose()

    def _opened_cassette(self) -> Cassette:
        """The cassette _send opened: asked for only in a cassette mode, where it was."""
        assert self.cassette is not None
        return self.cassette

    def _open_cassette(self) -> Cassette:
        path = cassette_path(self.cassette_dir, self.trial_id)
        if self.cassette_mode == "replay":
            try:
                return Cassette.open_replay(path)
            except CassetteError as err:
                raise SimulatorError(str(err)) from None
        meta = {"trial": self.trial_id, "simulator": self.id, "api_base": public_base(self.provider.api_base)}
        return Cassette.open_record(path, meta, self.secrets)

    def _account(self, request: dict[str, Any], turn: Any, latency_ms: float) -> None:
        cost = None
        if turn.usage:
            self.tokens["input"] += turn.usage["input"]
            self.tokens["output"] += turn.usage["output"]
            cost = self.prices.cost(self.provider.model, turn.usage)
            if cost is not None:
                self.cost = round((self.cost or 0.0) + cost, 8)
        self.requests.append(
            {
                "n": len(self.requests) + 1,
                "key": cassette_key(request),
                "facts_given": self.facts_shown_from is not None,
                "answer": turn.text,
                "latency_ms": latency_ms,
                "tokens": turn.usage,
                "cost_usd": cost,
            }
        )

    def log(self) -> dict[str, Any]:
        """The simulator's account for the trace (the system prompt as last sent, no timings but latency)."""
        return {
            "simulator": self.id,
            "provider": self.provider.kind,
            "model": self.provider.model,
            "api_base": public_base(self.provider.api_base),
            "system_prompt": system_prompt(self.goal, self.facts_shown_from is not None) if self.goal else "",
            "requests": self.requests,
            "tokens": dict(self.tokens),
            "cost_usd": self.cost,
            "cassette": {"mode": self.cassette_mode, "file": str(self.cassette.path) if self.cassette else None}
            if self.cassette_mode != "off"
            else None,
        }

    def rerecord_hint(self) -> str:
        case = self.trial_id.rsplit(".t", 1)[0]
        return (
            f"webmcp-eval run {case} --user-simulator {self.provider.kind} --user-model {self.provider.model} "
            f"--user-cassette record"
        )

    def _redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text


class SimulatorConfigError(InvalidInput, ValueError):
    """The simulated user's options cannot work: a usage error."""


USER_ROLE = Role("user simulator", "--user-simulator", "--user-model", "--user-cassette")


def make_simulator_factory(
    config: ModelConfig,
    prices: dict[str, Any] | str | Path | None = None,
    max_retries: int = 2,
) -> Callable[[], SimulatedUser]:
    """Check the options once (the same rules as the model agents and the grader); a factory per trial."""
    key = config.key(USER_ROLE, SimulatorConfigError)
    table = PriceTable.load(prices)  # a bad table is a ModelConfigError: one line, exit 2

    def factory() -> SimulatedUser:
        return SimulatedUser(
            config.provider_for(key, max_retries=max_retries),
            cassette_mode=config.cassette,
            cassette_dir=config.cassettes("cassettes/user"),
            prices=table,
            secrets=[key] if key else [],
        )

    return factory
