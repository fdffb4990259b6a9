"""Smoke calls: each tool called with inputs drawn from its schema, and every answer judged.

``judge`` is pure: from a tool and the outcomes of its calls (result or
error, time, the writes and other-host requests the proxy counted during the
call) to findings. The calling itself is the engine's (a page it opened, or a
fresh world per call for tools that may write).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from webmcp_eval.audit.config import AuditConfig
from webmcp_eval.audit.inputs import SmokeInput
from webmcp_eval.audit.model import Finding, Frame, Tool
from webmcp_eval.audit.trust import instructions_in, third_party_by_description, third_party_in_answer, untrusted_hint
from webmcp_eval.data_file import nulls_in, strings_in
from webmcp_eval.play.page.surface.log import ErrorEvent, ResultEvent
from webmcp_eval.play.page.surface.reader import Answer

ANSWER_CHARS = 2048  # how much of an answer the reports keep


@dataclass
class CallOutcome:
    input: SmokeInput
    result: Any = None
    error: str | None = None  # the call threw or the browser refused it
    timed_out: bool = False
    ms: float = 0.0
    writes: list[str] = field(default_factory=list)  # "POST /api/log" per write the proxy counted
    other_hosts: list[str] = field(default_factory=list)  # "GET http://cdn/x" per request to another host
    declarative: bool = False  # a form's call: its validation answer is refusal evidence
    navigated_to: str | None = None  # the call led its frame to this page (a form's action): its answer is that page's
    not_run: str | None = None  # why the call could not be made (its page lost twice): judged neither way
    retried: str | None = None  # why this call was made twice (its page lost to a navigation the first time)
    size: int | None = None  # the answer's bytes as the site sent it, when its cap cut it (bounds.py)
    bounds: list[str] = field(default_factory=list)  # what was changed to bring the answer within bounds
    # how the network's settle after the call ended: quiet, or cap (NETWORK_SETTLE_S), with what it waited for
    # ("cap (dom)": the document still changed); None: no settle (a read-only tool's call before its last, no proxy)
    settled: str | None = None

    @property
    def browser_refused(self) -> bool:
        """The browser's own form validation refused the input before the form saw it: its constraints (a
        required field left empty, minlength, pattern) are not all in the schema it derived, so an input valid
        under that schema can still be refused. The tool never ran."""
        return self.declarative and self.error is not None and FORM_VALIDATION in self.error

    @property
    def is_error(self) -> bool:
        """The answer says isError: true (an MCP tool result that failed)."""
        return isinstance(self.result, dict) and self.result.get("isError") is True

    @property
    def refusal(self) -> str | None:
        """Why the call counts as refused (refusal_of), None when it was accepted."""
        return refusal_of(self)

    def as_dict(self) -> dict[str, Any]:
        refusal = None if self.timed_out or self.not_run else self.refusal
        return {
            "input": self.input.label,  # why this input: which draw or which one change from a valid one
            "valid": self.input.valid,
            "args": self.input.args,
            "answer": answer_text(self),
            "result_bytes": self.size if self.size is not None else _size(self.result),
            "error": self.error,
            "timed_out": self.timed_out,
            "refused": None if self.timed_out or self.not_run else refusal is not None,
            "evidence": refusal,
            "ms": self.ms,
            "writes": self.writes,
            "other_hosts": self.other_hosts,
            "navigated_to": self.navigated_to,
            "not_run": self.not_run,
            "retried": self.retried,
            "bounds": self.bounds,
        }

    @property
    def verdict(self) -> str:
        """The call's verdict as a reader sees it: not run, timed out, refused (on what) or accepted."""
        if self.not_run:
            return f"not run: {self.not_run}"
        if self.timed_out:
            return "timed out"
        refusal = self.refusal
        return f"refused ({refusal})" if refusal else "accepted"


FORM_VALIDATION = "Form validation failed"


