"""run.json: where and how a run was played (site, browser, proxy, time zone), written when it starts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from webmcp_eval.data_file import RUN_FILE_DEPTH, FileProblem, load_json
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.trace import write_atomic


def write_run_info(run_dir: Path, info: dict[str, Any]) -> None:
    write_atomic(RunDir(run_dir).run_info, json.dumps(info, indent=2, ensure_ascii=False) + "\n")


def read_run_info(run_dir: Path) -> dict[str, Any]:
    """run.json as written, or nothing when there is none (or it cannot be read)."""
    try:
        info = load_json(RunDir(run_dir).run_info, RUN_FILE_DEPTH)
    except FileProblem:
        return {}
    return info if isinstance(info, dict) else {}


def read_run_id(run_dir: Path) -> str:
    """The run id run.json names (a text), else the directory's name."""
    run_id = read_run_info(run_dir).get("run_id")
    return run_id if isinstance(run_id, str) and run_id else run_dir.name
