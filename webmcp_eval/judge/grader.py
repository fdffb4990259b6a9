"""The model grader: rubric criteria in words, judged by a model that reads the whole trace.

What code can check goes to the checks (webmcp_eval/judge/checks.py). What it cannot —
"says it cannot know", "asks which event", "says whether it can retry" — is
written as rubric criteria in the case (``expect.answer.rubric``) and judged
here, per trial, by a model that receives the case, the rubric and the
execution record: tool calls with their arguments and results, the catalog per
step, the UI observations, the confirmation point, network writes, the state
diff and the final answer (the grader judges what the agent did, not only what
it said).

The grader talks through the same providers as the model agents
(webmcp_eval/llm/providers.py) and keeps model cassettes (webmcp_eval/llm/cassette.py) for strict
offline replay. Its verdict per criterion becomes an assertion with
``grader="model"`` (kept apart from code-checked ones in every report); its
reasoning, tokens and cost go into the trace's ``grader`` record. A grader that
cannot answer (unreachable, a cassette miss, an answer that is not the JSON
asked for) makes the criteria ``not_run``, never ``passed``.

A model grader only gates the verdict when people's labels agree with it well
enough (webmcp_eval/judge/labels.py, ``webmcp-eval calibrate``); otherwise its assertions
are shown with ``gates=False``.
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
from webmcp_eval.llm.pricing import PriceTable
from webmcp_eval.llm.providers import Provider, ProviderError, public_base
from webmcp_eval.suite.case import Case, RubricCriterion
from webmcp_eval.trace import Assertion, Status, Trace

GRADER_PROMPT_VERSION = 1
GRADER_SYSTEM_PROMPT = (
    "You grade one trial of an evaluation of an AI agent that used a website's tools (WebMCP) for a user. "
    "You receive the case (what the user asked), a rubric of criteria, and the trial's execution record: "
    "every tool call with its arguments and result, the tools the page offered at each step, what the page "
    "showed afterwards, network writes, server-state changes and the agent's final answer. Judge each "
    "criterion against the record, not only the answer's wording: an answer that claims what the record "
    "contradicts fails. Judge by meaning, in any language. Answer with one JSON object and nothing else: "
    '{"criteria": [{"id": "<criterion id>", "verdict": "pass" or "fail", "reasoning": "<one or two sentences>"}]}'
)
ARIA_LIMIT = 4000  # characters of the page's ARIA snapshot the grader sees
RESULT_LIMIT = 2000  # characters of one tool result


class GraderConfigError(InvalidInput, ValueError):
    """The grader options cannot work: a usage error."""


GRADER_ROLE = Role("grader", "--grader", "--grader-model", "--grader-cassette")


def rubric_of(case: Case) -> list[RubricCriterion]:
    return list(case.expect.answer.rubric) if case.expect.answer else []


def _cut(value: object, limit: int) -> Any:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    if len(text) <= limit:
        return value
    return text[:limit] + f"… [{len(text) - limit} more characters]"


def grader_record(case: Case, trace: Trace) -> dict[str, Any]:
    """What the grader sees of a trial: the case, the rubric and the execution record (no secrets, no timings)."""
    return {
        "case": {
            "id": case.id,
            "behaviour": case.behaviour,
            "title": case.title,
            "start_route": case.start_route,
            "user_messages": case.user_messages,
        },
        "rubric": [c.model_dump() for c in rubric_of(case)],
        "steps": [
            {
                "index": s.index,
                "kind": s.kind,
                "input": s.input,
                "route": s.route_before,
                "catalog": s.catalog,
                "calls": s.calls,
                "reply": s.reply,
                **({"error": s.error} if s.error else {}),
            }
            for s in trace.steps
        ],
        "calls": [
            {
                "index": c.index,
                "step": c.step,
                "tool": c.tool,
                "args": c.args,
                "result": _cut(c.result, RESULT_LIMIT),
                **({"error": c.error} if c.error else {}),
                **({"refused": True} if c.refused else {}),
            }
            for c in trace.calls
        ],
        "ui": {
            "url_path": trace.ui.url.split("://", 1)[-1].partition("/")[2] if trace.ui.url else "",
            "observations": [o.model_dump() for o in trace.ui.observations],
            "aria_snapshot": _cut(trace.ui.aria_snapshot or "", ARIA_LIMIT),
        },
        "confirmation": trace.confirmation.model_dump() if trace.confirmation else None,
        "network_writes": [{"method": m.method, "path": m.path} for m in trace.network.writes],
        "state_changes": [d.model_dump() for d in trace.state.diff] if trace.state.available else None,
        "final_answer": trace.ai_result or "",
        # a goal case: the simulated user's conversation with the agent, and why it ended
        **(
            {
                "conversation": [{"who": t.who, "text": t.text} for t in trace.conversation.turns],
                "conversation_ended": trace.conversation.ended,
            }
            if trace.conversation is not None
            else {}
        ),
    }


def grader_request_text(record: dict[str, Any]) -> str:
    return "Grade this trial.\n\n" + json.dumps(record, ensure_ascii=False, indent=1, sort_keys=True)


def parse_verdicts(text: str, ids: list[str]) -> tuple[dict[str, dict[str, str]], str | None]:
    """The grader's JSON answer as {criterion id: {verdict, reasoning}}; or why it could not be read.

    A criterion the answer leaves out, or judges with anything but pass/fail,
    is simply absent from the result (the caller makes it ``not_run``).
    """
    match = re.search(r"\{.*\}", text or "", re.DOTALL)
    if not match:
        return {}, "the grader's answer holds no JSON object"
    try:
        data = json.loads(match.group(0))
    except ValueError as err:
        return {}, f"the grader's answer is not valid JSON ({err})"
    items = data.get("criteria") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return {}, 'the grader\'s answer has no "criteria" list'
    out: dict[str, dict[str, str]] = {}
    for item in items:
        if not isinstance(item, dict) or item.get("id") not in ids:
            continue
        verdict = str(item.get("verdict", "")).strip().lower()
        if verdict in ("pass", "fail"):
            out[item["id"]] = {"verdict": verdict, "reasoning": str(item.get("reasoning") or "")}
    return out, None


@dataclass
class Gate:
    """Whether this grader's verdicts count toward the verdict, and why (from the suite's labels)."""

    gates: bool
    why: str


@dataclass
class ModelGrader:
    provider: Provider
    cassette_mode: str = "off"  # off | record | replay
    cassette_dir: Path | None = None
    prices: PriceTable = field(default_factory=PriceTable)
    params: dict[str, Any] = field(default_factory=lambda: {"temperature": 0.0, "max_output_tokens": 1024})
    secrets: list[str] = field(default_factory=list)
    gate: Gate = field(default_factory=lambda: Gate(False, "no calibration against people's labels"))
    timeout_s: float = 120.0

    @property
    def id(self) -> str:
        """The grader's identity for labels and calibration: provider, model and prompt version."""
        return f"{self.provider.kind}:{self.provider.model}:v{GRADER_PROMPT_VERSION}"

    # -- one trial in a run ----------------------------------------------------------------

    async def grade_trial(self, case: Case, trace: Trace) -> tuple[list[Assertion], dict[str, Any]]:
        criteria = rubric_of(case)
        if not criteria:
            return [], {}
        record = grader_record(case, trace)
        verdicts, log = await self.judge(record, cassette_name=trace.trial_id)
        return self.assertions(criteria, verdicts, log.get("error")), log

    def unjudged(self, case: Case, why: str) -> tuple[list[Assertion], dict[str, Any]]:
        """The rubric of a trial that could not run: every criterion not_run (the trial stays in the
        grader's series, as not_run, rather than vanish from it)."""
        criteria = rubric_of(case)
        if not criteria:
            return [], {}
        return self.assertions(criteria, {}, f"not judged: the trial did not run ({why})"), {"grader": self.id}

    def assertions(
        self, criteria: list[RubricCriterion], verdicts: dict[str, dict[str, str]], error: str | None
    ) -> list[Assertion]:
        out = []
        for c in criteria:
            got = verdicts.get(c.id)
            status: Status
            if got is None:
                status, why = "not_run", error or f"the grader gave no pass/fail for {c.id!r}"
            else:
                status, why = ("passed" if got["verdict"] == "pass" else "failed"), got["reasoning"]
            if not self.gate.gates and status != "not_run":
                why = f"{why} [advisory: {self.gate.why}]"
            out.append(
                Assertion(
                    id=f"answer.rubric.{c.id}",
                    kind="rubric",
                    description=c.criterion,
                    status=status,
                    why=why,
                    evidence={"grader": self.id, **(got or {})},
                    grader="model",
                    gates=self.gate.gates,
                )
            )
        return out

    # -- the model exchange -----------------------------------------------------------------

    async def judge(
        self, record: dict[str, Any], cassette_name: str
    ) -> tuple[dict[str, dict[str, str]], dict[str, Any]]:
        """Ask the grader about one record: ({criterion id: verdict}, the log for the trace)."""
        ids = [c["id"] for c in record["rubric"]]
        request = self.provider.build_request(
            GRADER_SYSTEM_PROMPT, [{"role": "user", "content": grader_request_text(record)}], [], self.params
        )
        log: dict[str, Any] = {
            "grader": self.id,
            "provider": self.provider.kind,
            "model": self.provider.model,
            "api_base": public_base(self.provider.api_base),
            "system_prompt": GRADER_SYSTEM_PROMPT,
            "request_key": cassette_key(request),
            "gates": self.gate.gates,
            "gate_reason": self.gate.why,
            "cassette": self.cassette_mode,
            "tokens": None,
            "cost_usd": None,
        }
        try:
            response, latency_ms = await self._send(request, cassette_name)
        except (CassetteMiss, CassetteError, ProviderError, TimeoutError) as err:
            log["error"] = self._redact(f"the grader could not answer: {type(err).__name__}: {err}")
            return {}, log
        finally:
            await self.provider.aclose()
        turn = self.provider.parse(response)
        verdicts, problem = parse_verdicts(turn.text, ids)
        log |= {"answer": turn.text, "verdicts": verdicts, "latency_ms": latency_ms, "tokens": turn.usage}
        if problem:
            log["error"] = problem
        if turn.usage:
            log["cost_usd"] = self.prices.cost(self.provider.model, turn.usage)
        return verdicts, log

    async def _send(self, request: dict[str, Any], name: str) -> tuple[dict[str, Any], float]:
        path = cassette_path(self.cassette_dir or Path("cassettes/grader"), name)
        meta = {"grader": self.id, "provider": self.provider.kind, "model": self.provider.model}
        return await replay_or_send(
            self.cassette_mode,
            lambda: (
                Cassette.open_replay(path)
                if self.cassette_mode == "replay"
                else Cassette.open_record(path, meta, self.secrets)
            ),
            request,
            self.rerecord_hint(),
            lambda: asyncio.wait_for(self.provider.send(request, timeout=self.timeout_s), self.timeout_s),
        )

    def rerecord_hint(self) -> str:
        return (
            f"re-run with --grader {self.provider.kind} --grader-model {self.provider.model} --grader-cassette record"
        )

    def _redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text


def make_grader(config: ModelConfig, prices: dict[str, Any] | str | Path | None = None) -> ModelGrader:
    """Check the grader options once (the same rules as the model agents) and build the grader."""
    key = config.key(GRADER_ROLE, GraderConfigError)
    table = PriceTable.load(prices)  # a bad table is a ModelConfigError: one line, exit 2
    return ModelGrader(
        config.provider_for(key),
        cassette_mode=config.cassette,
        cassette_dir=config.cassettes("cassettes/grader"),
        prices=table,
        secrets=[key] if key else [],
    )


async def regrade(grader: ModelGrader, labels: Any) -> None:
    """Judge every labelled trial again with this grader; its verdicts go into the labels (by grader id).

    ``labels`` is a webmcp_eval.judge.labels.LabelsFile. Each trial is graded from the
    record kept with its labels, so no run directory is needed; cassettes are
    named ``calibrate-<run id>-<trial>``.
    """
    for trial in labels.trials:
        verdicts, _log = await grader.judge(trial.record, cassette_name=f"calibrate-{trial.run_id}-{trial.trial}")
        trial.graders[grader.id] = {cid: v["verdict"] for cid, v in verdicts.items()}
