"""Site strings stay data: one sanitiser per kind of output, used by every writer.

A site under test (or a hostile one) chooses its tool names, descriptions, page errors and answers.
Whatever it puts in them must reach a report as text, never as an instruction to what shows the report:

- ``terminal``: control and escape characters (ESC sequences that set a window title, plant a
  hyperlink or erase lines; CR that overwrites a line; bidirectional overrides) shown as visible
  escapes (``\\x1b``), so a line says what the site sent and does nothing else;
- ``xml``: characters XML 1.0 does not allow (most C0 controls, lone surrogates) shown as visible
  escapes, so the document still parses (ElementTree escapes ``<``, ``&`` and quotes itself);
- ``markdown``: CR and LF made spaces, ``|`` and the characters Markdown reads as markup escaped (a
  ``]`` that would close a link or image, code and emphasis marks, ``#``), and HTML escaped, so a string
  stays inside its table cell or line and never becomes a heading, a link, an image or raw HTML;
- ``html``: escaped as Jinja's autoescape does (the HTML templates escape everything they render);
- ``json_text``: a JSON document for a terminal: the controls JSON itself leaves raw (C1, DEL, bidirectional
  overrides, line and paragraph separators) written as ``\\uXXXX`` escapes, which JSON reads back as the same text.

``SafeConsole`` is the rich console every command prints with: every string it renders goes
through ``terminal`` (newlines and tabs kept), tables' cells included.
"""

from __future__ import annotations

import html as _html
import re
from typing import Any

from rich.console import Console
from rich.text import Text

# C0 and C1 controls, DEL, and the invisible characters that reorder or break what a terminal shows
_CONTROLS = "\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_TERMINAL = re.compile(f"[{_CONTROLS}]")
_TERMINAL_LINES = re.compile("[" + _CONTROLS.replace("\x00-\x1f", "\x00-\x08\x0b-\x1f") + "]")  # LF, tab kept
_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_MARKDOWN_SPECIAL = re.compile(r"([\\`*|#]|\](?=[(\[])|^\[)")  # and ] that would open a link or image
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(match: re.Match[str]) -> str:
    ch = match.group(0)
    code = ord(ch)
    return _NAMED.get(ch) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def terminal(text: object, *, lines: bool = False) -> str:
    """Text for a terminal: every control character as a visible escape; ``lines`` keeps LF and tab."""
    pattern = _TERMINAL_LINES if lines else _TERMINAL
    return pattern.sub(_visible, str(text))


def xml(text: object) -> str:
    """Text an XML 1.0 document can hold: forbidden characters as visible escapes."""
    return _XML_INVALID.sub(_visible, str(text))


def markdown(text: object) -> str:
    """Text that stays one Markdown line or table cell: whitespace runs (CR, LF) one space, markup escaped."""
    flat = " ".join(_TERMINAL.sub(lambda m: " " if m.group(0) in "\r\n\t" else _visible(m), str(text)).split())
    escaped = _html.escape(flat, quote=False)
    return _MARKDOWN_SPECIAL.sub(r"\\\1", escaped)


def markdown_code(text: object) -> str:
    """A Markdown code span holding text as it is: a fence longer than any run of backticks in it, one line."""
    flat = " ".join(_TERMINAL.sub(lambda m: " " if m.group(0) in "\r\n\t" else _visible(m), str(text)).split())
    fence = "`" * (max((len(run) for run in re.findall("`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


_JSON_RAW = re.compile("[\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def json_text(text: str) -> str:
    """A JSON text (json.dumps, C0 already escaped) with every other control character as its \\uXXXX escape:
    they stand only inside strings, where the escape means the same character."""
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def html(text: object) -> str:
    return _html.escape(str(text), quote=True)


class SafeConsole(Console):
    """A rich console that renders every string through ``terminal`` (lines kept): no site string can
    drive the terminal, whether printed on its own or inside a table."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(terminal(text, lines=True), **kwargs)
