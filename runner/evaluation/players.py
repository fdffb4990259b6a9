"""Who plays and who judges a run: the agent (reference, model, null or harness), the grader, the simulated user."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.evaluation.loading import (
    default_suite_dir,
)

if TYPE_CHECKING:
    from runner.agents.protocol import Agent
    from runner.agents.simulated_user import SimulatedUser
    from runner.judge.grader import ModelGrader
    from runner.suite.folder import Suite


def harness_choice(args: argparse.Namespace, suite: Suite) -> dict[str, Any] | None:
    """The external harness of this run: ``--harness`` wins over suite.yaml's ``harness``; None: no harness.

    ``source`` says which (the run's header and plan.json show it). A model agent asked on the command
    line wins over the suite's harness too: the command line is the more specific ask.
    """
    if args.harness:
        return {"command": args.harness, "source": "--harness", "max_seconds": args.max_seconds}
    entry = suite.config.harness
    if entry is None or args.agent != "reference":
        return None
    return {
        "command": entry.command,
        "source": suite.where("harness", "command"),
        "max_seconds": entry.max_seconds or args.max_seconds,
    }


def agent_factory_for(args: argparse.Namespace, harness: dict[str, Any] | None = None) -> Callable[[], Agent]:
    """The reference agent, a model agent (OpenAI-compatible or Anthropic) or an external harness."""
    from runner.agents.reference import ReferenceAgent

    if harness:
        if args.agent != "reference":
            raise ValueError("--harness is the agent: drop --agent")
        from runner.agents.harness import make_harness_factory

        try:
            return make_harness_factory(harness["command"], timeout_s=harness["max_seconds"])
        except ValueError as err:
            if harness["source"] == "--harness":
                raise
            why = str(err).removeprefix("--harness: ").removeprefix("--harness ")
            raise ValueError(f"{harness['source']}: harness.command: {why}") from None
    if args.agent == "reference":
        return ReferenceAgent
    if args.agent == "none":
        from runner.agents.null import NullAgent

        return NullAgent
    if not args.model:
        raise ValueError(f"--agent {args.agent} needs --model NAME")
    from runner.agents.model import make_agent_factory

    rerecord = f"webmcp-eval run {{case}} --agent {args.agent} --model {args.model}"
    if args.api_base:
        rerecord += f" --api-base {args.api_base}"
    rerecord += f" --model-cassette record --cassette-dir {args.cassette_dir}"
    return make_agent_factory(
        args.agent,
        args.model,
        api_base=args.api_base,
        api_key_env=args.api_key_env,
        cassette_mode=args.model_cassette,
        cassette_dir=Path(args.cassette_dir),
        max_steps=args.max_steps,
        max_seconds=args.max_seconds,
        max_tokens=args.max_tokens,
        prices=args.prices,
        rerecord_command=rerecord,
    )


def grader_of(args: argparse.Namespace) -> ModelGrader | None:
    """The model grader from the flags, gated by the suite's labels (runner/judge/labels.py)."""
    if not args.grader:
        return None
    from runner.judge.grader import Gate, make_grader
    from runner.judge.labels import gate_for

    grader = make_grader(
        args.grader,
        args.grader_model or "",
        api_base=args.grader_api_base,
        api_key_env=args.grader_api_key_env,
        cassette_mode=args.grader_cassette,
        cassette_dir=Path(args.grader_cassette_dir),
        prices=args.prices,
    )
    grader.gate = Gate(*gate_for(Path(args.labels) if args.labels else default_suite_dir() / "labels.json", grader.id))
    return grader


def simulator_factory_for(args: argparse.Namespace) -> Callable[[], SimulatedUser] | None:
    """The simulated user of goal cases from the flags (runner/agents/simulated_user.py)."""
    if not getattr(args, "user_simulator", None):
        return None
    from runner.agents.simulated_user import make_simulator_factory

    return make_simulator_factory(
        args.user_simulator,
        args.user_model or "",
        api_base=args.user_api_base,
        api_key_env=args.user_api_key_env,
        cassette_mode=args.user_cassette,
        cassette_dir=Path(args.user_cassette_dir),
        prices=args.prices,
    )
