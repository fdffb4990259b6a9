"""scripts/structure.py: the project's structure in figures, and the circles it must not have."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "structure.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def test_help_says_what_it_counts() -> None:
    shown = _run("--help")
    assert shown.returncode == 0 and "Floors stack the rooms" in shown.stdout and "--top" in shown.stdout


def test_the_code_has_no_circle_and_no_arrow_up_and_says_so(tmp_path: Path) -> None:
    figures = _run("--top", "3")
    assert figures.returncode == 0, figures.stderr
    assert "arrows up or sideways 0\ncircles of rooms 0\ncircles of files 0\n" in figures.stdout
    assert "floor 1:" in figures.stdout and "longest functions (lines):" in figures.stdout
    # a made-up tree with a circle of two modules and one of two rooms is told as such
    for name, text in {
        "webmcp_eval/__init__.py": "",
        "webmcp_eval/a/__init__.py": "",
        "webmcp_eval/a/x.py": "from webmcp_eval.a import y\n",
        "webmcp_eval/a/y.py": "import webmcp_eval.a.x\nfrom webmcp_eval.b.z import f\n",
        "webmcp_eval/b/__init__.py": "",
        "webmcp_eval/b/z.py": "def f():\n    from webmcp_eval.a.x import g\n",
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    made_up = _run("--repo", str(tmp_path)).stdout
    assert "circles of files 1\n  webmcp_eval.a.x <-> webmcp_eval.a.y" in made_up
    assert "circles of rooms 1\n  webmcp_eval.a <-> webmcp_eval.b" in made_up
    assert "imports inside functions: webmcp_eval.b 1" in made_up
