"""Who plays and who judges a run: the agent (reference, model, null or harness), the grader, the simulated user."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from webmcp_eval.agents.harness import make_harness_factory
from webmcp_eval.agents.model import make_agent_factory
from webmcp_eval.agents.null import NullAgent
from webmcp_eval.agents.reference import ReferenceAgent
from webmcp_eval.agents.simulated_user import SimulatedUser, make_simulator_factory
from webmcp_eval.errors import UsageError
from webmcp_eval.evaluation.loading import default_suite_dir
from webmcp_eval.judge.grader import Gate, ModelGrader, make_grader
from webmcp_eval.judge.labels import gate_for
from webmcp_eval.llm.config import AGENT_FLAGS, GRADER_FLAGS, USER_FLAGS, ModelConfig, from_flags

if TYPE_CHECKING:
    from webmcp_eval.agents.protocol import Agent
    from webmcp_eval.suite.folder import Suite


@dataclass(frozen=True)
class AgentChoice:
    """Who plays the trials: the reference agent, a model (openai, anthropic), the null agent (none) or a harness."""

    agent: ModelConfig = from_flags(AGENT_FLAGS, ModelConfig(provider="reference", cassette_dir="cassettes"))
    max_steps: int = 16
    max_seconds: float = 90.0
    max_tokens: int = 200_000
    prices: str | None = None
    harness: str | None = None  # a command line; suite.yaml's harness when none is given
    allow_harness: bool = False  # suite.yaml's harness may run: a suite file never runs a command unasked


@dataclass(frozen=True)
class GraderChoice:
    """The model grader of rubric criteria (none: not judged) and the labels that calibrate it."""

    grader: ModelConfig = from_flags(GRADER_FLAGS, ModelConfig(cassette_dir="cassettes/grader"))  # none: not judged
    labels: str | None = None  # default: labels.json beside the cases
    prices: str | None = None

    def labels_path(self) -> Path:
        return Path(self.labels) if self.labels else default_suite_dir() / "labels.json"


@dataclass(frozen=True)
class UserChoice:
    """The simulated user of goal cases (none: goal cases play without one)."""

    user_simulator: ModelConfig = from_flags(USER_FLAGS, ModelConfig(cassette_dir="cassettes/user"))  # none: no user
    prices: str | None = None


def harness_choice(choice: AgentChoice, suite: Suite | None) -> dict[str, Any] | None:
    """The external harness of this run: ``--harness`` wins over suite.yaml's ``harness``; None: no harness.

    ``source`` says which (the run's header and plan.json show it). A model agent asked on the command
    line wins over the suite's harness too: the command line is the more specific ask.
    """
    if choice.harness:
        return {"command": choice.harness, "source": "--harness", "max_seconds": choice.max_seconds}
    entry = suite.config.harness if suite is not None else None
    if entry is None or suite is None or choice.agent.provider != "reference":
        return None
    if not choice.allow_harness:  # a suite folder from elsewhere must not run a program by being run
        raise UsageError(
            f"{suite.where('harness', 'command')}: harness: runs {entry.command!r} as the agent: give --allow-harness "
            "to let the suite run it (or --harness COMMAND)"
        )
    return {
        "command": entry.command,
        "source": suite.where("harness", "command"),
        "max_seconds": entry.max_seconds or choice.max_seconds,
    }


def agent_factory_for(choice: AgentChoice, harness: dict[str, Any] | None = None) -> Callable[[], Agent]:
    """The reference agent, a model agent (OpenAI-compatible or Anthropic) or an external harness."""
    if harness:
        if choice.agent.provider != "reference":
            raise ValueError("--harness is the agent: drop --agent")
        try:
            return make_harness_factory(harness["command"], timeout_s=harness["max_seconds"])
        except ValueError as err:
            if harness["source"] == "--harness":
                raise
            why = str(err).removeprefix("--harness: ").removeprefix("--harness ")
            raise ValueError(f"{harness['source']}: harness.command: {why}") from None
    config = choice.agent
    if config.provider == "reference":
        return ReferenceAgent
    if config.provider == "none":
        return NullAgent
    if not config.model:
        raise ValueError(f"--agent {config.provider} needs --model NAME")
    rerecord = f"webmcp-eval run {{case}} --agent {config.provider} --model {config.model}"
    if config.api_base:
        rerecord += f" --api-base {config.api_base}"
    rerecord += f" --model-cassette record --cassette-dir {config.cassette_dir or 'cassettes'}"
    return make_agent_factory(
        config,
        max_steps=choice.max_steps,
        max_seconds=choice.max_seconds,
        max_tokens=choice.max_tokens,
        prices=choice.prices,
        rerecord_command=rerecord,
    )


def grader_of(choice: GraderChoice) -> ModelGrader | None:
    """The model grader asked for, gated by the suite's labels (webmcp_eval/judge/labels.py)."""
    if not choice.grader.provider:
        return None
    grader = make_grader(choice.grader, prices=choice.prices)
    grader.gate = Gate(*gate_for(choice.labels_path(), grader.id))
    return grader


def simulator_factory_for(choice: UserChoice) -> Callable[[], SimulatedUser] | None:
    """The simulated user of goal cases asked for (webmcp_eval/agents/simulated_user.py)."""
    if not choice.user_simulator.provider:
        return None
    return make_simulator_factory(choice.user_simulator, prices=choice.prices)
