"""A suite folder describes itself: suite.yaml beside the cases names the site, catalog and behaviours."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.test_cli import cli
from webmcp_eval.suite.folder import Suite, SuiteConfig, SuiteError, find_suite, site_for_run
from webmcp_eval.suite.loader import case_files
from webmcp_eval.suite.validate import find_catalog, load_suite

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "cases"

CATALOG = {"routes": {"/shop": {"list_products": {"type": "object", "properties": {}}}}}


def case(case_id: str, behaviour: str = "browsing") -> str:
    return (
        f"id: {case_id}\nbehaviour: {behaviour}\ntitle: t\nstart_route: /shop\nsteps:\n"
        "  - user: what do you sell?\n    plan:\n      - call: list_products\n"
        "expect:\n  calls:\n    expected:\n      - tool: list_products\n"
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "shop"
    d.mkdir()
    (d / "suite.yaml").write_text(
        "site: {base_url: 'http://127.0.0.1:9/demo/'}\nbehaviours: {browsing: finds what is on sale}\n"
        "min_cases_per_behaviour: 1\nignore: ['labels*.yaml']\n",
        encoding="utf-8",
    )
    (d / "catalog.json").write_text(json.dumps(CATALOG), encoding="utf-8")
    (d / "labels.yaml").write_text("- not: a case\n", encoding="utf-8")
    (d / "fixtures").mkdir()
    (d / "fixtures" / "x.yaml").write_text("nope: 1\n", encoding="utf-8")
    (d / "browse.first-look.yaml").write_text(case("browse.first-look"), encoding="utf-8")
    return d


def test_only_case_files_are_read_as_cases(folder):
    suite = find_suite([folder])
    assert [p.name for p in suite.case_files([folder])] == ["browse.first-look.yaml"]
    assert suite.config_file is not None and suite.config_file.name == "suite.yaml"
    # without the suite's ignore list, the labels file would be a (broken) case
    assert "labels.yaml" in [p.name for p in case_files([folder])]
    assert "suite.yaml" not in [p.name for p in case_files([folder])]


def test_the_suite_defines_its_behaviours_and_how_many_cases_each_needs(folder):
    suite = find_suite([folder])
    catalog, note = find_catalog([str(folder)], None, suite)
    assert catalog is not None and "catalog.json" in note
    loaded, problems = load_suite([folder], catalog, True, suite)
    assert problems == [] and [lc.case.id for lc in loaded] == ["browse.first-look"]
    # a seed behaviour is unknown to this suite
    (folder / "other.yaml").write_text(case("other", "selection"), encoding="utf-8")
    _, problems = load_suite([folder], catalog, True, suite)
    assert [p.message for p in problems] == ["unknown behaviour 'selection'; one of: browsing"]
    # the coverage rule is the suite's own number
    (folder / "other.yaml").unlink()
    suite.config.min_cases_per_behaviour = 2
    _, problems = load_suite([folder], catalog, True, suite)
    assert len(problems) == 1 and "needs at least 2 per behaviour" in problems[0].message


def test_the_seed_suite_keeps_its_ten_behaviours_and_two_per_behaviour():
    suite = find_suite([CASES])
    assert suite.config.site == "demo" and suite.config.min_cases_per_behaviour == 2
    assert len(suite.behaviours) == 10
    loaded, problems = load_suite([CASES], find_catalog([str(CASES)], None, suite)[0], True, suite)
    assert problems == [] and len(loaded) == len(case_files([CASES])) == 39  # 36 scripted cases, 3 goal variants


def test_validate_names_the_suite_config_and_catalog(folder):
    out = cli("validate", str(folder))
    assert out.returncode == 0, out.stderr
    assert "1 case(s) valid" in out.stdout
    assert f"suite config {folder / 'suite.yaml'}" in out.stdout and f"{folder / 'catalog.json'}" in out.stdout


def test_validate_of_one_case_file_takes_the_suite_of_its_folder(folder):
    out = cli("validate", str(folder / "browse.first-look.yaml"))
    assert out.returncode == 0, out.stderr
    assert "suite.yaml" in out.stdout


def test_a_folder_without_case_files_is_an_error(tmp_path):
    (tmp_path / "evals.txt").write_text("{}", encoding="utf-8")
    (tmp_path / "suite.yaml").write_text("site: demo\n", encoding="utf-8")
    out = cli("validate", str(tmp_path))
    assert out.returncode == 2 and "no case files" in out.stderr


def test_a_broken_suite_config_is_one_line_and_exit_2(folder):
    (folder / "suite.yaml").write_text("behaviors: {x: y}\n", encoding="utf-8")
    out = cli("validate", str(folder))
    assert out.returncode == 2
    assert f"{folder / 'suite.yaml'}:1: behaviors: unknown field" in out.stderr and "Traceback" not in out.stderr
    (folder / "suite.yaml").write_text("site: [\n", encoding="utf-8")
    out = cli("validate", str(folder))
    assert out.returncode == 2 and "not valid YAML" in out.stderr


def test_a_catalog_named_by_the_suite_must_exist(folder):
    (folder / "suite.yaml").write_text("catalog: tools/catalog.json\n", encoding="utf-8")
    out = cli("validate", str(folder))
    assert out.returncode == 2 and "tools/catalog.json: no such file" in out.stderr


def test_cases_of_two_suites_in_one_command_are_refused(folder, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(folder, other)
    with pytest.raises(SuiteError, match="more than one suite"):
        find_suite([folder, other])


def test_run_searches_the_suite_it_is_given(folder, tmp_path):
    out = cli("run", "NOPE", "--suite", str(folder), "--out", str(tmp_path / "out"))
    assert out.returncode == 2 and "No case matches" in out.stderr
    # the demo's cases are not searched: the suite's one case is what a selection may match
    out = cli("run", "SEL-01", "--suite", str(folder), "--out", str(tmp_path / "out"))
    assert out.returncode == 2 and "No case matches" in out.stderr


def test_the_site_comes_from_the_suite_and_base_url_overrides_it(folder):
    suite = find_suite([folder])
    assert site_for_run(suite, None, None).base_url == "http://127.0.0.1:9/demo/"
    assert site_for_run(suite, "http://127.0.0.1:8/x/", None).base_url == "http://127.0.0.1:8/x/"
    assert site_for_run(find_suite([CASES]), None, None) is None  # the embedded demo site
    bare = Suite(folder, SuiteConfig.model_validate({"site": {"hooks": {}}}), folder / "suite.yaml")
    with pytest.raises(SuiteError, match="no base_url"):
        site_for_run(bare, None, None)


def test_free_case_ids_that_are_safe_file_names(folder):
    suite = find_suite([folder])
    catalog = find_catalog([str(folder)], None, suite)[0]
    (folder / "browse.first-look.yaml").write_text(case("a/b"), encoding="utf-8")
    _, problems = load_suite([folder], catalog, True, suite)
    assert [p.field for p in problems] == ["id"]


def test_run_and_validate_help_name_the_suite_flag():
    for command in ("run", "record", "validate"):
        assert "--suite" in cli(command, "--help").stdout


HARNESS_CMD = "python3 harness.py {prompt} {mcp_config}"


def test_a_suite_names_its_harness_as_a_command_line_or_a_mapping(folder):
    text = (folder / "suite.yaml").read_text(encoding="utf-8")
    (folder / "suite.yaml").write_text(text + f"harness: {HARNESS_CMD!r}\n", encoding="utf-8")
    suite = find_suite([folder])
    assert suite.config.harness.command == HARNESS_CMD and suite.config.harness.max_seconds is None
    assert suite.where("harness", "command") == f"{suite.config_file}:5"
    (folder / "suite.yaml").write_text(
        text + f"harness:\n  command: {HARNESS_CMD!r}\n  max_seconds: 30\n", encoding="utf-8"
    )
    suite = find_suite([folder])
    assert suite.config.harness.max_seconds == 30 and suite.where("harness", "command") == f"{suite.config_file}:6"


@pytest.mark.parametrize(
    ("entry", "line", "message"),
    [
        ("harness: 'python3 harness.py'", 5, "harness.command: needs a {prompt} placeholder"),
        ('harness:\n  command: "\'unclosed {prompt}"', 6, "harness.command: not a command line: No closing quotation"),
        ("harness:\n  command: ''", 6, "harness.command: an empty command line"),
        ("harness:\n  command: 'sh {prompt}'\n  cmd: x", 7, "harness.cmd: unknown field"),
        ("harness:\n  command: 'sh {prompt}'\n  max_seconds: 0", 7, "harness.max_seconds: Input should be greater"),
        ("harness: [h]", 5, "harness: Input should be a valid dictionary"),
    ],
)
def test_a_bad_harness_entry_is_file_line_field(folder, entry, line, message):
    text = (folder / "suite.yaml").read_text(encoding="utf-8")
    (folder / "suite.yaml").write_text(text + entry + "\n", encoding="utf-8")
    with pytest.raises(SuiteError) as err:
        find_suite([folder])
    assert str(err.value).startswith(f"{folder / 'suite.yaml'}:{line}: {message}"), str(err.value)


def test_a_suite_harness_runs_only_with_allow_harness(folder):
    assert "--allow-harness" in cli("run", "--help").stdout
    text = (folder / "suite.yaml").read_text(encoding="utf-8")
    (folder / "suite.yaml").write_text(text + "harness:\n  command: 'touch {prompt}'\n", encoding="utf-8")
    out = cli("run", str(folder), "--out", str(folder / "traces"))
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert f"{folder / 'suite.yaml'}:6: harness: runs 'touch {{prompt}}' as the agent" in out.stderr
    assert "--allow-harness" in out.stderr and "--harness COMMAND" in out.stderr
    assert not list((folder / "traces").glob("*"))  # nothing ran, nothing was written


def test_run_takes_the_suite_harness_and_the_flag_wins(folder):
    text = (folder / "suite.yaml").read_text(encoding="utf-8")
    (folder / "suite.yaml").write_text(text + "harness:\n  command: 'no-such-harness-xyz {prompt}'\n", encoding="utf-8")
    out = cli("run", str(folder), "--allow-harness", "--out", str(folder / "traces"))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"{folder / 'suite.yaml'}:6: harness.command: no program 'no-such-harness-xyz' found" in out.stderr
    (folder / "suite.yaml").write_text(text + "harness:\n  command: 'sh {prompt}'\n", encoding="utf-8")
    flag = cli("run", str(folder), "--harness", "no-such-other-xyz {prompt}", "--out", str(folder / "traces"))
    assert flag.returncode == 2 and "no program 'no-such-other-xyz'" in flag.stderr and "suite.yaml" not in flag.stderr
    assert not list((folder / "traces").glob("*"))  # a rejected command writes no run


def test_the_plan_names_its_harness_and_two_harnesses_never_share_a_plan_hash(folder):
    from webmcp_eval.agents.reference import ReferenceAgent
    from webmcp_eval.play.run.run import plan_of
    from webmcp_eval.play.run.settings import RunSettings
    from webmcp_eval.rundir.plan import _PLAN
    from webmcp_eval.suite.loader import load_cases

    cases = load_cases([folder / "browse.first-look.yaml"])[0]
    probe = ReferenceAgent()
    one = RunSettings(ReferenceAgent, harness={"command": "h {prompt}", "source": "--harness", "max_seconds": 90.0})
    two = RunSettings(
        ReferenceAgent, harness={"command": "h --fast {prompt}", "source": "suite.yaml:5", "max_seconds": 90.0}
    )
    plans = [plan_of(cases, options, probe, "r") for options in (one, two, RunSettings(ReferenceAgent))]
    assert plans[0]["harness"] == {"command": "h {prompt}", "source": "--harness"}
    assert plans[1]["harness"]["source"] == "suite.yaml:5" and "harness" not in plans[2]
    assert len({p["plan_hash"] for p in plans}) == 3  # shards of different harnesses never merge
    _PLAN.validate_python(plans[0])  # plan.json's schema holds it


@pytest.mark.browser  # a real run: it starts Chromium
def test_the_run_header_and_plan_say_which_harness_and_from_where(folder):
    pytest.importorskip("mcp")
    import sys

    harness = f"{sys.executable} {ROOT / 'tests' / 'fake_harness.py'} {{prompt}} {{mcp_config}}"
    text = (folder / "suite.yaml").read_text(encoding="utf-8")
    (folder / "suite.yaml").write_text(text + f"harness:\n  command: {harness!r}\n", encoding="utf-8")
    out = cli("run", str(folder), "--allow-harness", "--out", str(folder / "traces"), "--run-id", "h", "--no-proxy")
    assert out.returncode == 3, out.stdout + out.stderr  # the suite's site (port 9) is down: not_run
    header = " ".join(out.stdout.split())  # the console wraps long lines
    assert " ".join(f"agent: harness {harness!r} (from {folder / 'suite.yaml'}:6)".split()) in header
    plan = json.loads((folder / "traces" / "h" / "plan.json").read_text(encoding="utf-8"))
    assert plan["harness"] == {"command": harness, "source": f"{folder / 'suite.yaml'}:6"}
    assert plan["agent"] == "harness"


def test_a_harness_program_that_is_not_there_is_refused_by_validate(folder):
    text = (folder / "suite.yaml").read_text(encoding="utf-8")
    (folder / "suite.yaml").write_text(text + "harness: 'no-such-program-xyz {prompt}'\n", encoding="utf-8")
    out = cli("validate", str(folder))
    assert out.returncode == 2 and "internal error" not in out.stderr, out.stdout + out.stderr
    said = " ".join((out.stdout + out.stderr).split())
    assert "suite.yaml:5: harness.command: no program 'no-such-program-xyz' found" in said, said
