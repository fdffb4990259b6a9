"""Each command's core takes a request (a frozen dataclass) that the command line builds from its arguments, and
raises an EvalError that carries its exit code; the pytest plugin, the benchmarks and the tests call the same cores.
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from webmcp_eval.audit.command import AuditRequest
from webmcp_eval.cli import build_parser
from webmcp_eval.cli.common import request_of
from webmcp_eval.errors import EXIT_INVALID, EXIT_NOT_RUN, CannotRun, EvalError, InvalidInput, UsageError
from webmcp_eval.evaluation.labelling import CalibrateRequest, LabelRequest
from webmcp_eval.evaluation.loading import load_cases
from webmcp_eval.evaluation.rejudging import RejudgeRequest
from webmcp_eval.evaluation.replay import ReplayRequest
from webmcp_eval.evaluation.reporting import ReportFiles
from webmcp_eval.evaluation.reports import AnalyzeRequest, CompareRequest, PowerRequest, ReportRequest, report_command
from webmcp_eval.evaluation.run import RunRequest
from webmcp_eval.evaluation.serving import McpRequest, MutateRequest, ServeExampleRequest, SiteRequest
from webmcp_eval.evaluation.suite_files import ExportRequest, ImportRequest, InitRequest, SchemaRequest, ToolsRequest
from webmcp_eval.evaluation.validation import ValidateRequest, validate_command
from webmcp_eval.play.browser.browser import ChromiumNotFound
from webmcp_eval.report.reporters import OUTPUTS
from webmcp_eval.rundir.reading import RunDirError
from webmcp_eval.suite.folder import SuiteError

ROOT = Path(__file__).resolve().parent.parent

REQUESTS: dict[str, type[Any]] = {
    "run": RunRequest,
    "record": RunRequest,
    "report": ReportRequest,
    "replay": ReplayRequest,
    "compare": CompareRequest,
    "analyze": AnalyzeRequest,
    "rejudge": RejudgeRequest,
    "power": PowerRequest,
    "mutate": MutateRequest,
    "label": LabelRequest,
    "calibrate": CalibrateRequest,
    "mcp": McpRequest,
    "validate": ValidateRequest,
    "import": ImportRequest,
    "export": ExportRequest,
    "tools": ToolsRequest,
    "init": InitRequest,
    "schema": SchemaRequest,
    "audit": AuditRequest,
    "site": SiteRequest,
    "serve-example": ServeExampleRequest,
}


def field_names(kind: type[Any]) -> set[str]:
    """Every field of a request, a nested request's fields in its place (as request_of fills them); the report
    files (``outputs``) come from the registered outputs' flags instead."""
    names: set[str] = set()
    for f in dataclasses.fields(kind):
        if f.default_factory is ReportFiles:
            continue
        nested = f.default_factory
        names |= field_names(nested) if isinstance(nested, type) and dataclasses.is_dataclass(nested) else {f.name}
    return names


def not_arguments(kind: type[Any], parser: argparse.ArgumentParser) -> set[str]:
    return field_names(kind) - {action.dest for action in parser._actions} - set(parser._defaults)


def commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_command_has_a_request_and_every_field_of_it_is_one_of_its_arguments() -> None:
    parsers = commands()
    assert set(parsers) == set(REQUESTS)
    missing = {name: not_arguments(kind, parsers[name]) for name, kind in REQUESTS.items()}
    assert {name: names for name, names in missing.items() if names} == {}
    takes_files = {name for name, kind in REQUESTS.items() if "outputs" in {f.name for f in dataclasses.fields(kind)}}
    assert takes_files == {"run", "record", "report", "rejudge"}
    for name in takes_files:  # their report files: one flag per registered output
        assert {o.name for o in OUTPUTS} <= {a.dest for a in parsers[name]._actions}


def test_a_request_field_no_argument_fills_is_found() -> None:
    @dataclasses.dataclass(frozen=True)
    class Renamed:
        run_dirs: tuple[str, ...]
        baseline_dir: str | None = None  # a flag renamed without its field

    assert not_arguments(Renamed, commands()["report"]) == {"baseline_dir"}


def test_the_command_line_builds_the_request_a_caller_would() -> None:
    args = build_parser().parse_args(["rejudge", "traces/r1", "--suite", "cases", "--keep-going", "--json", "s.json"])
    request = request_of(RejudgeRequest, args, outputs=ReportFiles.of(args))
    assert request.run_dir == "traces/r1" and request.suite == "cases" and request.keep_going
    assert request.outputs.paths == {"json": "s.json"} and request.output is None
    run = request_of(RunRequest, build_parser().parse_args(["run", "SEL-01", "-b", "selection", "--agent", "none"]))
    assert run.cases == ("SEL-01",) and run.behaviour == ("selection",) and run.agent.agent.provider == "none"
    assert run.trials is None and run.grader.grader.cassette == "off"  # not given: the request's default
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.workers = 4  # type: ignore[misc]


def test_a_request_refuses_what_cannot_work_before_anything_loads() -> None:
    with pytest.raises(UsageError, match="--resume plays the plan of RUN_DIR as it is") as refused:
        RunRequest(resume="traces/r1", trials=3).check()
    assert refused.value.exit_code == EXIT_INVALID and refused.value.line("run").startswith("webmcp-eval run: ")
    RunRequest(resume="traces/r1").check()  # resuming alone is fine


def test_the_cores_raise_errors_that_carry_their_exit_code(tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match="not a run directory") as missing:
        report_command(ReportRequest(run_dirs=(str(tmp_path / "nowhere"),)))
    assert isinstance(missing.value, InvalidInput) and missing.value.exit_code == EXIT_INVALID
    assert missing.value.line("report") == f"{tmp_path / 'nowhere'}: not a run directory"  # names its directory
    with pytest.raises(InvalidInput, match="not a folder"):
        load_cases([], None, str(tmp_path / "nowhere"))
    (tmp_path / "suite.yaml").write_text("behaviours: 3\n", encoding="utf-8")
    (tmp_path / "a.yaml").write_text("id: A\n", encoding="utf-8")
    with pytest.raises(SuiteError) as broken:  # the suite's own error is one the command line prints as is
        load_cases([str(tmp_path)], None)
    assert broken.value.exit_code == EXIT_INVALID and str(tmp_path / "suite.yaml") in broken.value.line("run")
    assert validate_command(ValidateRequest(paths=(str(ROOT / "cases"),))).exit_code == 0
    assert issubclass(ChromiumNotFound, CannotRun) and ChromiumNotFound("x").exit_code == EXIT_NOT_RUN
    assert all(issubclass(e, EvalError) for e in (UsageError, InvalidInput, CannotRun))


def test_loading_the_command_line_leaves_the_cores_unloaded() -> None:
    """--help and a usage mistake never pay for the browser, results or audit stacks."""
    probe = (
        "import sys, webmcp_eval.cli; print(sorted(m for m in sys.modules if m.startswith('webmcp_eval.evaluation.')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "['webmcp_eval.evaluation.output']"
