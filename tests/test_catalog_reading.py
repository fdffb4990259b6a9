"""How the page surface engine merges the browser's listing of a tool with what the shim saw the page register."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

from webmcp_eval.play.page.surface.log import RegisterEvent, parse_event
from webmcp_eval.play.page.surface.model import FormField, PageForm
from webmcp_eval.play.page.surface.reader import parse_forms, tool_from
from webmcp_eval.play.page.toolhost import ShimLog, ToolHost, _tool_info


def registered(**report: object) -> RegisterEvent:
    """The shim's report of a registration, as the log parses it."""
    event = parse_event({"type": "register", **report})
    assert isinstance(event, RegisterEvent)
    return event


def test_annotations_are_kept_in_one_spelling_the_pages_own_win_and_its_words_are_kept():
    raw = {"name": "find", "description": "d", "annotations": {"readOnly": True, "untrustedContent": None}}
    unseen = tool_from(raw, None, None)  # the shim never saw it register: the browser's reading alone
    assert (unseen.annotations, unseen.kind, unseen.page_annotations) == ({"readOnlyHint": True}, "unknown", None)
    form = tool_from({"name": "quote"}, registered(declarative=True, annotations={"autosubmit": True}), None)
    assert (form.annotations, form.kind, form.schema_derived) == ({"autosubmit": True}, "declarative", True)
    spelled = tool_from({**raw, "annotations": {"readOnly": False}}, registered(annotations={"readOnly": True}), None)
    assert spelled.annotations == {"readOnlyHint": True} and spelled.kind == "imperative"
    assert spelled.page_annotations == {"readOnly": True} and not spelled.schema_derived


def test_a_form_in_the_document_makes_a_tool_declarative_with_its_fields_and_autosubmit():
    form = PageForm("http://t.test/", "book", None, autosubmit=True, fields=[FormField("when", "date")])
    tool = tool_from({"name": "book", "inputSchema": {"type": "object"}}, None, form)
    assert (tool.kind, tool.autosubmit, tool.schema_derived, [f.name for f in tool.fields]) == (
        "declarative",
        True,
        True,
        ["when"],
    )
    plain = tool_from({"name": "book"}, registered(declarative=True), replace(form, autosubmit=False))
    assert plain.waits_for_person and not tool.waits_for_person


def test_either_spelling_marks_a_tool_read_only_or_untrusted_for_the_agent():
    for given in (
        {"readOnly": True, "untrustedContent": True},
        {"readOnlyHint": True, "untrustedContentHint": True},
    ):
        info = _tool_info(tool_from({"name": "t", "annotations": given}, None, None))
        assert info.read_only and info.untrusted_content
    assert not _tool_info(tool_from({"name": "t", "annotations": {"readOnlyHint": False}}, None, None)).read_only


class _NoPage:
    """A page that is never read: the catalog is built from listings given to it and the shim's log."""

    def on(self, name: str, handler: object) -> None:
        pass


def test_the_agents_catalog_keeps_the_pages_own_spelling_over_the_browsers_reading():
    log, frame = ShimLog(), SimpleNamespace(url="http://shop.test/", name="", is_detached=lambda: False)
    log.add({"type": "loaded", "document": "d1"}, frame)
    spelled = {"readOnly": True}  # not the browser's readOnlyHint: it reads the tool as not read-only
    log.add({"type": "register", "document": "d1", "instance": 1, "name": "find", "annotations": spelled}, frame)
    host = ToolHost(_NoPage(), log, 0.0)  # type: ignore[arg-type]
    listed = [{"name": "find", "annotations": {"readOnly": False}}, {"name": "plain"}]
    find, plain = host._tools([(frame, listed)])  # type: ignore[list-item]
    assert find.read_only and not plain.read_only


def test_one_reading_of_a_form_serves_the_tool_and_the_audit_and_is_brought_within_bounds():
    raw = [
        {
            "toolname": "book",
            "tooldescription": "Books \ud83c a table.",  # a lone surrogate: not Unicode
            "autosubmit": True,
            "id": "booking",
            "issues": [],
            "controls": [
                {
                    "name": "guests",
                    "id": "",
                    "type": "number",
                    "required": True,
                    "description": None,
                    "labelled": True,
                    "issues": [],
                }
            ],  # fmt: skip
            "selector": "form#booking",
            "fields": [{"name": "guests", "type": "number", "autocomplete": "", "filled": False}],
        },
        {"toolname": None, "tooldescription": None, "autosubmit": False, "id": "", "controls": [], "fields": []},
    ]
    book, plain = parse_forms("http://t.test/", raw)
    assert (book.toolname, book.label, [c.name for c in book.controls], [f.name for f in book.fields]) == (
        "book",
        "form tool book",
        ["guests"],
        ["guests"],
    )
    assert book.tooldescription == "Books \\ud83c a table." and book.bounds == [
        "the form: lone surrogates (not Unicode) written as \\uXXXX escapes"
    ]
    assert plain.toolname is None and plain.bounds == [] and not plain.tool_like
    tool = tool_from({"name": "book"}, None, book)
    assert tool.kind == "declarative" and tool.autosubmit and tool.bounds == book.bounds
    assert str(tool.source) == "form#booking" and [f.name for f in tool.fields] == ["guests"]
    assert tool_from({"name": "book"}, None, None).bounds == []  # the note is the form's alone
