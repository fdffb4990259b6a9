"""Old spellings of renamed words (README.md, "Renamed"): each still works for one release, reads as its new
name and says so in one line where it was typed. Stored traces with old names: tests/test_trace.py."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from webmcp_eval.suite.folder import read_suite_file
from webmcp_eval.suite.loader import parse_case
from webmcp_eval.suite.site import load_site_config

CASE = textwrap.dedent("""\
    id: SEL-01
    behaviour: selection
    title: t
    start_route: /events
    steps:
      - user: find it
    expect:
      network:
        mutations: {total: 0}
    """)


def _case(path: Path) -> Any:
    return parse_case(path.read_text(encoding="utf-8"), str(path)).case.expect.network.writes


def _site_config(path: Path) -> Any:
    return load_site_config(path, None).write_methods


def _suite_site(path: Path) -> Any:
    config, _ = read_suite_file(path)
    return config.site.write_methods  # type: ignore[union-attr]


# (file name, its text with the old key, line of the old key, old path, new path, reader, what it reads)
FILE_KEYS: list[tuple[str, str, int, str, str, Callable[[Path], Any], Any]] = [
    ("SEL-01.yaml", CASE, 9, "expect.network.mutations", "expect.network.writes", _case, {"total": 0}),
    ("site.yaml", "mutation_methods: [POST]\n", 1, "mutation_methods", "write_methods", _site_config, ["POST"]),
    (
        "suite.yaml",
        "site:\n  base_url: http://127.0.0.1:8000\n  mutation_methods: [PUT]\n",
        3,
        "site.mutation_methods",
        "site.write_methods",
        _suite_site,
        ["PUT"],
    ),
]


@pytest.mark.parametrize(
    ("name", "text", "line", "old", "new", "read", "value"), FILE_KEYS, ids=[row[3] for row in FILE_KEYS]
)
def test_an_old_key_still_reads_and_says_its_new_name_at_its_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    text: str,
    line: int,
    old: str,
    new: str,
    read: Callable[[Path], Any],
    value: Any,
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert read(path) == value
    assert capsys.readouterr().err == f"{path}:{line}: {old} is deprecated: use {new}\n"
    new_key = new.rsplit(".", 1)[-1]
    path.write_text(text.replace(old.rsplit(".", 1)[-1] + ":", new_key + ":"), encoding="utf-8")
    assert read(path) == value
    assert capsys.readouterr().err == ""  # the new key: nothing said


def test_an_old_key_beside_its_new_one_is_an_unknown_field(tmp_path: Path) -> None:
    from webmcp_eval.suite.loader import CaseLoadError

    text = CASE.replace("    mutations: {total: 0}\n", "    mutations: {total: 0}\n    writes: {total: 1}\n")
    with pytest.raises(CaseLoadError) as err:
        parse_case(text, "SEL-01.yaml")
    assert [str(p) for p in err.value.problems] == ["SEL-01.yaml:9: expect.network.mutations: unknown field"]


# (command, old flag, new flag, the rest of a command line, the namespace's attribute, the value it holds)
FLAGS: list[tuple[str, str, str, list[str], str, Any]] = [
    ("power", "--baseline", "--base-rate", ["0.6", "--delta", "0.1"], "base_rate", 0.6),
    ("mutate", "--baseline-runs", "--clean-runs", ["3"], "clean_runs", 3),
    ("run", "--baseline", "--control", ["none"], "control", "none"),
]


@pytest.mark.parametrize(
    ("command", "old", "new", "rest", "dest", "value"), FLAGS, ids=[f"{r[0]} {r[1]}" for r in FLAGS]
)
def test_an_old_flag_still_works_says_its_new_name_and_is_not_in_help(
    capsys: pytest.CaptureFixture[str], command: str, old: str, new: str, rest: list[str], dest: str, value: Any
) -> None:
    from webmcp_eval.cli import build_parser

    parser = build_parser()
    assert getattr(parser.parse_args([command, new, *rest]), dest) == value
    assert capsys.readouterr().err == ""
    assert getattr(parser.parse_args([command, old, *rest]), dest) == value
    assert capsys.readouterr().err == f"webmcp-eval: {old} is deprecated: use {new}\n"
    with pytest.raises(SystemExit):
        parser.parse_args([command, "--help"])
    shown = capsys.readouterr().out
    assert f"{new} " in shown and f"{old} " not in shown


def test_validates_old_switch_baselines_still_works_says_control_and_is_not_in_help(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from webmcp_eval.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["validate"]).control is False
    assert parser.parse_args(["validate", "--control"]).control is True
    assert capsys.readouterr().err == ""
    assert parser.parse_args(["validate", "--baselines"]).control is True
    assert capsys.readouterr().err == "webmcp-eval: --baselines is deprecated: use --control\n"
    with pytest.raises(SystemExit):
        parser.parse_args(["validate", "--help"])
    shown = capsys.readouterr().out
    assert "--control " in shown and "--baselines" not in shown
