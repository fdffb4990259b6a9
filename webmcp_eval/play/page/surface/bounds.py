"""Bounds on what a site hands the runner: every string, answer and schema that enters through the page surface.

A site under test chooses its tool names, descriptions, schemas and answers; a hostile or broken one can send
text that is not Unicode (a lone surrogate: what ``'🍵'.slice(0, 1)`` leaves), a 5 MB answer, a schema of
20,000 properties, a ``$ref`` that points at itself or at another host, or thousands of tools. The reader
(``reader.py``, ``log.py``) passes everything it takes from the page through here, once, so every front end
(a trial, ``tools``, ``init``, the audit, the fixture) holds text it can write and sizes it can handle:

- ``valid_text``: a lone surrogate written as its visible escape (``\\ud83c``);
- ``bound_answer``: an answer over ``MAX_ANSWER_BYTES`` (as JSON) cut to a text of that size, its size kept;
- ``bound_schema``: every local ``$ref`` resolved inside the schema (a chain at most ``MAX_REF_DEPTH`` long; a
  recursive one once, its reference to itself read as ``{}``: anything), then ``$defs`` dropped; a remote one
  never fetched (``{}``); a schema over ``MAX_SCHEMA_BYTES`` read as ``{"type": "object"}``.

Each change is recorded (``Bounded.notes``) in words that say what was changed and which cap applied; the audit
reports them (rule ``site-input-bounded``), a trace keeps them beside the call. The audit's budgets (time per
page, calls per tool, lint pairs and findings) are here too; ``init``'s (tools per page) is in suite/init.py,
which sits below this package.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

MAX_ANSWER_BYTES = 256 * 1024  # a tool's answer, as JSON: 16 times what the audit already calls too large
MAX_SCHEMA_BYTES = 100_000  # an input schema, as JSON (20,000 properties or a 100,000-value enum are far over)
MAX_TEXT_CHARS = 100_000  # a name, a description, an annotation
MAX_REF_DEPTH = 8  # a $ref resolved inside another $ref's target at most this deep
MAX_REF_NODES = 2_000  # schema nodes a resolution may copy in all (refs that fan out cannot grow without end)

# Budgets of the commands that read many tools
AUDIT_PAGE_SECONDS = 300.0  # the audit's smoke calls on one page: the tools left after it are not called
AUDIT_CALLS_PER_TOOL = 24  # smoke inputs per tool (a 100,000-value enum is not 100,000 calls)
LINT_PAIRS = 100_000  # tool pairs compared by description-similar on one page (5,000 tools are 12.5 M pairs)
LINT_HITS_PER_RULE = 500  # findings of one static rule on one page; a note says how many more

_SURROGATE = re.compile("[\ud800-\udfff]")  # a str from the page holds one only when it was lone there
_TOO_DEEP = "nested too deeply to read"


@dataclass
class Bounded:
    """What was changed to bring site input within bounds, in words (empty: nothing was)."""

    notes: list[str] = field(default_factory=list)

    def add(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"


def valid_text(text: str, what: str = "", bounded: Bounded | None = None) -> str:
    """text as valid Unicode (each lone surrogate as its visible escape) and at most MAX_TEXT_CHARS long."""
    out = _SURROGATE.sub(_escape, text)
    if out != text and bounded is not None:
        bounded.add(f"{what or 'a string'} held lone surrogates (not Unicode), written as \\uXXXX escapes")
    if len(out) > MAX_TEXT_CHARS:
        out = out[:MAX_TEXT_CHARS]
        if bounded is not None:
            bounded.add(f"{what or 'a string'} of {len(text):,} characters cut to {MAX_TEXT_CHARS:,}")
    return out


def valid_json(value: Any, what: str = "", bounded: Bounded | None = None) -> Any:
    """value with every string (keys too) as valid Unicode; the strings' length is not capped here."""
    found = Bounded()
    try:
        out = _valid(value, found)
    except RecursionError:
        out = _TOO_DEEP
        found.add("nested too deeply")
    if found.notes and bounded is not None:
        said = "; ".join(found.notes)
        bounded.add(f"{what or 'a value'}: {said}")
    return out


def _valid(value: Any, found: Bounded) -> Any:
    if isinstance(value, str):
        fixed = _SURROGATE.sub(_escape, value)
        if fixed != value:
            found.add("lone surrogates (not Unicode) written as \\uXXXX escapes")
        return fixed
    if isinstance(value, dict):
        return {_valid(str(k), found): _valid(v, found) for k, v in value.items()}
    if isinstance(value, list):
        return [_valid(v, found) for v in value]
    return value


