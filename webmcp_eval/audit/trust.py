"""Trust boundaries: text that speaks to the agent instead of describing, content the site did not write, and a
page that offers private data, untrusted content and a way out at once.

Injection is judged by what a text *does*, not by one phrase: it marks a role (``SYSTEM:`` anywhere, not only
at the start of a line), overrides what the agent was told (``ignore the user``), tells the agent to call one
of the page's own tools with a push aimed at the agent (``you must``, ``now``, ``without asking``, an override
or a role marker beside it), hides something from the person, or sends data out (a link to send it to, a
Markdown image whose URL carries a query). A text that names a tool in passing ("use search_items to narrow
the list") is help, not an instruction (webmcp_eval/judge/instructions.py, the rule every trial reads descriptions
with too). ``tests/audit_corpus/injection.yaml`` holds the positive and negative examples every change is held to.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from webmcp_eval.audit.model import Tool

# the rule for text that speaks to the agent: below the play layer, which reads every trial's descriptions with it
from webmcp_eval.judge.instructions import instructions_in as instructions_in

# ---- content the site did not write -----------------------------------------------------------------------

# "review" alone is read as a noun only with a word that makes it one ("customer review", "a review"): "to review
# items", "review your cart" ask for a look, not for text others wrote
THIRD_PARTY_WORDS = re.compile(
    r"\b(reviews|(customer|user|product|guest|buyer|star|written|a|the|each|latest|top) review|"
    r"comments?|messages|inbox|e-?mails|posts|forum|threads|replies|chat|guestbook|testimonials?|"
    r"user[- ]generated|other sites|the web|web pages?|third[- ]party|feeds?|tweets?|listings? by)\b",
    re.I,
)
THIRD_PARTY_KEYS = re.compile(
    r"^(reviews?|comments?|messages|body|author|replies|reply|posts|snippet|excerpt|testimonials?|sender)$",
    re.I,
)


def untrusted_hint(tool: Tool) -> bool:
    return tool.untrusted_content  # the surface keeps one spelling of the hint, whoever said it


def third_party_by_description(tool: Tool) -> str | None:
    """Why the tool's own words say its answers carry text others wrote, or None."""
    found = THIRD_PARTY_WORDS.search(f"{tool.name.replace('_', ' ')} {tool.description}")
    return f"its name or description says it returns {found.group(0).lower()}" if found else None


def third_party_in_answer(result: object) -> str | None:
    """Why an answer carries text others wrote (a field named like reviews, messages, an author), or None."""
    if isinstance(result, dict):
        for key, value in result.items():
            if THIRD_PARTY_KEYS.match(str(key)) and value not in (None, "", [], {}):
                return f"its answer has a {key!r} field"
            inner = third_party_in_answer(value)
            if inner:
                return inner
    elif isinstance(result, list):
        for item in result[:20]:
            inner = third_party_in_answer(item)
            if inner:
                return inner
    return None


# ---- the capability trifecta ------------------------------------------------------------------------------

PRIVATE_WORDS = re.compile(
    r"\b(account|profile|orders?|order history|address(es)?|e-?mail address|phone|inbox|messages?|payment|card|"
    r"wallet|balance|bank|medical|health|private|personal|password|contacts?|calendar|documents?|files?)\b",
    re.I,
)
SEND_WORDS = re.compile(
    r"\b(send|sends|share|shares|publish|publishes|reply|forward|forwards|upload|uploads|export|exports|webhook|"
    r"tweet|notify)\b",
    re.I,
)
URL_PARAM = re.compile(r"^(url|uri|link|href|webhook|endpoint|callback|to|recipient|email)s?$", re.I)


def _words(tool: Tool) -> str:
    return f"{tool.name.replace('_', ' ').replace('-', ' ')} {tool.description}"


def private_data(tool: Tool) -> bool:
    return bool(PRIVATE_WORDS.search(_words(tool)))


def untrusted_content(tool: Tool) -> bool:
    return untrusted_hint(tool) or third_party_by_description(tool) is not None


def way_out(tool: Tool, params: Iterable[str]) -> bool:
    """A tool that can send data away: it writes and says it sends, or takes an address to send to."""
    if tool.read_only:
        return False
    return bool(SEND_WORDS.search(_words(tool))) or any(URL_PARAM.match(p) for p in params)
