"""The shim's log, per frame: which documents the page shows now, and which of their tools are stale.

Unit tests over hand-made events (no browser); tests/test_frames.py plays the
same rules on a real page with frames.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright._impl.js_handle import serialize_argument

from webmcp_eval.kinds.calls.check import _stale
from webmcp_eval.play.page.surface.log import (
    EVENT_TYPES,
    CallEvent,
    ClickEvent,
    ErrorEvent,
    LoadedEvent,
    RefusedEvent,
    RegisterErrorEvent,
    RegisterEvent,
    ShimEvent,
    UnregisterEvent,
    parse_event,
)
from webmcp_eval.play.page.toolhost import ShimLog
from webmcp_eval.trace import FrameRecord, RegistrationEvent, StaleRegistration, StepRecord, ToolCall, Trace


class _Frame:
    """What ShimLog reads of a Playwright Frame: its URL now and whether it is still attached."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.detached = False

    def is_detached(self) -> bool:
        return self.detached


TOP = {"url": "http://shop.test/", "origin": "http://shop.test", "top": True, "same_origin": True}


def _in_frame(url: str) -> dict[str, Any]:
    return {"url": url, "origin": "http://shop.test", "top": False, "same_origin": True, "allow": "tools"}


def _log() -> tuple[ShimLog, _Frame, _Frame]:
    log, top, items = ShimLog(), _Frame("http://shop.test/"), _Frame("http://shop.test/frame.html")
    log.add({"type": "loaded", "document": "top1", "route": "/", "frame": TOP}, top)
    log.add({"type": "register", "document": "top1", "instance": 1, "name": "find", "route": "/", "frame": TOP}, top)
    frame = _in_frame(items.url)
    log.add({"type": "loaded", "document": "f1", "route": "/frame.html", "frame": frame}, items)
    log.add(
        {"type": "register", "document": "f1", "instance": 1, "name": "lookup", "route": "/frame.html", "frame": frame},
        items,
    )
    return log, top, items


def test_a_frame_that_loads_after_the_top_page_adds_its_document_and_keeps_the_top_pages():
    log, _, _ = _log()
    assert log.top_loaded().document == "top1"
    assert log.current_documents() == ["top1", "f1"]
    assert sorted(r.name for r in log.active_registrations()) == ["find", "lookup"]
    assert [r.name for r in log.active_registrations(top_only=True)] == ["find"]
    assert log.stale_registrations("/") == []  # the frame's tool is at its frame's route


def test_each_registration_is_stale_only_against_its_own_frames_route():
    log, top, items = _log()
    top.url = "http://shop.test/offers"
    assert [r.name for r in log.stale_registrations("/offers")] == ["find"]
    items.url = "http://shop.test/details.html"  # the frame's own client-side route change
    assert sorted(r.name for r in log.stale_registrations("/offers")) == ["find", "lookup"]


def test_a_detached_frame_and_a_frames_old_document_are_no_longer_shown():
    log, top, items = _log()
    frame = _in_frame("http://shop.test/frame2.html")
    log.add({"type": "loaded", "document": "f2", "route": "/frame2.html", "frame": frame}, items)
    assert log.current_documents() == ["top1", "f2"]  # the frame navigated: its first document is gone
    items.detached = True
    assert log.current_documents() == ["top1"]
    log.add({"type": "loaded", "document": "top2", "route": "/next", "frame": TOP}, top)
    assert log.current_documents() == ["top2"] and log.active_registrations() == []


def test_events_without_a_frame_are_the_top_pages_as_before():
    log = ShimLog()
    log.add({"type": "loaded", "document": "d1", "native": True})
    log.add({"type": "register", "document": "d1", "instance": 1, "name": "search", "route": "/"})
    assert log.native() is True and [r.name for r in log.stale_registrations("/other")] == ["search"]


