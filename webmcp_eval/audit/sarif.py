"""The audit as SARIF 2.1.0: each finding by name (its tool, a form's selector, its page) and, where the site is a
folder of the repository (``--site-root``), at the repository's file: the script that registered its tool, at its
line and column, or the page's file. A URL is never an artifact: code scanning knows only the repository's files."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from webmcp_eval.audit.audit_report import AuditReport
from webmcp_eval.audit.model import Finding, Source
from webmcp_eval.audit.rulebook import RULES
from webmcp_eval.audit.writers import _sorted, source_of, sources

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _site_path(url: str, origin: str) -> str | None:
    """The path of a URL under the audited origin, as a file of the site (None: another origin, or no URL); a
    folder's URL (``/shop/``) is its index.html, the file a static server answers it with."""
    parts = urlsplit(url)
    if not url or f"{parts.scheme}://{parts.netloc}" != origin or parts.scheme not in ("http", "https"):
        return None
    path = parts.path.lstrip("/")
    return path + "index.html" if not path or path.endswith("/") else path


def _artifact(url: str, origin: str, site_root: Path | None) -> dict[str, str] | None:
    """The repository's file a URL of the site is, by its path from the working folder (the checkout), as code
    scanning annotates a pull request; None without ``site_root`` (the repository's folder the site is served
    from), for another origin, or when the repository has no such file: a URL is never named as an artifact."""
    site_path = _site_path(url, origin)
    if site_root is None or site_path is None:
        return None
    file = site_root / site_path
    if not file.is_file():
        return None
    try:
        return {"uri": file.resolve().relative_to(Path.cwd().resolve()).as_posix()}
    except ValueError:
        return {"uri": file.as_posix()}


def _logical(f: Finding, source: Source | None, page: str) -> dict[str, str]:
    """The finding's place by name: its tool (a function registered by a script; a form's tool an element, its
    selector the fully qualified name), else its page (a resource, by its URL)."""
    if not f.tool:
        return {"name": page, "kind": "resource"}
    if source is not None and source.selector:
        return {"name": f.tool, "kind": "element", "fullyQualifiedName": source.selector}
    return {"name": f.tool, "kind": "function"}


def _sarif_location(
    f: Finding, source: Source | None, origin: str, fallback: str, site_root: Path | None = None
) -> dict[str, Any]:
    """Where a finding is: always by name (its tool, a form's selector, or its page); with ``site_root``, also the
    repository's file: the script that registered the tool, at its line and column, or the page's file for a form
    or a page-wide finding. A script of another origin, without a URL, or not a file of the repository: by name
    alone."""
    page = f.page or fallback
    location: dict[str, Any] = {"logicalLocations": [_logical(f, source, page)]}
    if source is not None and not source.selector:
        artifact = _artifact(source.url, origin, site_root)
        region = {"startLine": source.line, "startColumn": source.column} if source.line and source.column else {}
    else:  # a page-wide finding, or a form: the page's own file
        artifact, region = _artifact(page, origin, site_root), {}
    if artifact is not None:
        location["physicalLocation"] = {"artifactLocation": artifact, **({"region": region} if region else {})}
    return location


def sarif_report(report: AuditReport, tool_version: str = "0.1.0", site_root: Path | None = None) -> dict[str, Any]:
    """SARIF 2.1.0: one run, every rule as a reportingDescriptor, each finding a result named by its tool (or
    page) and, with ``site_root`` (the folder of the repository the site is served from), at the repository's file
    that registered its tool (by line and column) or its page's file, where the repository has that file."""
    rule_ids = sorted(RULES)
    index = {r: i for i, r in enumerate(rule_ids)}
    results = []
    known = sources(report)
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(report.url))
    for f in _sorted(report.all_findings()):
        source = source_of(f, known)
        location = _sarif_location(f, source, origin, report.url, site_root)
        properties = {k: v for k, v in (("page", f.page or report.url), ("frame", f.frame), ("tool", f.tool),
                                        ("pointer", f.pointer)) if v}  # fmt: skip
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
                "results": results,
                "invocations": [{"executionSuccessful": not any(p.surface.error for p in report.pages)}],
            }
        ],
    }
