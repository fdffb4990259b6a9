"""How the page surface engine merges the browser's listing of a tool with what the shim saw the page register."""

from __future__ import annotations

from types import SimpleNamespace

from webmcp_eval.play.page.surface.reader import tool_from
from webmcp_eval.play.page.toolhost import ShimLog, ToolHost, _tool_info


def test_annotations_are_kept_in_one_spelling_the_pages_own_win_and_its_words_are_kept():
    raw = {"name": "find", "description": "d", "annotations": {"readOnly": True, "untrustedContent": None}}
    unseen = tool_from(raw, None, None)  # the shim never saw it register: the browser's reading alone
    assert (unseen.annotations, unseen.kind, unseen.page_annotations) == ({"readOnlyHint": True}, "unknown", None)
    form = tool_from({"name": "quote"}, {"declarative": True, "annotations": {"autosubmit": True}}, None)
    assert (form.annotations, form.kind, form.schema_derived) == ({"autosubmit": True}, "declarative", True)
    spelled = tool_from({**raw, "annotations": {"readOnly": False}}, {"annotations": {"readOnly": True}}, None)
    assert spelled.annotations == {"readOnlyHint": True} and spelled.kind == "imperative"
    assert spelled.page_annotations == {"readOnly": True} and not spelled.schema_derived


def test_a_form_in_the_document_makes_a_tool_declarative_with_its_fields_and_autosubmit():
    form = {"name": "book", "autosubmit": True, "fields": [{"name": "when", "type": "date", "autocomplete": ""}]}
    tool = tool_from({"name": "book", "inputSchema": {"type": "object"}}, None, form)
    assert (tool.kind, tool.autosubmit, tool.schema_derived, [f.name for f in tool.fields]) == (
        "declarative",
        True,
        True,
        ["when"],
    )
    plain = tool_from({"name": "book"}, {"declarative": True}, {**form, "autosubmit": False})
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
