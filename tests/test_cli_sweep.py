"""CLI probes a new user might type: a usage mistake is one line and exit 2, never an internal error.

Each probe runs the real command line in this process (``webmcp_eval.cli.main``) with WEBMCP_EVAL_DEBUG set,
so an internal error would raise here instead of printing one line. A probe's output must not say
``internal error``, and a usage error is one line that says what to do. Probes that open Chromium
are marked ``browser``.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest
from eval_support import ROOT, cli, in_thread

from webmcp_eval.cli import SHOWN_PROBLEMS, main

TRACE_FILES = ROOT / "tests" / "trace_files"


@pytest.fixture
def run(monkeypatch, capsys):
    monkeypatch.setenv("WEBMCP_EVAL_DEBUG", "1")

    def probe(*args: str) -> tuple[int, list[str]]:
        code = in_thread(main, list(args))  # its asyncio.run beside pytest-playwright's loop
        captured = capsys.readouterr()
        lines = [line for line in (captured.err + captured.out).splitlines() if line.strip()]
        assert not any("internal error" in line or "Traceback" in line for line in lines), lines
        return code, lines

    return probe


def _one_line(run, words: str, *args: str) -> None:
    code, lines = run(*args)
    assert code == 2, (args, lines)
    assert len(lines) == 1 and words in lines[0], (args, lines)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("power", "--base-rate", "0.6", "--delta", "1e-300", "--cases", "20"), "--delta 1e-300 is too small"),
        (("power", "--base-rate", "0.6", "--delta", "1e-300"), "--delta 1e-300 is too small"),
        (("power", "--base-rate", "1.5", "--delta", "0.1"), "--base-rate: 1.5 is out of range"),
        (("mutate", "--site-config", "/no/such.yaml"), "--site-config /no/such.yaml: no such file"),
        (("mutate", "-j", "0"), "-j/--workers: 0 is out of range"),
        (("mutate", "--min-score", "nan"), "--min-score: nan is out of range"),
        (("mutate", "--min-score", "101"), "--min-score: 101 is out of range"),
        (("mutate", "--clean-runs", "0"), "--clean-runs: 0 is out of range"),
        (("mutate", "--operators", "nope"), "--operators: unknown operator(s) nope; one of: "),
        (("mcp", "--base-url", "not-a-url"), "'not-a-url' is not a URL"),
        (("mcp", "--base-url", "http://127.0.0.1:1/", "--port", "99999"), "--port: 99999 is out of range"),
        (("mcp", "--allow-host", "http://evil.example/"), "--allow-host: 'http://evil.example/' is not a host name"),
        (("mcp", "--allow-host", "a b"), "--allow-host: 'a b' is not a host name"),
        (("run", "--health-min-trials", "-5"), "--health-min-trials: -5 is out of range"),
        (("label", "--sample", "-1", "/tmp"), "--sample: -1 is out of range"),
        # every number has an upper bound: a few zeros too many never plans a hundred million trials
        (("run", "--trials", "100000000"), "--trials: 100000000 is out of range: give a whole number from 1 to 1000"),
        (("run", "-j", "100000"), "-j/--workers: 100000 is out of range"),
        (("run", "--hold-ms", "99999999"), "--hold-ms: 99999999 is out of range"),
        (("run", "--max-tokens", "10000000000"), "--max-tokens: 10000000000 is out of range"),
        (("run", "--max-seconds", "1e9"), "--max-seconds: 1e9 is out of range"),
        (("mutate", "--clean-runs", "5000"), "--clean-runs: 5000 is out of range"),
        (("power", "--base-rate", "0.6", "--delta", "0.1", "--trials", "99999"), "--trials: 99999 is out of range"),
        (("label", "--seed", "-1", "/tmp"), "--seed: -1 is out of range"),
        (("tools", "http://127.0.0.1:9/", "--settle-ms", "-5"), "--settle-ms: -5 is out of range"),
        (("init", "--base-url", "http://127.0.0.1:9/", "--settle-ms", "99999999"), "--settle-ms: 99999999 is out"),
        (("validate", "/no/such/folder"), "/no/such/folder: no such file or folder"),
        (("validate", "--route", "/cart"), "--route names a route whose tools --live reads"),
        (("validate", "--live", "http://127.0.0.1:9/", "--catalog", "x.json"), "not both"),
        (("validate", "--live", "not-a-url"), "--live not-a-url: not a URL"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else None,
)
def test_a_usage_mistake_is_one_line_and_exit_2(run, args, words):
    _one_line(run, words, *args)


def test_a_file_given_as_suite_is_not_a_folder_never_an_evals_json(run, tmp_path):
    evals = tmp_path / "evals.json"
    evals.write_text("[]", encoding="utf-8")
    for command in ("validate", "run"):
        _one_line(run, f"--suite {evals}: not a folder", command, "--suite", str(evals))


def test_a_suite_yaml_that_is_a_folder_is_an_error(run, tmp_path):
    shutil.copy(ROOT / "cases" / "SEL-01.yaml", tmp_path)
    (tmp_path / "suite.yaml").mkdir()
    _one_line(run, "suite.yaml: not a file", "validate", str(tmp_path))


def test_a_case_file_that_links_to_nothing_is_a_problem_not_skipped(run, tmp_path):
    for name in ("SEL-01.yaml", "SEL-02.yaml"):
        shutil.copy(ROOT / "cases" / name, tmp_path)
    os.symlink(tmp_path / "gone.yaml", tmp_path / "SEL-03.yaml")
    code, lines = run("validate", str(tmp_path))
    assert code == 2 and lines[0] == f"{tmp_path / 'SEL-03.yaml'}:1: no such file", lines


def test_labels_that_name_a_folder_are_an_error(run, tmp_path):
    run_dir = tmp_path / "run"
    (run_dir / "trials").mkdir(parents=True)
    shutil.copy(TRACE_FILES / "ORD-02.t1.json", run_dir / "trials")
    _one_line(run, "a folder, not a labels file", "label", "--labels", str(tmp_path), str(run_dir))


def test_report_of_two_runs_into_a_file_is_one_line(run, tmp_path):
    dirs = []
    for name in ("ORD-02.t1.json", "STALE-02.t1.json"):
        run_dir = tmp_path / name.split(".")[0]
        (run_dir / "trials").mkdir(parents=True)
        shutil.copy(TRACE_FILES / name, run_dir / "trials")
        dirs.append(str(run_dir))
    out = tmp_path / "report.html"
    out.write_text("", encoding="utf-8")
    _one_line(run, "is a file, not a directory", "report", *dirs, "--out", str(out))


def test_import_of_an_empty_list_writes_nothing_and_exits_2(run, tmp_path):
    evals = tmp_path / "evals.json"
    evals.write_text("[]", encoding="utf-8")
    code, lines = run("import", str(evals), "-o", str(tmp_path / "out"))
    assert code == 2 and "no evals in the file (an empty list): nothing to import" in lines[0], lines
    assert not (tmp_path / "out").exists()


def test_import_prints_at_most_20_problems_then_how_many_more(run, tmp_path):
    evals = tmp_path / "evals.json"
    evals.write_text(json.dumps(list(range(500))), encoding="utf-8")
    code, lines = run("import", str(evals), "-o", str(tmp_path / "out"))
    assert code == 2
    assert [line.startswith(f"{evals}:") for line in lines[:SHOWN_PROBLEMS]] == [True] * SHOWN_PROBLEMS
    assert lines[SHOWN_PROBLEMS] == f"… and {500 - SHOWN_PROBLEMS} more"
    assert lines[SHOWN_PROBLEMS + 1] == "500 problem(s)"


def test_import_is_linear_in_the_number_of_evals(tmp_path, monkeypatch):
    """Each eval reads only its own lines, so the work per eval does not grow with the file (counted, not timed).

    It read every line of the file once per eval: 1 MB took 8.6 s and 5 MB 151 s.
    """
    from webmcp_eval.suite import evals_json

    one = json.loads((ROOT / "tests" / "static_site" / "evals.json").read_text(encoding="utf-8"))
    real, read = evals_json._case_lines, []
    monkeypatch.setattr(
        evals_json, "_case_lines", lambda i, names, mine, lines: read.append(len(mine)) or real(i, names, mine, lines)
    )
    for copies in (1, 30):
        read.clear()
        path = tmp_path / f"evals-{copies}.json"
        path.write_text(json.dumps([dict(e, name=f"{e['name']}-{k}") for k in range(copies) for e in one]), "utf-8")
        assert len(evals_json.convert(path).cases) == copies * len(one)
        assert max(read) < 60, (copies, max(read))  # an eval's own values, whatever the file's size


def test_validate_help_names_live_and_route():
    out = cli("validate", "--help")
    assert out.returncode == 0
    assert "--live URL" in out.stdout and "--route R" in out.stdout


@pytest.mark.browser
def test_mcp_against_a_closed_port_is_not_run_in_one_line(run):
    code, lines = run("mcp", "--base-url", "http://127.0.0.1:1/")
    assert code == 3 and len(lines) == 1 and "the page could not be opened" in lines[0], lines


def _float_options() -> list[tuple[str, str]]:
    """(command, option) for every option of every command that takes a number with a fraction."""
    import argparse

    from webmcp_eval.cli import build_parser

    found = []
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name, parser in commands.choices.items():
        for action in parser._actions:
            if not action.option_strings or not callable(action.type):
                continue
            try:
                takes_fraction = isinstance(action.type("0.5"), float)
            except (argparse.ArgumentTypeError, ValueError, TypeError):
                takes_fraction = False
            if takes_fraction:
                found.append((name, action.option_strings[-1]))
    return sorted(set(found))


FLOAT_OPTIONS = _float_options()


def test_the_float_options_are_found():
    assert {("power", "--alpha"), ("run", "--max-seconds"), ("run", "--slowmo"), ("mutate", "--min-score")} <= set(
        FLOAT_OPTIONS
    )


@pytest.mark.parametrize(("command", "option"), FLOAT_OPTIONS, ids=lambda v: v)
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999", "NaN", "-Infinity"])
def test_no_float_option_takes_nan_or_infinity(run, command: str, option: str, value: str):
    _one_line(run, f"{option}: {value} is out of range", command, f"{option}={value}")
