"""The reviewed contract of a surface, and the readable difference of a later audit from it.

``--update-contract FILE`` writes, per page (by path) and tool: description,
input schema, annotations (one spelling: readOnlyHint, untrustedContentHint),
kind and frame; sorted with stable keys, so a change reads well in review. A
later audit compares the live surface with the file: a tool added or removed,
a description changed, a parameter added, removed or retyped, a required list
or an annotation changed; each change not accepted into the file is a
``contract-changed`` finding.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from webmcp_eval.audit.config import AuditConfig
from webmcp_eval.audit.model import Finding, Frame, PageSurface, Tool
from webmcp_eval.data_file import FileProblem, load_json
from webmcp_eval.errors import InvalidInput

VERSION = 1
_SPELLING = {"readOnly": "readOnlyHint", "untrustedContent": "untrustedContentHint"}


class ContractError(InvalidInput, ValueError):
    """A contract file that cannot be read; the message is one line naming it."""


def _frame_key(frame: Frame) -> str:
    if frame.main:
        return "top"
    path = urlsplit(frame.url).path or "/"
    return f"{'same' if frame.same_origin else 'cross'}-origin {path}"


def _annotations(tool: Tool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in tool.annotations.items():
        if value is not None and value is not False:
            out[_SPELLING.get(key, key)] = value
    return dict(sorted(out.items()))


def contract_of(pages: list[PageSurface]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for page in pages:
        if page.error:
            continue
        tools = {
            tool.name: {
                "annotations": _annotations(tool),
                "description": tool.description,
                "frame": _frame_key(frame),
                "inputSchema": tool.input_schema,
                "kind": tool.kind,
            }
            for frame, tool in page.tools()
        }
        out[urlsplit(page.url).path or "/"] = {"tools": dict(sorted(tools.items()))}
    return {"contract": VERSION, "pages": dict(sorted(out.items()))}


def write_contract(path: Path, pages: list[PageSurface]) -> None:
    path.write_text(
        json.dumps(contract_of(pages), indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
    )


def read_contract(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise ContractError(f"{path}: no such contract file (write one with --update-contract)")
    try:
        data = load_json(path)  # depth-limited: a file nested 100,000 deep is a line, not a crash
    except FileProblem as err:
        raise ContractError(f"{err.at(path)} (rewrite it with --update-contract)") from None
    pages = data.get("pages") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("contract") != VERSION or not isinstance(pages, dict):
        raise ContractError(f"{path}: not a contract file of version {VERSION} (rewrite it with --update-contract)")
    for key, page in pages.items():
        if not isinstance(page, dict) or not isinstance(page.get("tools"), dict):
            raise ContractError(f"{path}: pages.{key}: expected {{tools: {{...}}}}")
    return data


def _params(schema: object) -> dict[str, Any]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


def _type(sub: Any) -> str:
    if not isinstance(sub, dict):
        return "?"
    kind = sub.get("type", "any")
    return "|".join(kind) if isinstance(kind, list) else str(kind)


def tool_changes(name: str, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    changes: list[str] = []
    if old.get("description") != new.get("description"):
        changes.append(f"{name}: description changed: {old.get('description')!r} -> {new.get('description')!r}")
    before, after = _params(old.get("inputSchema")), _params(new.get("inputSchema"))
    for param in sorted(set(after) - set(before)):
        changes.append(f"{name}: parameter {param} added ({_type(after[param])})")
    for param in sorted(set(before) - set(after)):
        changes.append(f"{name}: parameter {param} removed")
    for param in sorted(set(before) & set(after)):
        if _type(before[param]) != _type(after[param]):
            changes.append(f"{name}: parameter {param} retyped {_type(before[param])} -> {_type(after[param])}")
        elif before[param] != after[param]:
            changes.append(f"{name}: parameter {param} changed its schema")
    old_schema, new_schema = old.get("inputSchema"), new.get("inputSchema")
    old_req = sorted(old_schema.get("required") or []) if isinstance(old_schema, dict) else []
    new_req = sorted(new_schema.get("required") or []) if isinstance(new_schema, dict) else []
    if old_req != new_req:
        changes.append(f"{name}: required {old_req} -> {new_req}")
    old_ann, new_ann = old.get("annotations") or {}, new.get("annotations") or {}
    for key in sorted(set(old_ann) | set(new_ann)):
        if old_ann.get(key) != new_ann.get(key):
            changes.append(f"{name}: annotation {key} {old_ann.get(key)!r} -> {new_ann.get(key)!r}")
    for key in ("kind", "frame"):
        if old.get(key) != new.get(key):
            changes.append(f"{name}: {key} {old.get(key)!r} -> {new.get(key)!r}")
    return changes


def contract_diff(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    """(page path, tool or None, change) for every difference, pages and tools sorted."""
    out: list[tuple[str, str | None, str]] = []
    old_pages, new_pages = old["pages"], new["pages"]
    for path in sorted(set(old_pages) | set(new_pages)):
        if path not in new_pages:
            out.append((path, None, f"page {path} not audited this time (in the contract)"))
            continue
        if path not in old_pages:
            out.append((path, None, f"page {path} is new (not in the contract)"))
            continue
        before, after = old_pages[path]["tools"], new_pages[path]["tools"]
        for name in sorted(set(before) | set(after)):
            if name not in after:
                out.append((path, name, f"tool {name} removed"))
            elif name not in before:
                out.append((path, name, f"tool {name} added"))
            else:
                out.extend((path, name, change) for change in tool_changes(name, before[name], after[name]))
    return out


def contract_findings(old: dict[str, Any], pages: list[PageSurface], config: AuditConfig) -> list[Finding]:
    if not config.enabled("contract-changed"):
        return []
    by_path = {urlsplit(p.url).path or "/": p.url for p in pages}
    return [
        Finding(
            "contract-changed",
            config.severity("contract-changed"),
            f"{path}: {change}",
            by_path.get(path, path),
            "",
            tool,
        )
        for path, tool, change in contract_diff(old, contract_of(pages))
    ]
