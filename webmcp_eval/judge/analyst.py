"""``analyze --model``: a model reads the traces of one failure group and says which hypothesis they support.

The three hypotheses: the agent's logic (``agent_logic``), the tool or the site
(``tool_or_site``), or an assertion that is too strict (``assertion_too_strict``).
Per group the model receives the failing assertion and, for up to
``TRACES_PER_GROUP`` of its trials, the evidence record: the calls with their
arguments and results, the UI observations, the state diff, the network writes,
the answer, and a goal case's conversation. It answers one JSON object naming
the hypothesis, its reasoning, and the trace fields it used (``quotes``: a field
path into the record and the value found there). Each quote is checked against
the record it was sent: a quote whose path does not hold that value is marked
``verified: false``, so a reader sees which claims rest on the trace.

It talks through the same providers as the agents and the grader and keeps
model cassettes the same way (one per group, named by the group's key), so an
analysis replays offline. It never changes a verdict: its answer goes only
into the analysis output. A model that cannot answer leaves the group without
an explanation and says why.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from webmcp_eval.errors import InvalidInput
from webmcp_eval.llm.cassette import Cassette, CassetteError, CassetteMiss, cassette_key, cassette_path, replay_or_send
from webmcp_eval.llm.config import ModelConfig, Role
from webmcp_eval.llm.providers import Provider, ProviderError
from webmcp_eval.matchers import MISSING, resolve
from webmcp_eval.results.analysis import FailureGroup
from webmcp_eval.trace import Trace, read_trace

ANALYST_PROMPT_VERSION = 1
HYPOTHESES = ("agent_logic", "tool_or_site", "assertion_too_strict")
TRACES_PER_GROUP = 3
RESULT_LIMIT = 1500
ANALYST_SYSTEM_PROMPT = (
    "You explain why trials of an evaluation failed. An AI agent used a website's tools (WebMCP) for a user; "
    "code checks judged each trial. You receive one failing check and the evidence of the trials it failed: "
    "tool calls with arguments and results, what the page showed, server-state changes, network writes, the "
    "agent's answer and, for goal cases, the conversation. Say which hypothesis the evidence supports: "
    "agent_logic (the agent did the wrong thing with correct tools), tool_or_site (a tool or the site "
    "answered wrongly or failed), or assertion_too_strict (the agent and site did right and the check "
    "rejects it). Quote the fields you used as paths into the evidence, e.g. trials[0].calls[1].args.eventId. "
    "Answer with one JSON object and nothing else: "
    '{"hypothesis": "agent_logic" | "tool_or_site" | "assertion_too_strict", "reasoning": "<two or three '
    'sentences>", "quotes": [{"field": "<path>", "value": <the value there>}]}'
)


class AnalystConfigError(InvalidInput, ValueError):
    """The analyst options cannot work: a usage error."""


ANALYST_ROLE = Role(
    "provider", "analyze --model", None, "--cassette", hosted="analyze --model against the hosted {kind} API"
)


def _cut(value: object, limit: int = RESULT_LIMIT) -> Any:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more characters]"


def trial_evidence(trace: Trace, assertion_id: str) -> dict[str, Any]:
    """What the analyst sees of one failing trial (no timings, no secrets)."""
    failing = next((a for a in trace.assertions if a.id == assertion_id), None)
    record: dict[str, Any] = {
        "case": trace.case_id,
        "trial": trace.trial_id,
        "run": trace.run_id,
        "agent": trace.agent + (f" ({trace.model})" if trace.model else ""),
        "failing_check": {"id": assertion_id, "description": failing.description, "why": failing.why}
        if failing
        else None,
        "prompt": trace.prompt,
        "calls": [
            {
                "tool": c.tool,
                "args": c.args,
                "result": _cut(c.result),
                **({"error": c.error} if c.error else {}),
                **({"refused": True} if c.refused else {}),
            }
            for c in trace.calls
        ],
        "ui": [o.model_dump() for o in trace.ui.observations],
        "state_diff": [d.model_dump() for d in trace.state.diff] if trace.state.available else None,
        "network_writes": [f"{m.method} {m.path}" for m in trace.network.writes],
        "answer": trace.ai_result or "",
    }
    if trace.conversation is not None:
        record["conversation"] = [{"who": t.who, "text": t.text} for t in trace.conversation.turns]
    return record


def group_evidence(group: FailureGroup) -> dict[str, Any]:
    trials = []
    for t in group.trials[:TRACES_PER_GROUP]:
        trials.append(trial_evidence(read_trace(t.trace_file), group.assertion))
    return {
        "check": {"id": group.assertion, "kind": group.kind, "description": group.description},
        "message": group.message,
        "failing_trials": len(group.trials),
        "cases": group.cases,
        "trials": trials,
    }


def parse_answer(text: str, evidence: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """The model's JSON answer with each quote checked against the evidence; or why it cannot be read."""
    match = re.search(r"\{.*\}", text or "", re.DOTALL)
    if not match:
        return None, "the analyst's answer holds no JSON object"
    try:
        data = json.loads(match.group(0))
    except ValueError as err:
        return None, f"the analyst's answer is not valid JSON ({err})"
    if not isinstance(data, dict) or data.get("hypothesis") not in HYPOTHESES:
        return None, f"the analyst named no hypothesis of {', '.join(HYPOTHESES)}"
    quotes = []
    for q in data.get("quotes") or []:
        if isinstance(q, dict) and isinstance(q.get("field"), str):
            try:
                found = resolve(evidence, q["field"])
            except Exception:  # a path the model made up that is not even a path
                found = MISSING
            quotes.append({**q, "verified": found is not MISSING and found == q.get("value")})
    return {"hypothesis": data["hypothesis"], "reasoning": str(data.get("reasoning") or ""), "quotes": quotes}, None


