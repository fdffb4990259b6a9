"""Rules that could never fire are errors, and so are expectations that contradict the case's own plan.

Each of these passed before, whatever the agent did: a misspelt ARIA role with ``state: absent``, a
``text:`` beside ``absent`` that was never read, a write rule on GET (never counted), a fault with
HTTP status 600. Each test also shows the sound form is accepted, so the rule is not a blanket refusal.
"""

from __future__ import annotations

import shutil
import typing
from pathlib import Path

import pytest
from playwright.sync_api import Page

from tests.test_validate import CASES, edit, line_of
from webmcp_eval.suite.case import ARIA_ROLES
from webmcp_eval.suite.loader import load_cases
from webmcp_eval.suite.plan_contradictions import plan_problems
from webmcp_eval.suite.validate import SuiteCatalog, validate_suite

CATALOG = SuiteCatalog.load(CASES / "catalog.json")


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return Path(shutil.copytree(CASES, tmp_path / "cases"))


def problems_of(path: Path, counted: tuple[str, ...] = ("POST", "PUT", "PATCH", "DELETE")) -> list[str]:
    loaded, problems = load_cases([path])
    problems += validate_suite(loaded, CATALOG, whole_suite=False, counted=counted)
    return [str(p) for p in problems]


def test_the_aria_roles_are_playwrights_own():
    assert set(typing.get_args(typing.get_type_hints(Page.get_by_role)["role"])) == ARIA_ROLES


def test_a_misspelt_aria_role_is_an_error_at_its_line(suite):
    path = suite / "AMB-02.yaml"
    text = edit(path, "- target: {role: dialog, name: 確認取消報名}", "- target: {role: dialgo, name: 確認取消報名}")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:{line_of(text, 'dialgo')}: expect.ui[0].target.role: ")
    assert "'dialgo' is not a WAI-ARIA role (did you mean dialog?)" in problem
    edit(path, "role: dialgo", "role: alertdialog")
    assert problems_of(path) == []


@pytest.mark.parametrize("state", ["absent", "hidden"])
def test_text_beside_absent_or_hidden_is_an_error_never_an_unread_rule(suite, state):
    path = suite / "AMB-02.yaml"
    text = edit(path, "      state: absent\n", f"      state: {state}\n      text: {{$contains: 確認}}\n")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:{line_of(text, 'role: dialog, name: 確認取消報名')}: expect.ui[0]: ")
    assert f"text beside state: {state} is never checked" in problem


def test_a_write_rule_on_a_method_never_counted_is_an_error(suite):
    path = suite / "SEL-01.yaml"
    text = edit(path, "writes: {total: 0}", "writes: {total: 0, GET /api/events: 0}")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:{line_of(text, 'GET /api')}: expect.network.writes.GET /api/events: ")
    assert "GET requests are never counted as writes (counted: DELETE, PATCH, POST, PUT)" in problem
    assert problems_of(path, counted=("GET", "POST")) == []  # a site that counts GETs may ask about them
    edit(path, "GET /api/events: 0", "POST /api/events: 0")
    assert problems_of(path) == []


def test_a_fault_status_outside_100_to_599_is_an_error(suite):
    path = suite / "RECOVERY-01.yaml"
    text = edit(path, "status: 503\n", "status: 600\n")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:{line_of(text, 'status: 600')}: steps[0].status: ")
    assert "less than or equal to 599" in problem
    edit(path, "status: 600\n", "status: 599\n")
    assert problems_of(path) == []


# ---- expectations against the case's own plan (errors: known before any run) ----------------------------------------


def plan_errors_of(path: Path) -> list[str]:
    loaded, problems = load_cases([path])
    assert problems == []
    return [str(w) for w in plan_problems(loaded)]


def test_the_seed_cases_agree_with_their_own_plans():
    loaded, _ = load_cases([CASES])
    assert plan_problems(loaded) == []


@pytest.mark.parametrize(
    ("file", "old", "new", "field", "words"),
    [
        (
            "SEL-01.yaml",
            "args: {city: taipei, price: free, level: beginner}\n        no_other_args",
            "args: {city: taipei, price: free, level: beginner, q: agent}\n        no_other_args",
            "expect.calls.expected[0].args.q",
            "steps[0].plan[0] search_events does not satisfy the expected argument q: never sends it",
        ),
        (
            "SEL-01.yaml",
            "args: {city: taipei, price: free, level: beginner}\n        no_other_args",
            "args: {city: kaohsiung, price: free, level: beginner}\n        no_other_args",
            "expect.calls.expected[0].args.city",
            'the expected argument city: expected "kaohsiung", got "taipei"',
        ),
        (
            "SEL-01.yaml",
            "args: {city: taipei, price: free, level: beginner}\n        no_other_args",
            "args: {city: taipei, price: free}\n        no_other_args",
            "expect.calls.expected[0].no_other_args",
            "also sends level, which no_other_args fails",
        ),
        (
            "SEL-01.yaml",
            "- {tool: save_event, why: 只搜尋，不寫入}",
            "- {tool: search_events, args: {city: taipei}, why: x}",
            "expect.calls.forbidden[0]",
            "steps[0].plan[0] search_events is one this rule forbids",
        ),
        (
            "SEL-01.yaml",
            "  calls:\n    order: exact\n",
            "  calls:\n    max_calls: 0\n    order: exact\n",
            "expect.calls.max_calls",
            "max_calls is 0, but the reference plan makes 1 calls (search_events)",
        ),
    ],
    ids=["missing-arg", "other-value", "no-other-args", "forbidden", "max-calls"],
)
def test_an_expectation_the_plan_breaks_is_an_error_naming_the_step_and_rule(suite, file, old, new, field, words):
    path = suite / file
    text = edit(path, old, new)
    (warning,) = plan_errors_of(path)
    assert f": {field}: " in warning and words in warning, warning
    assert warning.startswith(f"{path}:") and "fails with its own plan" in warning
    line = int(warning.split(":")[1])
    assert text.splitlines()[line - 1].strip(), "the line of the rule itself"


def test_validate_refuses_a_case_its_own_plan_fails(tmp_path):
    """Before, validate exit 0 with a warning: a run of the case failed every trial of the reference agent."""
    from tests.test_cli import cli

    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "suite.yaml").write_text("min_cases_per_behaviour: 0\n", encoding="utf-8")
    text = (CASES / "SEL-01.yaml").read_text(encoding="utf-8")
    old = "args: {city: taipei, price: free, level: beginner}\n        no_other_args"
    assert old in text
    (folder / "SEL-01.yaml").write_text(text.replace(old, old.replace("taipei", "kaohsiung")), encoding="utf-8")
    out = cli("validate", str(folder), "--catalog", str(CASES / "catalog.json"))
    said = " ".join((out.stdout + out.stderr).split())
    assert out.returncode == 2 and "expect.calls.expected[0].args.city: the reference plan's call" in said, said
