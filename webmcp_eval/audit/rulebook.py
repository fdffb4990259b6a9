"""Every audit rule as data: its id, score category, default severity, one-line summary, options, and what
the score weighs it by.

The checks that apply them are in rules.py (static), smoke.py and timeline.py;
suite.yaml's ``audit.rules`` is checked against this table (config.py); score.py
counts each rule as one audit per page, weighted by ``weight`` (by default 10
for a rule whose default severity is error, 3 for a warning, 1 for a note) and
counted only where its evidence exists (``needs``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from webmcp_eval.audit.model import Severity

# What a rule needs before its audit counts in the score: "open" (any page, even one that did not open), "page"
# (a page that opened), "tools" (a page that registered or tried to register a tool), "smoke" (a page whose tools
# were called), "watch" (a page watched after its load event), "contract" (--contract), "crawl" (two pages or more).
NEEDS = ("open", "page", "tools", "smoke", "watch", "contract", "crawl")
WEIGHTS: dict[str, int] = {"error": 10, "warning": 3, "note": 1}


@dataclass(frozen=True)
class Rule:
    id: str
    category: str  # declarations, safety, runtime: the score's categories
    severity: Severity
    summary: str
    options: dict[str, Any] = field(default_factory=dict)
    needs: str = "tools"

    @property
    def weight(self) -> int:
        """The rule's weight in its category: by its default severity, so a suite that lowers a rule to a note
        keeps its weight but no longer fails it (notes never fail an audit)."""
        return WEIGHTS[self.severity]


def _r(id_: str, category: str, severity: Severity, summary: str, needs: str = "tools", **options: Any) -> Rule:
    assert needs in NEEDS, needs
    return Rule(id_, category, severity, summary, options, needs)


RULES: dict[str, Rule] = {
    r.id: r
    for r in [
        # names
        _r(
            "name-invalid",
            "declarations",
            "error",
            "A tool name agents can call: letters, digits, _ and -, 1-64 characters",
            pattern=r"^[A-Za-z0-9_-]{1,64}$",
        ),
        _r(
            "name-inconsistent",
            "declarations",
            "warning",
            "Tool names on a page follow one style (snake_case, camelCase, kebab-case)",
        ),
        # descriptions
        _r("description-missing", "declarations", "error", "Every tool says what it does"),
        _r(
            "description-length",
            "declarations",
            "warning",
            "A description long enough to choose the tool by, short enough to read",
            min=20,
            max=1024,
        ),
        _r("param-description-missing", "declarations", "warning", "Every parameter says what it takes"),
        _r(
            "description-similar",
            "declarations",
            "warning",
            "Two tools of a page are told apart by their descriptions",
            threshold=90,
        ),
        # schemas
        _r("schema-not-object", "declarations", "error", "The input schema is an object schema (type: object)"),
        _r("schema-required-unknown", "declarations", "error", "Every required parameter is among the properties"),
        _r("schema-null", "declarations", "warning", "No null literals in the schema (defaults, enums, consts)"),
        _r(
            "schema-depth",
            "declarations",
            "warning",
            "Parameters nest no deeper than agents fill reliably",
            max_depth=4,
        ),
        _r(
            "schema-unsupported-keyword",
            "declarations",
            "warning",
            "Only schema keywords agent hosts support",
            keywords=[
                "$ref",
                "$defs",
                "definitions",
                "allOf",
                "anyOf",
                "oneOf",
                "not",
                "if",
                "then",
                "else",
                "patternProperties",
                "dependentSchemas",
                "dependentRequired",
                "unevaluatedProperties",
            ],
        ),
        # sensitive data
        _r("param-sensitive", "safety", "warning", "No parameter asks an agent for credentials or payment data"),
        _r(
            "form-autosubmit-sensitive",
            "safety",
            "error",
            "A form with password or payment fields is never submitted by an agent without the person (toolautosubmit)",
        ),
        # the page as a whole
        _r("name-duplicate", "declarations", "error", "A tool name is registered once per page, across frames"),
        _r("too-many-tools", "declarations", "warning", "A page offers few enough tools to choose from", max=20),
        _r(
            "frame-cross-origin-without-allow",
            "safety",
            "error",
            'A cross-origin frame registers tools only when its <iframe> has allow="tools"',
        ),
        _r("registration-refused", "declarations", "error", "The browser accepted every registration the page tried"),
        _r("no-tools", "runtime", "error", "The page registers tools", needs="page"),
        _r("page-unreachable", "runtime", "error", "The page opens (loads, same origin, no redirect away)", "open"),
        _r("page-script-error", "runtime", "warning", "The page runs without uncaught exceptions", needs="page"),
        _r(
            "site-input-bounded",
            "declarations",
            "warning",
            "What the page hands an agent is within bounds: Unicode text, answers and schemas of a usable size, "
            "every $ref inside its schema and not recursive without end",
        ),
        _r(
            "audit-budget",
            "runtime",
            "note",
            "The audit's budgets (time per page, calls per tool, pairs and findings per rule) are said when reached",
            needs="page",
        ),
        # injection
        _r(
            "description-injection",
            "safety",
            "error",
            "Descriptions hold no instructions to the agent (overrides, role markers, exfiltration, hidden characters)",
        ),
        # forms (webmcp_eval/audit/forms.py)
        _r(
            "form-toolname-missing",
            "declarations",
            "error",
            "A form with WebMCP attributes has a toolname (else it is no tool)",
            "page",
        ),
        _r("form-tooldescription-missing", "declarations", "error", "A form tool has a tooldescription", "page"),
        _r(
            "form-required-unnamed",
            "declarations",
            "error",
            "Every required control of a form tool has a name (else it is no parameter)",
            "page",
        ),
        _r(
            "form-param-unnamed",
            "declarations",
            "warning",
            "Every optional control of a form tool has a name (else it is a blank an agent never sees)",
            "page",
        ),
        _r(
            "form-param-undescribed",
            "declarations",
            "warning",
            "Every parameter of a form tool has a toolparamdescription or a <label> tied to it (ARIA labels are not "
            "read; Chrome describes a date field itself)",
            "page",
        ),
        _r("form-not-tool", "declarations", "note", "Forms of the page not offered to agents are listed", "page"),
        # trust boundaries (webmcp_eval/audit/trust.py)
        _r(
            "untrusted-content-unmarked",
            "safety",
            "warning",
            "A tool whose answers carry text others wrote (reviews, messages, results from elsewhere) says so "
            "with untrustedContentHint",
        ),
        _r(
            "untrusted-hint-unneeded",
            "safety",
            "note",
            "untrustedContentHint marks only tools whose answers carry text others wrote",
            "smoke",
        ),
        _r(
            "capability-trifecta",
            "safety",
            "warning",
            "One page does not offer private data, untrusted content and a way to send data out all at once",
        ),
        # smoke calls (webmcp_eval/audit/smoke.py)
        _r("smoke-error-on-valid", "runtime", "error", "A tool answers valid input without an error or throw", "smoke"),
        _r("smoke-timeout", "runtime", "error", "A call ends within the per-call timeout", "smoke", timeout_ms=15000),
        _r("smoke-null", "runtime", "warning", "A result has no null values", "smoke"),
        _r(
            "smoke-unserializable",
            "runtime",
            "error",
            "A result is JSON (not undefined, cyclic or a function)",
            "smoke",
        ),
        _r("smoke-too-large", "runtime", "warning", "A result fits an agent's context", "smoke", max_bytes=16384),
        _r("smoke-slow", "runtime", "warning", "A call answers quickly", "smoke", max_ms=5000),
        _r("smoke-accepts-invalid", "runtime", "warning", "A tool refuses input its schema forbids", "smoke"),
        _r(
            "form-waits-for-person",
            "runtime",
            "note",
            "A form without toolautosubmit waits for a person to submit it: said, not smoke-called",
            "tools",
        ),
        _r("smoke-json-string", "runtime", "warning", "A result is structured, not JSON inside a string", "smoke"),
        _r("smoke-result-injection", "safety", "error", "Results hold no instructions to the agent", "smoke"),
        _r("readonly-writes", "safety", "error", "A tool marked read-only writes nothing to the server", "smoke"),
        _r("smoke-other-hosts", "safety", "note", "A call's requests to other hosts are listed", "smoke"),
        # timeline, contract, crawl
        _r("late-tool", "runtime", "warning", "Tools are registered soon after the load event", "watch", after_ms=2000),
        _r(
            "tool-churn",
            "runtime",
            "warning",
            "A tool is not withdrawn and registered again and again",
            "watch",
            times=3,
        ),
        _r("contract-changed", "declarations", "error", "The surface matches its reviewed contract", "contract"),
        _r("cross-page-drift", "declarations", "warning", "A tool name means the same tool on every page", "crawl"),
    ]
}
