"""The command line as a user meets it: help, exit codes, validate's file:line, schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from eval_support import ROOT, cli, cli_process

from webmcp_eval.suite.loader import case_files


def test_help_explains_commands_and_exit_codes():
    out = cli("--help")
    assert out.returncode == 0
    for word in ("run", "validate", "report", "schema", "site", "mutate", "Exit codes"):
        assert word in out.stdout
    run_help = cli("run", "--help").stdout
    for flag in ("--grep", "--behaviour", "--headed", "--slowmo", "--workers", "--base-url", "--junit", "--json"):
        assert flag in run_help


def test_run_takes_a_time_zone_for_the_whole_run_and_refuses_one_the_browser_does_not():
    assert "--timezone" in cli("run", "--help").stdout
    out = cli("run", "--timezone", "Mars/Olympus", "SEL-02")
    assert out.returncode == 2 and "'Mars/Olympus' is not an IANA time zone" in out.stderr
    assert "Traceback" not in out.stderr


def test_mutate_help_names_its_flags():
    out = cli("mutate", "--help")
    assert out.returncode == 0
    for flag in ("--base-url", "--operators", "--workers", "--min-score", "--confirm", "mutation.json"):
        assert flag in out.stdout
    wrong = cli("mutate", "--confirm", "sometimes")
    assert wrong.returncode == 2 and len(wrong.stderr.strip().splitlines()) == 1, wrong.stderr


def test_mutate_refuses_an_unknown_operator_in_one_line():
    out = cli("mutate", "--operators", "nope")
    assert out.returncode == 2 and "unknown operator(s) nope" in out.stderr and "Traceback" not in out.stderr


def test_unknown_option_is_a_usage_error():
    assert cli("run", "--no-such-flag").returncode == 2


def test_validate_passes_on_the_suite():
    out = cli("validate")
    assert out.returncode == 0, out.stderr
    assert "39 case(s) valid" in out.stdout  # 36 scripted cases and 3 goal variants (AMB-01-G, AMB-02-G, CONF-01-G)


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
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)  # checked and built once, not once per case
    for path in case_files([ROOT / "cases"]):
        validator.validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    broken = yaml.safe_load((ROOT / "cases" / "SEL-01.yaml").read_text(encoding="utf-8"))
    broken["expect"]["calls"]["order"] = "whenever"
    try:
        validator.validate(broken)
    except jsonschema.ValidationError:
        pass
    else:
        raise AssertionError("the schema accepted an unknown call order")


def test_every_command_has_help():
    for command in (
        "run",
        "record",
        "replay",
        "report",
        "compare",
        "power",
        "validate",
        "schema",
        "site",
        "serve-example",
        "tools",
        "init",
        "import",
    ):
        out = cli(command, "--help")
        assert out.returncode == 0, f"{command} --help: {out.stderr}"
        assert "usage: webmcp-eval" in out.stdout


def test_markdown_summary_is_offered_by_run_and_report():
    for command in ("run", "record", "report"):
        out = cli(command, "--help")
        assert out.returncode == 0 and "--markdown FILE" in out.stdout and "Markdown summary" in out.stdout


# ---- one loading path: run validates as validate does, before any browser ----------------


def _suite_copy(tmp_path: Path, *names: str) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir()
    for name in (*names, "catalog.json"):
        (folder / name).write_bytes((ROOT / "cases" / name).read_bytes())
    return folder


def test_run_refuses_two_cases_with_one_id_and_runs_nothing(tmp_path):
    """Results are keyed by id: the second would overwrite the first and a failure could read as passed."""
    folder = _suite_copy(tmp_path, "SEL-01.yaml", "SEL-02.yaml")
    (folder / "SEL-01-again.yaml").write_bytes((folder / "SEL-02.yaml").read_bytes().replace(b"SEL-02", b"SEL-01"))
    for command in ("run", "record"):
        out = cli(command, str(folder), "--out", str(tmp_path / "out"))
        assert out.returncode == 2, out.stdout + out.stderr
        assert f"{folder / 'SEL-01.yaml'}:1: id: duplicate case id SEL-01" in out.stderr
        assert "nothing ran" in out.stderr and "--skip-invalid" in out.stderr
        assert "Traceback" not in out.stderr
        assert not (tmp_path / "out").exists()


def test_run_refuses_a_rule_that_cannot_fire_with_file_line_and_field(tmp_path):
    folder = _suite_copy(tmp_path, "SEL-01.yaml", "SEL-02.yaml")
    case = folder / "SEL-01.yaml"
    case.write_text(
        case.read_text(encoding="utf-8").replace("- {tool: save_event, why:", "- {tool: save_event, step: 99, why:"),
        encoding="utf-8",
    )
    line = next(n for n, text in enumerate(case.read_text(encoding="utf-8").splitlines(), 1) if "step: 99" in text)
    out = cli("run", str(folder), "--out", str(tmp_path / "out"))
    assert out.returncode == 2
    assert f"{case}:{line}: expect.calls.forbidden[0].step: the case has no step 99" in out.stderr
    assert not (tmp_path / "out").exists()


def test_validate_an_empty_folder_is_an_error(tmp_path):
    out = cli("validate", str(tmp_path))
    assert out.returncode == 2
    assert out.stderr.strip() == (
        f"no case files in {tmp_path} (cases are *.yaml / *.yml files; "
        "suite.yaml and the files it ignores are not cases)"
    )


def test_a_missing_or_malformed_catalog_is_one_line_and_exit_2(tmp_path):
    missing = cli("validate", "--catalog", str(tmp_path / "catalgo.json"))
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"catalog {tmp_path / 'catalgo.json'}: no such file"
    (tmp_path / "bad.json").write_text("{routes: 1}", encoding="utf-8")
    bad = cli("validate", "--catalog", str(tmp_path / "bad.json"))
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "not valid JSON" in bad.stderr and "Traceback" not in bad.stderr
    run = cli("run", "--catalog", str(tmp_path / "bad.json"), "--out", str(tmp_path / "out"))
    assert run.returncode == 2 and "not valid JSON" in run.stderr


def test_validate_names_the_catalog_it_used_or_says_checks_are_off(tmp_path):
    out = cli("validate")
    assert "tools checked against cases/catalog.json" in out.stdout
    folder = _suite_copy(tmp_path, "SEL-01.yaml", "SEL-02.yaml")
    (folder / "catalog.json").unlink()
    out = cli("validate", str(folder))
    assert out.returncode == 0, out.stderr
    assert "NOT checked" in out.stdout and "--catalog FILE" in out.stdout


def test_run_and_record_help_name_the_loading_flags():
    for command in ("run", "record"):
        text = cli(command, "--help").stdout
        assert "--skip-invalid" in text and "--catalog" in text


@pytest.mark.browser  # a real run: it starts Chromium
def test_skip_invalid_runs_the_rest_and_lists_the_invalid_as_not_run(tmp_path):
    """A real run (browser, site, proxy) of the one valid case; the invalid one is listed, exit 3."""
    folder = _suite_copy(tmp_path, "SEL-01.yaml")
    bad = folder / "SEL-03.yaml"
    bad.write_text(
        (folder / "SEL-01.yaml")
        .read_text(encoding="utf-8")
        .replace("id: SEL-01", "id: SEL-03")
        .replace("- {tool: save_event, why:", "- {tool: save_event, args: {eventId: {$in: evt-a7k2p9}}, why:"),
        encoding="utf-8",
    )
    line = next(n for n, text in enumerate(bad.read_text(encoding="utf-8").splitlines(), 1) if "$in: evt" in text)
    out = cli("run", str(folder), "--skip-invalid", "--out", str(tmp_path / "out"), "--run-id", "r")
    assert out.returncode == 3, out.stdout + out.stderr
    assert f"{bad}:{line}: expect.calls.forbidden[0].args.eventId.$in: $in takes a list" in out.stderr
    assert f"skipped (invalid, not run): {bad}" in out.stderr
    assert "1 invalid case file(s) skipped, not run" in out.stdout
    trials = sorted(p.name for p in (tmp_path / "out" / "r" / "trials").glob("*.json"))
    assert trials == ["SEL-01.t1.json"]
    assert "Traceback" not in out.stderr


# ---- every CLI mistake: one line, exit 2, never a traceback -----------------------


def _cli_probes(tmp_path: Path, busy_port: int) -> list[list[str]]:
    a_file = tmp_path / "a-file"
    a_file.write_text("x\n", encoding="utf-8")
    configs = {
        "not-yaml.yaml": b"hooks: [unclosed\n",
        "wrong-types.yaml": b"hooks: [1, 2]\nwrite_methods: 5\n",
        "unknown-key.yaml": b"world_cookie: w\nbase_ur: http://x\n",
        "not-utf8.yaml": b"world_cookie: \xff\xfe\n",
        "a-list.yaml": b"- reset\n",
    }
    for name, content in configs.items():
        (tmp_path / name).write_bytes(content)
    out = ["--out", str(tmp_path / "out")]
    return [
        ["run", "[/x]", *out],
        ["run", "--grep", "[", *out],
        ["run", "SEL-01", "--base-url", "http://127.0.0.1:99999", *out],
        ["run", "SEL-01", "--base-url", "not a url", *out],
        ["run", "SEL-01", "--trials", "0", *out],
        ["run", "SEL-01", "--trials", "-1", *out],
        ["run", "SEL-01", "--trials", "two", *out],
        ["run", "SEL-01", "-j", "0", *out],
        ["run", "SEL-01", "--hold-ms", "-1", *out],
        ["run", "SEL-01", "--slowmo", "-5", *out],
        ["run", "SEL-01", "--max-fixture-age", "nan", *out],
        ["run", "SEL-01", "--screenshot", "failing", *out],
        ["run", "SEL-01", "--max-steps", "0", *out],
        ["run", "SEL-01", "--max-seconds", "0", *out],
        ["run", "SEL-01", "--run-id", "../escape", *out],
        ["run", "SEL-01", "--site-config", str(tmp_path / "missing.yaml"), *out],
        ["run", "SEL-01", "--site-config", str(tmp_path), *out],
        *[["run", "SEL-01", "--site-config", str(tmp_path / name), *out] for name in configs],
        ["run", "SEL-01", "--out", str(a_file)],
        ["run", "SEL-01", "--out", str(a_file / "under-a-file")],
        ["run", "SEL-01", "--junit", str(a_file / "no-such-dir" / "junit.xml"), *out],
        ["run", "SEL-01", "--chromium", str(tmp_path / "no-chromium"), *out],
        ["run", "--resume", str(tmp_path / "no-run"), *out],
        ["run", "--resume", str(tmp_path), *out],
        ["run", "--resume", str(tmp_path), "SEL-01"],
        ["run", "SEL-01", "--rerun-not-run", *out],
        ["run", "SEL-01", "--last-failed", "--out", str(tmp_path / "no-runs-here")],
        ["report", str(tmp_path / "no-run")],
        ["site", "--port", "99999"],
        ["site", "--port", str(busy_port)],
        ["site", "--port", "0", "--data-dir", str(a_file)],
        ["serve-example", "shop", "--port", str(busy_port)],
        ["serve-example", "shop", "--port", "99999"],
        ["serve-example", "cafe"],
        ["schema", "-o", str(a_file / "case.schema.json")],
        ["power", "--base-rate", "0.5", "--cases", "0"],
    ]


def test_every_cli_mistake_is_one_line_and_exit_2(tmp_path):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        probes = _cli_probes(tmp_path, busy.getsockname()[1])
        results = [cli(*argv) for argv in probes]
    bad = []
    for argv, out in zip(probes, results, strict=True):
        lines = out.stderr.strip().splitlines()
        if out.returncode != 2 or len(lines) != 1 or "Traceback" in out.stderr + out.stdout:
            bad.append(f"{' '.join(argv)} -> exit {out.returncode}, stderr: {out.stderr!r}")
    assert not bad, "\n".join(bad)
    assert not (tmp_path / "out").exists(), "a rejected command wrote nothing"


def test_cli_mistakes_say_what_is_wrong_and_where(tmp_path):
    (tmp_path / "unknown-key.yaml").write_text("world_cookie: w\nbase_ur: http://x\n", encoding="utf-8")
    out = cli("run", "SEL-01", "--site-config", str(tmp_path / "unknown-key.yaml"), "--out", str(tmp_path))
    assert f"{tmp_path / 'unknown-key.yaml'}:2: base_ur: unknown key" in out.stderr
    assert "--trials: 0 is out of range: give a whole number from 1 to 1000" in cli("run", "--trials", "0").stderr
    assert "not a valid regular expression" in cli("run", "--grep", "[").stderr
    assert "No case matches the selection [/x]" in cli("run", "[/x]", "--out", str(tmp_path)).stderr


def test_the_new_run_flags_have_help():
    run_help = cli("run", "--help").stdout
    for flag in ("--resume", "--rerun-not-run", "--last-failed"):
        assert flag in run_help
    assert "--screenshot {on,off,only-on-failure}" in " ".join(run_help.split())


def test_grader_label_calibrate_and_mcp_have_help_and_flags():
    for command, words in (
        ("label", ("--labels", "--sample", "--seed")),
        ("calibrate", ("--labels", "--grader", "--grader-cassette", "kappa")),
        ("mcp", ("--base-url", "--route", "--transport", "--port", "--log", "--allow-host")),
        ("run", ("--grader", "--grader-model", "--grader-cassette", "--labels", "--harness", "--health-min-trials")),
    ):
        out = cli(command, "--help")
        assert out.returncode == 0, f"{command} --help: {out.stderr}"
        for word in words:
            assert word in out.stdout, (command, word)


def test_calibrate_prints_kappa_for_the_committed_labels():
    out = cli("calibrate")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Cohen's kappa" in out.stdout and "confusion" in out.stdout and "may gate a run" in out.stdout


def test_calibrate_without_labels_and_a_bad_grader_option_are_usage_errors(tmp_path):
    assert cli("calibrate", "--labels", str(tmp_path / "none.json")).returncode == 2
    out = cli("run", "SEL-01", "--grader", "openai", "--out", str(tmp_path))
    assert out.returncode == 2 and "needs --grader-model" in out.stderr and "Traceback" not in out.stderr


def test_init_help_names_its_flags_and_exit_codes_and_refuses_usage_mistakes(tmp_path):
    from webmcp_eval.evaluation.catalog import DISCOVERY_SETTLE_MS

    text = " ".join(cli("init", "--help").stdout.split())
    for word in ("--base-url", "--route", "-o DIR", "--settle-ms", "readOnlyHint", "Exit 2", "non-empty"):
        assert word in text, word
    assert f"(default {DISCOVERY_SETTLE_MS})" in text and f"(default {DISCOVERY_SETTLE_MS};" in " ".join(
        cli("tools", "--help").stdout.split()
    )
    for args, says in (
        (("init",), "--base-url"),
        (("init", "--base-url", "example.com"), "not an http(s) or file URL"),
        (("init", "--base-url", "http://127.0.0.1:9/", "--settle-ms", "-5"), "--settle-ms"),
    ):
        out = cli(*args, cwd=tmp_path)
        assert out.returncode == 2 and says in out.stderr and "Traceback" not in out.stderr, (args, out.stderr)
    assert not list(tmp_path.iterdir())  # a refused command writes nothing


def test_the_shard_flags_have_help():
    run_help = cli("run", "--help").stdout
    for flag in ("--shard", "--durations"):
        assert flag in run_help
    assert "merge" in cli("report", "--help").stdout
    bad = cli("run", "--shard", "3/2")
    assert bad.returncode == 2 and "i must be between 1 and n" in bad.stderr and "Traceback" not in bad.stderr
    alone = cli("run", "SEL-01", "--durations", "traces")
    assert alone.returncode == 2 and "--durations balances --shard" in alone.stderr


def test_the_retries_flag_has_help_and_a_range():
    run_help = cli("run", "--help").stdout
    assert "--retries" in run_help and "never retried" in run_help
    for bad in ("-1", "11", "x"):
        out = cli("run", "SEL-01", "--retries", bad)
        assert out.returncode == 2 and "--retries" in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_the_remote_browser_flags_have_help():
    run_help = cli("run", "--help").stdout
    for flag in ("--connect", "--connect-over-cdp", "--proxy-host", "--proxy-advertise"):
        assert flag in run_help
    assert "run-server" in run_help
    assert "--no-html" in cli("report", "--help").stdout


def test_report_and_compare_take_labels_for_the_human_label_series():
    for command in ("report", "compare"):
        out = cli(command, "--help")
        assert out.returncode == 0 and "--labels" in out.stdout and "human-label" in out.stdout, command


def test_label_import_has_help():
    out = cli("label", "--help")
    assert out.returncode == 0 and "--import" in out.stdout and "HTML report" in out.stdout


def test_replay_of_a_file_that_is_not_a_trace_names_it_once(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"run_id": 1}', encoding="utf-8")
    out = cli("replay", str(bad))
    assert out.returncode == 2
    assert out.stderr.strip() == f"{bad}: cannot replay: not a trace: run_id: Input should be a valid string"


def test_rejudge_and_the_null_agent_have_help():
    out = cli("rejudge", "--help")
    assert out.returncode == 0, out.stderr
    for flag in ("--suite DIR", "-o NEWRUN", "--keep-going", "--junit", "--markdown FILE"):
        assert flag in out.stdout, flag
    assert "never written" in " ".join(out.stdout.split())
    run_help = " ".join(cli("run", "--help").stdout.split())
    assert "none: the null agent" in run_help and "--control {none}" in run_help and "--baseline " not in run_help
    validate_help = " ".join(cli("validate", "--help").stdout.split())
    assert "--control " in validate_help and "--baselines" not in validate_help
    assert "null_agent: {passes: true, reason: ...}" in validate_help

    assert "none: the null agent" in run_help


def test_audit_help_names_its_flags_and_usage_errors_are_one_line(tmp_path):
    out = cli("audit", "--help")
    assert out.returncode == 0 and "usage: webmcp-eval audit" in out.stdout
    for flag in (
        "--route",
        "--max-pages",
        "--smoke",
        "--all-tools",
        "--watch-ms",
        "--json",
        "--sarif",
        "--markdown",
        "--html",
        "--contract",
        "--update-contract",
        "--suite",
    ):
        assert flag in out.stdout
    corrupt = tmp_path / "contract.json"
    corrupt.write_text("{oops")
    for args, message in (
        (["ftp://127.0.0.1/x"], "not an http(s) or file URL"),
        (["http://127.0.0.1:9/", "--contract", str(corrupt)], "not valid JSON"),
        (["http://127.0.0.1:9/", "--update-contract"], "--update-contract needs --contract FILE"),
        (["http://127.0.0.1:9/", "--all-tools"], "give it with --smoke"),
        (["http://127.0.0.1:9/", "--max-pages", "0"], "--max-pages 0"),
        (["http://u:pw@[::1"], "http://[::1: not a usable URL (Invalid IPv6 URL)"),  # no password shown
        (["http://127.0.0.1:9/", "--route", "file:///etc/hostname"], "is not a page of the web as"),
        (["http://127.0.0.1:9/\r"], "a space or a control character"),
        (["http://127.0.0.1:9/", "--header", "X: a\r\nb: c"], "its value holds a line break"),
    ):
        bad = cli("audit", *args)
        assert bad.returncode == 2 and message in bad.stderr and len(bad.stderr.strip().splitlines()) == 1, bad.stderr


# ---- goal cases: the simulated user's flags --------------------------------------------------


def test_run_help_names_the_simulated_user_flags():
    text = cli("run", "--help").stdout
    for flag in ("--user-simulator", "--user-model", "--user-api-base", "--user-cassette", "--user-cassette-dir"):
        assert flag in text


def test_a_simulated_user_without_a_model_is_one_line_and_exit_2():
    out = cli("run", "AMB-01-G", "--user-simulator", "openai")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "webmcp-eval run: invalid user simulator options: --user-simulator openai needs --user-model"
    ]


def test_the_console_script_runs_in_a_process_of_its_own():
    """The other tests call main() in this process; this one runs the installed ``webmcp-eval`` script."""
    import subprocess
    import sys

    script = Path(sys.executable).parent / "webmcp-eval"
    ok = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=900)
    assert ok.returncode == 0 and "Exit codes" in ok.stdout, ok.stderr
    bad = subprocess.run([str(script), "run", "--trials", "0"], capture_output=True, text=True, timeout=900)
    assert bad.returncode == 2 and "--trials: 0 is out of range" in bad.stderr and "Traceback" not in bad.stderr
    module = cli_process("power", "--base-rate", "1.5", "--delta", "0.1")
    assert module.returncode == 2 and module.stderr.count("\n") == 1 and "1.5 is out of range" in module.stderr


def test_playwright_trace_is_named_apart_from_our_trace_and_the_old_spelling_still_works(capsys):
    """`--playwright-trace` keeps Playwright's trace.zip; `--trace` (our trace is always kept) is its old
    spelling for one release: the same value, a one-line notice, and no line of its own in --help."""
    from webmcp_eval.cli import build_parser

    shown = cli("run", "--help").stdout
    assert "--playwright-trace {off,on,retain-on-failure}" in shown and "--trace " not in shown
    parser = build_parser()
    assert parser.parse_args(["run", "--playwright-trace", "on"]).playwright_trace == "on"
    assert capsys.readouterr().err == ""
    assert parser.parse_args(["record", "--trace", "retain-on-failure"]).playwright_trace == "retain-on-failure"
    assert capsys.readouterr().err == "webmcp-eval: --trace is deprecated: use --playwright-trace\n"
    assert parser.parse_args(["run"]).playwright_trace == "off"
    wrong = cli("run", "--trace", "always")
    assert wrong.returncode == 2 and "invalid choice: 'always'" in wrong.stderr and len(wrong.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    ("flag", "bad", "why"),
    [
        ("--base-url", "ftp://127.0.0.1/", "'ftp://127.0.0.1/' is not a URL like http://127.0.0.1:8000"),
        ("--base-url", "http://127.0.0.1:99999/", "'http://127.0.0.1:99999/' is not a usable URL (Port out of range"),
        ("--connect", "http://127.0.0.1:3000/", "is not a browser server endpoint like ws://127.0.0.1:3000/"),
        ("--connect", "ws://127.0.0.1:70000/", "is not a usable endpoint (Port out of range"),
        ("--connect-over-cdp", "file:///tmp/x", "is not a DevTools endpoint like http://127.0.0.1:9222"),
    ],
)
def test_a_url_flag_says_what_kind_of_url_it_wants(flag, bad, why):
    wrong = cli("run", flag, bad)
    assert wrong.returncode == 2 and why in wrong.stderr and len(wrong.stderr.splitlines()) == 1, wrong.stderr


def test_serve_example_serves_the_shipped_shop_and_its_cdn_until_stopped(tmp_path):
    """`webmcp-eval serve-example shop` from an empty folder: the shop's pages with the CDN's address written
    in, the CDN's web font and its sharing service; a taken port is one line (test_every_cli_mistake_...)."""
    import re
    import signal
    import subprocess
    import sys
    import urllib.request

    assert "static tea shop" in cli("serve-example", "--help").stdout
    argv = [sys.executable, "-m", "webmcp_eval.cli", "serve-example", "shop", "--port", "0"]
    served = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = served.stdout.readline()
        shop, cdn = re.fullmatch(r"the example shop: (\S+/demo/) \(its CDN: (\S+)\); Ctrl-C stops it\n", line).groups()
        page = urllib.request.urlopen(shop, timeout=30).read().decode()
        assert "__CDN__" not in page and cdn in page and "subscribe_newsletter" in page
        font = urllib.request.urlopen(f"{cdn}/leaf-sans.woff2", timeout=30).read()
        assert font[:4] == b"wOF2"
        share = urllib.request.Request(f"{cdn}/share", data=b"{}", method="POST")
        assert "share.example" in urllib.request.urlopen(share, timeout=30).read().decode()
    finally:
        served.send_signal(signal.SIGTERM)
        out, err = served.communicate(timeout=30)
    assert served.returncode == 0 and "Traceback" not in err, err