def answer_text(outcome: CallOutcome) -> str:
    """The answer as a reader sees it: the thrown error, or the result as JSON, cut at ANSWER_CHARS."""
    if outcome.timed_out or outcome.not_run:
        return ""
    if outcome.error is not None:
        text = f"threw: {outcome.error}"
    elif isinstance(outcome.result, str):
        text = outcome.result
    else:
        try:
            text = json.dumps(outcome.result, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(outcome.result)
    return text if len(text) <= ANSWER_CHARS else text[:ANSWER_CHARS] + f"... ({len(text)} characters)"


# The documented text heuristic, the last evidence of a refusal: an answer whose words say no.
REFUSAL_WORDS = re.compile(
    r"\b(error|invalid|unknown|not found|no such|could not|couldn't|cannot|can't|unable to|must be|must have|"
    r"is required|are required|missing|not allowed|not supported|unsupported|not a valid|out of range|failed|"
    r"rejected|expected)\b",
    re.I,
)


def _error_field(result: object) -> bool:
    if isinstance(result, dict):
        status = str(result.get("status") or "").lower()
        said_no = result.get("success") is False or result.get("ok") is False  # {success: false, reason: ...}
        return bool(result.get("isError") or result.get("error") or status in ("error", "invalid", "failed") or said_no)
    return False


def _validation_answer(outcome: CallOutcome) -> bool:
    """A validation answer: what is wrong with the input, as a list of {field, message} items (or under
    "errors"), from any tool; a form's may also be a plain list of messages (a page's respondWith(errors)).
    An imperative tool's list of strings is an answer (names, results), never taken for one."""
    result = outcome.result
    items = result.get("errors") if isinstance(result, dict) else result
    if not (isinstance(items, list) and items):
        return False
    said = [isinstance(i, dict) and ("message" in i or "error" in i) for i in items]
    fielded = all(isinstance(i, dict) and ("field" in i or "path" in i or "param" in i) for i in items)
    if outcome.declarative:
        return all(isinstance(i, str) or s for i, s in zip(items, said, strict=True))
    return all(said) and fielded


def _says_no(result: object) -> bool:
    texts = [result] if isinstance(result, str) else []
    if isinstance(result, dict):
        texts += [v for k, v in result.items() if k in ("message", "text", "result", "content") and isinstance(v, str)]
        content = result.get("content")
        if isinstance(content, list):
            texts += [c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)]
    return any(REFUSAL_WORDS.search(t) for t in texts)


def refusal_of(outcome: CallOutcome) -> str | None:
    """The evidence that a call was refused, the first found in this order (docs/audit.md): a thrown error;
    isError or an error field in the answer; a form's validation answer; the text heuristic (REFUSAL_WORDS)."""
    if outcome.browser_refused:
        return "the browser's form validation"
    if outcome.error is not None:
        return "a thrown error"
    if _error_field(outcome.result):
        return "isError or an error field"
    if _validation_answer(outcome):
        return "a validation answer"
    if _says_no(outcome.result):
        return "the text heuristic (words that say no)"
    return None


UNSERIALIZABLE = "__unserializable__"


def _size(result: object) -> int:
    try:
        return len(json.dumps(result, ensure_ascii=False).encode("utf-8"))
    except (TypeError, ValueError):
        return 0


def smoke_choice(tool: Tool, all_tools: bool) -> str | None:
    """What the smoke does with a tool, for ``audit --smoke`` and the webmcp fixture's ``smoke()`` alike: "call" it,
    "say" it (a form that waits for a person: said, not called, see waits_for_person), or None (left alone)."""
    if tool.kind == "declarative" and not all_tools:
        return None  # a form call fills (and may submit) the person's form
    if tool.waits_for_person:
        return "say"
    return "call" if tool.read_only or all_tools else None


def waits_for_person(tool: Tool, frame: Frame, page: str, config: AuditConfig) -> list[Finding]:
    """A form without toolautosubmit: a call fills it and waits for a person, so it is said, not smoke-called."""
    rule = "form-waits-for-person"
    if not config.enabled(rule):
        return []
    message = (
        f"{tool.name} is a form without toolautosubmit: a call fills it and waits for a person to submit it "
        "(not smoke-called)"
    )
    return [Finding(rule, config.severity(rule), message, page, frame.url, tool.name, "/annotations/autosubmit")]


