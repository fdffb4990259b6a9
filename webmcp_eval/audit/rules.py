"""The audit's rules: every rule's id, category, default severity and options, and the static (lint) checks.

A static check is a pure function of one page's surface and the rule's
options; it yields hits (message, frame, tool, JSON pointer) and
``lint`` turns them into findings at the severity the configuration gives.
Runtime rules (smoke calls, timeline, contract, crawl) are registered here
too, so one configuration and one SARIF rule list cover all of them; their
checks live in the module of their evidence.

Over 500 lines on purpose: each static check registers in ``STATIC`` as it is
defined, and that order is the order of ``lint``'s findings in every report; in
one module it is the order a reader sees, not an order of imports.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from itertools import combinations
from typing import Any

from rapidfuzz import fuzz

from webmcp_eval.audit.config import AuditConfig
from webmcp_eval.audit.model import Finding, Frame, PageSurface, Tool
from webmcp_eval.audit.rulebook import RULES
from webmcp_eval.audit.trust import (
    instructions_in,
    private_data,
    third_party_by_description,
    untrusted_content,
    untrusted_hint,
    way_out,
)
from webmcp_eval.data_file import nulls_in
from webmcp_eval.play.page.surface.bounds import LINT_HITS_PER_RULE, LINT_PAIRS
from webmcp_eval.suite.tool_schema import properties_of

Hit = tuple[str, Frame | None, Tool | None, str]  # message, frame, tool, pointer
StaticCheck = Callable[[PageSurface, dict[str, Any]], Iterator[Hit]]
STATIC: dict[str, StaticCheck] = {}


def static(rule_id: str) -> Callable[[StaticCheck], StaticCheck]:
    def register(check: StaticCheck) -> StaticCheck:
        assert rule_id in RULES, rule_id
        STATIC[rule_id] = check
        return check

    return register


def lint(page: PageSurface, config: AuditConfig) -> list[Finding]:
    """Every static rule over one page's surface, as configured (a rule turned off yields nothing); at most
    LINT_HITS_PER_RULE findings of one rule, and the audit-budget note says how many more there were."""
    findings: list[Finding] = []
    if page.error:
        return findings
    budget: list[str] = []
    for rule_id, check in STATIC.items():
        if not config.enabled(rule_id):
            continue
        hits = 0
        for message, frame, tool, pointer in check(page, config.options(rule_id)):
            hits += 1
            if hits > LINT_HITS_PER_RULE:
                continue
            findings.append(
                Finding(
                    rule_id,
                    config.severity(rule_id),
                    message,
                    page.url,
                    frame.url if frame else "",
                    tool.name if tool else None,
                    pointer,
                )
            )
        if hits > LINT_HITS_PER_RULE:
            budget.append(f"{rule_id}: {hits - LINT_HITS_PER_RULE:,} more findings not listed (at most "
                          f"{LINT_HITS_PER_RULE:,} per rule and page)")  # fmt: skip
        if rule_id == "description-similar" and (pairs := _pairs(_described(page))) > LINT_PAIRS:
            budget.append(f"description-similar compared {LINT_PAIRS:,} of the page's {pairs:,} pairs of tools "
                          f"(the first {_compared(len(_described(page))):,} tools)")  # fmt: skip
    if budget and config.enabled("audit-budget"):
        findings += [Finding("audit-budget", config.severity("audit-budget"), b, page.url) for b in budget]
    return findings


def _pairs(items: list[Any]) -> int:
    return len(items) * (len(items) - 1) // 2


def _compared(n: int) -> int:
    """How many of n tools description-similar compares pairwise within LINT_PAIRS."""
    k = n
    while k * (k - 1) // 2 > LINT_PAIRS:
        k -= 1
    return k


# ---- schema walking ---------------------------------------------------------------------------

_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "unevaluatedProperties")


def _esc(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def subschemas(schema: object, pointer: str = "/inputSchema") -> Iterator[tuple[dict[str, Any], str]]:
    """Every schema node under schema (itself first), with its JSON pointer."""
    if not isinstance(schema, dict):
        return
    yield schema, pointer
    for key in _SUBSCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            for name, sub in schema[key].items():
                yield from subschemas(sub, f"{pointer}/{_esc(key)}/{_esc(name)}")
    for key in _SUBSCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            for i, sub in enumerate(schema[key]):
                yield from subschemas(sub, f"{pointer}/{key}/{i}")
    for key in _SUBSCHEMA_ONE:
        sub = schema.get(key)
        if isinstance(sub, list):
            for i, item in enumerate(sub):
                yield from subschemas(item, f"{pointer}/{key}/{i}")
        else:
            yield from subschemas(sub, f"{pointer}/{key}")


def properties(schema: object, pointer: str = "/inputSchema") -> Iterator[tuple[str, dict[str, Any], str]]:
    """Every parameter (at any depth): its name, its schema, its pointer."""
    for node, where in subschemas(schema, pointer):
        props = node.get("properties")
        if isinstance(props, dict):
            for name, sub in props.items():
                yield name, sub if isinstance(sub, dict) else {}, f"{where}/properties/{_esc(name)}"


def _depth(schema: object) -> int:
    """Levels of nested parameters: an object of scalars is 1, an object holding an object 2, ..."""
    if not isinstance(schema, dict):
        return 0
    props = properties_of(schema)
    below = [_depth(s) for s in props.values()] + [_depth(schema.get("items"))]
    return (1 if props else 0) + max(below)


# ---- names ------------------------------------------------------------------------------------


@static("name-invalid")
def _name_invalid(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    pattern = re.compile(opts["pattern"])
    for frame, tool in page.tools():
        if not pattern.fullmatch(tool.name):
            yield f"tool name {tool.name!r} does not match {opts['pattern']}", frame, tool, "/name"


def name_style(name: str) -> str | None:
    """snake, camel, kebab or pascal; None for a single lower-case word (it fits any style)."""
    if re.fullmatch(r"[a-z][a-z0-9]*", name):
        return None
    if re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)+", name):
        return "snake_case"
    if re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)+", name):
        return "kebab-case"
    if re.fullmatch(r"[a-z][a-z0-9]*([A-Z][a-z0-9]*)+", name):
        return "camelCase"
    if re.fullmatch(r"([A-Z][a-z0-9]*)+", name):
        return "PascalCase"
    return "mixed"


@static("name-inconsistent")
def _name_inconsistent(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    styles = [(f, t, name_style(t.name)) for f, t in page.tools()]
    counted: dict[str, int] = {}
    for _, _, style in styles:
        if style:
            counted[style] = counted.get(style, 0) + 1
    if len(counted) < 2:
        return
    main = max(sorted(counted), key=lambda s: counted[s])
    for frame, tool, style in styles:
        if style and style != main:
            yield f"{tool.name} is {style}; the page's other tools are {main}", frame, tool, "/name"


# ---- descriptions -----------------------------------------------------------------------------


@static("description-missing")
def _description_missing(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    for frame, tool in page.tools():
        if not tool.description.strip():
            yield f"{tool.name} has no description: an agent cannot tell when to use it", frame, tool, "/description"


@static("description-length")
def _description_length(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    for frame, tool in page.tools():
        n = len(tool.description.strip())
        if n and n < opts["min"]:
            yield (
                f"{tool.name}'s description has {n} characters (fewer than {opts['min']})",
                frame,
                tool,
                ("/description"),
            )
        elif n > opts["max"]:
            yield (
                f"{tool.name}'s description has {n} characters (more than {opts['max']})",
                frame,
                tool,
                ("/description"),
            )


@static("param-description-missing")
def _param_description(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    for frame, tool in page.tools():
        if tool.kind == "declarative":
            continue  # the browser builds the schema from the fields; their labels are the page's to fix
        for name, sub, pointer in properties(tool.input_schema):
            if not str(sub.get("description") or "").strip():
                yield f"parameter {name!r} of {tool.name} has no description", frame, tool, pointer


def _described(page: PageSurface) -> list[tuple[Frame, Tool]]:
    return [(f, t) for f, t in page.tools() if t.description.strip()]


@static("description-similar")
def _description_similar(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    described = _described(page)
    described = described[: _compared(len(described))]  # the pairs within budget (lint notes the rest)
    for (_, a), (frame, b) in combinations(described, 2):
        if a.name == b.name:
            continue
        score = fuzz.token_sort_ratio(a.description.lower(), b.description.lower())
        if score >= opts["threshold"]:
            yield (
                f"{b.name}'s description is {score:.0f}% like {a.name}'s: an agent cannot tell them apart",
                frame,
                b,
                "/description",
            )


# ---- schemas ----------------------------------------------------------------------------------


@static("schema-not-object")
def _schema_not_object(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    for frame, tool in page.tools():
        schema = tool.input_schema
        if schema is None:
            continue  # no inputSchema: WebMCP allows it, a tool without parameters (the browser refuses a null one)
        if not isinstance(schema, dict):
            yield (
                f"{tool.name}'s input schema is a {type(schema).__name__}, not an object schema",
                frame,
                tool,
                ("/inputSchema"),
            )
        elif schema.get("type") != "object":
            got = f"type {schema['type']!r}" if "type" in schema else "no type"
            yield f"{tool.name}'s input schema has {got}; agents need type: object", frame, tool, "/inputSchema/type"


@static("schema-required-unknown")
def _required_unknown(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    for frame, tool in page.tools():
        for node, pointer in subschemas(tool.input_schema):
            required = node.get("required")
            if required is None:
                continue
            props = properties_of(node)
            if not isinstance(required, list):
                yield f"{tool.name}: required is not a list", frame, tool, f"{pointer}/required"
                continue
            for i, name in enumerate(required):
                if name not in props:
                    yield (
                        f"{tool.name}: required parameter {name!r} is not among the properties",
                        frame,
                        tool,
                        f"{pointer}/required/{i}",
                    )


@static("schema-null")
def _schema_null(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    for frame, tool in page.tools():
        if tool.schema_derived or tool.input_schema is None:
            continue  # the browser built this schema from the form's controls, or the page wrote none: no null
        for pointer in nulls_in(tool.input_schema, "/inputSchema"):
            yield f"{tool.name}'s schema has a null literal at {pointer}", frame, tool, pointer


@static("schema-depth")
def _schema_depth(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    for frame, tool in page.tools():
        depth = _depth(tool.input_schema)
        if depth > opts["max_depth"]:
            yield (
                f"{tool.name}'s parameters nest {depth} levels deep (more than {opts['max_depth']})",
                frame,
                tool,
                "/inputSchema",
            )


@static("schema-unsupported-keyword")
def _unsupported(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    banned = set(opts["keywords"])
    for frame, tool in page.tools():
        if tool.schema_derived:
            continue  # the browser built this schema from the form's controls (anyOf for a <select>): not the author's
        for node, pointer in subschemas(tool.input_schema):
            for key in sorted(banned & set(node)):
                yield (
                    f"{tool.name}'s schema uses {key}, which agent hosts often drop",
                    frame,
                    tool,
                    (f"{pointer}/{_esc(key)}"),
                )


# ---- sensitive data ---------------------------------------------------------------------------

SENSITIVE = re.compile(
    r"pass(word|wd|phrase)|secret|api[_-]?key|(access|auth|bearer|refresh)[_-]?token|^token$|^otp$|^pin$|"
    r"^ssn$|social[_-]?security|card[_-]?(number|no|num)|^pan$|^cc[_-]?(num|number)?$|^cvv|^cvc|security[_-]?code|"
    r"^iban$|routing[_-]?number|account[_-]?number|credit[_-]?card",
    re.IGNORECASE,
)


def _sensitive_field(name: str, type_: str = "", autocomplete: str = "") -> bool:
    auto = autocomplete.lower()
    return (
        type_.lower() == "password"
        or auto.startswith("cc-")
        or auto in ("current-password", "new-password", "one-time-code")
        or bool(SENSITIVE.search(name))
    )


@static("param-sensitive")
def _param_sensitive(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    for frame, tool in page.tools():
        for name, sub, pointer in properties(tool.input_schema):
            if _sensitive_field(name, str(sub.get("format") or "")):
                yield (
                    f"parameter {name!r} of {tool.name} looks like a credential or payment data: an agent "
                    "should never carry it",
                    frame,
                    tool,
                    pointer,
                )


@static("form-autosubmit-sensitive")
def _autosubmit_sensitive(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    for frame, tool in page.tools():
        if tool.kind != "declarative" or not tool.autosubmit:
            continue
        risky = [f.name or f.type for f in tool.fields if _sensitive_field(f.name, f.type, f.autocomplete)]
        if risky:
            yield (
                f"form tool {tool.name} has toolautosubmit and password or payment fields ({', '.join(risky)}): "
                "an agent could submit them without the person",
                frame,
                tool,
                "/annotations/autosubmit",
            )


# ---- the page as a whole ----------------------------------------------------------------------


@static("name-duplicate")
def _duplicate(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    seen: dict[str, Frame] = {}
    for frame, tool in page.tools():
        if tool.name in seen:
            first = seen[tool.name]
            yield (
                f"{tool.name} is registered twice on this page ({first.url} and {frame.url}): a call cannot say which",
                frame,
                tool,
                "/name",
            )
        else:
            seen[tool.name] = frame


@static("too-many-tools")
def _too_many(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    n = page.tool_count()
    if n > opts["max"]:
        yield f"the page offers {n} tools (more than {opts['max']}): agents choose worse among many", None, None, ""


def _denied(frame: Frame) -> bool:
    """A cross-origin frame its <iframe> does not let register tools: every refusal there has one cause."""
    return not (frame.main or frame.same_origin or frame.allows_tools)


@static("frame-cross-origin-without-allow")
def _cross_origin(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    for frame in page.frames:
        if not _denied(frame):
            continue
        tried = [t.name for t in frame.tools] + [r.name for r in frame.refused]
        if tried:
            errors = sorted({r.error for r in frame.refused})
            said = f"; the browser refused them: {'; '.join(errors)}" if errors else ""
            yield (
                f"cross-origin frame {frame.origin} registers tools ({', '.join(tried)}) without "
                f'allow="tools" on its <iframe>{said}',
                frame,
                None,
                "",
            )


@static("registration-refused")
def _refused(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    for frame in page.frames:
        if _denied(frame):
            continue  # one cause, one finding: frame-cross-origin-without-allow says it with the browser's error
        for refused in frame.refused:
            tool = Tool(refused.name or "", "", None, kind=refused.kind)
            yield (f"the browser refused the {refused.kind} tool {refused.name!r}: {refused.error}", frame, tool, "")


@static("no-tools")
def _no_tools(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    if not page.tool_count() and not any(f.refused for f in page.frames):
        yield f"no tools registered within {page.watched_ms} ms of the load event", None, None, ""


@static("page-script-error")
def _script_errors(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    refusals = [r.error for f in page.frames for r in f.refused if r.error]
    for error in page.script_errors:
        if any(r in error or error in r for r in refusals):
            continue  # a refused registration the page did not catch: already its own finding, with this error
        yield f"uncaught exception: {error}", None, None, ""


# ---- site input within bounds (webmcp_eval/play/page/surface/bounds.py) ---------------------------------


@static("site-input-bounded")
def _bounded(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    for frame, tool in page.tools():
        if tool.bounds:
            yield f"{tool.name}: {'; '.join(tool.bounds)}", frame, tool, ""


# ---- injection --------------------------------------------------------------------------------


@static("description-injection")
def _injection(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    names = {t.name for _, t in page.tools()}
    for frame, tool in page.tools():
        texts = [(tool.description, "/description")] + [
            (str(sub.get("description")), f"{ptr}/description")
            for _, sub, ptr in properties(tool.input_schema)
            if sub.get("description")
        ]
        for text, pointer in texts:
            kinds = instructions_in(text, names, own=tool.name)
            if kinds:
                yield f"{tool.name}: instructions to the agent ({', '.join(kinds)})", frame, tool, pointer


# ---- trust boundaries (webmcp_eval/audit/trust.py) ---------------------------------------------------------


@static("untrusted-content-unmarked")
def _untrusted_unmarked(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    for frame, tool in page.tools():
        why = third_party_by_description(tool)
        if why and not untrusted_hint(tool):
            yield (
                f"{tool.name} returns text others wrote ({why}) without untrustedContentHint: an agent takes it "
                "for the site's own words",
                frame,
                tool,
                "/annotations/untrustedContentHint",
            )


@static("capability-trifecta")
def _trifecta(page: PageSurface, opts: dict[str, Any]) -> Iterator[Hit]:
    tools = [t for _, t in page.tools()]
    private = [t.name for t in tools if private_data(t)]
    untrusted = [t.name for t in tools if untrusted_content(t)]
    out = [t.name for t in tools if way_out(t, [n for n, _, _ in properties(t.input_schema)])]
    if private and untrusted and out:
        yield (
            f"the page offers private data ({', '.join(private)}), untrusted content ({', '.join(untrusted)}) and a "
            f"way to send data out ({', '.join(out)}): text others wrote can steer an agent to send the person's "
            "data away",
            None,
            None,
            "",
        )
