"""One loader for every YAML and JSON file (webmcp_eval/data_file.py): each damaged shape is one line, exit 2.

Each shape here was an internal error (exit 3) or a hang before the loader was shared: an empty or
YAML-typed suite.yaml, an alias bomb in it, JSON nested past the interpreter's stack in a catalog, a
schema.json or a trace, a catalog schema the jsonschema library itself refuses.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_cli import cli
from tests.test_trace import full_trace
from webmcp_eval import data_file
from webmcp_eval.data_file import DataFileError, parse_json, parse_yaml
from webmcp_eval.suite.validate import CatalogError, SuiteCatalog

ROOT = Path(__file__).resolve().parent.parent
BOMB = "behaviours:\n  x0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"  x{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9)
)


def a_suite(folder: Path, suite_yaml: str | None = "min_cases_per_behaviour: 0\n", catalog: object = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for case in ("NO-01", "NO-02"):
        (folder / f"{case}.yaml").write_text((ROOT / "cases" / f"{case}.yaml").read_text(encoding="utf-8"))
    if suite_yaml is not None:
        (folder / "suite.yaml").write_text(suite_yaml, encoding="utf-8")
    if catalog is not None:
        text = catalog if isinstance(catalog, str) else json.dumps(catalog)
        (folder / "catalog.json").write_text(text, encoding="utf-8")
    return folder


def one_line_exit_2(out, *expected: str) -> None:
    said = out.stdout + out.stderr
    assert out.returncode == 2, said
    assert "internal error" not in said and "Traceback" not in said, said
    flat = " ".join(said.split())  # a console may wrap a long line
    for text in expected:
        assert text in flat, said


@pytest.mark.parametrize(
    ("suite_yaml", "expected"),
    [
        ("min_cases_per_behaviour: !!binary aGVsbG8=\n", "suite.yaml:1: min_cases_per_behaviour: YAML tag !!binary"),
        ("min_cases_per_behaviour: 0\nignore: !!set {a, b}\n", "suite.yaml:2: ignore: YAML tag !!set"),
        ("behaviours: &a {x: *a}\n", "suite.yaml:1: refused: recursive alias *a"),
        ("ignore: " + "[" * 3000 + "]" * 3000 + "\n", "suite.yaml:1: refused: nested deeper than 100 levels"),
        (BOMB, "refused: more than 20000 values once aliases are expanded"),
        ("min_cases_per_behaviour: .nan\n", "suite.yaml:1: min_cases_per_behaviour: .nan is not a finite number"),
        (
            "min_cases_per_behaviour: 0\nmin_cases_per_behaviour: 1\n",
            "suite.yaml:2: min_cases_per_behaviour: duplicate",
        ),
    ],
)
def test_a_damaged_suite_yaml_is_one_line_at_its_line(tmp_path: Path, suite_yaml: str, expected: str) -> None:
    one_line_exit_2(cli("validate", str(a_suite(tmp_path / "s", suite_yaml))), expected)


def test_an_empty_suite_yaml_is_a_suite_with_every_default_and_a_date_is_text(tmp_path: Path) -> None:
    out = cli("validate", str(a_suite(tmp_path / "empty", "")))
    assert out.returncode == 0 and "internal error" not in out.stderr, out.stdout + out.stderr
    dated = a_suite(tmp_path / "dated", "min_cases_per_behaviour: 0\nbehaviours: {no_tool: 2024-01-01}\n")
    out = cli("validate", str(dated))
    assert out.returncode == 0, out.stdout + out.stderr


BAD_SCHEMAS = [
    ({"type": "object", "properties": [1]}, "routes./.t: properties: not valid JSON Schema"),
    ({"type": "object", "properties": {"a": {"$ref": "#/nope"}}}, "properties.a.$ref: '#/nope' does not resolve"),
    ({"type": "object", "properties": {"a": {"type": "strin"}}}, "properties.a.type: not valid JSON Schema"),
]


@pytest.mark.parametrize(("schema", "expected"), BAD_SCHEMAS)
def test_a_catalog_schema_the_meta_schema_refuses_is_one_line(tmp_path: Path, schema: dict, expected: str) -> None:
    catalog = {"routes": {"/": {"t": schema}}}
    one_line_exit_2(cli("validate", str(a_suite(tmp_path / "s", catalog=catalog))), expected)


def test_a_boolean_property_schema_is_valid_json_schema_and_reads_as_an_object(tmp_path: Path) -> None:
    catalog = SuiteCatalog({"routes": {"/": {"t": {"type": "object", "properties": {"a": True, "b": False}}}}})
    assert catalog.argument_schemas("t", "a") == [{}] and catalog.argument_schemas("t", "b") == [{"not": {}}]
    assert SuiteCatalog({"routes": {"/": {"t": True}}}).schemas("t") == [{}]


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize("levels", [150, 3000])
def test_json_nested_too_deeply_is_refused_in_a_catalog(tmp_path: Path, levels: int) -> None:
    path = tmp_path / "catalog.json"
    path.write_text('{"routes": {"/": {"t": {"enum": ' + deep(levels) + "}}}}", encoding="utf-8")
    with pytest.raises(CatalogError, match=r"catalog\.json:1: refused: nested deeper than 100 levels"):
        SuiteCatalog.load(path)


def test_a_deep_schema_json_is_refused_by_import(tmp_path: Path) -> None:
    (tmp_path / "evals.json").write_text(
        json.dumps([{"messages": [{"role": "user", "type": "message", "content": "hi"}], "expectedCall": None}])
    )
    (tmp_path / "schema.json").write_text('{"tools": ' + deep(3000) + "}", encoding="utf-8")
    out = cli("import", str(tmp_path / "evals.json"), "-o", str(tmp_path / "out"))
    one_line_exit_2(out, "schema.json:1: refused: nested deeper than 100 levels")
    (tmp_path / "schema.json").write_text(
        json.dumps({"tools": [{"name": "t", "inputSchema": {"properties": {"a": {"$ref": "#/x"}}}}]})
    )
    out = cli("import", str(tmp_path / "evals.json"), "-o", str(tmp_path / "out"))
    one_line_exit_2(out, "schema.json:1: tools[0].inputSchema: properties.a.$ref: '#/x' does not resolve")


@pytest.mark.parametrize("command", ["report", "rejudge", "compare", "analyze"])
def test_a_trace_nested_past_the_stack_is_one_line_for_every_reader(tmp_path: Path, command: str) -> None:
    run = tmp_path / "run"
    (run / "trials").mkdir(parents=True)
    (run / "trials" / "X-01.t0.json").write_text(deep(3000), encoding="utf-8")
    args = {"rejudge": ["-o", str(tmp_path / "new")], "compare": [str(run)]}.get(command, [])
    one_line_exit_2(cli(command, str(run), *args), "X-01.t0.json:1: refused: nested deeper than 200 levels")


def test_a_damaged_plan_or_run_json_is_one_line_or_ignored(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "trials").mkdir(parents=True)
    (run / "trials" / "SEL-01.t0.json").write_text(full_trace("SEL-01.t0").model_dump_json(), encoding="utf-8")
    (run / "run.json").write_text("[]", encoding="utf-8")  # not the mapping run.json is: the folder names the run
    out = cli("report", str(run))
    assert out.returncode in (0, 1) and "internal error" not in out.stderr, out.stdout + out.stderr
    (run / "plan.json").write_text(deep(3000), encoding="utf-8")
    one_line_exit_2(cli("report", str(run)), "plan.json:1: refused: nested deeper than 200 levels")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": NaN}', "NaN is not a finite number"),
        ('{"a":\n -Infinity}', "-Infinity is not a finite number"),
        ('{"a": "NaN", "b": [1,\n Infinity]}', "Infinity is not a finite number"),
    ],
)
def test_json_refuses_numbers_that_are_not_finite_at_their_line(text: str, expected: str) -> None:
    with pytest.raises(DataFileError) as err:
        parse_json(text)
    assert expected in str(err.value) and err.value.line == text.count("\n") + 1


def test_yaml_and_json_give_the_line_of_every_field() -> None:
    data, lines = parse_yaml("a:\n  b: [1, 2]\n")
    assert data == {"a": {"b": [1, 2]}} and lines[("a", "b")] == 2
    assert parse_yaml("") == (None, {})


def _outcome(text: str, *, fast: bool) -> object:
    saved = data_file._FAST
    data_file._FAST = saved if fast else None
    try:
        return parse_yaml(text)
    except DataFileError as err:
        return (str(err), err.line)
    finally:
        data_file._FAST = saved


# Where libyaml and PyYAML read a text differently, and the damaged shapes the guards refuse
CORNERS = [
    "a:\tb",  # a tab inside a plain scalar: libyaml takes it, PyYAML does not
    "a: !\n",  # a bare tag: "" for libyaml, null for PyYAML
    "\na: 1\n\ufeffb: 2",  # a byte-order mark past the start
    "{a: 1, ? b}",  # a "?" key inside a flow mapping
    "{a: !1, a: 2}",  # a text PyYAML refuses where libyaml reads a tag
    "{a: 1, a: 2}",
    "a: &x\n  b: *x\n",
    "[" * 120 + "]" * 120,
    BOMB,
    "a: .nan",
    "a: 2024-01-01",
    'a: "\\x01"',
    'key: "unterminated',
    "a: 1\n---\nb: 2",
]


@pytest.mark.parametrize(
    "text", CORNERS + [p.read_text(encoding="utf-8") for p in sorted((ROOT / "cases").glob("*.yaml"))]
)
def test_the_fast_reader_reads_every_text_as_the_pure_python_one_does(text: str) -> None:
    assert data_file._FAST is not None, "PyYAML's wheel carries libyaml"
    assert _outcome(text, fast=True) == _outcome(text, fast=False)


def test_a_declared_behaviour_without_cases_fails_the_coverage_rule(tmp_path: Path) -> None:
    suite = a_suite(
        tmp_path / "s", "behaviours:\n  no_tool: stops\n  checkout: buys once\nmin_cases_per_behaviour: 2\n"
    )
    out = cli("validate", str(suite))
    assert out.returncode == 2, out.stdout + out.stderr
    assert "suite.yaml:3: behaviours.checkout: behaviour checkout has 0 case(s)" in out.stdout + out.stderr
    (suite / "suite.yaml").write_text("behaviours:\n  no_tool: stops\nmin_cases_per_behaviour: 2\n")
    assert cli("validate", str(suite)).returncode == 0


@pytest.mark.parametrize(
    ("base", "paths", "expected"),
    [
        ("http://127.0.0.1:9/", '["/"]', "site.ignore_paths: [0] '/': every request of the site starts with it"),
        ("http://127.0.0.1:9/demo/", '["/__test__/", "/demo"]', "site.ignore_paths: [1] '/demo': every request"),
        ("http://127.0.0.1:9/", '["/api/*"]', "site.ignore_paths: [0] '/api/*': a prefix, not a glob"),
        ("http://127.0.0.1:9/", '["api/"]', "site.ignore_paths: [0] 'api/': a request path prefix starts with /"),
    ],
)
def test_ignore_paths_that_would_hide_the_sites_own_writes_are_refused(
    tmp_path: Path, base: str, paths: str, expected: str
) -> None:
    """With ignore_paths: ["/"] no write is counted: a case forbidding any save passed although the site saved."""
    suite_yaml = f"min_cases_per_behaviour: 0\nsite:\n  base_url: {base}\n  ignore_paths: {paths}\n"
    one_line_exit_2(cli("validate", str(a_suite(tmp_path / "s", suite_yaml))), "suite.yaml:4: " + expected)


def test_ignore_paths_are_checked_again_under_the_base_url_a_run_gives(tmp_path: Path) -> None:
    suite_yaml = "min_cases_per_behaviour: 0\nsite:\n  base_url: http://127.0.0.1:9/\n  ignore_paths: [/shop]\n"
    suite = a_suite(tmp_path / "s", suite_yaml)
    assert cli("validate", str(suite)).returncode == 0
    out = cli("run", str(suite), "--base-url", "http://127.0.0.1:9/shop/", "--out", str(tmp_path / "t"))
    one_line_exit_2(out, "site.ignore_paths '/shop' under --base-url http://127.0.0.1:9/shop/: every request")
    assert not (tmp_path / "t").exists() or not list((tmp_path / "t").iterdir())


def test_a_bad_regular_expression_in_an_audit_rule_is_the_configs_line(tmp_path: Path) -> None:
    suite_yaml = "min_cases_per_behaviour: 0\naudit:\n  rules:\n    name-invalid: {pattern: '(['}\n"
    out = cli("validate", str(a_suite(tmp_path / "s", suite_yaml)))
    one_line_exit_2(out, "audit.rules.name-invalid.pattern: not a valid regular expression")


def test_validate_takes_a_catalog_whose_property_schema_is_true(tmp_path: Path) -> None:
    """Before: AttributeError ('bool' object has no attribute 'get'), exit 3, for a case that names the property."""
    catalog = json.loads((ROOT / "cases" / "catalog.json").read_text(encoding="utf-8"))
    catalog["routes"]["/events"]["search_events"]["properties"]["city"] = True
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "SEL-01.yaml").write_text((ROOT / "cases" / "SEL-01.yaml").read_text(encoding="utf-8"))
    (folder / "suite.yaml").write_text("min_cases_per_behaviour: 0\n", encoding="utf-8")
    (folder / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")
    out = cli("validate", str(folder))
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_plain_case_is_read_by_libyaml_and_a_text_with_a_tab_by_pure_python(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []
    fast = data_file._FAST
    assert fast is not None

    def counted(text: str) -> object:
        read.append(text)
        return fast(text)  # type: ignore[call-arg]

    monkeypatch.setattr(data_file, "_FAST", counted)
    case = (ROOT / "cases" / "SEL-01.yaml").read_text(encoding="utf-8")
    parse_yaml(case)
    assert read == [case]
    with pytest.raises(DataFileError, match="found character '\\\\t'"):
        parse_yaml("a:\tb")
    assert read == [case]
