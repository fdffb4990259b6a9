"""Every file view of the results is one registered Output (webmcp_eval/report/reporters.py OUTPUTS): its flag on run,
report and rejudge, its file in the run directory, its writer. Checked here for every output registered."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from eval_support import cli
from test_results import agent_traces

from webmcp_eval.cli import build_parser
from webmcp_eval.evaluation.output import check_writable_file
from webmcp_eval.report.reporters import (
    IN_RUN_DIR,
    OUTPUTS,
    JUnitReporter,
    Output,
    Reporters,
    ReportTargets,
    build_reporters,
)
from webmcp_eval.results.run_results import Results, RunInput, build_results
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.trace import write_atomic

COMMANDS = ("run", "report", "rejudge")


def results() -> Results:
    return build_results([RunInput(agent_traces(), None)])


def missing_parts(o: Output, tmp_path: Path) -> list[str]:
    """What a registered output lacks: a flag for its name, help, a writer that writes its file, a file of the
    run directory that is not the run's own record."""
    lacks = []
    if not o.name.isidentifier():
        lacks.append(f"{o.name!r}: no name a flag's value can be kept under")
    if o.flag != "--" + o.name.replace("_", "-"):
        lacks.append(f"{o.name}: flag {o.flag!r} is not --{o.name.replace('_', '-')}")
    if not o.help.strip():
        lacks.append(f"{o.name}: no help")
    target = tmp_path / o.name / "view"
    target.parent.mkdir(parents=True, exist_ok=True)
    problems = Reporters([o.writer(target, ReportTargets())]).end(results())
    if problems or not target.is_file() or not target.stat().st_size:
        lacks.append(f"{o.name}: its writer wrote nothing to {target.name} {problems}")
    if o.in_run_dir is not None:
        run = RunDir(tmp_path / "run")
        default = o.in_run_dir(run)
        if default.parent != run.path or run.owns(default):
            lacks.append(f"{o.name}: {default} is not a report file of the run directory")
    return lacks


def test_every_registered_output_has_every_part(tmp_path: Path) -> None:
    assert [line for o in OUTPUTS for line in missing_parts(o, tmp_path)] == []
    assert len({o.name for o in OUTPUTS}) == len({o.flag for o in OUTPUTS}) == len(OUTPUTS)


def test_an_output_that_lacks_a_part_is_found(tmp_path: Path) -> None:
    class WritesNothing(JUnitReporter):
        def end(self, results: Results) -> None:
            return None

    broken = Output("csv", "--comma", " ", lambda path, t: WritesNothing(path), lambda run: run.plan)
    assert missing_parts(broken, tmp_path) == [
        "csv: flag '--comma' is not --csv",
        "csv: no help",
        "csv: its writer wrote nothing to view []",
        f"csv: {RunDir(tmp_path / 'run').plan} is not a report file of the run directory",
    ]


def test_what_run_writes_into_its_directory_is_what_run_force_removes() -> None:
    files = {o.in_run_dir(RunDir(".")).name for o in OUTPUTS if o.in_run_dir is not None}
    assert files == set(RunDir.REPORTS)
    assert IN_RUN_DIR == ("json", "junit", "html")


def _command(name: str) -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_registered_flag_is_on_run_report_and_rejudge_with_help(command: str) -> None:
    options = {s: a for a in _command(command)._actions for s in a.option_strings}
    for o in OUTPUTS:
        assert o.flag in options and options[o.flag].dest == o.name and options[o.flag].help == o.help
    text = " ".join(cli(command, "--help").stdout.split())
    assert all(f"{o.flag} FILE {o.help}" in text for o in OUTPUTS)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_registered_flag_at_a_folder_is_one_line_and_exit_2_before_any_work(command: str, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"  # none: the flags are checked first
    before = sorted(tmp_path.iterdir())
    for o in OUTPUTS:
        args = [command, o.flag, str(tmp_path)] + ([str(run_dir)] if command != "run" else ["--out", str(run_dir)])
        out = cli(*args)
        assert out.returncode == 2, (o.flag, out.stdout, out.stderr)
        assert out.stderr.strip() == f"webmcp-eval {command}: {o.flag} {tmp_path}: is a directory; give a file path"
        assert out.stdout == ""
    assert sorted(tmp_path.iterdir()) == before  # nothing written, no run played


def test_a_flag_in_a_missing_folder_passes_the_check_and_the_writer_makes_it(tmp_path: Path) -> None:
    target = tmp_path / "runs" / "r" / "summary.md"  # inside the run directory the run is about to make
    check_writable_file(target, "--markdown")
    assert not (tmp_path / "runs").exists()  # the check makes nothing
    write_atomic(target, "# s\n")
    assert target.read_text() == "# s\n"


def test_a_flag_under_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    out = cli("report", str(tmp_path), "--markdown", str(tmp_path / "f" / "no" / "s.md"))
    assert out.returncode == 2
    assert out.stderr.strip() == (
        f"webmcp-eval report: --markdown {tmp_path / 'f' / 'no' / 's.md'}: {tmp_path / 'f'} is a file, "
        "not a directory; give a path in a directory"
    )


def test_build_reporters_refuses_a_name_no_output_has(tmp_path: Path) -> None:
    with pytest.raises(KeyError, match="no output 'csv'; the outputs are json, junit, html, markdown"):
        build_reporters(ReportTargets(files={"csv": [tmp_path / "x.csv"]}))


def test_outputs_are_regular_files_of_their_own_apart_from_what_the_command_reads(tmp_path: Path) -> None:
    import os

    from webmcp_eval.errors import UsageError
    from webmcp_eval.evaluation.output import check_outputs

    login, pipe = tmp_path / "login.json", tmp_path / "pipe"
    login.write_text("{}")
    os.mkfifo(pipe)
    (tmp_path / "link.json").symlink_to(login)
    check_outputs([("--json", tmp_path / "a.json"), ("--html", tmp_path / "new" / "a.html")], [login])
    refused = {
        "the command reads that file": ([("--html", login)], [login]),
        "reads that file": ([("--html", tmp_path / "link.json")], [login]),  # the same file by another name
        "not a regular file": ([("--json", pipe)], []),
        "also the file of --json": ([("--json", tmp_path / "a"), ("--sarif", tmp_path / "x" / ".." / "a")], []),
    }
    for message, (outputs, inputs) in refused.items():
        with pytest.raises(UsageError, match=message):
            check_outputs(outputs, inputs)
    assert login.read_text() == "{}"


def test_audit_and_schema_refuse_an_output_over_an_input_or_a_pipe_before_any_work(tmp_path: Path) -> None:
    import os

    login = tmp_path / "login.json"
    login.write_text('{"cookies": [], "origins": []}')
    os.mkfifo(tmp_path / "pipe")
    bad = cli("audit", "http://127.0.0.1:9/", "--storage-state", str(login), "--html", str(login))
    assert bad.returncode == 2 and "the command reads that file" in bad.stderr
    assert login.read_text() == '{"cookies": [], "origins": []}'
    bad = cli("schema", "-o", str(tmp_path / "pipe"))  # would block for ever on a pipe nobody reads
    assert bad.returncode == 2 and "not a regular file" in bad.stderr