def test_each_report_is_parsed_once_into_the_event_of_its_type_with_its_fields():
    log = ShimLog()
    call = log.add({"type": "call", "document": "d1", "callId": 3, "instance": 1, "name": "find", "args": {"q": "a"}})
    assert isinstance(call, CallEvent) and (call.call_id, call.name, call.args, call.declarative) == (
        3,
        "find",
        {"q": "a"},
        False,
    )
    end = log.add({"type": "error", "callId": 3, "name": "find", "error": "Error: gone", "ms": 2, "declarative": 1})
    assert isinstance(end, ErrorEvent) and (end.error, end.ms, end.declarative) == ("Error: gone", 2, True)
    schema = {"type": "object"}
    reg = log.add(
        {"type": "register", "name": "find", "inputSchema": schema, "annotations": {"untrustedContentHint": 1}}
    )
    assert isinstance(reg, RegisterEvent) and reg.input_schema == schema and reg.untrusted_content
    refused = log.add({"type": "register_error", "name": 7, "error": "TypeError"})
    assert isinstance(refused, RegisterErrorEvent) and not isinstance(refused, RegisterEvent) and refused.name == 7
    assert [type(e) for e in log.events] == [CallEvent, ErrorEvent, RegisterEvent, RegisterErrorEvent]
    assert log.of_type(RegisterEvent) == [reg] and log.of_type(CallEvent, ErrorEvent) == [call, end]
    assert set(EVENT_TYPES) == {
        "register", "register_error", "unregister", "call", "refused", "result", "error", "click", "mark", "loaded"
    }  # fmt: skip


def test_a_report_of_an_unknown_type_or_no_dict_is_a_plain_event_never_an_error():
    log = ShimLog()
    odd = log.add({"type": "toolchange", "document": "d1", "what": 1})
    assert type(odd) is ShimEvent and odd.kind == "toolchange" and odd.document == "d1"
    assert odd.reported() == {"type": "toolchange", "document": "d1", "what": 1}
    assert type(log.add(["not", "a", "dict"])).__name__ == "ShimEvent"  # type: ignore[arg-type]
    assert log.events[-1].kind == "unknown"
    untyped = parse_event({"type": 5, "frame": "not a dict", "host_t": "late"})
    assert type(untyped) is ShimEvent and untyped.kind == "" and untyped.frame is None and untyped.is_top


def test_the_binding_logs_a_report_and_answers_the_page_a_value_it_can_take():
    """What the binding returns goes back to the page: a logged event is no such value (Playwright fails the call
    and formats a traceback for each report), so the binding answers null."""
    log = ShimLog()
    with pytest.raises(Exception, match="serialize unexpected value"):
        serialize_argument(log.add({"type": "loaded", "document": "d1"}))
    answer = log.take({"frame": None}, {"type": "register", "document": "d1", "instance": 1, "name": "find"})
    assert serialize_argument(answer) == {"value": {"v": "null"}, "handles": []}
    assert [e.kind for e in log.events] == ["loaded", "register"]


def test_the_shims_report_is_read_from_its_json_text_and_anything_else_is_kept_as_sent():
    """The shim sends each report as JSON text (shim.js emit), an object only where JSON cannot write it."""
    log = ShimLog()
    sent = '{"type": "register", "document": "d1", "instance": 1, "name": "brew\\ud83c", "frame": null}'
    log.take({"frame": None}, sent)
    log.take({"frame": None}, {"type": "loaded", "document": "d1"})
    log.take({"frame": None}, "not JSON")
    register, loaded, odd = log.events
    assert isinstance(register, RegisterEvent) and register.name == "brew\\ud83c"  # a lone surrogate, escaped
    assert isinstance(loaded, LoadedEvent) and odd.kind == "unknown"


