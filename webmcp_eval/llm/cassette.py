"""Model cassettes: every model request and response of a trial, as readable text.

``record`` saves each request body (the exact JSON sent: messages, tools,
parameters) with the response the endpoint gave; ``replay`` answers a request
from the cassette only, and strictly. The key is the request's content (a
digest of its canonical JSON, keys sorted), never the call number; identical
keys are answered in their recorded order. A request that is not in the
cassette is a :class:`CassetteMiss` that says how it differs from the nearest
recorded request and how to re-record.

A cassette is one JSON file per trial (``<dir>/<CASE>.t<N>.json``), written
atomically after every interaction. It holds no secret: request bodies carry
no key (keys travel in headers, which are not recorded), the endpoint is shown
without user info or query, and any configured secret found in the text is
replaced before the file is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from webmcp_eval.trace import write_atomic

CASSETTE_FORMAT = "webmcp-eval model cassette"
CASSETTE_VERSION = 1
REDACTED = "[redacted]"
MAX_DIFFS = 12


class CassetteMiss(Exception):
    """Replay met a request the cassette does not hold."""


class CassetteError(Exception):
    """The cassette file cannot be read."""


def canonical(request: Any) -> str:
    return json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def cassette_key(request: Any) -> str:
    """A model request's key in a cassette: a digest of its canonical JSON."""
    return hashlib.sha256(canonical(request).encode("utf-8")).hexdigest()[:24]


def cassette_path(directory: Path, trial_id: str) -> Path:
    return Path(directory) / f"{trial_id}.json"


@dataclass
class Cassette:
    path: Path
    mode: str  # record | replay
    meta: dict[str, Any] = field(default_factory=dict)
    interactions: list[dict[str, Any]] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)
    used: set[int] = field(default_factory=set)
    missing: bool = False  # replay: there was no file
    previous: list[dict[str, Any]] | None = None  # record: what the file held before, to say what changed

    # -- replay -----------------------------------------------------------------

    @classmethod
    def open_replay(cls, path: Path) -> Cassette:
        if not path.exists():
            return cls(path=path, mode="replay", missing=True)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise CassetteError(f"cannot read the model cassette {path}: {err}") from None
        if data.get("format") != CASSETTE_FORMAT or data.get("version") != CASSETTE_VERSION:
            raise CassetteError(f"{path} is not a version {CASSETTE_VERSION} {CASSETTE_FORMAT}")
        meta = {k: v for k, v in data.items() if k != "interactions"}
        return cls(path=path, mode="replay", meta=meta, interactions=list(data.get("interactions") or []))

    def answer(self, request: dict[str, Any], rerecord: str) -> dict[str, Any]:
        """The recorded interaction for this request, in recorded order among equal keys."""
        key = cassette_key(request)
        for i, entry in enumerate(self.interactions):
            if i not in self.used and entry.get("key") == key:
                self.used.add(i)
                return entry
        raise CassetteMiss(self._miss_message(request, key, rerecord))

    def _miss_message(self, request: dict[str, Any], key: str, rerecord: str) -> str:
        n = len(self.used) + 1
        if self.missing:
            head = f"no model cassette at {self.path}: nothing recorded for this trial"
            return f"{head}. Record it: {rerecord}"
        if not self.interactions:
            return f"the model cassette {self.path} is empty. Re-record: {rerecord}"
        nearest, diffs = nearest_recorded(request, self.interactions, prefer=n - 1, skip=self.used)
        head = (
            f"model request #{n} (key {key}) is not in the cassette {self.path}; "
            f"it differs from recorded request #{nearest + 1} in {len(diffs)} place(s)"
        )
        shown = diffs[:MAX_DIFFS]
        more = f"\n  … and {len(diffs) - len(shown)} more" if len(diffs) > len(shown) else ""
        lines = "\n".join(f"  {d}" for d in shown)
        return f"{head}:\n{lines}{more}\nRe-record: {rerecord}"

    # -- record -----------------------------------------------------------------

    @classmethod
    def open_record(cls, path: Path, meta: dict[str, Any], secrets: list[str]) -> Cassette:
        previous = None
        with contextlib.suppress(CassetteError):  # an unreadable old cassette is simply replaced
            old = cls.open_replay(path)
            previous = None if old.missing else old.interactions
        return cls(path=path, mode="record", meta=meta, secrets=[s for s in secrets if s], previous=previous)

    def rerecorded(self) -> dict[str, Any] | None:
        """Record: how this recording differs from the one it replaced (None when there was none).

        Position by position, as a replay would meet them, and ids aside (a
        provider mints new response and tool-call ids every time): a request
        that changed, with its differences; an equal request the model answered
        differently (a model is not deterministic); requests added or dropped.
        """
        if self.previous is None:
            return None
        changed, answered = [], []
        for old, new in zip(self.previous, self.interactions, strict=False):
            was, now = _without_ids(old.get("request")), _without_ids(new.get("request"))
            if was != now:
                changed.append({"n": new["n"], "differences": differences(was, now)[:MAX_DIFFS]})
            elif _without_ids(old.get("response")) != _without_ids(new.get("response")):
                answered.append(new["n"])
        same = min(len(self.previous), len(self.interactions)) - len(changed) - len(answered)
        return {
            "previous": len(self.previous),
            "same": same,
            "requests_changed": changed,
            "answers_changed": answered,
            "added": max(0, len(self.interactions) - len(self.previous)),
            "dropped": max(0, len(self.previous) - len(self.interactions)),
        }

    def add(self, request: dict[str, Any], response: dict[str, Any], latency_ms: float) -> dict[str, Any]:
        entry = {
            "n": len(self.interactions) + 1,
            "key": cassette_key(request),
            "latency_ms": latency_ms,
            "request": request,
            "response": response,
        }
        self.interactions.append(entry)
        self.save()
        return entry

    def save(self) -> None:
        data = {
            "format": CASSETTE_FORMAT,
            "version": CASSETTE_VERSION,
            **self.meta,
            "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "interactions": self.interactions,
        }
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        write_atomic(self.path, text)


