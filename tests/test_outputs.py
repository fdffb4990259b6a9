"""Every file view of the results is one registered Output (webmcp_eval/report/reporters.py OUTPUTS): its flag on run,
report and rejudge, its file in the run directory, its writer. Checked here for every output registered."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from eval_support import cli
from test_results import agent_traces

from webmcp_eval.cli import build_parser
from webmcp_eval.report.files import check_writable_file
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
    from webmcp_eval.report.files import check_outputs

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


def _run_of_two_not_run_trials(folder: Path) -> Path:
    """The recorded day26 run, its two trials made not_run: one of a seed suite case (as an installed run reads
    it, by its absolute path in the package), one of a case under the working folder, by its absolute path."""
    import json
    import shutil

    import webmcp_eval

    run = folder / "run"
    shutil.copytree(Path(webmcp_eval.HOME) / "traces" / "day26", run)
    files = {"SEL-01": webmcp_eval.SEED_SUITE / "SEL-01.yaml", "SEL-02": folder / "mine" / "SEL-02.yaml"}
    for case, file in files.items():
        trace = run / "trials" / f"{case}.t1.json"
        data = json.loads(trace.read_text(encoding="utf-8"))
        data.update(case_file=str(file), verdict="not_run", verdict_reason="the site did not answer")
        data["not_run_kind"] = "setup"
        trace.write_text(json.dumps(data), encoding="utf-8")
    return run


def test_case_files_are_shown_as_the_user_knows_them(tmp_path: Path) -> None:
    """The console's why line, report.html's case rows, junit.xml and the Markdown say <seed suite>/SEL-01.yaml,
    not the package's folder, and a case under the working folder by its path from there."""
    import webmcp_eval

    run = _run_of_two_not_run_trials(tmp_path)
    done = cli("report", "run", "--junit", "j.xml", "--html", "r.html", "--markdown", "r.md", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert "SEL-01.t1 not_run (<seed suite>/SEL-01.yaml)" in done.stdout
    assert "SEL-02.t1 not_run (mine/SEL-02.yaml)" in done.stdout
    junit = (tmp_path / "j.xml").read_text(encoding="utf-8")
    assert 'file="&lt;seed suite&gt;/SEL-01.yaml"' in junit and 'file="mine/SEL-02.yaml"' in junit
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "&lt;seed suite&gt;/SEL-01.yaml" in html and "mine/SEL-02.yaml" in html
    markdown = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "not_run (&lt;seed suite&gt;/SEL-01.yaml)" in markdown and "not_run (mine/SEL-02.yaml)" in markdown
    seed, mine = str(webmcp_eval.SEED_SUITE), str(tmp_path / "mine")
    for text in (done.stdout, junit, html, markdown):
        assert seed not in text and mine not in text
    # the traces keep the path itself: replay reads it
    assert seed in (run / "trials" / "SEL-01.t1.json").read_text(encoding="utf-8")


def test_outputs_are_written_readable_by_others_as_open_writes_them(tmp_path: Path) -> None:
    """0644 under the usual umask (mkstemp's 0600 is for secrets; outputs are redacted before writing); a file
    its owner made private stays so when written again."""
    import os
    import stat

    umask = os.umask(0o022)
    os.umask(umask)
    run = _run_of_two_not_run_trials(tmp_path)
    private = tmp_path / "private.xml"
    private.write_text("", encoding="utf-8")
    private.chmod(0o600)
    done = cli("report", "run", "--junit", "private.xml", "--html", "r.html", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    for written in (tmp_path / "r.html", run / "summary.json"):
        assert stat.S_IMODE(written.stat().st_mode) == 0o666 & ~umask, written
    assert stat.S_IMODE(private.stat().st_mode) == 0o600 and private.read_text(encoding="utf-8")
    write_atomic(tmp_path / "new.json", "{}")
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o666 & ~umask


def test_a_report_the_disk_refuses_says_how_to_write_it_again_from_the_kept_traces(tmp_path: Path, capsys) -> None:
    import errno

    from webmcp_eval.evaluation.reporting import ReportsNotWritten, end_reports

    class FullDisk:
        path = tmp_path / "report.html"

        def begin(self, plan: object) -> None: ...

        def trial_done(self, trace: object) -> None: ...

        def end(self, results: object) -> None:
            raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(ReportsNotWritten) as refused:
        end_reports(Reporters([FullDisk()]), results(), rebuild=f"webmcp-eval report {tmp_path}")
    said = " ".join(capsys.readouterr().err.split())
    assert refused.value.exit_code == 3 and "cannot write" in said and "No space left on device" in said
    assert (
        refused.value.line("run")
        == f"the traces are kept: make room, then write the reports with: webmcp-eval report {tmp_path}"
    )
