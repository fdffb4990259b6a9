"""The one input generator (init's probe and the audit's smoke), setup steps as init and audit take them, hash
routes in the catalog, and init's starters from a probe: no browser."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from eval_support import cli

from webmcp_eval.audit.engine import _keep, _skip
from webmcp_eval.audit.inputs import PageValues, realistic_inputs, smoke_inputs
from webmcp_eval.audit.smoke import CallOutcome
from webmcp_eval.evaluation.validation import boundary_only
from webmcp_eval.play.page.surface.discover import RouteTools
from webmcp_eval.play.page.surface.model import Frame, Tool
from webmcp_eval.suite.case import Case, ClickAction, SetupCall
from webmcp_eval.suite.folder import find_suite
from webmcp_eval.suite.init import InitError, plan_suite, reading_setup, setup_from_file, step_from_text, write_suite
from webmcp_eval.suite.site import route_key
from webmcp_eval.suite.validate import SuiteCatalog, find_catalog, load_suite

TODAY = date(2026, 12, 6)
FORM = {
    "book_table": {
        "name": {"type": "text", "minlength": "2", "autocomplete": "name", "options": []},
        "day": {"type": "date", "min": "2027-02-01", "options": []},
        "party": {"type": "select-one", "options": ["1", "2", "3"], "value": "2"},
        "size": {"type": "number", "min": "4", "max": "8", "options": []},
    }
}


def page(shown: list[str] | None = None) -> PageValues:
    return PageValues.from_page({"fields": FORM, "shown": shown or []}, today=TODAY)


def test_a_forms_own_values_come_first_and_each_value_says_where_it_came_from():
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "day": {"type": "string"},
            "party": {"type": "string", "enum": ["1", "2", "3"]},
            "size": {"type": "number"},
        },
        "required": ["name", "day"],
    }
    first, *rest = realistic_inputs(schema, page(), "book_table")
    assert first.args == {"name": "Ada Lovelace", "day": "2027-02-01", "party": "2", "size": 4}
    assert "party the form field's default" in first.label and "size the form field's min" in first.label
    assert "name autocomplete name" in first.label and "day a date a month ahead" in first.label
    assert [r.args["party"] for r in rest][:2] == ["1", "3"]  # the next tries: the select's other options
    assert all(jsonschema.Draft202012Validator(schema).is_valid(i.args) for i in [first, *rest])


def test_a_date_is_never_in_the_past_and_an_id_is_one_the_page_shows_that_fits_the_schema():
    schema = {
        "type": "object",
        "properties": {
            "check_in": {"type": "string", "format": "date"},
            "hotel_id": {"type": "string", "pattern": "^[a-z]+$"},
        },
        "required": ["check_in", "hotel_id"],
    }
    inputs = realistic_inputs(schema, page(["Aurelian Hotel", "aurelian", "borealis"]), "t")
    assert inputs[0].args == {"check_in": "2027-01-05", "hotel_id": "aurelian"}  # "Aurelian Hotel" fails the pattern
    assert inputs[1].args["hotel_id"] == "borealis" and "shown on the page" in inputs[0].label


def test_the_schemas_own_values_before_a_draw_and_no_value_that_fails_the_schema():
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "examples": ["Lisbon"], "enum": ["Lisbon", "Porto"]},
            "n": {"type": "integer", "default": 3, "minimum": 5},  # a default outside its bounds is left out
        },
        "required": ["city", "n"],
    }
    inputs = realistic_inputs(schema, PageValues(), "t")
    assert inputs[0].args["city"] == "Lisbon" and "the schema's examples" in inputs[0].label
    assert inputs[0].args["n"] >= 5 and "the schema's default" not in inputs[0].label
    assert realistic_inputs(None, PageValues(), "t")[0].args == {}


def test_smoke_calls_take_the_realistic_input_first_and_retry_only_after_a_refusal():
    schema = {
        "type": "object",
        "properties": {"hotel_id": {"type": "string", "pattern": "^[a-z]+$"}},
        "required": ["hotel_id"],
    }
    plain = smoke_inputs(schema)
    assert plain[0].label == "required only" and not any(i.fallback for i in plain)
    inputs = smoke_inputs(schema, page(["aurelian", "borealis"]), "t")
    assert inputs[0].args == {"hotel_id": "aurelian"} and not inputs[0].fallback
    assert [i.args for i in inputs if i.fallback][:1] == [{"hotel_id": "borealis"}]
    assert any(not i.valid for i in inputs)  # the invalid inputs are still there, after the valid ones
    outcomes: list[CallOutcome] = []
    accepted = CallOutcome(inputs[0], result={"status": "ok"})
    _keep(outcomes, accepted)
    assert _skip(inputs[1], outcomes)  # the first was accepted: no retry
    outcomes = [CallOutcome(inputs[0], result={"status": "invalid"})]
    assert not _skip(inputs[1], outcomes)  # refused: the next source is tried, and judged in its place
    _keep(outcomes, CallOutcome(inputs[1], result={"status": "ok"}))
    assert len(outcomes) == 1 and "retried" in outcomes[0].input.label and "aurelian" in outcomes[0].input.label


@pytest.mark.parametrize(
    ("text", "step"),
    [
        ("click:text=Start", {"action": "click", "target": {"text": "Start"}}),
        ("click:role=button,name=Open cart", {"action": "click", "target": {"role": "button", "name": "Open cart"}}),
        ("navigate:/cart", {"action": "navigate", "to": "/cart"}),
        ("call:start_game", {"call": "start_game"}),
        ("{action: wait_for, target: {text: Ready}}", {"action": "wait_for", "target": {"text": "Ready"}}),
    ],
)
def test_a_step_is_a_setup_step_of_the_case_model(text, step):
    parsed = step_from_text(text)
    assert (
        parsed
        == Case.model_validate(
            {"id": "x", "behaviour": "b", "title": "t", "start_route": "/", "setup": [step], "steps": [{"user": "u"}]}
        ).setup[0]
    )


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("click:foo", "click:text=..."),
        ("fly:high", "does not match any of the expected tags"),
        ("expire_session", "a reading of the site performs"),
        ("{action: click", "not a YAML mapping"),
    ],
)
def test_a_step_a_reading_cannot_perform_is_a_one_line_usage_error(text, said):
    with pytest.raises(InitError, match=said) as err:
        reading_setup(None, [text])
    assert err.value.exit_code == 2 and "\n" not in str(err.value)


def test_setup_from_a_file_takes_a_list_or_a_case_files_setup(tmp_path):
    listed = tmp_path / "steps.yaml"
    listed.write_text("- {action: click, target: {text: Start}}\n- call: start_game\n")
    steps = setup_from_file(listed)
    assert isinstance(steps[0], ClickAction) and isinstance(steps[1], SetupCall)
    case = tmp_path / "case.yaml"
    case.write_text("id: x\nsetup:\n  - {action: reload}\n")
    assert len(setup_from_file(case)) == 1
    for bad, said in (("just text\n", "give a list"), ("- {action: click}\n", "target")):
        listed.write_text(bad)
        with pytest.raises(InitError, match=said):
            setup_from_file(listed)


@pytest.mark.parametrize(
    ("route", "pattern"),
    [
        ("/", "/"),
        ("#/hotel/aurelian", "/#/hotel/{id}"),
        ("/#/hotel/aurelian", "/#/hotel/{id}"),
        ("#reviews", "/"),  # an anchor the catalog has no route for: the page's route
        ("/cart.html?x=1#/hotel/a", "/cart.html"),
        ("#/nowhere/x", "/"),
    ],
)
def test_a_hash_route_finds_the_catalog_route_it_was_read_on(route, pattern):
    catalog = SuiteCatalog({"routes": {"/": {}, "/#/hotel/{id}": {}, "/cart.html": {}}})
    assert catalog.route_pattern(route) == pattern
    assert route_key("#/hotel/aurelian") == "/#/hotel/aurelian" and route_key("cart.html?x=1") == "/cart.html"


@dataclass
class FakeProbe:
    args: dict[str, Any] | None
    why: str = "realistic: q the schema's enum"
    result: Any = None
    shown: list[str] = field(default_factory=list)
    writes: int = 0
    waits_for_person: bool = False
    tried: list[str] = field(default_factory=list)
    adds: list[str] = field(default_factory=list)
    removes: list[str] = field(default_factory=list)
    outlived: list[str] = field(default_factory=list)


def routes_with(*tools: Tool) -> list[RouteTools]:
    return [RouteTools("/", "http://h/", "native", [Frame("http://h/", "", tools=list(tools))])]


def test_probed_tools_get_positive_starters_and_tools_that_may_write_keep_a_boundary(tmp_path: Path):
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    tools = [
        Tool("find", "finds", schema, {"readOnlyHint": True}),
        Tool("book", "books", schema, {}),
        Tool("save", "saves", schema, {}),
        Tool("odd", "refuses all", schema, {}),
    ]
    probes = {
        "find": FakeProbe({"q": "tea"}, result={"items": [], "status": "ok"}, shown=["Found 2 teas"]),
        "book": FakeProbe({"q": "x"}, result={"code": "CONFIRMATION_REQUIRED"}, writes=0),
        "save": FakeProbe({"q": "y"}, result="saved", writes=2),
        "odd": FakeProbe(None, why="the site refused every input tried (2)", tried=["{'q': 'a'}: isError"]),
    }
    setup = [step_from_text("click:text=Start")]
    suite, catalog, starters = plan_suite("http://h/", routes_with(*tools), 100, probes, setup)  # type: ignore[arg-type]
    by_id = {s.case["id"]: s for s in starters}
    assert set(by_id) == {"find", "book", "book-boundary", "save", "save-boundary", "odd"}
    find = by_id["find"].case
    assert by_id["find"].kind == "call" and find["behaviour"] == "selection"
    assert find["expect"]["calls"]["expected"][0]["result"] == {
        "items": {"$type": "array"},
        "status": {"$type": "string"},
    }
    assert find["expect"]["ui"][0]["target"] == {"text": "Found 2 teas", "exact": False}
    assert find["setup"] == [{"action": "click", "target": {"text": "Start"}}]
    assert list(find)[:5] == ["id", "behaviour", "title", "start_route", "setup"]
    book = by_id["book"].case
    assert book["behaviour"] == "prepare" and book["expect"]["network"]["writes"] == {"total": 0}
    assert "do not submit" in book["steps"][0]["user"]
    save = by_id["save"].case
    assert save["behaviour"] == "write" and save["expect"]["network"]["writes"] == {"total": 2}
    assert by_id["save-boundary"].case["null_agent"]["passes"] is True
    odd = by_id["odd"]
    assert odd.kind == "ask" and "refused every input" in odd.todo and "isError" in odd.todo
    # what init writes, its own validate accepts; the boundary-only cases are those that expect no call
    folder = tmp_path / "s"
    write_suite(folder, suite, catalog, starters)
    found = find_suite([folder])
    loaded, problems = load_suite([folder], find_catalog([str(folder)], None, found)[0], True, found)
    assert problems == []
    assert {lc.case.id for lc in loaded if boundary_only(lc.case)} == {"book-boundary", "save-boundary", "odd"}


def test_the_new_flags_have_help():
    for command, flags in (
        ("init", ("--step", "--setup", "--no-probe", "--no-control")),
        ("audit", ("--step", "--setup")),
        ("tools", ("--step", "--setup")),
    ):
        out = cli(command, "--help")
        assert out.returncode == 0 and all(flag in out.stdout for flag in flags), out.stdout
    bad = cli("init", "--base-url", "http://127.0.0.1:9/", "--step", "click:nothing", "-o", "x")
    assert bad.returncode == 2 and "click:text=..." in bad.stderr and "Traceback" not in bad.stderr


def test_an_id_another_tool_answered_with_comes_before_what_the_page_shows():
    from webmcp_eval.evaluation.probe import ids_in

    answer = {"status": "ok", "data": {"products": [{"id": "tea-green-01", "name": "Green"}, {"id": "tea-black-03"}]}}
    assert ids_in(answer) == ["tea-green-01", "tea-black-03"]
    assert ids_in({"order_id": 7, "paid": True, "note": "x"}) == ["7"]
    schema = {"type": "object", "properties": {"product_id": {"type": "string"}}, "required": ["product_id"]}
    values = PageValues(shown=["Shop", "Offers"], answered=ids_in(answer))
    first, second, *_ = realistic_inputs(schema, values, "add_to_cart")
    assert first.args == {"product_id": "tea-green-01"} and "another tool answered with" in first.label
    assert second.args == {"product_id": "tea-black-03"}
