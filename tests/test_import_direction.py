"""Imports run one way (docs/architecture.md): checked on the source, so a wrong import fails here first."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONCRETE_AGENTS = ("runner.agents.reference", "runner.agents.model", "runner.agents.harness")


def imports(path: Path) -> list[tuple[str, bool]]:
    """(module, under TYPE_CHECKING) for every import of a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            typing_only |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, id(node) in typing_only))
        elif isinstance(node, ast.Import):
            found += [(alias.name, id(node) in typing_only) for alias in node.names]
    return found


def offenders(folder: str, bad: tuple[str, ...], allow_typing: bool = False, root: Path = ROOT) -> list[str]:
    return [
        f"{path.relative_to(root)}: {module}"
        for path in sorted((root / folder).glob("*.py"))
        for module, typing_only in imports(path)
        if module.startswith(bad) and not (allow_typing and typing_only)
    ]


def test_play_knows_agents_only_through_their_protocol() -> None:
    assert offenders("runner/play", CONCRETE_AGENTS) == []


def test_agents_import_nothing_of_play() -> None:
    """Agents declare the tool host they are handed (runner/agents/protocol.py), so no import runs
    from agents/ to play/, not even one for type checking: no cycle between the two."""
    assert offenders("runner/agents", ("runner.play",)) == []


def test_nothing_in_play_imports_the_trial_but_the_run() -> None:
    found = offenders("runner/play", ("runner.play.trial",))
    assert found == ["runner/play/run.py: runner.play.trial"]


def test_the_checker_sees_a_wrong_import_and_lets_a_typing_one_pass(tmp_path) -> None:
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "typed.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from runner.play.toolhost import ToolHost\n"
    )
    assert offenders("agents", ("runner.play",), allow_typing=True, root=tmp_path) == []
    (tmp_path / "agents" / "wrong.py").write_text("import runner.play.toolhost\n")
    found = offenders("agents", ("runner.play",), allow_typing=True, root=tmp_path)
    assert found == ["agents/wrong.py: runner.play.toolhost"]
