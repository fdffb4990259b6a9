"""The audit's views: console text, JSON, Markdown and JUnit XML; the self-contained HTML page is html_page.py's,
SARIF 2.1.0 sarif.py's.

Every view renders the same ``AuditReport``; none judges anything itself.
"""

from __future__ import annotations

import json
from typing import Any

from webmcp_eval.audit.audit_report import AuditReport, PageAudit
from webmcp_eval.audit.model import Finding, Source
from webmcp_eval.audit.rulebook import RULES
from webmcp_eval.report.sanitise import markdown

_ORDER = {"error": 0, "warning": 1, "note": 2}


def _sorted(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (_ORDER[f.severity], f.rule, f.tool or "", f.message))


def sources(report: AuditReport) -> dict[tuple[str, str, str], Source]:
    """Where each tool of each page was registered (or the page tried to: a refused one), by (page, frame URL,
    tool name)."""
    out = {
        (p.surface.url, fr.url, str(r.name)): r.source
        for p in report.pages
        for fr in p.surface.frames
        for r in fr.refused
        if r.source is not None
    }
    out.update(
        {
            (p.surface.url, fr.url, t.name): t.source
            for p in report.pages
            for fr in p.surface.frames
            for t in fr.tools
            if t.source is not None
        }
    )
    return out


def source_of(f: Finding, known: dict[tuple[str, str, str], Source]) -> Source | None:
    """The registration source of a finding's tool (None: no tool, or the shim did not see it registered)."""
    if not f.tool:
        return None
    found = known.get((f.page, f.frame, f.tool))
    return found or next((s for (page, _, name), s in known.items() if page == f.page and name == f.tool), None)


def _where(f: Finding, source: Source | None = None) -> str:
    bits = [
        f"tool {f.tool}" if f.tool else "",
        f"registered at {source}" if source else "",
        f"frame {f.frame}" if f.frame else "",
        f.pointer,
    ]
    return ", ".join(b for b in bits if b)


def _counts(findings: list[Finding]) -> str:
    n = {s: sum(1 for f in findings if f.severity == s) for s in _ORDER}
    return f"{n['error']} error(s), {n['warning']} warning(s), {n['note']} note(s)"


def _page_score(p: PageAudit) -> str:
    if p.score is None:
        return "not scored (no tools)"
    return f"score {p.score} ({_categories(p.categories)})"


def _categories(categories: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in categories.items()) or "nothing scored"


def _page_line(p: PageAudit) -> str:
    s = p.surface
    if s.error:
        return f"{s.url}: not audited: {s.error}"
    frames = len(s.frames)
    first = p.timeline.first_tool_ms if p.timeline else None
    bits = [
        f"{s.tool_count()} tool(s) in {frames} frame(s)",
        _page_score(p),
        f"first tool {first:.0f} ms" if first is not None else "no tool",
        f"{p.seconds:.1f} s",
    ]
    if p.calls:
        bits.insert(1, f"{sum(len(c) for c in p.calls.values())} smoke call(s)")
    return f"{s.url}: " + ", ".join(bits)


def coverage_line(p: PageAudit) -> str | None:
    """How much of the page's surface the suite's cases touch, and which tools they leave alone."""
    if p.coverage is None:
        return None
    touched = [c for c in p.coverage if c.touched]
    params = [sum(c.params[i] for c in p.coverage) for i in (0, 1)]
    values = [sum(c.values[i] for c in p.coverage) for i in (0, 1)]
    untouched = [c.tool for c in p.coverage if not c.touched]
    return (
        f"coverage: {len(touched)} of {len(p.coverage)} tool(s), {params[0]} of {params[1]} parameter(s), "
        f"{values[0]} of {values[1]} enum value(s) called or asserted by the suite's cases"
        + (f"; no case touches {', '.join(untouched)}" if untouched else "")
    )


def text_report(report: AuditReport) -> str:
    lines: list[str] = []
    known = sources(report)
    for p in report.pages:
        lines.append(_page_line(p))
        if coverage_line(p):
            lines.append(f"  {coverage_line(p)}")
        if p.smoke_note:
            lines.append(f"  {p.smoke_note}")
        for f in _sorted(p.findings):
            where = _where(f, source_of(f, known))
            lines.append(f"  {f.severity:<7} {f.rule:<30} {f.message}" + (f"  [{where}]" if where else ""))
    for f in _sorted(report.findings):
        if f.rule != "contract-changed":
            lines.append(f"{f.severity:<7} {f.rule:<30} {f.message}  [{f.page}]")
    if report.contract_changes:
        lines.append("contract changes (not accepted; --update-contract accepts them):")
        lines += [f"  - {c}" for c in report.contract_changes]
    if report.contract_written:
        lines.append(f"contract written: {report.contract_written}")
    lines.append(
        f"score {report.score}/100 ({_categories(report.categories)}) over {len(report.pages)} page(s); "
        f"{_counts(report.all_findings())}; "
        f"{report.seconds:.1f} s"
    )
    return "\n".join(lines) + "\n"


def _finding_json(f: Finding, known: dict[tuple[str, str, str], Source]) -> dict[str, Any]:
    source = source_of(f, known)
    return {**f.as_dict(), "source": source.as_dict() if source else None}


