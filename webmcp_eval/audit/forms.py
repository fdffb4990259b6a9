"""The page's forms as an agent meets them (declarative WebMCP), checked as Chrome itself checks them.

A ``<form toolname tooldescription>`` is a tool whose parameters are its named controls, each described by
its ``toolparamdescription`` or, failing that, by a ``<label>`` tied to it (``for=`` or around it; Chrome reads no
``aria-label``, ``aria-labelledby``, ``title`` or placeholder, and writes its own description for a ``date``
field). So: a form with tool attributes but no ``toolname`` is no tool at all; one without ``tooldescription`` is
refused by the browser; a control without ``name`` is no parameter (required: an agent can never submit the form
valid; optional: a blank it never sees); a parameter with no description is a blank an agent guesses at; and a
form that is not a tool is listed, as a note, for the author to decide.

The ground truth is Chrome's own: the DevTools issues it raises for declarative forms (the Audits domain,
``FormModelContext*``, the ones Lighthouse reads). ``read_forms`` reads them where the browser gives them, and
where it does (``PageForm.chrome``) the findings follow them; the same rules read from the DOM stand in where it
does not (no DevTools session for the frame, a browser without the domain). A form whose fields are all the
parameters of an imperative tool of the page is that tool's form: it needs no ``toolname`` of its own.

A form is the page surface's model of it (``PageForm``, play/page/surface/model.py), read by the surface's one
reading of a frame's forms (reader.py ``read_forms_of``), the one the tools' reading takes its forms from.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from webmcp_eval.audit.config import AuditConfig
from webmcp_eval.audit.model import Finding, Tool
from webmcp_eval.play.page.surface.model import PageForm
from webmcp_eval.play.page.surface.reader import read_forms_of
from webmcp_eval.suite.tool_schema import properties_of

# Chrome's DevTools issues for declarative forms (Audits.issueAdded, genericIssueDetails.errorType), each on the
# node it is about, and the rule each one is
CHROME_ISSUES = {
    "FormModelContextMissingToolName": "form-toolname-missing",
    "FormModelContextMissingToolDescription": "form-tooldescription-missing",
    "FormModelContextRequiredParameterMissingName": "form-required-unnamed",
    "FormModelContextParameterMissingName": "form-param-unnamed",
    "FormModelContextParameterMissingTitleAndDescription": "form-param-undescribed",
}
# Tag each node Chrome raised an issue on with the issue's code, for the surface's form reading (FORMS_JS) to
# read beside the DOM
TAG_JS = "function(code) { (this.__webmcpEvalIssues = this.__webmcpEvalIssues || []).push(code); }"
# The input types Chrome describes itself ("Dates MUST be provided in 'YYYY-MM-DD' format.")
DESCRIBED_BY_CHROME = {"date"}

FORM_RULES = (
    "form-toolname-missing",
    "form-tooldescription-missing",
    "form-required-unnamed",
    "form-param-unnamed",
    "form-param-undescribed",
    "form-not-tool",
)


async def read_forms(page: Page) -> list[PageForm]:
    """Every form of every frame of the page (a frame that will not answer is left out), with the issues Chrome
    raised on them where DevTools gives them (the top page and the frames that share its process)."""
    chrome = await tag_chrome_issues(page)
    forms: list[PageForm] = []
    for frame in page.frames:
        if frame.is_detached():
            continue
        try:
            forms += await read_forms_of(frame, chrome)
        except PlaywrightError:
            continue
    return forms


async def tag_chrome_issues(page: Page) -> bool:
    """Chrome's issues for the page's declarative forms, each tagged on its node; False when DevTools gives none
    (Audits.enable replays every issue the document raised so far, so it is read after the watch)."""
    try:
        cdp = await page.context.new_cdp_session(page)
    except PlaywrightError:
        return False
    issues: list[dict[str, Any]] = []
    cdp.on("Audits.issueAdded", lambda event: issues.append(event.get("issue") or {}))
    try:
        await cdp.send("Audits.enable")
        await cdp.send("Audits.disable")  # every issue so far has been replayed by now
        seen: set[tuple[str, int]] = set()
        for issue in issues:
            details = (issue.get("details") or {}).get("genericIssueDetails") or {}
            code, node = details.get("errorType"), details.get("violatingNodeId")
            if code not in CHROME_ISSUES or not isinstance(node, int) or (code, node) in seen:
                continue
            seen.add((code, node))
            await _tag(cdp, node, code)
        return True
    except PlaywrightError:
        return False
    finally:
        await cdp.detach()


async def _tag(cdp: Any, node: int, code: str) -> None:
    try:
        found = await cdp.send("DOM.resolveNode", {"backendNodeId": node})
        target = found["object"]["objectId"]
        await cdp.send("Runtime.callFunctionOn", {"objectId": target, "functionDeclaration": TAG_JS,
                                                  "arguments": [{"value": code}]})  # fmt: skip
    except PlaywrightError:
        return  # the node is gone (a form removed since): nothing to tag


Hit = tuple[str, str, PageForm, str]  # rule, message, form, pointer


def _hits(forms: list[PageForm], covered: set[int]) -> Iterator[Hit]:
    for i, form in enumerate(forms):
        named = form.toolname is not None and form.toolname.strip() != ""
        if not named:
            if i in covered and (form.tool_like or "FormModelContextMissingToolName" in form.issues):
                continue  # meant as a tool, and its fields are an imperative tool's parameters: that is its tool
            if _says(form, form.issues, "form-toolname-missing", form.tool_like):
                yield (
                    "form-toolname-missing",
                    f"{form.label} has WebMCP attributes but no toolname: the browser does not offer it as a tool",
                    form,
                    "/name",
                )
            elif form.controls:  # listed as Lighthouse's form coverage lists it, whatever tool fills it
                yield "form-not-tool", f"{form.label} is not offered to agents as a tool (no toolname)", form, ""
            continue
        if _says(form, form.issues, "form-tooldescription-missing", not (form.tooldescription or "").strip()):
            yield (
                "form-tooldescription-missing",
                f"{form.label} has no tooldescription: the browser refuses it; an agent could not tell what it does",
                form,
                "/description",
            )
        yield from _control_hits(form)


def _control_hits(form: PageForm) -> Iterator[Hit]:
    seen: set[str] = set()
    for c in form.controls:
        if not c.name:
            if _says(form, c.issues, "form-required-unnamed", c.required):
                yield (
                    "form-required-unnamed",
                    f"{form.label}: required {c.what} has no name, so it is no parameter: an agent cannot fill "
                    "it and the form cannot be submitted",
                    form,
                    "/inputSchema/required",
                )
            elif _says(form, c.issues, "form-param-unnamed", not c.required):
                yield (
                    "form-param-unnamed",
                    f"{form.label}: {c.what} has no name, so it is no parameter: an agent never sees it and the "
                    "form is submitted with it as it is",
                    form,
                    "/inputSchema/properties",
                )
            continue
        if c.name in seen:
            continue  # a radio group: one parameter
        seen.add(c.name)
        undescribed = not (c.description or "").strip() and not c.labelled and c.type not in DESCRIBED_BY_CHROME
        if _says(form, c.issues, "form-param-undescribed", undescribed):
            yield (
                "form-param-undescribed",
                f"{form.label}: parameter {c.name!r} has no toolparamdescription and no <label> tied to it (Chrome "
                "reads no aria-label, aria-labelledby, title or placeholder): an agent is left to guess what it takes",
                form,
                f"/inputSchema/properties/{c.name}",
            )


def _says(form: PageForm, issues: list[str], rule: str, by_dom: bool) -> bool:
    """Whether the rule holds for a node: by Chrome's issues on it where they were read, else by the DOM."""
    if form.chrome:
        return any(CHROME_ISSUES.get(code) == rule for code in issues)
    return by_dom


