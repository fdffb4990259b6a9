"""The audit's static rules where there is no live page: on a suite's catalog (``validate``) and on what ``init``
read. A catalog holds names and input schemas; descriptions come from a ``schema.json`` beside it when there is
one. Rules about the live page (frames, refusals, script errors, an empty page) need the page and are left to
``audit``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from webmcp_eval.audit.config import AuditConfig
from webmcp_eval.audit.model import Finding, Frame, PageSurface, Tool
from webmcp_eval.audit.rules import lint
from webmcp_eval.data_file import FileProblem, load_json

if TYPE_CHECKING:
    from webmcp_eval.suite.case import Case
    from webmcp_eval.suite.folder import Suite
    from webmcp_eval.suite.loader import Problem

PAGE_ONLY = {"no-tools", "page-script-error", "page-unreachable", "frame-cross-origin-without-allow"}
NEED_DESCRIPTIONS = {"description-missing", "description-length", "description-similar"}


def lint_catalog(
    catalog: dict[str, Any], described: list[dict[str, Any]] | None = None, config: AuditConfig | None = None
) -> list[Finding]:
    """Findings per route of a catalog ({routes: {route: {tool: schema}}}); page is the route. A tool the catalog
    records as a form whose schema the browser built (kinds: {route: {tool: {kind, schema_derived}}}) is judged as
    the audit judges it: the rules about what an author wrote skip that schema."""
    config = config or AuditConfig()
    descriptions = {t["name"]: t.get("description") or "" for t in described or []}
    skip = PAGE_ONLY | (set() if described is not None else NEED_DESCRIPTIONS)
    kinds: dict[str, Any] = catalog["kinds"] if isinstance(catalog.get("kinds"), dict) else {}
    findings: list[Finding] = []
    for route, tools in sorted((catalog.get("routes") or {}).items()):
        known: dict[str, Any] = kinds[route] if isinstance(kinds.get(route), dict) else {}
        frame = Frame(url=route, origin="", tools=[_tool(n, descriptions.get(n, ""), s, known.get(n))
                                                   for n, s in (tools or {}).items()])  # fmt: skip
        findings += [f for f in lint(PageSurface(route, [frame]), config) if f.rule not in skip]
    return findings


def _tool(name: str, description: str, schema: Any, kind: Any) -> Tool:
    """A catalog's tool, with its kind and whether the browser built its schema, when the catalog says."""
    tool = Tool(name, description, schema)
    if isinstance(kind, dict):
        tool.kind = str(kind.get("kind") or "unknown")
        tool.schema_derived = kind.get("schema_derived") is True
    return tool


def lint_listing(listing: list[Any], config: AuditConfig | None = None) -> list[Finding]:
    """Findings on what init read (webmcp_eval/play/page/surface/discover.py ``RouteTools``): every frame's tools and
    refusals, the engine's own model, judged as the audit judges it."""
    config = config or AuditConfig()
    findings: list[Finding] = []
    for route in listing:
        if route.error:
            continue
        frames = [f for f in route.frames if f.main or f.tools or f.refused]
        findings += [
            f
            for f in lint(PageSurface(route.url, frames), config)
            if f.rule not in PAGE_ONLY - {"frame-cross-origin-without-allow"}
        ]
    return findings


def finding_line(f: Finding) -> str:
    where = " ".join(x for x in (f.page, f.tool or "", f.pointer) if x)
    return f"audit {f.severity}: {where}: {f.rule}: {f.message}"


def catalog_audit(paths: list[str], catalog: str | None, suite_dir: str | None) -> tuple[list[str], list[Problem]]:
    """For validate: one line per finding on the suite's catalog, and a problem for a bad audit setting."""
    from pathlib import Path

    from webmcp_eval.audit.config import AuditConfigError, parse_audit_config
    from webmcp_eval.suite.folder import SuiteError, find_suite
    from webmcp_eval.suite.loader import Problem
    from webmcp_eval.suite.peer_files import SCHEMA_FILE, PeerFileError, read_schema_tools

    try:
        suite = find_suite([Path(p) for p in paths or ["cases"]], Path(suite_dir) if suite_dir else None)
    except SuiteError:
        return [], []  # validate has said what is wrong with the suite
    try:
        config = parse_audit_config(suite.config.audit)
    except AuditConfigError as err:
        line = suite.where(*err.field.split(".")).rsplit(":", 1)[-1]
        return [], [Problem(str(suite.config_file), int(line), err.field, str(err).split(": ", 1)[1], False)]
    path = Path(catalog) if catalog else suite.catalog_path()[0]
    if path is None or not path.is_file():
        return [], []
    try:
        data = load_json(path)  # the one loader: a file nested past the stack is refused, never raised
        schema = path.with_name(SCHEMA_FILE)
        described = read_schema_tools(schema) if schema.is_file() else None
    except (FileProblem, PeerFileError):
        return [], []  # validate reports an unreadable catalog itself
    if not isinstance(data, dict):
        return [], []  # ... and one that is not a catalog
    return [finding_line(f) for f in lint_catalog(data, described, config)] + _coverage(suite, data), []


def _coverage(suite: Suite, catalog: dict[str, Any]) -> list[str]:
    """Suite health: the catalog's tools that no case calls or asserts."""
    from webmcp_eval.audit.coverage import suite_coverage

    if suite.folder is None:
        return []
    line = coverage_summary(suite_coverage(suite).tools, catalog)
    return [line] if line else []


def coverage_summary(touched: set[str], catalog: dict[str, Any]) -> str | None:
    """One line: how many of the catalog's tools the cases call or assert, and which none touches."""
    names = sorted({n for tools in (catalog.get("routes") or {}).values() for n in (tools or {})})
    if not names:
        return None
    left = [n for n in names if n not in touched]
    line = f"coverage: {len(names) - len(left)} of {len(names)} catalog tool(s) called or asserted by the cases"
    return line + (f"; no case touches {', '.join(left)}" if left else "")


def run_coverage_line(cases: list[Case], suite: Suite | None, catalog_arg: str | None) -> str | None:
    """For run: the coverage of the cases it played, against the suite's catalog (None without one)."""
    from pathlib import Path

    from webmcp_eval.audit.coverage import case_coverage

    path = Path(catalog_arg) if catalog_arg else (suite.catalog_path()[0] if suite is not None else None)
    if path is None or not path.is_file():
        return None
    try:
        catalog = load_json(path)
    except FileProblem:
        return None
    if not isinstance(catalog, dict):
        return None
    return coverage_summary(case_coverage(cases).tools, catalog)
