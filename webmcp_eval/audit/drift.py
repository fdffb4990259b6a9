"""Cross-page drift: a tool name with another description or input schema on another page of the crawl."""

from __future__ import annotations

from webmcp_eval.audit.audit_report import PageAudit
from webmcp_eval.audit.config import AuditConfig
from webmcp_eval.audit.model import Finding, Frame, Tool


def drift_findings(pages: list[PageAudit], config: AuditConfig) -> list[Finding]:
    """A tool name with another description or schema on another page: one finding per tool, the pages listed
    (reported on the first page where it differs)."""
    if not config.enabled("cross-page-drift"):
        return []
    first: dict[str, tuple[str, Tool]] = {}
    drifted: dict[str, list[tuple[str, str, Frame, set[str]]]] = {}
    for audit in pages:
        for frame, tool in audit.surface.tools():
            if tool.name not in first:
                first[tool.name] = (audit.surface.url, tool)
                continue
            url, earlier = first[tool.name]
            what = {
                w
                for w, a, b in (
                    ("description", earlier.description, tool.description),
                    ("input schema", earlier.input_schema, tool.input_schema),
                )
                if a != b
            }
            if what and url != audit.surface.url:
                drifted.setdefault(tool.name, []).append((url, audit.surface.url, frame, what))
    out: list[Finding] = []
    for name, seen in drifted.items():
        url, page, frame, _ = seen[0]
        changed = sorted(set().union(*(w for *_, w in seen)))
        where = ", ".join(p for _, p, _, _ in seen)
        out.append(
            Finding(
                "cross-page-drift",
                config.severity("cross-page-drift"),
                f"{name} has another {' and '.join(changed)} than on {url} on {len(seen)} page(s): {where}",
                page,
                frame.url,
                name,
                "/description" if changed[0] == "description" else "/inputSchema",
            )
        )
    return out
