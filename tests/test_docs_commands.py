"""Every ``webmcp-eval`` command and flag the README and docs/ name exists: a doc that shows a
command the CLI refuses is a newcomer's first error."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from webmcp_eval.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# `webmcp-eval COMMAND ...` up to the end of the line or the closing backtick of inline code.
INVOCATION = re.compile(r"webmcp-eval\s+([a-z][a-z-]*)([^`\n]*)")
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


def commands() -> dict[str, set[str]]:
    """Each command of the parser with every option string it accepts."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {
        name: {opt for action in cmd._actions for opt in action.option_strings} for name, cmd in sub.choices.items()
    }


INLINE_CODE = re.compile(r"`([^`\n]+)`")


def code_in(text: str) -> list[tuple[int, str]]:
    """(line number, code) for the lines of fenced blocks and every inline code span: prose that
    says "webmcp-eval judges ..." is not an invocation."""
    code, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced:
            code.append((number, line.split(" #", 1)[0]))  # a shell comment is prose
        else:
            code += [(number, span) for span in INLINE_CODE.findall(line)]
    return code


def named_in_docs() -> list[tuple[str, int, str, list[str]]]:
    """(file, line, command, flags) for every invocation in the docs' code."""
    return [
        (doc.name, number, match.group(1), FLAG.findall(match.group(2)))
        for doc in DOCS
        for number, code in code_in(doc.read_text(encoding="utf-8"))
        for match in INVOCATION.finditer(code)
    ]


def test_the_docs_name_many_invocations() -> None:
    assert len(named_in_docs()) > 30


def test_every_command_and_flag_in_the_docs_exists() -> None:
    known = commands()
    wrong = []
    for doc, line, command, flags in named_in_docs():
        if command not in known:
            wrong.append(f"{doc}:{line}: no command {command!r}")
            continue
        wrong += [f"{doc}:{line}: {command} has no {flag}" for flag in flags if flag not in known[command]]
    assert wrong == []


@pytest.mark.parametrize("text", ["webmcp-eval nosuch --x", "webmcp-eval run --no-such-flag"])
def test_the_check_sees_a_wrong_command_or_flag(text: str) -> None:
    known = commands()
    match = INVOCATION.search(text)
    assert match
    command, flags = match.group(1), FLAG.findall(match.group(2))
    assert command not in known or any(flag not in known[command] for flag in flags)
