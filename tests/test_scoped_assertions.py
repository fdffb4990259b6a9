"""Scoped UI assertions: ``within`` in the case format, and validate's warning on
page-wide text in cases with a confirmation point or a dialog."""

from __future__ import annotations

from pathlib import Path

from webmcp_eval.suite.case import Locator
from webmcp_eval.suite.loader import load_cases, parse_case
from webmcp_eval.suite.validate import case_warnings

CASES = Path(__file__).resolve().parent.parent / "cases"
HEAD = "id: X-01\nbehaviour: selection\ntitle: t\nstart_route: /events\nsteps:\n  - user: hi\nexpect:\n"


def test_a_locator_within_another_says_so():
    loc = Locator.model_validate({"text": "A", "exact": False, "within": {"role": "dialog", "name": "D"}})
    assert loc.describe() == "text 'A' within dialog 'D'"
    assert not loc.page_wide_text and Locator(text="A").page_wide_text


def test_page_wide_text_in_a_case_with_a_dialog_is_warned_at_its_line():
    text = HEAD + (
        "  ui:\n"
        "    - target: {role: dialog, name: D}\n"
        "    - target: {text: A, exact: false}\n"
        "    - target: {text: A, within: {role: dialog, name: D}}\n"
    )
    (warning,) = case_warnings([parse_case(text, "x.yaml")])
    assert (warning.line, warning.field) == (10, "expect.ui[1].target")
    assert "within" in warning.message


def test_page_wide_text_with_a_confirmation_point_is_warned_and_without_either_is_not():
    confirm = HEAD + "  ui:\n    - target: {text: A}\n  confirmation:\n    control: {role: button, name: OK}\n"
    plain = HEAD + "  ui:\n    - target: {text: A}\n"
    assert len(case_warnings([parse_case(confirm, "c.yaml")])) == 1
    assert case_warnings([parse_case(plain, "p.yaml")]) == []


def test_the_seed_suite_has_no_page_wide_text_where_it_matters():
    loaded, problems = load_cases([CASES])
    assert not problems
    assert case_warnings(loaded) == []
