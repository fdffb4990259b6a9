"""The audit's HTML page: one self-contained page on the run report's look (its stylesheet, its Jinja2 environment,
its time axis), built from the same ``AuditReport`` as the other views."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime

from webmcp_eval.audit.audit_report import AuditReport, PageAudit
from webmcp_eval.audit.model import Finding, Frame, Source, Tool
from webmcp_eval.audit.rulebook import RULES
from webmcp_eval.audit.smoke import CallOutcome
from webmcp_eval.audit.writers import _ORDER, _categories, _sorted, _where, coverage_line, source_of, sources
from webmcp_eval.report.rendering import environment
from webmcp_eval.report.timeline import TimeEvent, TimeFigure, time_figure

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