def judge(
    tool: Tool,
    frame: Frame,
    page: str,
    outcomes: list[CallOutcome],
    config: AuditConfig,
    page_tools: Iterable[str] = (),
) -> list[Finding]:
    """Findings on a tool's calls; page_tools: the page's tool names, so an answer ordering a call of another
    one is found."""
    findings: list[Finding] = []
    others = set(page_tools) - {tool.name}

    def add(rule: str, message: str, pointer: str = "") -> None:
        if config.enabled(rule):
            findings.append(Finding(rule, config.severity(rule), message, page, frame.url, tool.name, pointer))

    ran = [o for o in outcomes if not o.not_run]  # a call that could not be made is no evidence either way
    valid = [o for o in ran if o.input.valid]
    invalid = [o for o in ran if not o.input.valid]
    seen: set[str] = set()

    def once(rule: str, message: str, pointer: str = "") -> None:
        if rule not in seen:
            seen.add(rule)
            add(rule, message, pointer)

    max_bytes = config.options("smoke-too-large")["max_bytes"]
    max_ms = config.options("smoke-slow")["max_ms"]
    for o in valid:
        label = f"{tool.name} ({o.input.label})"
        if o.timed_out:
            once("smoke-timeout", f"{label} did not answer within {config.options('smoke-timeout')['timeout_ms']} ms")
            continue
        if o.browser_refused:
            continue  # the browser's constraint validation, not the tool: valid only under the schema it derived
        if o.error is not None:
            once("smoke-error-on-valid", f"{label} failed on valid input: {o.error} (a thrown error)")
            continue
        if o.is_error:
            said = answer_text(o)[:160]
            once("smoke-error-on-valid", f"{label} answered isError on valid input: {said}")
            continue
        if o.result is None and o.navigated_to:
            continue  # a form that led to another page answered with that page, which had nothing to say
        if o.result is None or o.result == UNSERIALIZABLE:
            what = "nothing (undefined)" if o.result is None else "a value that is not JSON (cyclic, a function)"
            once("smoke-unserializable", f"{label} answered {what}")
            continue
        size = o.size if o.size is not None else _size(o.result)
        if size > max_bytes:
            once("smoke-too-large", f"{label} answered {size} bytes (more than {max_bytes})")
        if o.ms > max_ms:
            once("smoke-slow", f"{label} took {o.ms:.0f} ms (more than {max_ms})")
        nulls = list(nulls_in(o.result))
        if nulls:
            once("smoke-null", f"{label} answered null at {', '.join(nulls[:3])}", nulls[0])
        if isinstance(o.result, str) and _json_text(o.result):
            once("smoke-json-string", f"{label} answered JSON inside a string: agents get text, not structure")
        kinds = sorted({k for text in strings_in(o.result) for k in instructions_in(text, others)})
        if kinds:
            once("smoke-result-injection", f"{label} answered instructions to the agent ({', '.join(kinds)})")
    for o in ran:
        if o.bounds:
            once("site-input-bounded", f"{tool.name} ({o.input.label}): {'; '.join(o.bounds)}")
    for o in invalid:
        if o.timed_out:
            once(
                "smoke-timeout",
                f"{tool.name} ({o.input.label}) did not answer within "
                f"{config.options('smoke-timeout')['timeout_ms']} ms",
            )
    accepted = [o for o in invalid if not o.timed_out and o.refusal is None and not _browser_decides(tool, o)]
    if accepted:
        said = "; ".join(f"{o.input.label} (answered {answer_text(o)[:80]!r})" for o in accepted)
        refused = [o for o in invalid if not o.timed_out and o.refusal is not None]
        judged = ", ".join(sorted({str(o.refusal) for o in refused}))
        add(
            "smoke-accepts-invalid",
            f"{tool.name} accepted input its schema forbids, judged on the evidence in order (a thrown error, "
            f"isError or an error field, a validation answer, words that say no) and none found: {said}"
            + (f"; its other invalid inputs were refused on {judged}" if refused else ""),
        )
    writes = sorted({w for o in outcomes for w in o.writes})
    if tool.read_only and writes:
        add(
            "readonly-writes",
            f"{tool.name} is marked read-only but wrote to the server: {', '.join(writes)}",
            "/annotations/readOnlyHint",
        )
    _untrusted(tool, valid, add)
    other = sorted({r for o in outcomes for r in o.other_hosts})
    if other:
        add("smoke-other-hosts", f"{tool.name} reached other hosts: {', '.join(other[:5])}")
    return findings


def _browser_decides(tool: Tool, outcome: CallOutcome) -> bool:
    """An invalid input a form never sees as such: the browser writes a value of the wrong type into the field as
    text, and a required field left out keeps the value it holds (a selected option), which the form submits."""
    if tool.kind != "declarative":
        return False
    label = outcome.input.label
    filled = {f.name for f in tool.fields if f.filled}
    return label.endswith(" of the wrong type") or any(label == f"missing required {name}" for name in filled)


