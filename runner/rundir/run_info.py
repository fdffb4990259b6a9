"""run.json: where and how a run was played (site, browser, proxy, time zone), written when it starts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from runner.trace import write_atomic

RUN_INFO_FILE = "run.json"


def write_run_info(run_dir: Path, info: dict[str, Any]) -> None:
    write_atomic(run_dir / RUN_INFO_FILE, json.dumps(info, indent=2, ensure_ascii=False) + "\n")


def read_run_info(run_dir: Path) -> dict[str, Any]:
    """run.json as written, or nothing when there is none (or it cannot be read)."""
    try:
        info = json.loads((run_dir / RUN_INFO_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def read_run_id(run_dir: Path) -> str:
    """The run id run.json names, else the directory's name."""
    try:
        return json.loads((run_dir / RUN_INFO_FILE).read_text(encoding="utf-8"))["run_id"]
    except (OSError, ValueError, KeyError):
        return run_dir.name