def json_report(report: AuditReport) -> dict[str, Any]:
    known = sources(report)
    return {
        "url": report.url,
        "score": report.score,
        "categories": report.categories,
        "counts": report.counts(),
        "exit_code": report.exit_code,
        "seconds": report.seconds,
        "pages": [
            {
                "url": p.surface.url,
                "error": p.surface.error,
                "score": p.score,
                "categories": p.categories,
                "seconds": p.seconds,
                "load_ms": p.surface.load_ms,
                "frames": [
                    {
                        "url": fr.url,
                        "origin": fr.origin,
                        "main": fr.main,
                        "same_origin": fr.same_origin,
                        "allow": fr.allow,
                        "tools": [t.name for t in fr.tools],
                        "kinds": {t.name: t.kind for t in fr.tools},
                        "sources": {t.name: t.source.as_dict() if t.source else None for t in fr.tools},
                        "refused": [
                            {
                                "name": r.name,
                                "error": r.error,
                                "kind": r.kind,
                                "source": r.source.as_dict() if r.source else None,
                            }
                            for r in fr.refused
                        ],
                    }
                    for fr in p.surface.frames
                ],
                "timeline": None
                if p.timeline is None
                else {"first_tool_ms": p.timeline.first_tool_ms, "late": p.timeline.late, "churn": p.timeline.churn},
                "calls": {k: [o.as_dict() for o in v] for k, v in p.calls.items()},
                "smoke_note": p.smoke_note,
                "coverage": None
                if p.coverage is None
                else [
                    {"tool": c.tool, "touched": c.touched, "params": list(c.params), "enum_values": list(c.values)}
                    for c in p.coverage
                ],
                "findings": [_finding_json(f, known) for f in _sorted(p.findings)],
            }
            for p in report.pages
        ],
        "findings": [_finding_json(f, known) for f in _sorted(report.findings)],
        "contract_changes": report.contract_changes,
    }


def json_text(report: AuditReport) -> str:
    return json.dumps(json_report(report), indent=2, ensure_ascii=False, default=str) + "\n"


def _md(text: str) -> str:
    return markdown(text)


def markdown_report(report: AuditReport) -> str:
    out = [
        f"## WebMCP audit of {report.url}",
        "",
        f"**Score {report.score}/100** ({_categories(report.categories)}) · {len(report.pages)} page(s) · "
        f"{_counts(report.all_findings())}",
        "",
        "| page | tools | score | findings | seconds |",
        "|---|---|---|---|---|",
    ]
    for p in report.pages:
        tools = "not audited: " + _md(p.surface.error) if p.surface.error else str(p.surface.tool_count())
        out.append(
            f"| {_md(p.surface.url)} | {tools} | {'-' if p.score is None else p.score} | {_counts(p.findings)} "
            f"| {p.seconds:.1f} |"
        )
    out += [f"\n{_md(p.surface.url)}: {coverage_line(p)}" for p in report.pages if coverage_line(p)]
    findings = _sorted(report.all_findings())
    known = sources(report)
    if findings:
        out += ["", "| severity | rule | tool | registered at | message |", "|---|---|---|---|---|"]
        out += [
            f"| {f.severity} | `{f.rule}` | {_md(f.tool or '')} | {_md(str(source_of(f, known) or ''))} "
            f"| {_md(f.message)} |"
            for f in findings
        ]
    return "\n".join(out) + "\n"


def junit_report(report: AuditReport, fail_on: str = "error") -> str:
    """JUnit XML: one test suite per page, one test case per rule of the rulebook. A case fails with the rule's
    findings at fail_on or worse; its lesser findings are its output; a rule whose evidence the page did not
    give (no smoke calls, no contract, ...) or that is turned off is skipped."""
    import xml.etree.ElementTree as ET

    from webmcp_eval.report.sanitise import xml

    levels = list(_ORDER)[: list(_ORDER).index(fail_on) + 1]
    root = ET.Element("testsuites", name="webmcp-eval audit")
    for p in report.pages:
        mine = p.findings + [f for f in report.findings if f.page == p.surface.url]
        counted = {a.rule for a in p.audits}
        suite = ET.SubElement(root, "testsuite", name=xml(p.surface.url))
        failures = skipped = 0
        for rule in sorted(RULES):
            case = ET.SubElement(suite, "testcase", classname=xml(p.surface.url), name=rule)
            found = _sorted([f for f in mine if f.rule == rule])
            failing = [f for f in found if f.severity in levels]
            if failing:
                failures += 1
                text = "\n".join(
                    f"{f.severity}: {f.message}" + (f" [{_where(f)}]" if _where(f) else "") for f in failing
                )
                ET.SubElement(case, "failure", message=xml(failing[0].message), type=failing[0].severity).text = xml(
                    text
                )
            elif rule not in counted and not found:
                skipped += 1
                ET.SubElement(case, "skipped", message="not counted on this page (no evidence for it, or off)")
            rest = [f for f in found if f not in failing]
            if rest:
                ET.SubElement(case, "system-out").text = xml("\n".join(f"{f.severity}: {f.message}" for f in rest))
        suite.set("tests", str(len(RULES)))
        suite.set("failures", str(failures))
        suite.set("skipped", str(skipped))
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
