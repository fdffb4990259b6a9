"""The code stays ruff-clean and mypy-clean (the project's lint rules and type-check settings are in pyproject.toml)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(
    shutil.which("ruff") is None and not (Path(sys.executable).parent / "ruff").exists(), reason="ruff is not installed"
)
def test_ruff_check_is_clean():
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    out = subprocess.run([ruff, "check", "--quiet", "."], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_finds_nothing():
    """mypy --strict on webmcp_eval/ (and what it imports), as [tool.mypy] sets it: any error fails, with mypy's output.
    Its cache lives in the venv (or the temp folder), so a second run takes a second or two."""
    assert importlib.util.find_spec("mypy") is not None, "mypy is not installed: pip install -e '.[dev]'"
    venv = Path(sys.prefix)
    cache = venv / ".mypy_cache" if venv != Path(sys.base_prefix) else Path(tempfile.gettempdir()) / "webmcp-mypy"
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(cache)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stdout + out.stderr


# Scripts the tests start as processes of their own: their event loop is their own.
OWN_PROCESS = {"fake_harness.py"}


def test_no_test_calls_asyncio_run_in_the_main_thread():
    """After any browser test, pytest-playwright's event loop holds the main thread and asyncio.run
    refuses to start there: a test that calls it passes alone and fails in the whole suite.
    Tests run their coroutines through eval_support.in_thread(asyncio.run, ...) instead."""
    import ast

    offenders = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path.name in OWN_PROCESS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            func = node.func if isinstance(node, ast.Call) else None
            if isinstance(func, ast.Attribute) and func.attr == "run" and getattr(func.value, "id", "") == "asyncio":
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, "use eval_support.in_thread(asyncio.run, coro) at " + ", ".join(offenders)


def test_no_test_calls_the_cli_in_the_main_thread():
    """webmcp_eval.cli.main runs asyncio.run itself: called in-process it goes through
    eval_support.in_thread(main, args), for the same reason as above."""
    import ast

    offenders = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "webmcp_eval.cli"
            for alias in node.names
            if alias.name == "main"
        }
        for node in ast.walk(tree):
            func = node.func if isinstance(node, ast.Call) else None
            direct = isinstance(func, ast.Name) and func.id in names
            through_module = (
                isinstance(func, ast.Attribute) and func.attr == "main" and "cli" in getattr(func.value, "id", "")
            )
            if direct or through_module:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, "use eval_support.in_thread(main, args) at " + ", ".join(offenders)