def test_a_report_of_the_events_of_one_task_is_read_in_order():
    """The shim sends the events of one task of the page as one JSON array (shim.js emit)."""
    log = ShimLog()
    first = '{"type": "register", "document": "d1", "instance": 1, "name": "brew", "frame": null}'
    second = '{"type": "register", "document": "d1", "instance": 2, "name": "steep", "frame": null}'
    log.take({"frame": None}, f"[{first},{second}]")
    log.take({"frame": None}, "[]")
    assert [(e.kind, e.raw.get("name")) for e in log.events] == [("register", "brew"), ("register", "steep")]


def test_an_event_reports_back_the_dict_the_page_sent_as_a_trace_keeps_it():
    log = ShimLog()
    report = {"type": "refused", "callId": 1, "instance": 2, "name": "find", "args": {}, "seq": 4, "t": 1.5}
    report |= {"route": "/", "document": "d1", "frame": _in_frame("http://shop.test/f.html")}
    event = log.add(dict(report))
    assert isinstance(event, RefusedEvent) and not event.is_top
    assert event.reported() == report and list(event.reported()) == list(report)  # the same keys, in order
    assert "host_t" in event.raw and event.host_t == event.raw["host_t"]
    assert event.reported("name", "missing", "instance") == {"name": "find", "instance": 2}
    event.frame["allow"] = "tools"  # type: ignore[index]  # the allow attribute, read later from the parent
    assert event.reported()["frame"]["allow"] == "tools"


def test_the_registration_log_keeps_loads_registrations_and_refusals_not_calls_or_clicks():
    log = ShimLog()
    for kind in ("loaded", "register", "call", "result", "unregister", "register_error", "refused", "click", "mark"):
        log.add({"type": kind, "document": "d1", "name": "find"})
    kept = [type(e) for e in log.registration_log()]
    assert kept == [LoadedEvent, RegisterEvent, UnregisterEvent, RegisterErrorEvent, RefusedEvent]
    assert isinstance(log.events[-2], ClickEvent)


def _trace(registrations: list[dict[str, Any]], calls: list[ToolCall], stale: list[dict[str, Any]]) -> Trace:
    step = StepRecord(index=0, kind="user", input="", route_after="/", stale_registrations=stale)
    return Trace(
        run_id="r",
        trial_id="t",
        case_id="c",
        behaviour="b",
        start_route="/",
        steps=[step],
        calls=calls,
        registrations=[RegistrationEvent.model_validate(r) for r in registrations],
    )


def test_the_stale_check_holds_a_frames_call_against_the_frames_route():
    frame = _in_frame("http://shop.test/frame.html")
    registered = {"type": "register", "document": "f1", "instance": 1, "name": "lookup", "route": "/frame.html"}
    at_its_route = ToolCall(
        index=0, step=0, tool="lookup", route="/", instance=1, document="f1", frame=FrameRecord.model_validate(frame)
    )
    assert _stale(_trace([{**registered, "frame": frame}], [at_its_route], [])).status == "passed"

    moved = {**frame, "url": "http://shop.test/details.html"}
    elsewhere = at_its_route.model_copy(update={"frame": FrameRecord.model_validate(moved)})
    failed = _stale(_trace([{**registered, "frame": frame}], [elsewhere], []))
    assert failed.status == "failed"
    assert failed.why == (
        "call #0 lookup on /details.html in the frame http://shop.test/details.html "
        "ran a handler registered on /frame.html"
    )
    left = StaleRegistration.model_validate({"instance": 1, "name": "lookup", "route": "/frame.html", "frame": frame})
    why = _stale(_trace([], [], [left])).why
    assert why == (
        "after step 0 on /: lookup (registered on /frame.html in the frame http://shop.test/frame.html) "
        "is still registered"
    )


def test_an_old_trace_without_frames_reads_and_writes_back_unchanged():
    old = {"type": "register", "instance": 1, "route": "/", "document": "d1", "name": "search"}
    event = RegistrationEvent.model_validate(old)
    assert event.frame is None and event.model_dump() == old
    call = ToolCall(index=0, step=0, tool="search")
    assert "frame" not in call.model_dump()
