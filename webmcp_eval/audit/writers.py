"""The audit's views: console text, JSON, Markdown, a self-contained HTML page, and SARIF 2.1.0.

Every view renders the same ``AuditReport``; none judges anything itself.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from webmcp_eval.audit.engine import AuditReport, PageAudit
from webmcp_eval.audit.model import Finding, Frame, Source, Tool
from webmcp_eval.audit.rulebook import RULES
from webmcp_eval.audit.smoke import CallOutcome
from webmcp_eval.report.rendering import environment
from webmcp_eval.report.sanitise import markdown
from webmcp_eval.report.timeline import TimeEvent, TimeFigure, time_figure

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


# --------------------------------------------------------------------------- the HTML page

HTML_TEMPLATE = "audit.html.j2"
SHORT_ANSWER = 140  # characters of an answer on a smoke call's one line
FULL_ANSWER = 65536  # characters of the full answer kept in its folded block
HOW = {
    "imperative": "registerTool() in the page's script",
    "declarative": "a <form toolname> in the page",
    "unknown": "the browser's listing (how is unknown)",
}


@dataclass
class FindingView:
    severity: str
    message: str
    page: str
    where: str
    tool_anchor: str | None  # the tool's card, when the finding names a tool the page has


@dataclass
class RuleGroup:
    rule: str
    summary: str
    category: str
    severity: str  # the worst of its findings
    findings: list[FindingView]


@dataclass
class ToolCard:
    anchor: str
    name: str
    kind: str
    description: str
    annotations: list[tuple[str, str]]
    page_annotations: str | None  # as the page passed them, when that differs from what the browser lists
    schema: str
    schema_derived: bool
    fields: list[str]
    registered_by: str
    frame: str
    path: str
    findings: int
    first_ms: float | None  # its first registration, ms after the load event
    churn: int


@dataclass
class SmokeCall:
    verdict: str  # accepted, refused, timed out, not run
    detail: str  # the verdict with its evidence, where the call led and why it was made twice
    input: str
    valid: bool
    args: str
    evidence: str | None
    answer_short: str
    answer_full: str | None  # None: the short answer is all of it
    answer_bytes: int
    ms: float
    network: list[str]


@dataclass
class SmokeTool:
    tool: str
    calls: list[SmokeCall]
    counts: dict[str, int]


@dataclass
class PageView:
    audit: PageAudit
    anchor: str
    facts: str
    tools: list[ToolCard]
    frames: list[Frame]
    smoke: list[SmokeTool]
    coverage: str | None
    timeline: TimeFigure | None
    timeline_note: str
    counts: dict[str, int] = field(default_factory=dict)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:60]


def _dump(value: object, indent: int | None = 2) -> str:
    try:
        return json.dumps(value, indent=indent, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _answer(o: CallOutcome) -> tuple[str, str | None]:
    """The answer's one line (cut at SHORT_ANSWER) and its full text when the line is not all of it."""
    if o.timed_out:
        return "no answer (timed out)", None
    if o.error is not None:
        full = f"threw: {o.error}"
    elif isinstance(o.result, str):
        full = o.result
    else:
        full = _dump(o.result)
    line = " ".join(
        _dump(o.result, None).split() if o.error is None and not isinstance(o.result, str) else full.split()
    )
    if len(line) <= SHORT_ANSWER:
        return line, None  # the one line is all of it
    short = line if len(line) <= SHORT_ANSWER else line[: SHORT_ANSWER - 1] + "…"
    if len(full) > FULL_ANSWER:
        full = full[:FULL_ANSWER] + f"\n… ({len(full) - FULL_ANSWER} more characters)"
    return short, full


def _smoke_call(o: CallOutcome) -> SmokeCall:
    d = o.as_dict()
    short, full = _answer(o)
    verdict = "not run" if o.not_run else "timed out" if o.timed_out else "refused" if d["refused"] else "accepted"
    detail = o.verdict + (f"; led to {o.navigated_to}" if o.navigated_to else "")
    detail += f"; made twice, its page lost the first time ({o.retried})" if o.retried else ""
    return SmokeCall(
        verdict=verdict,
        detail=detail,
        input=o.input.label,
        valid=o.input.valid,
        args=_dump(o.input.args),
        evidence=d["evidence"],
        answer_short=short,
        answer_full=full,
        answer_bytes=d["result_bytes"],
        ms=o.ms,
        network=o.writes + o.other_hosts,
    )