def _untrusted(tool: Tool, valid: list[CallOutcome], add: Callable[[str, str, str], None]) -> None:
    """untrustedContentHint judged on the answers: missing where they carry text others wrote (the description
    alone is the static rule's), needless where nothing says they do."""
    answered = [  # answers the tool gave as content: not a refusal (a form's list of messages is not others' text)
        o for o in valid if not o.timed_out and o.result not in (None, UNSERIALIZABLE) and o.refusal is None
    ]
    if not answered:
        return
    in_answer = next((w for o in answered if (w := third_party_in_answer(o.result))), None)
    described = third_party_by_description(tool)
    if not untrusted_hint(tool) and in_answer and not described:
        add(
            "untrusted-content-unmarked",
            f"{tool.name} returns text others wrote ({in_answer}) without untrustedContentHint: an agent takes it "
            "for the site's own words",
            "/annotations/untrustedContentHint",
        )
    if untrusted_hint(tool) and not (in_answer or described or any(o.other_hosts for o in answered)):
        add(
            "untrusted-hint-unneeded",
            f"{tool.name} has untrustedContentHint but nothing says its answers carry text others wrote (its "
            "description, its answers' fields, requests to other hosts): the hint makes an agent distrust the "
            "site's own data",
            "/annotations/untrustedContentHint",
        )


def _json_text(text: str) -> bool:
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return False
    try:
        return isinstance(json.loads(stripped), dict | list)
    except ValueError:
        return False


def take_answer(outcome: CallOutcome, answer: Answer) -> None:
    """The browser's answer to one smoke call, as its outcome records it (the shim's report of the call's end is
    added after, by page_answer): the audit and the webmcp fixture's smoke() alike."""
    outcome.ms = answer.ms
    outcome.bounds = list(answer.bounds or [])
    outcome.size = answer.size if answer.bounds else None
    if answer.timed_out:
        outcome.timed_out = True
    elif answer.error is not None:
        call_failed(outcome, answer.error)
    else:
        outcome.result = answer.result


def call_failed(outcome: CallOutcome, message: str) -> None:
    """Record why the browser's call of a tool failed: the call's timeout, an answer it could not pass on
    (cyclic, not serializable), or the error the tool gave."""
    if "Timeout" in message and "exceeded" in message:
        outcome.timed_out = True
    elif any(s in message.lower() for s in ("circular", "cyclic", "serializ", "could not be cloned")):
        outcome.result = UNSERIALIZABLE
    else:
        outcome.error = message


def add_requests(outcome: CallOutcome, requests: list[Any]) -> None:
    """Add the proxy's requests of a call to it: its writes (a path on the site, a URL elsewhere) and its requests
    to other hosts."""
    outcome.writes += [f"{r.method} {r.path if not r.outbound else r.url}" for r in requests if r.write]
    outcome.other_hosts += [f"{r.method} {r.url}" for r in requests if r.outbound]


def page_answer(outcome: CallOutcome, event: ResultEvent | ErrorEvent | None) -> None:
    """Add the shim's report of the call's end (webmcp_eval/play/page/surface/reader.py ``call_events``) to the
    browser's answer, without ever replacing an answer the browser gave.

    The browser reports any throw, or a value it cannot pass on, as one generic error: the shim's words say
    which. It parses a JSON text into an object: the text the tool returned is the shim's. A form's call
    (declarative) ends in the shim's log with what the shim could see of it, often null: the form's answer
    is the browser's alone.
    """
    if event is None:
        return
    if isinstance(event.ms, int | float):
        outcome.ms = round(event.ms, 1)  # the tool's own time, by the page's clock: not the runner's lag
    failed = outcome.error is not None or outcome.result == UNSERIALIZABLE
    if isinstance(event, ErrorEvent):
        if (failed or outcome.result is None) and not outcome.timed_out:
            outcome.error, outcome.result = str(event.error), None
    elif event.declarative or outcome.timed_out:
        return
    elif isinstance(event.result, dict) and set(event.result) == {"unserialisable"}:
        outcome.error, outcome.result = None, UNSERIALIZABLE
    elif event.result is not None and not failed:
        outcome.result = event.result  # the value as the tool returned it (a JSON text stays a text)