async def replay_or_send(
    mode: str,
    cassette: Callable[[], Cassette],
    request: dict[str, Any],
    rerecord: str,
    send: Callable[[], Awaitable[dict[str, Any]]],
) -> tuple[dict[str, Any], float]:
    """The answer to ``request`` and its latency in ms: from the cassette when replaying (a
    CassetteMiss, with ``rerecord`` as the way out, where it has none), else from ``send()``,
    added to the cassette when recording. ``cassette()`` is asked for it only when it is used."""
    if mode == "replay":
        entry = cassette().answer(request, rerecord)
        return entry["response"], entry.get("latency_ms", 0.0)
    t0 = time.monotonic()
    response = await send()
    latency_ms = round((time.monotonic() - t0) * 1000, 1)
    if mode == "record":
        cassette().add(request, response, latency_ms)
    return response, latency_ms


# Fields that differ between two recordings of the same conversation.
VOLATILE_KEYS = frozenset({"id", "created", "system_fingerprint", "usage", "tool_call_id", "tool_use_id"})


def _without_ids(value: object) -> Any:
    if isinstance(value, dict):
        return {k: _without_ids(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [_without_ids(v) for v in value]
    return value


def describe_rerecord(summary: dict[str, Any] | None) -> str | None:
    """One line for the console when a re-recording differs from the cassette it replaced."""
    if not summary:
        return None
    changed, answered = summary["requests_changed"], summary["answers_changed"]
    if not (changed or answered or summary["added"] or summary["dropped"]):
        return None
    parts = (
        f"{len(changed)} request(s) changed, {len(answered)} answer(s) changed, "
        f"{summary['added']} added, {summary['dropped']} dropped"
    )
    detail = f"; #{changed[0]['n']}: {changed[0]['differences'][0]}" if changed and changed[0]["differences"] else ""
    return f"model cassette re-recorded, {summary['same']} of {summary['previous']} unchanged: {parts}{detail}"


# ---- how two requests differ ------------------------------------------------------------


def nearest_recorded(
    request: dict[str, Any], interactions: list[dict[str, Any]], prefer: int, skip: set[int]
) -> tuple[int, list[str]]:
    """The recorded request with the fewest differences (the same position wins a tie)."""
    best: tuple[int, int, list[str]] | None = None
    for i, entry in enumerate(interactions):
        diffs = differences(entry.get("request"), request)
        rank = (len(diffs) + (0 if i not in skip else 10_000), 0 if i == prefer else 1)
        if best is None or rank < best[:2]:
            best = (*rank, diffs)
            index = i
    assert best is not None
    return index, best[2]


def differences(recorded: Any, current: Any, path: str = "") -> list[str]:
    """Readable differences, one per changed leaf: ``messages[0].content: 'old…' → 'new…'``."""
    where = path or "(request)"
    if isinstance(recorded, dict) and isinstance(current, dict):
        out: list[str] = []
        for key in sorted(set(recorded) | set(current), key=str):
            sub = f"{path}.{key}" if path else str(key)
            if key not in current:
                out.append(f"{sub}: recorded {_short(recorded[key])}, now absent")
            elif key not in recorded:
                out.append(f"{sub}: now {_short(current[key])}, not recorded")
            else:
                out.extend(differences(recorded[key], current[key], sub))
        return out
    if isinstance(recorded, list) and isinstance(current, list):
        out = []
        for i in range(max(len(recorded), len(current))):
            sub = f"{path}[{i}]"
            if i >= len(current):
                out.append(f"{sub}: recorded {_short(recorded[i])}, now absent")
            elif i >= len(recorded):
                out.append(f"{sub}: now {_short(current[i])}, not recorded")
            else:
                out.extend(differences(recorded[i], current[i], sub))
        return out
    if recorded == current and type(recorded) is type(current):
        return []
    if isinstance(recorded, str) and isinstance(current, str):
        a, b = _around_change(recorded, current)
        return [f"{where}: recorded {a} → now {b}"]
    return [f"{where}: recorded {_short(recorded)} → now {_short(current)}"]


def _short(value: object, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _around_change(a: str, b: str, before: int = 30, after: int = 50) -> tuple[str, str]:
    """Both strings cut to a window around their first difference."""
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    start = max(0, p - before)

    def cut(s: str) -> str:
        piece = s[start : p + after]
        return (
            ("…" if start else "") + json.dumps(piece, ensure_ascii=False)[1:-1] + ("…" if p + after < len(s) else "")
        )

    return f"'{cut(a)}'", f"'{cut(b)}'"