def json_size(value: Any) -> int:
    """Bytes of value as UTF-8 JSON (-1: not JSON)."""
    try:
        return len(json.dumps(value, ensure_ascii=False).encode("utf-8", "backslashreplace"))
    except (TypeError, ValueError, RecursionError):
        return -1


def bound_answer(value: Any, bounded: Bounded) -> tuple[Any, int]:
    """A tool's answer made valid Unicode and cut to MAX_ANSWER_BYTES, with its size as the site sent it."""
    value = valid_json(value, "the answer", bounded)
    size = json_size(value)
    if size <= MAX_ANSWER_BYTES:
        return value, size
    text = json.dumps(value, ensure_ascii=False)[: MAX_ANSWER_BYTES // 4]  # at most 4 bytes a character
    cap = f"{MAX_ANSWER_BYTES:,}-byte cap"
    bounded.add(f"the answer of {size:,} bytes cut to its first {len(text):,} characters ({cap})")
    return text, size


ANSWER_KEYS = ("result", "output")  # where a shim report (result) or a DevTools event (output) holds an answer


def bound_event(event: dict[str, Any]) -> dict[str, Any]:
    """A report of the page (the shim's, DevTools' WebMCP domain's) within bounds: an answer in it cut to its
    cap, every string valid Unicode; what was changed under ``bounds``."""
    bounded = Bounded()
    event = {**event}
    for key in ANSWER_KEYS:
        if key in event:
            event[key], _ = bound_answer(event[key], bounded)
    out: dict[str, Any] = valid_json(event, "the page's report", bounded)
    if bounded.notes:
        out["bounds"] = bounded.notes
    return out


def bound_schema(schema: Any, bounded: Bounded) -> Any:
    """An input schema the runner can use: valid Unicode, local $ref resolved (depth-limited), remote $ref not
    fetched, at most MAX_SCHEMA_BYTES."""
    if schema is None:
        return None
    schema = valid_json(schema, "the input schema", bounded)
    size = json_size(schema)
    if size > MAX_SCHEMA_BYTES:
        cap = f"{MAX_SCHEMA_BYTES:,}-byte cap"
        bounded.add(f'the input schema of {size:,} bytes is over the {cap}: read as {{"type": "object"}}')
        return {"type": "object"}
    if isinstance(schema, dict) and _has_ref(schema):
        resolved = _Resolver(schema, bounded).resolve(schema, ())
        schema = {k: v for k, v in resolved.items() if k not in ("$defs", "definitions")}  # nothing refers to them
    return schema


def _has_ref(value: Any) -> bool:
    if isinstance(value, dict):
        return "$ref" in value or any(_has_ref(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_ref(v) for v in value)
    return False


class _Resolver:
    """Every ``$ref`` of one schema replaced by its target inside the schema; nothing is ever fetched."""

    def __init__(self, root: dict[str, Any], bounded: Bounded) -> None:
        self.root = root
        self.bounded = bounded
        self.copied = 0

    def resolve(self, value: Any, path: tuple[str, ...]) -> Any:
        """value with its $refs replaced; path: the refs being resolved around it (a recursion shows there)."""
        if isinstance(value, list):
            return [self.resolve(v, path) for v in value]
        if not isinstance(value, dict):
            return value
        self.copied += 1
        ref = value.get("$ref")
        rest = {k: self.resolve(v, path) for k, v in value.items() if k != "$ref" or not isinstance(ref, str)}
        if not isinstance(ref, str):
            return rest
        return {**self._target(ref, path), **rest}

    def _target(self, ref: str, path: tuple[str, ...]) -> Any:
        if not ref.startswith("#"):
            self.bounded.add(f"$ref {ref!r} points outside the schema: never fetched, read as {{}} (anything)")
            return {}
        if ref in path:
            self.bounded.add(f"$ref {ref!r} refers to itself: resolved once, its reference to itself read as {{}}")
            return {}
        if len(path) >= MAX_REF_DEPTH or self.copied >= MAX_REF_NODES:
            self.bounded.add(f"$ref {ref!r}: resolved {MAX_REF_DEPTH} levels deep or {MAX_REF_NODES:,} nodes in "
                             "all, cut there to {}")  # fmt: skip
            return {}
        target = self._lookup(ref)
        if target is None:
            self.bounded.add(f"$ref {ref!r} does not resolve inside the schema: read as {{}} (anything)")
            return {}
        resolved = self.resolve(target, (*path, ref))
        return resolved if isinstance(resolved, dict) else {}

    def _lookup(self, ref: str) -> Any:
        """The target of a local JSON pointer (#, #/$defs/x); None when there is none."""
        if ref != "#" and not ref.startswith("#/"):
            return None  # an anchor (#name): not looked for
        node: Any = self.root
        for part in ref[2:].split("/") if ref != "#" else []:
            key = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                return None
        return node
