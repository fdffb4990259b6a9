"""How a tool's listing merges the browser's reading with what the shim saw the page register."""

from __future__ import annotations

from runner.evaluation.catalog import page_tool
from runner.play.page.toolhost import ShimLog, ToolHost, _tool_info


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


class _NoPage:
    """A page that is never read: the catalog is built from listings given to it and the shim's log."""

    def on(self, name: str, handler: object) -> None:
        pass


def test_the_agents_catalog_keeps_the_pages_own_spelling_over_the_browsers_reading():
    log, frame = ShimLog(), object()
    log.add({"type": "loaded", "document": "d1"})
    spelled = {"readOnly": True}  # not the browser's readOnlyHint: it reads the tool as not read-only
    log.add({"type": "register", "document": "d1", "instance": 1, "name": "find", "annotations": spelled})
    host = ToolHost(_NoPage(), log, 0.0)  # type: ignore[arg-type]
    listed = [{"name": "find", "annotations": {"readOnly": False}}, {"name": "plain"}]
    find, plain = host._tools([(frame, listed)])  # type: ignore[list-item]
    assert find.read_only and not plain.read_only