@dataclass
class Analyst:
    provider: Provider
    cassette_mode: str = "off"
    cassette_dir: Path = Path("cassettes/analyze")
    params: dict[str, Any] = field(default_factory=lambda: {"temperature": 0.0, "max_output_tokens": 1024})
    secrets: list[str] = field(default_factory=list)
    timeout_s: float = 120.0

    @property
    def id(self) -> str:
        return f"{self.provider.kind}:{self.provider.model}:v{ANALYST_PROMPT_VERSION}"

    async def explain(self, group: FailureGroup) -> dict[str, Any]:
        """The model's reading of one group: hypothesis, reasoning, checked quotes; or an error."""
        evidence = group_evidence(group)
        text = "Explain this failure.\n\n" + json.dumps(evidence, ensure_ascii=False, indent=1, sort_keys=True)
        request = self.provider.build_request(
            ANALYST_SYSTEM_PROMPT, [{"role": "user", "content": text}], [], self.params
        )
        out: dict[str, Any] = {"analyst": self.id, "request_key": cassette_key(request), "cassette": self.cassette_mode}
        try:
            response = await self._send(request, f"analyze-{group.key}")
        except (CassetteMiss, CassetteError, ProviderError, TimeoutError) as err:
            return out | {"error": self._redact(f"the analyst could not answer: {type(err).__name__}: {err}")}
        finally:
            await self.provider.aclose()
        turn = self.provider.parse(response)
        answer, problem = parse_answer(turn.text, evidence)
        return out | {"answer_text": turn.text, "tokens": turn.usage} | (answer or {"error": problem})

    async def _send(self, request: dict[str, Any], name: str) -> dict[str, Any]:
        path = cassette_path(self.cassette_dir, name)
        response, _ = await replay_or_send(
            self.cassette_mode,
            lambda: (
                Cassette.open_replay(path)
                if self.cassette_mode == "replay"
                else Cassette.open_record(path, {"analyst": self.id}, self.secrets)
            ),
            request,
            f"re-run analyze with --model {self.provider.model} --cassette record",
            lambda: asyncio.wait_for(self.provider.send(request, timeout=self.timeout_s), self.timeout_s),
        )
        return response

    def _redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text


async def explain_all(analyst: Analyst, groups: list[FailureGroup]) -> None:
    for group in groups:
        group.explanation = await analyst.explain(group)


def make_analyst(config: ModelConfig) -> Analyst:
    """Check the options once (the same rules as the model agents and the grader) and build the analyst."""
    key = config.key(ANALYST_ROLE, AnalystConfigError)
    return Analyst(
        config.provider_for(key),
        cassette_mode=config.cassette,
        cassette_dir=config.cassettes("cassettes/analyze"),
        secrets=[key] if key else [],
    )