def covered_forms(forms: list[PageForm], imperative: list[Tool]) -> set[int]:
    """The forms without a toolname whose named fields are all parameters of one imperative tool of their frame
    (a page that registers a form's tool itself, from the form's own schema)."""
    out: set[int] = set()
    for i, form in enumerate(forms):
        names = {c.name for c in form.controls if c.name}
        if form.toolname or not names:
            continue
        for tool in imperative:
            params = set(properties_of(tool.input_schema)) if isinstance(tool.input_schema, dict) else set()
            if tool.frame_url in ("", form.frame) and names <= params:
                out.add(i)
    return out


def form_findings(
    page_url: str, forms: list[PageForm], config: AuditConfig, tools: list[Tool] | None = None
) -> list[Finding]:
    """The form rules over what read_forms read, as configured; tools: the page's, so a form an imperative tool
    offers is not asked for a toolname."""
    imperative = [t for t in tools or [] if t.kind == "imperative"]
    return [
        Finding(rule, config.severity(rule), message, page_url, form.frame, form.toolname or None, pointer)
        for rule, message, form, pointer in _hits(forms, covered_forms(forms, imperative))
        if config.enabled(rule)
    ]


def one_cause(findings: list[Finding]) -> list[Finding]:
    """Drop what a form finding already explains: a form refused for lacking tooldescription, and no-tools on a
    page whose only would-be tool lacks its toolname."""
    undescribed = {f.tool for f in findings if f.rule == "form-tooldescription-missing"}
    unnamed = any(f.rule == "form-toolname-missing" for f in findings)
    return [
        f
        for f in findings
        if not (f.rule == "registration-refused" and f.tool in undescribed and "tooldescription" in f.message)
        and not (f.rule == "no-tools" and unnamed)
    ]
