"""The audit as SARIF 2.1.0: each finding at the script of the site that registered its tool, else at the tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from webmcp_eval.audit.audit_report import AuditReport
from webmcp_eval.audit.model import Finding, Source
from webmcp_eval.audit.rulebook import RULES
from webmcp_eval.audit.writers import _sorted, source_of, sources

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


SITE_ROOT = "SITEROOT"  # the uriBaseId of the audited origin: a file of the site is a path under it


def _site_path(url: str, origin: str) -> str | None:
    """The path of a URL under the audited origin, as a file of the site (None: another origin, or no URL); a
    folder's URL (``/shop/``) is its index.html, the file a static server answers it with."""
    parts = urlsplit(url)
    if not url or f"{parts.scheme}://{parts.netloc}" != origin or parts.scheme not in ("http", "https"):
        return None
    path = parts.path.lstrip("/")
    return path + "index.html" if not path or path.endswith("/") else path


def _artifact(site_path: str | None, site_root: Path | None) -> dict[str, str] | None:
    """A file of the site as SARIF names it: with ``site_root`` (the repository's folder the site is served from),
    its path in the repository, from the working folder (the checkout), as code scanning annotates a pull request,
    or None when the repository has no such file; without, its path under the audited origin (SITEROOT)."""
    if site_path is None:
        return None
    if site_root is None:
        return {"uri": site_path, "uriBaseId": SITE_ROOT}
    file = site_root / site_path
    if not file.is_file():
        return None
    try:
        return {"uri": file.resolve().relative_to(Path.cwd().resolve()).as_posix()}
    except ValueError:
        return {"uri": file.as_posix()}


def _sarif_location(
    f: Finding, source: Source | None, origin: str, fallback: str, site_root: Path | None = None
) -> dict[str, Any]:
    """Where a finding is, as code scanning can place it: the script that registered the tool, at its line and
    column, where that script is a file of the site (of the repository, with ``site_root``); else the page's file
    (a form's tool is in its page); the tool (and a form's selector) always as a logical location."""
    logical = [{"name": f.tool, "kind": "function"}] if f.tool else []
    if source is not None and source.selector:
        logical.append({"name": source.selector, "kind": "element"})
    location: dict[str, Any] = {"logicalLocations": logical} if logical else {}
    script = _site_path(source.url, origin) if source is not None and not source.selector else None
    if script is not None and source is not None:
        artifact = _artifact(script, site_root)
        region = {"startLine": source.line, "startColumn": source.column} if source.line and source.column else {}
        if artifact is not None:
            location["physicalLocation"] = {"artifactLocation": artifact, **({"region": region} if region else {})}
    elif source is None or source.selector:  # a page-wide finding, or a form: the page's own file
        page = _site_path(f.page or fallback, origin)
        artifact = _artifact(page, site_root)
        if artifact is None and site_root is None:
            artifact = {"uri": f.page or fallback}
        if artifact is not None:
            location["physicalLocation"] = {"artifactLocation": artifact}
    return location  # else a script of another origin, without a URL or not in the repository: the tool alone


def sarif_report(report: AuditReport, tool_version: str = "0.1.0", site_root: Path | None = None) -> dict[str, Any]:
    """SARIF 2.1.0: one run, every rule as a reportingDescriptor, each finding a result at the script that
    registered its tool (a file of the site, by line and column; with ``site_root``, the folder of the repository
    the site is served from, that file in the repository), else at its page's file or the tool itself."""
    rule_ids = sorted(RULES)
    index = {r: i for i, r in enumerate(rule_ids)}
    results = []
    known = sources(report)
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(report.url))
    for f in _sorted(report.all_findings()):
        source = source_of(f, known)
        location = _sarif_location(f, source, origin, report.url, site_root)
        properties = {k: v for k, v in (("frame", f.frame), ("tool", f.tool), ("pointer", f.pointer)) if v}
        if source is not None:
            properties["registered_at"] = str(source)
        results.append(
            {
                "ruleId": f.rule,
                "ruleIndex": index[f.rule],
                "level": f.severity,
                "message": {"text": f.message},
                "locations": [location],
                "properties": properties,
            }
        )
    rules = [
        {
            "id": r,
            "shortDescription": {"text": RULES[r].summary},
            "defaultConfiguration": {"level": RULES[r].severity},
            "properties": {"category": RULES[r].category, "weight": RULES[r].weight},
        }
        for r in rule_ids
    ]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "webmcp-eval audit",
                        "version": tool_version,
                        "informationUri": "https://github.com/webmachinelearning/webmcp",
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {SITE_ROOT: {"uri": origin + "/"}},
                "results": results,
                "invocations": [{"executionSuccessful": not any(p.surface.error for p in report.pages)}],
            }
        ],
    }
