"""Smoke calls: each tool called with inputs drawn from its schema, and every answer judged.

``judge`` is pure: from a tool and the outcomes of its calls (result or
error, time, the writes and other-host requests the proxy counted during the
call) to findings. The calling itself is the engine's (a page it opened, or a
fresh world per call for tools that may write).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from runner.audit.config import AuditConfig
from runner.audit.inputs import SmokeInput
from runner.audit.model import Finding, Frame, Tool
from runner.audit.rules import instructions_in


@dataclass
class CallOutcome:
    input: SmokeInput
    result: Any = None
    error: str | None = None  # the call threw or the browser refused it
    timed_out: bool = False
    ms: float = 0.0
    writes: list[str] = field(default_factory=list)  # "POST /api/log" per write the proxy counted
    other_hosts: list[str] = field(default_factory=list)  # "GET http://cdn/x" per request to another host

    def as_dict(self) -> dict[str, Any]:
        return {
            "input": self.input.label,
            "valid": self.input.valid,
            "args": self.input.args,
            "error": self.error,
            "timed_out": self.timed_out,
            "ms": self.ms,
            "writes": self.writes,
            "other_hosts": self.other_hosts,
            "result_bytes": _size(self.result),
        }


UNSERIALIZABLE = "__unserializable__"


def _size(result: Any) -> int:
    try:
        return len(json.dumps(result, ensure_ascii=False).encode("utf-8"))
    except (TypeError, ValueError):
        return 0


def _nulls(value: Any, pointer: str = "") -> Iterator[str]:
    if value is None:
        yield pointer or "/"
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _nulls(v, f"{pointer}/{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _nulls(v, f"{pointer}/{i}")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def refused_answer(result: Any) -> bool:
    """An answer that says no: an error shape the tools of the web commonly return instead of throwing."""
    if isinstance(result, dict):
        status = str(result.get("status") or "").lower()
        return bool(result.get("error") or result.get("isError") or status in ("error", "invalid", "failed"))
    return isinstance(result, str) and result.lower().startswith(("error", "invalid"))


def judge(tool: Tool, frame: Frame, page: str, outcomes: list[CallOutcome], config: AuditConfig) -> list[Finding]:
    findings: list[Finding] = []

    def add(rule: str, message: str, pointer: str = "") -> None:
        if config.enabled(rule):
            findings.append(Finding(rule, config.severity(rule), message, page, frame.url, tool.name, pointer))

    valid = [o for o in outcomes if o.input.valid]
    invalid = [o for o in outcomes if not o.input.valid]
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
        if o.error is not None:
            once("smoke-error-on-valid", f"{label} failed on valid input: {o.error}")
            continue
        if o.result is None or o.result == UNSERIALIZABLE:
            what = "nothing (undefined)" if o.result is None else "a value that is not JSON (cyclic, a function)"
            once("smoke-unserializable", f"{label} answered {what}")
            continue
        size = _size(o.result)
        if size > max_bytes:
            once("smoke-too-large", f"{label} answered {size} bytes (more than {max_bytes})")
        if o.ms > max_ms:
            once("smoke-slow", f"{label} took {o.ms:.0f} ms (more than {max_ms})")
        nulls = list(_nulls(o.result))
        if nulls:
            once("smoke-null", f"{label} answered null at {', '.join(nulls[:3])}", nulls[0])
        if isinstance(o.result, str) and _json_text(o.result):
            once("smoke-json-string", f"{label} answered JSON inside a string: agents get text, not structure")
        kinds = sorted({k for text in _strings(o.result) for k in instructions_in(text)})
        if kinds:
            once("smoke-result-injection", f"{label} answered instructions to the agent ({', '.join(kinds)})")
    for o in invalid:
        if o.timed_out:
            once(
                "smoke-timeout",
                f"{tool.name} ({o.input.label}) did not answer within "
                f"{config.options('smoke-timeout')['timeout_ms']} ms",
            )
    accepted = [o.input.label for o in invalid if not o.timed_out and o.error is None and not refused_answer(o.result)]
    if accepted:
        add("smoke-accepts-invalid", f"{tool.name} accepted input its schema forbids: {'; '.join(accepted)}")
    writes = sorted({w for o in outcomes for w in o.writes})
    if tool.read_only and writes:
        add(
            "readonly-writes",
            f"{tool.name} is marked read-only but wrote to the server: {', '.join(writes)}",
            "/annotations/readOnlyHint",
        )
    other = sorted({r for o in outcomes for r in o.other_hosts})
    if other:
        add("smoke-other-hosts", f"{tool.name} reached other hosts: {', '.join(other[:5])}")
    return findings


def _json_text(text: str) -> bool:
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return False
    try:
        return isinstance(json.loads(stripped), dict | list)
    except ValueError:
        return False


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
    outcome.writes += [f"{r.method} {r.path if not r.outbound else r.url}" for r in requests if r.mutation]
    outcome.other_hosts += [f"{r.method} {r.url}" for r in requests if r.outbound]


def page_answer(outcome: CallOutcome, events: list[dict[str, Any]], name: str) -> None:
    """What the page itself answered, as the shim saw it: the browser's listing parses a JSON text into an object
    and reports any throw, or a cyclic value it cannot pass on, as one generic error."""
    for event in events:
        if event.get("name") != name or event.get("type") not in ("result", "error"):
            continue
        if event["type"] == "error":
            outcome.error, outcome.result = str(event.get("error")), None
        elif isinstance(event.get("result"), dict) and set(event["result"]) == {"unserialisable"}:
            outcome.error, outcome.result = None, UNSERIALIZABLE
        elif not outcome.timed_out:
            outcome.error, outcome.result = None, event.get("result")
        if isinstance(event.get("ms"), int | float):
            outcome.ms = round(event["ms"], 1)  # the tool's own time, by the page's clock: not the runner's lag
        return