def _smoke(p: PageAudit) -> list[SmokeTool]:
    out = []
    for key, outcomes in p.calls.items():
        calls = [_smoke_call(o) for o in outcomes]
        counts = {v: sum(1 for c in calls if c.verdict == v) for v in ("accepted", "refused", "timed out", "not run")}
        out.append(SmokeTool(key.rsplit(" ", 1)[-1], calls, counts))
    return out


def _first_registrations(frame: Frame) -> dict[str, float]:
    firsts: dict[str, float] = {}
    for e in sorted(frame.events, key=lambda e: e.t_ms):
        if e.type == "register":
            firsts.setdefault(e.name, e.t_ms)
    return firsts


def _card(anchor: str, frame: Frame, tool: Tool, findings: int, churn: int) -> ToolCard:
    given = tool.page_annotations
    return ToolCard(
        anchor=anchor,
        name=tool.name,
        kind=tool.kind,
        description=tool.description,
        annotations=[(k, _dump(v, None)) for k, v in tool.annotations.items()],
        page_annotations=_dump(given) if given not in (None, tool.annotations) else None,
        schema=_dump(tool.input_schema),
        schema_derived=tool.schema_derived,
        fields=[
            f"{f.name} ({f.type}{', autocomplete ' + f.autocomplete if f.autocomplete else ''})" for f in tool.fields
        ],
        registered_by=HOW.get(tool.kind, tool.kind) + (f", at {tool.source}" if tool.source else ""),
        frame=frame.url + (f" (frame {tool.frame_name})" if tool.frame_name else ""),
        path="native WebMCP" if frame.path == "native" else "the polyfill",
        findings=findings,
        first_ms=_first_registrations(frame).get(tool.name),
        churn=churn,
    )


def _registration_lanes(p: PageAudit) -> list[tuple[str, list[TimeEvent]]]:
    """One lane per tool: present from each registration to its withdrawal (or the end of the watch)."""
    s = p.surface
    end = float(max([s.watched_ms, *(e.t_ms for f in s.frames for e in f.events)], default=0))
    late = set(p.timeline.late) if p.timeline else set()
    lanes: list[tuple[str, list[TimeEvent]]] = []
    for i, frame in enumerate(s.frames):
        per_tool: dict[str, list[TimeEvent]] = defaultdict(list)
        since: dict[str, float] = {}
        for e in sorted(frame.events, key=lambda e: e.t_ms):
            if e.type == "register":
                since.setdefault(e.name, e.t_ms)
                kind = "late" if e.name in late else "register"
                per_tool[e.name].append(
                    (kind, e.t_ms, None, f"{e.name} registered {e.t_ms:.0f} ms after the load event")
                )
            elif e.type == "unregister":
                if e.name in since:
                    start = since.pop(e.name)
                    per_tool[e.name].append(("present", start, e.t_ms, f"{e.name} offered {start:.0f}–{e.t_ms:.0f} ms"))
                per_tool[e.name].append(
                    ("unregister", e.t_ms, None, f"{e.name} withdrawn {e.t_ms:.0f} ms after the load event")
                )
        for name, start in since.items():
            per_tool[name].append(
                ("present", start, end, f"{name} offered from {start:.0f} ms to the end of the watch")
            )
        suffix = "" if frame.main and i == 0 else f" (frame {i})"
        lanes += [(name + suffix, events) for name, events in per_tool.items()]
    return lanes


