"""The page surface engine without a browser: the rules that skip a schema the browser derived, a form's
refusal, a form that waits for a person, the shim's report that never replaces the browser's answer, and the
blocking face that runs the async engine on the fixture's thread."""

from __future__ import annotations

from typing import Any

import pytest

from webmcp_eval.audit.config import AuditConfig
from webmcp_eval.audit.inputs import SmokeInput
from webmcp_eval.audit.rules import lint
from webmcp_eval.audit.smoke import CallOutcome, judge, page_answer
from webmcp_eval.play.page.surface.blocking import face, run
from webmcp_eval.play.page.surface.log import ErrorEvent, ResultEvent, parse_event
from webmcp_eval.play.page.surface.model import Frame, PageSurface, Tool

SELECT = {"type": "object", "properties": {"party": {"type": "string", "enum": ["1", "2"], "anyOf": [{"const": "1"}]}}}


def _rules(tool: Tool) -> set[str]:
    return {
        f.rule for f in lint(PageSurface("http://t/", [Frame("http://t/", "http://t", tools=[tool])]), AuditConfig())
    }


def test_author_rules_skip_a_schema_the_browser_derived_and_judge_one_the_author_wrote():
    described = "Books a table for a party at the test bistro."
    written = Tool("book", described, {**SELECT, "properties": {**SELECT["properties"], "note": None}})
    derived = Tool("book", described, written.input_schema, kind="declarative", schema_derived=True)
    assert {"schema-unsupported-keyword", "schema-null"} <= _rules(written)
    assert not {"schema-unsupported-keyword", "schema-null"} & _rules(derived)


def test_a_forms_list_of_problems_is_a_refusal_and_a_plain_answer_is_not():
    form = Tool("book", "Books a table.", SELECT, {"autosubmit": True}, "declarative", schema_derived=True)
    bad = CallOutcome(
        SmokeInput("missing required name", {}, valid=False), result=[{"field": "n", "message": "m"}], declarative=True
    )
    taken = CallOutcome(
        SmokeInput("party outside its enum", {"party": "x"}, valid=False), result="Booked", declarative=True
    )
    # the browser writes a number into a text field as text: a form never sees a wrong type, so never refuses one
    typed = CallOutcome(
        SmokeInput("party of the wrong type", {"party": 1}, valid=False), result="Booked", declarative=True
    )
    findings = judge(form, Frame("http://t/", "http://t"), "http://t/", [bad, taken, typed], AuditConfig())
    (accepted,) = [f.message for f in findings if f.rule == "smoke-accepts-invalid"]
    assert "none found: party outside its enum" in accepted and "refused on a validation answer" in accepted
    assert "wrong type" not in accepted


def ended(report: dict[str, Any]) -> ResultEvent | ErrorEvent:
    """The shim's report of a call's end, as the log parses it."""
    event = parse_event(report)
    assert isinstance(event, ResultEvent | ErrorEvent)
    return event


def test_the_shims_null_for_a_form_never_replaces_the_browsers_answer():
    outcome = CallOutcome(SmokeInput("required only", {}, valid=True), result=["problems"])
    page_answer(outcome, ended({"type": "result", "result": None, "submitted": False, "declarative": True, "ms": 3.0}))
    assert outcome.result == ["problems"] and outcome.ms == 3.0
    text = CallOutcome(SmokeInput("required only", {}, valid=True), result={"a": 1})  # the browser parsed a JSON text
    page_answer(text, ended({"type": "result", "result": '{"a": 1}'}))
    assert text.result == '{"a": 1}'
    thrown = CallOutcome(SmokeInput("required only", {}, valid=True), error="UnknownError")
    page_answer(thrown, ended({"type": "error", "error": "Error: no such item"}))
    assert thrown.error == "Error: no such item"


def test_a_form_without_autosubmit_waits_for_a_person():
    assert Tool("book", "", None, {}, "declarative").waits_for_person
    assert not Tool("book", "", None, {"autosubmit": True}, "declarative").waits_for_person
    assert not Tool("find", "", None).waits_for_person


class _SyncFrame:
    """Stands in for a sync Playwright object: only its module's name is read."""

    __module__ = "playwright.sync_api._generated"

    def evaluate(self, js: str) -> int:
        return 2

    def wait_for_timeout(self, ms: float) -> None:
        pass


def test_the_blocking_face_runs_an_engine_coroutine_in_one_step_and_refuses_a_real_wait():
    faces: dict = {}
    frame = face(_SyncFrame(), faces)
    assert face(frame.obj, faces) is frame  # one face per object: frames are compared by identity

    async def engine() -> int:
        await frame.wait_for_timeout(10)
        return await frame.evaluate("1 + 1")

    assert run(engine()) == 2

    class Pending:  # what an event loop's future does: suspend until the loop wakes it
        def __await__(self):  # type: ignore[no-untyped-def]
            yield

    async def suspends() -> None:
        await Pending()

    with pytest.raises(RuntimeError, match="cannot give"):
        run(suspends())
