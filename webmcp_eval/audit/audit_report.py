"""What an audit found: each page's surface, findings, timeline, smoke calls and score, and the site's report
across pages (its exit code)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from webmcp_eval.audit.coverage import ToolCoverage
from webmcp_eval.audit.model import SEVERITIES, Finding, PageSurface
from webmcp_eval.audit.score import Audit
from webmcp_eval.audit.smoke import CallOutcome
from webmcp_eval.audit.timeline import Timeline


@dataclass
class PageAudit:
    surface: PageSurface
    findings: list[Finding] = field(default_factory=list)
    timeline: Timeline | None = None
    calls: dict[str, list[CallOutcome]] = field(default_factory=dict)
    seconds: float = 0.0
    score: int | None = 0  # None: the page did not open or has no tools (score.py)
    categories: dict[str, int] = field(default_factory=dict)
    coverage: list[ToolCoverage] | None = None  # per tool, when a suite was given
    smoke_note: str | None = None  # why --smoke called nothing on the page
    audits: list[Audit] = field(default_factory=list)  # every rule that counted on the page, passed or not


@dataclass
class AuditReport:
    url: str
    pages: list[PageAudit] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # across pages: drift, contract
    contract_changes: list[str] = field(default_factory=list)
    contract_written: Path | None = None
    score: int = 0
    categories: dict[str, int] = field(default_factory=dict)  # every page's audits pooled (score.py)
    seconds: float = 0.0
    smoke: bool = False

    def all_findings(self) -> list[Finding]:
        return [f for p in self.pages for f in p.findings] + self.findings

    def counts(self) -> dict[str, int]:
        out = {"error": 0, "warning": 0, "note": 0}
        for f in self.all_findings():
            out[f.severity] += 1
        return out

    @property
    def exit_code(self) -> int:
        return self.exit_code_at("error")

    def exit_code_at(self, fail_on: str) -> int:
        """1 when a page failed to load or a finding is at fail_on or worse (error > warning > note), else 0."""
        levels = SEVERITIES[: SEVERITIES.index(fail_on) + 1]
        failed = any(p.surface.error for p in self.pages)
        return 1 if failed or any(self.counts()[s] for s in levels) else 0
