"""The agent-readiness score: 0-100 per page and overall.

Each page is scored in up to four categories. In declarations, safety and
runtime every tool scores 1 with no finding of that category, 0.5 with a
warning at worst and 0 with an error (notes do not count; a finding about the
whole page counts for every tool); the category's score is 100 x the mean. In
coverage the score is 100 x the share of the page's tools that the suite's
cases call or assert. A category without input is left out (runtime without
smoke calls and without a watch, coverage without a suite); the page's score
is the mean of the rest. A page that did not load, or that has no tools,
scores 0. The overall score is the mean of the pages' scores.
"""

from __future__ import annotations

from runner.audit.model import Finding, PageSurface
from runner.audit.rulebook import RULES

CATEGORIES = ("declarations", "runtime", "safety", "coverage")


def _tool_value(findings: list[Finding], tool: str) -> float:
    levels = {f.severity for f in findings if f.tool in (tool, None)}
    return 0.0 if "error" in levels else 0.5 if "warning" in levels else 1.0


def page_score(
    page: PageSurface, findings: list[Finding], *, runtime: bool, covered: set[str] | None
) -> tuple[int, dict[str, int]]:
    """(score, {category: score}) of one page from its findings."""
    names = sorted({t.name for _, t in page.tools()})
    if page.error or not names:
        return 0, {}
    per: dict[str, int] = {}
    for category in ("declarations", "runtime", "safety"):
        if category == "runtime" and not runtime:
            continue
        mine = [f for f in findings if RULES.get(f.rule) and RULES[f.rule].category == category]
        per[category] = round(100 * sum(_tool_value(mine, n) for n in names) / len(names))
    if covered is not None:
        per["coverage"] = round(100 * len(set(names) & covered) / len(names))
    return round(sum(per.values()) / len(per)), per


def overall_score(scores: list[int]) -> int:
    return round(sum(scores) / len(scores)) if scores else 0
