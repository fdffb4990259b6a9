"""CI's script (.ci/run): the tests first, then the runner overhead benchmark, which is never a gate.

The script runs as it is, in a copy of the checkout's layout whose test command and benchmark
only say they ran and exit as told.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from eval_support import ROOT


def _ci(tmp_path: Path, tests_exit: int, bench: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / ".ci").mkdir()
    shutil.copy2(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "test.sh").write_text(f"#!/bin/sh\necho tests ran\nexit {tests_exit}\n")
    (tmp_path / "scripts" / "test.sh").chmod(0o755)
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "runner_overhead.py").write_text(f"import sys\nprint('bench', sys.argv[1:])\n{bench}\n")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").symlink_to(sys.executable)
    return subprocess.run(["bash", str(tmp_path / ".ci" / "run")], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("tests_exit", [0, 1])
@pytest.mark.parametrize("bench", ["", "raise SystemExit(3)"])
def test_ci_runs_the_benchmark_after_the_tests_and_exits_as_the_tests_did(tmp_path, tests_exit, bench) -> None:
    done = _ci(tmp_path, tests_exit, bench)
    assert done.returncode == tests_exit, done.stdout + done.stderr
    assert done.stdout.index("tests ran") < done.stdout.index("bench ['--ci']")
    assert ("the benchmark did not finish (exit 3); not a gate" in done.stdout) == bool(bench)


def test_the_readme_test_command_lists_the_slowest_tests() -> None:
    command = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert command == 'exec .venv/bin/python -m pytest --durations=20 "$@"'


def test_the_benchmarks_ci_mode_is_in_its_help() -> None:
    shown = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "runner_overhead.py"), "--help"], capture_output=True, text=True
    )
    assert shown.returncode == 0 and "--ci " in shown.stdout and "CI's short run" in shown.stdout
