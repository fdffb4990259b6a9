"""The page's forms as an agent meets them (declarative WebMCP), checked as Lighthouse checks them.

A ``<form toolname tooldescription>`` is a tool whose parameters are its named controls, each described by
its ``toolparamdescription`` or, failing that, by the label tied to it. So: a form with tool attributes but no
``toolname`` is no tool at all; one without ``tooldescription`` is refused by the browser; a required control
without ``name`` is no parameter (an agent cannot fill it, so the form can never be submitted valid); a
parameter with neither a description nor a tied label is a blank an agent guesses at; and a form that is not
a tool is listed, as a note, for the author to decide.

Read from every frame of the page by ``read_forms`` (one script per frame, after the watch); the checks are
pure functions of what it read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from webmcp_eval.audit.config import AuditConfig
from webmcp_eval.audit.model import Finding

# Every form of a frame: its tool attributes and each control an agent could fill (not buttons, not hidden).
FORMS_JS = """() => [...document.forms].map(f => {
  const skip = ['submit', 'button', 'reset', 'image', 'hidden'];
  const controls = [...f.elements].filter(e =>
    ['INPUT', 'SELECT', 'TEXTAREA'].includes(e.tagName) && !skip.includes((e.type || '').toLowerCase()));
  const labelled = (e) => !!(e.labels && e.labels.length) || e.hasAttribute('aria-label')
    || e.hasAttribute('aria-labelledby');
  return {
    toolname: f.getAttribute('toolname'),
    tooldescription: f.getAttribute('tooldescription'),
    autosubmit: f.hasAttribute('toolautosubmit'),
    id: f.id || f.getAttribute('name') || '',
    controls: controls.map(e => ({
      name: e.getAttribute('name') || '', id: e.id || '', type: (e.type || e.tagName).toLowerCase(),
      required: !!e.required, description: e.getAttribute('toolparamdescription'), labelled: labelled(e),
    })),
  };
})"""

FORM_RULES = (
    "form-toolname-missing",
    "form-tooldescription-missing",
    "form-required-unnamed",
    "form-param-undescribed",
    "form-not-tool",
)


@dataclass
class Control:
    name: str
    id: str
    type: str
    required: bool = False
    description: str | None = None  # its toolparamdescription (None: no such attribute)
    labelled: bool = False  # a <label> tied to it (for= or around it), aria-label or aria-labelledby

    @property
    def what(self) -> str:
        return f"#{self.id}" if self.id else f"a {self.type} field"


@dataclass
class PageForm:
    frame: str  # the URL of the frame that holds it
    toolname: str | None
    tooldescription: str | None
    autosubmit: bool = False
    id: str = ""
    controls: list[Control] = field(default_factory=list)

    @property
    def label(self) -> str:
        if self.toolname:
            return f"form tool {self.toolname}"
        if self.id:
            return f"form #{self.id}"
        names = sorted({c.name for c in self.controls if c.name})
        return f"a form with fields {', '.join(names[:4])}" if names else "a form"

    @property
    def tool_like(self) -> bool:
        """It carries WebMCP attributes: its author meant it as a tool."""
        return (
            self.tooldescription is not None or self.autosubmit or any(c.description is not None for c in self.controls)
        )


def parse_forms(frame_url: str, raw: list[dict[str, Any]]) -> list[PageForm]:
    return [
        PageForm(
            frame_url,
            f.get("toolname"),
            f.get("tooldescription"),
            bool(f.get("autosubmit")),
            str(f.get("id") or ""),
            [Control(**c) for c in f.get("controls") or []],
        )
        for f in raw
    ]


async def read_forms(page: Page) -> list[PageForm]:
    """Every form of every frame of the page (a frame that will not answer is left out)."""
    forms: list[PageForm] = []
    for frame in page.frames:
        if frame.is_detached():
            continue
        try:
            forms += parse_forms(frame.url, await frame.evaluate(FORMS_JS))
        except PlaywrightError:
            continue
    return forms


Hit = tuple[str, str, PageForm, str]  # rule, message, form, pointer


def _hits(forms: list[PageForm]) -> Iterator[Hit]:
    for form in forms:
        named = form.toolname is not None and form.toolname.strip() != ""
        if not named:
            if form.tool_like:
                yield (
                    "form-toolname-missing",
                    f"{form.label} has WebMCP attributes but no toolname: the browser does not offer it as a tool",
                    form,
                    "/name",
                )
            elif form.controls:
                yield "form-not-tool", f"{form.label} is not offered to agents as a tool (no toolname)", form, ""
            continue
        if not (form.tooldescription or "").strip():
            yield (
                "form-tooldescription-missing",
                f"{form.label} has no tooldescription: the browser refuses it; an agent could not tell what it does",
                form,
                "/description",
            )
        seen: set[str] = set()
        for c in form.controls:
            if not c.name:
                if c.required:
                    yield (
                        "form-required-unnamed",
                        f"{form.label}: required {c.what} has no name, so it is no parameter: an agent cannot fill "
                        "it and the form cannot be submitted",
                        form,
                        "/inputSchema/required",
                    )
                continue
            if c.name in seen:
                continue  # a radio group: one parameter
            seen.add(c.name)
            if not (c.description or "").strip() and not c.labelled:
                yield (
                    "form-param-undescribed",
                    f"{form.label}: parameter {c.name!r} has no toolparamdescription and no label tied to it: an "
                    "agent is left to guess what it takes",
                    form,
                    f"/inputSchema/properties/{c.name}",
                )


def form_findings(page_url: str, forms: list[PageForm], config: AuditConfig) -> list[Finding]:
    """The form rules over what read_forms read, as configured."""
    return [
        Finding(rule, config.severity(rule), message, page_url, form.frame, form.toolname or None, pointer)
        for rule, message, form, pointer in _hits(forms)
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
