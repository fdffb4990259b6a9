"""The command line as a user meets it: help, exit codes, validate's file:line, schema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import yaml

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "runner.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_help_explains_commands_and_exit_codes():
    out = cli("--help")
    assert out.returncode == 0
    for word in ("run", "validate", "report", "schema", "site", "Exit codes"):
        assert word in out.stdout
    run_help = cli("run", "--help").stdout
    for flag in ("--grep", "--behaviour", "--headed", "--slowmo", "--workers", "--base-url", "--junit", "--json"):
        assert flag in run_help


def test_unknown_option_is_a_usage_error():
    assert cli("run", "--no-such-flag").returncode == 2


def test_validate_passes_on_the_suite():
    out = cli("validate")
    assert out.returncode == 0, out.stderr
    assert "20 case(s) valid" in out.stdout


def test_validate_reports_file_line_and_field(tmp_path):
    bad = tmp_path / "BAD-01.yaml"
    bad.write_text(
        "id: BAD-01\nbehaviour: selection\ntitle: t\nstart_route: /events\nsteps:\n"
        "  - user: hi\n    plan:\n      - call: search_events\n        args: {city: tokyo}\n"
        "expect:\n  calls:\n    expected:\n      - tool: search_event\n",
        encoding="utf-8",
    )
    out = cli("validate", str(bad), "--catalog", str(ROOT / "cases" / "catalog.json"))
    assert out.returncode == 2
    assert f"{bad}:9: steps[0].plan[0].args.city" in out.stderr
    assert f"{bad}:13: expect.calls.expected[0].tool: unknown tool 'search_event'" in out.stderr
    assert "Traceback" not in out.stderr


def test_validate_never_tracebacks_on_garbage(tmp_path):
    (tmp_path / "X-01.yaml").write_text("id: [unclosed\n", encoding="utf-8")
    (tmp_path / "Y-01.yaml").write_text("- just\n- a list\n", encoding="utf-8")
    out = cli("validate", str(tmp_path))
    assert out.returncode == 2
    assert (
        "X-01.yaml:2: not valid YAML" in out.stderr and "Y-01.yaml:1: a case file must be a YAML mapping" in out.stderr
    )
    assert "Traceback" not in out.stderr


def test_run_with_a_broken_case_file_is_invalid_input_and_runs_nothing(tmp_path):
    (tmp_path / "Z-01.yaml").write_text("id: Z-01\nbehaviour: selection\n", encoding="utf-8")
    out = cli("run", str(tmp_path), "--out", str(tmp_path / "out"))
    assert out.returncode == 2
    assert "Z-01.yaml" in out.stderr and "required field is missing" in out.stderr
    assert not (tmp_path / "out").exists()


def test_run_with_a_selection_that_matches_nothing(tmp_path):
    out = cli("run", "NOPE-*", "--out", str(tmp_path))
    assert out.returncode == 2
    assert "No case matches" in out.stderr


def test_schema_validates_every_case_file(tmp_path):
    out = cli("schema", "-o", str(tmp_path / "case.schema.json"))
    assert out.returncode == 0
    schema = json.loads((tmp_path / "case.schema.json").read_text(encoding="utf-8"))
    for path in sorted((ROOT / "cases").glob("*.yaml")):
        jsonschema.validate(yaml.safe_load(path.read_text(encoding="utf-8")), schema)
    broken = yaml.safe_load((ROOT / "cases" / "SEL-01.yaml").read_text(encoding="utf-8"))
    broken["expect"]["calls"]["order"] = "whenever"
    try:
        jsonschema.validate(broken, schema)
    except jsonschema.ValidationError:
        pass
    else:
        raise AssertionError("the schema accepted an unknown call order")


def test_every_command_has_help():
    for command in ("run", "record", "replay", "report", "compare", "power", "validate", "schema", "site"):
        out = cli(command, "--help")
        assert out.returncode == 0, f"{command} --help: {out.stderr}"
        assert "usage: webmcp-eval" in out.stdout


def test_markdown_summary_is_offered_by_run_and_report():
    for command in ("run", "record", "report"):
        out = cli(command, "--help")
        assert out.returncode == 0 and "--markdown FILE" in out.stdout and "Markdown summary" in out.stdout
