"""Imports run one way (docs/architecture.md): checked on the source, so a wrong import fails here first."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONCRETE_AGENTS = ("webmcp_eval.agents.reference", "webmcp_eval.agents.model", "webmcp_eval.agents.harness")


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
        for path in sorted((root / folder).rglob("*.py"))
        for module, typing_only in imports(path)
        if module.startswith(bad) and not (allow_typing and typing_only)
    ]


def test_play_knows_agents_only_through_their_protocol() -> None:
    assert offenders("webmcp_eval/play", CONCRETE_AGENTS) == []


def test_agents_import_nothing_of_play() -> None:
    """Agents declare the tool host they are handed (webmcp_eval/agents/protocol.py), so no import runs
    from agents/ to play/, not even one for type checking: no cycle between the two."""
    assert offenders("webmcp_eval/agents", ("webmcp_eval.play",)) == []


def test_nothing_in_play_imports_the_trial_but_the_run() -> None:
    found = offenders("webmcp_eval/play", ("webmcp_eval.play.run.trial",))
    assert found == ["webmcp_eval/play/run/run.py: webmcp_eval.play.run.trial"]


def test_play_never_imports_the_demo_site_its_front_end_decides_to_start_it() -> None:
    """The front end hands a run the demo site to start (webmcp_eval/evaluation/demo_site.py, RunState.demo_site)."""
    assert offenders("webmcp_eval/play", ("webmcp_eval.site_under_test",)) == []


def test_the_checker_sees_a_wrong_import_and_lets_a_typing_one_pass(tmp_path) -> None:
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "typed.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from webmcp_eval.play.page.toolhost import ToolHost\n"
    )
    assert offenders("agents", ("webmcp_eval.play",), allow_typing=True, root=tmp_path) == []
    (tmp_path / "agents" / "wrong.py").write_text("import webmcp_eval.play.page.toolhost\n")
    found = offenders("agents", ("webmcp_eval.play",), allow_typing=True, root=tmp_path)
    assert found == ["agents/wrong.py: webmcp_eval.play.page.toolhost"]


def test_results_and_report_read_the_run_directory_not_play() -> None:
    """The run directory (webmcp_eval/rundir/) is the hand-off: what reads a run knows nothing of how it was played."""
    assert offenders("webmcp_eval/results", ("webmcp_eval.play",)) == []
    assert offenders("webmcp_eval/report", ("webmcp_eval.play",)) == []


def layers(doc: Path) -> list[str]:
    """The packages of the architecture diagram, top first: the first word of each of its lines that names one."""
    text = doc.read_text(encoding="utf-8").split("## Architecture", 1)[1]
    diagram = text.split("```", 2)[1]
    names = [line.split()[0] for line in diagram.splitlines() if line and not line[0].isspace()]
    return [n.removesuffix("/").removesuffix(".py").replace("/", ".") for n in names if "/" in n or n.endswith(".py")]


def upward_imports(doc: Path, root: Path = ROOT) -> list[str]:
    """Every import, typing ones included, of a package higher in the diagram than the importing file's own."""
    order = layers(doc)

    def layer(module: str) -> int | None:
        found = [i for i, name in enumerate(order) if module == name or module.startswith(name + ".")]
        return found[0] if found else None

    found = []
    for i, name in enumerate(order):
        base = root / name.replace(".", "/")
        files = sorted(base.rglob("*.py")) if base.is_dir() else [base.with_suffix(".py")]
        for path in files:
            for module, _typing in imports(path):
                above = layer(module)
                if above is not None and above < i:
                    found.append(f"{path.relative_to(root)}: {module} ({order[above]} is above {name})")
    return found


def test_every_package_imports_only_the_packages_below_it_in_the_architecture_diagram() -> None:
    order = layers(ROOT / "docs" / "architecture.md")
    assert order[:3] == ["webmcp_eval.cli", "webmcp_eval.pytest_plugin", "webmcp_eval.evaluation"] and order[-3:] == [
        "webmcp_eval.trace",
        "webmcp_eval.data_file",
        "webmcp_eval.proxies",
    ]
    assert {
        "webmcp_eval.play",
        "webmcp_eval.rundir",
        "webmcp_eval.results",
        "webmcp_eval.report",
        "webmcp_eval.audit",
    } <= set(order)
    assert upward_imports(ROOT / "docs" / "architecture.md") == []


def test_the_diagram_checker_sees_an_import_that_runs_back_up(tmp_path) -> None:
    doc = tmp_path / "architecture.md"
    doc.write_text(
        "## Architecture\n```\nwebmcp_eval/high/   top\n               more\nwebmcp_eval/low.py  bottom\n```\n"
    )
    (tmp_path / "webmcp_eval" / "high").mkdir(parents=True)
    (tmp_path / "webmcp_eval" / "high" / "a.py").write_text("from webmcp_eval.low import x\n")
    (tmp_path / "webmcp_eval" / "low.py").write_text("x = 1\n")
    assert layers(doc) == ["webmcp_eval.high", "webmcp_eval.low"]
    assert upward_imports(doc, tmp_path) == []
    (tmp_path / "webmcp_eval" / "low.py").write_text("from webmcp_eval.high.a import y\n")
    assert upward_imports(doc, tmp_path) == [
        "webmcp_eval/low.py: webmcp_eval.high.a (webmcp_eval.high is above webmcp_eval.low)"
    ]
