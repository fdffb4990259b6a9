"""``expect.untrusted``: untrusted content (results of tools marked untrustedContentHint) with markup in it
is shown as text on the page; the page makes no element of it.

After the steps the page is searched for elements made of each such result (``observe``; the trace's
``untrusted_rendering``).
"""

from __future__ import annotations

from webmcp_eval.kinds import Captures, Evidence, Kind, PageReader
from webmcp_eval.kinds import assertion as _a
from webmcp_eval.kinds import not_reached as _not_reached
from webmcp_eval.kinds._locator import Strict
from webmcp_eval.matchers import short
from webmcp_eval.trace import Assertion, Trace


class UntrustedExpectation(Strict):
    """Untrusted content (results of tools marked untrustedContentHint) is shown as text, never as markup."""

    as_text: bool = True


def check_untrusted(exp: UntrustedExpectation, trace: Trace) -> list[Assertion]:
    """Untrusted text with markup in it is shown as text: the page made no element of it."""
    desc = "untrusted content is shown as text, never rendered as markup"
    found = trace.untrusted_rendering
    if found is None:
        return [_a("untrusted.as_text", "untrusted", desc, None, _not_reached(trace, "the page was not observed"))]
    if not found:
        why = "no result of an untrustedContentHint tool carried markup: the rule had nothing to judge"
        return [_a("untrusted.as_text", "untrusted", desc, None, why)]
    evidence = [f.model_dump() for f in found]
    made = [f"{sel} (from {short(f.text, 40)})" for f in found for sel in f.elements or []]
    if made:
        return [_a("untrusted.as_text", "untrusted", desc, False, "elements made of it: " + ", ".join(made), evidence)]
    unread = [short(f.text, 40) for f in found if f.elements is None]
    if unread:
        why = "the page was not searched for elements made of: " + ", ".join(unread)
        return [_a("untrusted.as_text", "untrusted", desc, None, why, evidence)]
    hidden = [short(f.text, 40) for f in found if f.shown_as_text is False]
    if hidden:  # neither made into elements nor shown: a sanitiser removed what the person should read
        why = "not shown as text (its markup is nowhere on the page as text): " + ", ".join(hidden)
        return [_a("untrusted.as_text", "untrusted", desc, False, why, evidence)]
    why = f"{len(found)} shown as text, no element made" if all(f.shown_as_text for f in found) else "no element made"
    return [_a("untrusted.as_text", "untrusted", desc, True, why, evidence)]


def _untrusted(exp: UntrustedExpectation, trace: Trace, captures: Captures) -> list[Assertion]:
    return check_untrusted(exp, trace) if exp.as_text else []


def _rendering_unobserved(exp: UntrustedExpectation, trace: Trace) -> str:
    if exp.as_text and trace.untrusted_rendering is None:
        return "untrusted rendering was never observed in this trial"
    return ""


async def observe(exp: UntrustedExpectation, page: PageReader, trace: Trace) -> None:
    """The elements the page made of untrusted tool results with markup in them."""
    trace.untrusted_rendering = await page.untrusted(trace.calls)


RENDERING = Evidence(
    "rendering",
    ("untrusted_rendering",),
    lambda t: [r.model_dump() for r in t.untrusted_rendering] if t.untrusted_rendering is not None else None,
)

KIND = Kind(
    "untrusted",
    UntrustedExpectation,
    _untrusted,
    (RENDERING,),
    _rendering_unobserved,
    description="untrusted text with markup in it is rendered as text: no element is made of it",
    observe=observe,
)
