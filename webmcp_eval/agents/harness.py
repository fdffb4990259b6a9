"""External harnesses: any agent that speaks MCP, run as the trial's agent through the bridge.

What is evaluated is model and harness as one package (docs/design.md, "Evidence kinds"): change the
harness and the score is a different thing. So a trial can be played by the
user's own agent — a CLI agent, an agent framework — given as a command line
with placeholders:

- ``{prompt}``: the user's message of this step (one argument, never through a shell);
- ``{mcp_config}``: a JSON file naming the bridge (``{"mcpServers": {"webmcp":
  {"type": "http", "url": …}}}``), the shape most harnesses read;
- ``{mcp_url}``: the bridge's streamable HTTP endpoint itself.

The command runs once per user message, while the bridge serves the page's
active catalog (webmcp_eval/agents/mcp_bridge.py): every call goes through the page and is
witnessed as any other. Its final answer is what it prints on stdout. A
harness that wants to remember earlier steps may keep notes in
``$WEBMCP_EVAL_HARNESS_STATE`` (a directory that lives for the trial). The
trace names the harness and its version (``COMMAND --version``, asked once);
evidence kind ``agent``.

A harness that cannot be started or exits with an error makes the trial
``not_run`` (the setup, not the agent's choices); one that runs out of time
fails an ``agent.limits`` assertion, as a model agent does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from webmcp_eval.agents.mcp_bridge import PageBridge, mcp_config, require_mcp
from webmcp_eval.agents.protocol import AgentError, AgentReport
from webmcp_eval.errors import InvalidInput
from webmcp_eval.suite.case import UserStep
from webmcp_eval.suite.folder import harness_argv
from webmcp_eval.trace import Assertion, EvidenceKind

if TYPE_CHECKING:
    from webmcp_eval.agents.protocol import ToolHost

PLACEHOLDERS = ("{prompt}", "{mcp_config}", "{mcp_url}")
OUTPUT_LIMIT = 20_000  # characters of a step's stdout/stderr kept in the trace


class HarnessConfigError(InvalidInput, ValueError):
    """The harness command cannot work: a usage error."""


def harness_version(argv: list[str], timeout_s: float = 60.0) -> str:
    """What ``COMMAND --version`` says (its first line), or why there is no answer."""
    try:
        out = subprocess.run([*argv, "--version"], capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"unknown ({type(err).__name__})"
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0][:200] if out.returncode == 0 and text else "unknown"


def _head(argv: list[str]) -> list[str]:
    """The command without its placeholder arguments: what ``--version`` is asked of."""
    head = []
    for token in argv:
        if any(p in token for p in PLACEHOLDERS) or token.startswith("-"):
            break
        head.append(token)
    return head or argv[:1]


class HarnessAgent:
    evidence_kind: EvidenceKind = "agent"

    def __init__(self, command: str, argv: list[str], version: str, timeout_s: float = 90.0):
        self.command = command
        self.argv = argv
        self.version = version
        self.timeout_s = timeout_s
        self.name = "harness"
        self.model: str | None = f"{Path(_head(argv)[-1]).name} {version}"
        self.trial_id: str | None = None
        self.start_trial()

    def start_trial(self, trial_id: str | None = None) -> None:
        self.trial_id = trial_id or self.trial_id
        self.steps: list[dict[str, Any]] = []
        self.stopped: dict[str, str] | None = None
        self.seconds = 0.0
        self._state: Path | None = None  # made at the first turn, removed with the report

    async def turn(self, step: UserStep, host: ToolHost) -> str:
        log: dict[str, Any] = {"step": getattr(host, "step", None), "user": step.user}
        self.steps.append(log)
        if self.stopped:
            log["skipped"] = "the harness had stopped"
            return self._stop_reply()
        if self._state is None:
            self._state = Path(tempfile.mkdtemp(prefix="webmcp-eval-harness-"))
        bridge = PageBridge(host)
        started = time.monotonic()
        try:
            async with bridge.serve_http() as url:
                config = self._state / "mcp.json"
                config.write_text(json.dumps(mcp_config(url)), encoding="utf-8")
                argv = [_fill(t, step.user, str(config), url) for t in self.argv]
                log["argv"] = argv
                code, out, err = await self._run(argv, log)
        finally:
            self.seconds += time.monotonic() - started
        log |= {"exit_code": code, "stdout": out[-OUTPUT_LIMIT:], "stderr": err[-OUTPUT_LIMIT:]}
        if code is None:
            self.stopped = {"reason": "time", "detail": f"the harness did not finish within {self.timeout_s:g} s"}
            return self._stop_reply()
        if code != 0:
            tail = (err.strip() or out.strip()).splitlines()[-1:] or [""]
            raise AgentError(f"the harness exited with code {code}: {tail[0][:300]}")
        return out.strip()

    async def _run(self, argv: list[str], log: dict[str, Any]) -> tuple[int | None, str, str]:
        assert self._state
        env = {**os.environ, "WEBMCP_EVAL_HARNESS_STATE": str(self._state)}
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env
            )
        except OSError as problem:
            raise AgentError(f"the harness could not be started: {problem}") from None
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout=self.timeout_s)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            out, err = await proc.communicate()
            log["killed"] = True
            return None, out.decode(errors="replace"), err.decode(errors="replace")
        return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")

    def _stop_reply(self) -> str:
        assert self.stopped
        return f"[webmcp-eval: the harness stopped: {self.stopped['detail']}]"

    def report(self) -> AgentReport:
        harness = {"command": self.command, "name": Path(_head(self.argv)[-1]).name, "version": self.version}
        log = {
            "harness": harness,
            "steps": self.steps,
            "agent_seconds": round(self.seconds, 3),
            "stopped": self.stopped,
            "assertions": [a.model_dump() for a in self.assertions()],
        }
        if self._state:
            shutil.rmtree(self._state, ignore_errors=True)
        return {"log": log, "harness": harness}

    def assertions(self) -> list[Assertion]:
        desc = f"the harness finished every step within {self.timeout_s:g} s"
        if self.stopped:
            return [
                Assertion(
                    id="agent.limits", kind="agent", description=desc, status="failed", why=self.stopped["detail"]
                )
            ]
        why = f"{len(self.steps)} step(s)"
        return [Assertion(id="agent.limits", kind="agent", description=desc, status="passed", why=why)]


def _fill(token: str, prompt: str, config: str, url: str) -> str:
    return token.replace("{prompt}", prompt).replace("{mcp_config}", config).replace("{mcp_url}", url)


def make_harness_factory(command: str, timeout_s: float = 90.0) -> Callable[[], HarnessAgent]:
    """Check the command once (it parses, names a program, asks for the prompt) and ask its version."""
    try:
        argv = harness_argv(command)
    except ValueError as err:
        raise HarnessConfigError(f"--harness {command!r}: {err}") from None
    try:
        require_mcp()
    except ValueError as err:
        raise HarnessConfigError(str(err)) from None
    version = harness_version(_head(argv))

    def factory() -> HarnessAgent:
        return HarnessAgent(command, argv, version, timeout_s)

    return factory