def _timeline(p: PageAudit) -> tuple[TimeFigure | None, str]:
    s = p.surface
    lanes = _registration_lanes(p)
    if not lanes:
        return None, "no registration was seen on this page: nothing to draw"
    load = s.load_ms or 0.0
    moments = [e[2] if e[2] is not None else e[1] for _, events in lanes for e in events]
    start, end = -load, max([float(s.watched_ms), *moments]) + 1
    caption = (
        f"ms since navigation start; the load event came at {load:.0f} ms and the page was watched "
        f"{s.watched_ms} ms after it. Green: a registration (amber: later than allowed), red: a withdrawal; "
        "the pale bar is the time the tool was offered. Hover a mark for its time."
    )
    return time_figure(f"Registrations on {s.url}", caption, lanes, start, end, [(0.0, "load")], origin=-load), caption


def _page(i: int, p: PageAudit, findings_by_tool: dict[str, int]) -> PageView:
    s = p.surface
    anchor = f"page-{i}"
    churn = p.timeline.churn if p.timeline else {}
    tools = [
        _card(f"{anchor}-tool-{j}-{_slug(t.name)}", f, t, findings_by_tool.get(t.name, 0), churn.get(t.name, 0))
        for j, (f, t) in enumerate(s.tools())
    ]
    first = p.timeline.first_tool_ms if p.timeline else None
    facts = [
        f"{s.tool_count()} tool(s) in {len(s.frames)} frame(s)",
        f"{sum(len(c) for c in p.calls.values())} smoke call(s)" if p.calls else "",
        f"first tool {first:.0f} ms after navigation start" if first is not None else "no tool registered",
        f"{p.seconds:.1f} s",
    ]
    figure, note = _timeline(p)
    counts = {sev: sum(1 for f in p.findings if f.severity == sev) for sev in _ORDER}
    return PageView(
        audit=p,
        anchor=anchor,
        facts=" · ".join(b for b in facts if b),
        tools=tools,
        frames=s.frames,
        smoke=_smoke(p),
        coverage=coverage_line(p),
        timeline=figure,
        timeline_note=note,
        counts=counts,
    )


def _groups(
    findings: list[Finding], anchors: dict[tuple[str, str], str], registered: dict[tuple[str, str, str], Source]
) -> list[RuleGroup]:
    by_rule: dict[str, list[Finding]] = defaultdict(list)
    for f in _sorted(findings):
        by_rule[f.rule].append(f)
    groups = []
    for rule, found in by_rule.items():
        known = RULES.get(rule)
        views = [
            FindingView(
                f.severity, f.message, f.page, _where(f, source_of(f, registered)), anchors.get((f.page, f.tool or ""))
            )
            for f in found
        ]
        worst = min((f.severity for f in found), key=lambda s: _ORDER[s])
        groups.append(RuleGroup(rule, known.summary if known else "", known.category if known else "", worst, views))
    return sorted(groups, key=lambda g: (_ORDER[g.severity], -len(g.findings), g.rule))


def html_report(report: AuditReport, generated_at: str | None = None) -> str:
    """The audit as one self-contained page on the run report's look: its stylesheet, its Jinja2 environment, its
    time axis. Score and counts first; the findings grouped by rule, worst first, coloured by severity; per page the
    tools as cards, the registrations drawn, the smoke calls folded one per line (a short answer; the arguments,
    the evidence and the full answer a click away). No script, no request: the page's policy forbids both, and
    the environment escapes every word the site said."""
    pages = []
    anchors: dict[tuple[str, str], str] = {}
    for i, p in enumerate(report.pages):
        mine: dict[str, int] = defaultdict(int)
        for f in p.findings:
            mine[f.tool or ""] += 1
        view = _page(i, p, mine)
        for card in view.tools:
            anchors.setdefault((p.surface.url, card.name), card.anchor)
        pages.append(view)
    counts = report.counts()
    return (
        environment()
        .get_template(HTML_TEMPLATE)
        .render(
            report=report,
            pages=pages,
            groups=_groups(report.all_findings(), anchors, sources(report)),
            counts=counts,
            categories=_categories(report.categories),
            smoke_calls=sum(len(c) for p in report.pages for c in p.calls.values()),
            generated_at=generated_at or datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
            severities=list(_ORDER),
            meter=_meter,
        )
    )


def _meter(score: int | None) -> str:
    """The CSS class of a score's meter: green from 90, amber from 50, red below."""
    if score is None or score >= 90:
        return ""
    return "low" if score >= 50 else "bad"


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
