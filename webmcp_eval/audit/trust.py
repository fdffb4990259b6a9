"""Trust boundaries: text that speaks to the agent instead of describing, content the site did not write, and a
page that offers private data, untrusted content and a way out at once.

Injection is judged by what a text *does*, not by one phrase: it marks a role (``SYSTEM:`` anywhere, not only
at the start of a line), overrides what the agent was told (``ignore the user``), tells the agent to call one
of the page's own tools with a push aimed at the agent (``you must``, ``now``, ``without asking``, an override
or a role marker beside it), hides something from the person, or sends data out (a link to send it to, a
Markdown image whose URL carries a query). A text that names a tool in passing ("use search_items to narrow
the list") is help, not an instruction. ``tests/audit_corpus/injection.yaml`` holds the positive and negative
examples every change is held to.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from webmcp_eval.audit.model import Tool

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "an override",
        re.compile(
            r"\b(ignore|disregard|forget|override)\b.{0,40}\b(previous|prior|above|earlier|all|any|other|system)\b"
            r".{0,25}\b(instructions?|prompts?|rules?|messages?|guidelines)"
            r"|\b(ignore|disregard|forget|override)\s+(all\s+|any\s+|the\s+|your\s+|what\s+)?"
            r"(previous|prior|above|earlier|system|user|person|human|instructions?|rules?|guidelines|prompts?)\b",
            re.I | re.S,
        ),
    ),
    (
        "a role marker",
        # any case at the start of a line or a sentence; in capitals anywhere ("Great store! SYSTEM: ...")
        re.compile(
            r"(?i:(^|\n|[.!?]\s+)\s*(system|assistant|developer)\s*:)|\b(SYSTEM|ASSISTANT|DEVELOPER)\s*:"
            r"|(?i:<\|?(im_start|im_end|system|endoftext)\|?>|\[/?INST\]|</?(system|instructions?)>"
            r"|#{2,}\s*(system|instructions?)\b)"
        ),
    ),
    (
        "exfiltration phrasing",
        re.compile(
            r"\b(send|post|forward|upload|e-?mail|leak|exfiltrate|append|include)\b.{0,60}\b(password|"
            r"credentials?|cookies?|tokens?|secrets?|api keys?|conversation|chat history|previous messages|"
            r"user'?s? (data|address|e-?mail|phone|card)|personal data)",
            re.I | re.S,
        ),
    ),
    (
        "a link to send data to",
        # data sent to an address ("post the conversation to https://..."), or a Markdown image whose URL carries
        # a query (rendered, it sends what the query holds); "e-mail us at help@shop.test" is neither
        re.compile(
            r"\b(send|post|forward|upload|submit|leak|append)\b.{0,40}\b(it|this|that|them|everything|all|the "
            r"(data|details|conversation|history|results?|answer|summary|user'?s? \w+))\b.{0,30}(https?://|@)"
            r"|!\[[^\]]*\]\(\s*https?://[^)\s]*[?&][^)\s]*\)",
            re.I | re.S,
        ),
    ),
    (
        "concealment",
        re.compile(
            r"\b(do not|don't|never|without)\s+(tell|telling|inform|informing|mention|mentioning|reveal|revealing|"
            r"show|showing|ask|asking|notify|notifying|confirm|confirming)\b.{0,30}\b(the |this )?(user|human|"
            r"person|customer|them)\b",
            re.I | re.S,
        ),
    ),
    ("a zero-width character", re.compile("[\u200b-\u200f\u2060\ufeff]")),
    ("a bidirectional control character", re.compile("[\u202a-\u202e\u2066-\u2069]")),
]

# A push aimed at the agent: what turns "use x" from help into an instruction.
_PUSH = re.compile(
    r"\b(you|assistant|agent|AI|model)\s+(must|should|need to|have to|are required to|will)\b|\b(must|immediately|"
    r"right away|now|first|before (answering|replying|responding)|without (asking|confirmation|confirming))\b",
    re.I,
)
_CALL = r"\b(call|invoke|run|execute|trigger|use)\s+(the\s+)?(tool\s+)?[`'\"]?{name}\b"


# Characters a match of a pattern cannot do without: a text with none of them is not searched (every role marker
# ends in ":", ">", "]" or a "#" heading, and searching 10 MB of an answer for one took half a second).
_NEEDS = {"a role marker": ":>]#"}


def _may_match(kind: str, text: str) -> bool:
    needs = _NEEDS.get(kind)
    return needs is None or any(c in text for c in needs)


def instructions_in(text: str, tools: Iterable[str] = (), own: str = "") -> list[str]:
    """What in text speaks to the agent rather than describing: the kinds found, in order. tools: the names of
    the page's tools, so a text that tells the agent to call one of them is found (own: the tool whose text it
    is, not counted)."""
    kinds = [kind for kind, pattern in _PATTERNS if _may_match(kind, text) and pattern.search(text)]
    names = tuple(sorted(n for n in tools if n))
    named: list[str] = []
    # one pass over the text for every name at once; each name is looked for only when one of them is there (a
    # tool's 10 MB answer on a page of 50 tools was 50 passes, most of a smoke run's time). The pattern of all the
    # page's names is built once for the page, not once per tool (3,000 tools: 3,000 compiles of 3,000 names).
    if names and _any_call(names).search(text):
        named = [n for n in names if n != own and re.search(_CALL.format(name=re.escape(n)), text, re.I)]
    if named and (kinds or _PUSH.search(text)):
        kinds.append(f"an order to call {', '.join(sorted(named))}")
    return kinds


@functools.lru_cache(maxsize=8)
def _any_call(names: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(_CALL.format(name="(?:" + "|".join(map(re.escape, names)) + ")"), re.I)


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
