"""How a tool's listing merges the browser's reading with what the shim saw the page register."""

from __future__ import annotations

from runner.play.catalog import page_tool
from runner.play.toolhost import _tool_info


def test_native_annotations_are_kept_in_the_pages_spelling_and_the_pages_own_win():
    raw = {"name": "find", "description": "d", "annotations": {"readOnly": True, "untrustedContent": None}}
    unseen = page_tool(raw, None)  # the shim never saw it register: the browser's reading alone
    assert (unseen.annotations, unseen.kind) == ({"readOnlyHint": True}, "unknown")
    form = page_tool({"name": "quote"}, {"declarative": True, "annotations": {"autosubmit": True}})
    assert (form.annotations, form.kind) == ({"autosubmit": True}, "declarative")
    spelled = page_tool({**raw, "annotations": {"readOnly": False}}, {"annotations": {"readOnly": True}})
    assert spelled.annotations == {"readOnlyHint": False, "readOnly": True} and spelled.kind == "imperative"


def test_either_spelling_marks_a_tool_read_only_or_untrusted_for_the_agent():
    for given in (
        {"readOnly": True, "untrustedContent": True},
        {"readOnlyHint": True, "untrustedContentHint": True},
    ):
        info = _tool_info({"name": "t", "annotations": given})
        assert info.read_only and info.untrusted_content
    assert not _tool_info({"name": "t", "annotations": {"readOnlyHint": False}}).read_only
