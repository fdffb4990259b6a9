"""The agent-readiness score, as Lighthouse scores a category: the weighted share of audits passed.

Every rule is one *audit* per page, counted where its evidence exists (the
rule's ``needs`` in rulebook.py: smoke rules only on a page whose tools were
called, timeline rules only on a watched page, ...) and while it is enabled.
An audit fails when the page has a finding of that rule at error or warning
level; notes never fail one. A category's score (declarations, safety,
runtime) is 100 x the weight of the passed audits over the weight of those
counted; the weights are the rules' (10 for a rule that is an error by default,
3 for a warning, 1 for a note: the table in docs/audit.md). Coverage, with a
suite, is 100 x the share of tools the suite's cases call or assert.

A page's score is the mean of its categories; so is the site's, whose
categories pool the audits of every page. A page that did not open or has no
tools has no score of its own: only its page audits count (page-unreachable,
no-tools, page-script-error), in the site's runtime category. A site none of
whose pages has a tool scores 0. A page with no finding scores 100, and only such a page: a category with a
failed audit scores at most 99.
"""

from __future__ import annotations

from dataclasses import dataclass

from webmcp_eval.audit.config import AuditConfig
from webmcp_eval.audit.model import Finding, PageSurface
from webmcp_eval.audit.rulebook import RULES

CATEGORIES = ("declarations", "runtime", "safety", "coverage")


@dataclass(frozen=True)
class Evidence:
    """What the audit gathered on a page, which decides the audits that count there."""

    smoke: bool = False  # some tool of the page was called
    watch: bool = False  # the page was watched after its load event
    contract: bool = False  # a contract was compared
    crawl: bool = False  # two pages or more were audited


@dataclass(frozen=True)
class Audit:
    rule: str
    category: str
    weight: int
    passed: bool


def _counts(page: PageSurface, evidence: Evidence) -> set[str]:
    """The ``needs`` a page meets."""
    if page.error:
        return {"open"}
    met = {"open", "page"}
    if page.tool_count() or any(f.refused for f in page.frames):
        met |= {"tools"} | {n for n in ("smoke", "watch", "contract", "crawl") if getattr(evidence, n)}
    return met


def page_audits(page: PageSurface, findings: list[Finding], evidence: Evidence, config: AuditConfig) -> list[Audit]:
    """Every audit that counts on the page, passed or failed by its findings."""
    failed = {f.rule for f in findings if f.severity in ("error", "warning")}
    met = _counts(page, evidence)
    return [
        Audit(rule.id, rule.category, rule.weight, rule.id not in failed)
        for rule in RULES.values()
        if rule.needs in met and config.enabled(rule.id)
    ]


def category_scores(audits: list[Audit], tools: int = 0, covered: int | None = None) -> dict[str, int]:
    """{category: 0-100} over the audits (and the coverage share, when a suite was given and there are tools)."""
    out: dict[str, int] = {}
    for category in CATEGORIES[:3]:
        mine = [a for a in audits if a.category == category]
        total = sum(a.weight for a in mine)
        if total:
            share = 100 * sum(a.weight for a in mine if a.passed) / total
            out[category] = round(share) if share == 100 else min(99, round(share))  # 100 only with none failed
    if covered is not None and tools:
        out["coverage"] = round(100 * covered / tools)
    return out


def mean_score(categories: dict[str, int]) -> int:
    if not categories:
        return 0
    mean = round(sum(categories.values()) / len(categories))
    return mean if all(v == 100 for v in categories.values()) else min(99, mean)  # 100: nothing failed


def page_score(
    page: PageSurface,
    findings: list[Finding],
    evidence: Evidence,
    config: AuditConfig,
    covered: set[str] | None,
) -> tuple[int | None, dict[str, int], list[Audit]]:
    """(score, {category: score}, audits) of one page; the score is None for a page with nothing to score."""
    audits = page_audits(page, findings, evidence, config)
    names = {t.name for _, t in page.tools()}
    if page.error or not names:
        return None, {}, audits
    categories = category_scores(audits, len(names), len(names & covered) if covered is not None else None)
    return mean_score(categories), categories, audits


def site_score(pages: list[tuple[PageSurface, list[Audit]]], covered: set[str] | None) -> tuple[int, dict[str, int]]:
    """(score, {category: score}) of the whole audit: every page's audits pooled."""
    tools = [{t.name for _, t in p.tools()} for p, _ in pages]
    if not any(tools):
        return 0, {}
    audits = [a for _, page_audits_ in pages for a in page_audits_]
    n = sum(len(t) for t in tools)
    categories = category_scores(audits, n, sum(len(t & covered) for t in tools) if covered is not None else None)
    return mean_score(categories), categories
