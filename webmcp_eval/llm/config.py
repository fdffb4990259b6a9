"""One model-backed role's model: which provider, which model, where, whose key, which cassette.

The model agent, the simulated user, the grader and the analyst each take a :class:`ModelConfig`; the command
line builds it from one option group per role (:class:`ModelFlags`: the flag names come from a prefix, so
``--grader-model`` and ``--user-model`` are the same option of two roles). :meth:`ModelConfig.key` checks it
the one way every role does (errors name the role's own flags, :class:`Role`) and :meth:`ModelConfig.provider_for`
opens the provider.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from webmcp_eval.llm.providers import DEFAULT_KEY_ENV, NO_KEY, PROVIDERS, MissingSDK, Provider, require_sdk

CASSETTE_MODES = ("off", "record", "replay")


@dataclass(frozen=True)
class Role:
    """How one model-backed role (agent, grader, simulated user, analyst) names its options in errors."""

    unknown: str  # "unknown {unknown} 'x': choose …"
    kind_flag: str  # "--agent"
    model_flag: str | None  # "--model"; None: the role names its model with the kind flag itself
    cassette_flag: str  # "--model-cassette"
    choose_also: str = ""  # more choices than the providers, e.g. " (or reference)"
    hosted: str = "{flag} {kind} against the hosted API"  # who needs the key


@dataclass(frozen=True)
class ModelConfig:
    """A role's model as the user chose it: provider (openai, anthropic), model name, endpoint (None: the
    hosted API), the environment variable with the key (None: the provider's own), and the cassette mode and
    directory (model exchanges recorded, or replayed strictly offline)."""

    provider: str | None = None
    model: str | None = None
    api_base: str | None = None
    api_key_env: str | None = None
    cassette: str = "off"
    cassette_dir: str | Path | None = None  # None: the role's own (cassettes/, cassettes/grader/...)

    def key(self, role: Role, error: type[Exception], cassette_modes: tuple[str, ...] = CASSETTE_MODES) -> str:
        """Check the options the one way every role does, and return the API key ("" for none).

        Replay needs neither key nor SDK nor network; a local server (``api_base``) may go without a key;
        a hosted API may not. Every problem is ``error`` with one line that names the role's own flags.
        """
        kind = self.provider or ""
        if kind not in PROVIDERS:
            raise error(f"unknown {role.unknown} {kind!r}: choose {', '.join(PROVIDERS)}{role.choose_also}")
        if role.model_flag and not self.model:
            raise error(f"{role.kind_flag} {kind} needs {role.model_flag}")
        if self.cassette not in cassette_modes:
            raise error(f"{role.cassette_flag} must be one of {', '.join(cassette_modes)}")
        if self.cassette != "replay":
            try:
                require_sdk(kind)
            except MissingSDK as err:
                raise error(str(err)) from None
        env = self.api_key_env or DEFAULT_KEY_ENV[kind]
        key = os.environ.get(env) or ""
        if not key and self.cassette != "replay" and not self.api_base:
            raise error(f"{role.hosted.format(flag=role.kind_flag, kind=kind)} needs a key in ${env}")
        return key

    def cassettes(self, default: str) -> Path:
        """Where the role's cassettes live: the config's directory, else the role's own."""
        return Path(self.cassette_dir or default)

    def provider_for(self, key: str, **options: Any) -> Provider:
        """The provider this config names, with the key ``key`` gave (a placeholder for a local server)."""
        return PROVIDERS[self.provider or ""](self.model or "", self.api_base, key or NO_KEY, **options)


@dataclass(frozen=True)
class ModelFlags:
    """One role's model options on the command line: ``{prefix}model``, ``{prefix}api-base``,
    ``{prefix}api-key-env``, the cassette flag and ``{prefix}cassette-dir``, with their help; the kind flag
    (``--grader``, ``--user-simulator``...) is the role's own (its choices differ) and added by the command beside
    them. ``config_of`` reads a :class:`ModelConfig` back from the parsed arguments."""

    prefix: str  # "--" or "--grader-"
    kind_flag: str  # "--agent", "--grader", "--user-simulator", "--provider"
    cassette_flag: str  # "--model-cassette", "--grader-cassette", "--cassette"
    cassette_dir: str  # the default directory
    model_help: str
    base_help: str
    key_help: str
    cassette_help: str
    dir_help: str

    def flag(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def add(self, group: Any, *, model: bool = True, rest: bool = True) -> None:
        """Add the options to an argparse parser or group: the model flag, then (``rest``) the others."""
        if model:
            group.add_argument(self.flag("model"), help=self.model_help)
        if not rest:
            return
        group.add_argument(self.flag("api-base"), help=self.base_help)
        group.add_argument(self.flag("api-key-env"), help=self.key_help)
        group.add_argument(self.cassette_flag, choices=list(CASSETTE_MODES), default="off", help=self.cassette_help)
        group.add_argument(self.flag("cassette-dir"), default=self.cassette_dir, help=self.dir_help)

    def config_of(self, args: argparse.Namespace) -> ModelConfig:
        """The role's model as the arguments give it (a flag not given keeps its default)."""

        def value(flag: str, default: Any = None) -> Any:
            got = getattr(args, flag.lstrip("-").replace("-", "_"), None)
            return default if got is None else got

        return ModelConfig(
            provider=value(self.kind_flag),
            model=value(self.flag("model")),
            api_base=value(self.flag("api-base")),
            api_key_env=value(self.flag("api-key-env")),
            cassette=value(self.cassette_flag, "off"),
            cassette_dir=value(self.flag("cassette-dir"), self.cassette_dir),
        )


# The roles' option groups: the same options under each role's prefix, each with the words of its own --help.
AGENT_FLAGS = ModelFlags(
    prefix="--",
    kind_flag="--agent",
    cassette_flag="--model-cassette",
    cassette_dir="cassettes",
    model_help="the model name, e.g. gpt-4.1-mini or claude-sonnet-4-5",
    base_help="the endpoint, e.g. http://127.0.0.1:11434/v1 for Ollama",
    key_help="environment variable with the key (default OPENAI_API_KEY / "
    "ANTHROPIC_API_KEY); the key never reaches a trace or cassette",
    cassette_help="record every model exchange per trial, or replay them strictly (offline)",
    dir_help="where cassettes live (default cassettes/)",
)
GRADER_FLAGS = ModelFlags(
    prefix="--grader-",
    kind_flag="--grader",
    cassette_flag="--grader-cassette",
    cassette_dir="cassettes/grader",
    model_help="the grader's model name",
    base_help="the grader's endpoint (OpenAI-compatible or Anthropic)",
    key_help="environment variable with the grader's key",
    cassette_help="record the grader's exchanges per trial, or replay them strictly (offline)",
    dir_help="grader cassettes' directory (cassettes/grader)",
)
CALIBRATE_FLAGS = replace(  # calibrate's grader: the run's options in fewer words
    GRADER_FLAGS,
    base_help="the grader's endpoint",
    cassette_help="grader cassettes",
    dir_help="where grader cassettes live",
)
USER_FLAGS = ModelFlags(
    prefix="--user-",
    kind_flag="--user-simulator",
    cassette_flag="--user-cassette",
    cassette_dir="cassettes/user",
    model_help="the simulated user's model name",
    base_help="the simulated user's endpoint (OpenAI-compatible or Anthropic)",
    key_help="environment variable with the simulated user's key",
    cassette_help="record the simulated user's answers per trial, or replay them strictly (offline)",
    dir_help="simulated user cassettes' directory (cassettes/user)",
)
ANALYST_FLAGS = ModelFlags(
    prefix="--",
    kind_flag="--provider",
    cassette_flag="--cassette",
    cassette_dir="cassettes/analyze",
    model_help="explain each group with this model",
    base_help="the model's endpoint (OpenAI-compatible or Anthropic)",
    key_help="environment variable with the model's key",
    cassette_help="record the model's answers, or replay",
    dir_help="where they live (cassettes/analyze)",
)


def from_flags(flags: ModelFlags, default: ModelConfig) -> Any:
    """A request's field holding a role's model: ``request_of`` builds it from the role's flags."""
    return field(default=default, metadata={"from_args": flags.config_of})
