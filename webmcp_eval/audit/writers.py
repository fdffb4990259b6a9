"""The audit's views: console text, JSON, Markdown, a self-contained HTML page, and SARIF 2.1.0.

Every view renders the same ``AuditReport``; none judges anything itself.
"""

from __future__ import annotations

import html
import json
from typing import Any
from urllib.parse import urlsplit

from webmcp_eval.audit.engine import AuditReport, PageAudit
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


def _calls_html(p: PageAudit) -> list[str]:
    """Every smoke call: the input and why it was chosen, the answer, refused or accepted on what evidence,
    the writes and other hosts, the time."""
    e = html.escape
    if not any(p.calls.values()):
        return []
    rows = [
        "<h3>Smoke calls</h3><table><tr><th>tool</th><th>input (why)</th><th>arguments</th><th>answer</th>"
        "<th>bytes</th><th>verdict (evidence)</th><th>writes, other hosts</th><th>ms</th></tr>"
    ]
    for key, outcomes in p.calls.items():
        tool = key.rsplit(" ", 1)[-1]
        for o in outcomes:
            d = o.as_dict()
            verdict = o.verdict + (f"; led to {o.navigated_to}" if o.navigated_to else "")
            verdict += f"; made twice, its page lost the first time ({o.retried})" if o.retried else ""
            network = ", ".join(o.writes + o.other_hosts)
            rows.append(
                f"<tr><td>{e(tool)}</td><td>{e(d['input'])} ({'valid' if d['valid'] else 'invalid'})</td>"
                f"<td><code>{e(json.dumps(d['args'], ensure_ascii=False))}</code></td><td><code>{e(d['answer'])}</code>"
                f"</td><td>{d['result_bytes']}</td><td>{e(verdict)}</td><td>{e(network)}</td><td>{o.ms:.0f}</td></tr>"
            )
    rows.append("</table>")
    return rows


def html_report(report: AuditReport) -> str:
    e = html.escape
    rows = []
    known = sources(report)
    for p in report.pages:
        rows.append(f"<h2>{e(p.surface.url)} <small>{e(_page_score(p))}</small></h2><p>{e(_page_line(p))}</p>")
        if coverage_line(p):
            rows.append(f"<p>{e(coverage_line(p) or '')}</p>")
        if p.surface.frames:
            rows.append("<table><tr><th>frame</th><th>origin</th><th>allow</th><th>tools</th><th>refused</th></tr>")
            for fr in p.surface.frames:
                refused = ", ".join(f"{r.name}: {r.error}" for r in fr.refused)
                rows.append(
                    f"<tr><td>{e(fr.url)}</td><td>{'same' if fr.same_origin else 'cross'}</td>"
                    f"<td>{e(fr.allow or '')}</td><td>{e(', '.join(t.name for t in fr.tools))}</td>"
                    f"<td>{e(refused)}</td></tr>"
                )
            rows.append("</table>")
        if p.findings:
            rows.append("<table><tr><th>severity</th><th>rule</th><th>tool</th><th>message</th><th>where</th></tr>")
            for f in _sorted(p.findings):
                rows.append(
                    f"<tr class='{f.severity}'><td>{f.severity}</td><td><code>{e(f.rule)}</code></td>"
                    f"<td>{e(f.tool or '')}</td><td>{e(f.message)}</td>"
                    f"<td>{e(_where(f, source_of(f, known)))}</td></tr>"
                )
            rows.append("</table>")
        if p.smoke_note:
            rows.append(f"<p>{e(p.smoke_note)}</p>")
        rows += _calls_html(p)
    extra = [f"<li>{e(f.severity)} <code>{e(f.rule)}</code> {e(f.message)}</li>" for f in _sorted(report.findings)]
    style = (
        "body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse;margin:.5em 0}"
        "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}"
        ".error td:first-child{color:#b00;font-weight:bold}.warning td:first-child{color:#a60}"
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>WebMCP audit: {e(report.url)}</title>"
        f"<style>{style}</style></head><body><h1>WebMCP audit of {e(report.url)}</h1>"
        f"<p><strong>Score {report.score}/100</strong> ({e(_categories(report.categories))}) · "
        f"{e(_counts(report.all_findings()))} · "
        f"{report.seconds:.1f} s</p>{''.join(rows)}"
        + (f"<h2>Across pages</h2><ul>{''.join(extra)}</ul>" if extra else "")
        + "</body></html>\n"
    )


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


def _sarif_location(f: Finding, source: Source | None, origin: str, fallback: str) -> dict[str, Any]:
    """Where a finding is, as code scanning can place it: the script that registered the tool, at its line and
    column, where that script is a file of the site; else the page's file (a form's tool is in its page); the tool
    (and a form's selector) always as a logical location."""
    logical = [{"name": f.tool, "kind": "function"}] if f.tool else []
    if source is not None and source.selector:
        logical.append({"name": source.selector, "kind": "element"})
    location: dict[str, Any] = {"logicalLocations": logical} if logical else {}
    script = _site_path(source.url, origin) if source is not None and not source.selector else None
    if script is not None and source is not None:
        region = {"startLine": source.line, "startColumn": source.column} if source.line and source.column else {}
        artifact = {"uri": script, "uriBaseId": SITE_ROOT}
        location["physicalLocation"] = {"artifactLocation": artifact, **({"region": region} if region else {})}
    elif source is None or source.selector:  # a page-wide finding, or a form: the page's own file
        page = _site_path(f.page or fallback, origin)
        artifact = {"uri": page, "uriBaseId": SITE_ROOT} if page else {"uri": f.page or fallback}
        location["physicalLocation"] = {"artifactLocation": artifact}
    return location  # else a script of another origin or without a URL: the logical location alone


def sarif_report(report: AuditReport, tool_version: str = "0.1.0") -> dict[str, Any]:
    """SARIF 2.1.0: one run, every rule as a reportingDescriptor, each finding a result at the script that
    registered its tool (a file of the site, by line and column), else at its page's file or the tool itself."""
    rule_ids = sorted(RULES)
    index = {r: i for i, r in enumerate(rule_ids)}
    results = []
    known = sources(report)
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(report.url))
    for f in _sorted(report.all_findings()):
        source = source_of(f, known)
        location = _sarif_location(f, source, origin, report.url)
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
