"""The second witness: the shim's log of tool calls against what the DevTools WebMCP domain saw.

Two independent observers of the same page should agree on every call; where
they do not, one of them missed or misreported something, and the trial says so.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from webmcp_eval.play.page.surface.log import CallEvent, RefusedEvent, ShimEvent
from webmcp_eval.trace import WitnessRecord


def compare_witness(shim_events: list[ShimEvent], cdp_events: list[dict[str, Any]], available: bool) -> WitnessRecord:
    """The shim and the DevTools domain should have seen the same calls; list where they did not.

    An imperative call agrees when name and arguments are equal, in the same
    kind of frame (the top page's or a frame's). A declarative (form) call
    agrees when the form held every value DevTools saw the agent send: the shim
    reads the filled form, whose other fields keep their defaults.

    DevTools' session of the page sees the page's own process only: a call in
    a frame whose tools it never saw registered (a cross-site frame, out of
    process) is listed as unwitnessed, never as a disagreement.
    """
    record = WitnessRecord.model_validate({"available": available, "events": cdp_events})
    if not available:
        return record
    seen_registered = {name for e in cdp_events if e.get("event") == "toolsAdded" for name in e.get("tools") or []}
    shim: list[CallEvent | RefusedEvent] = []
    for e in shim_events:
        if not isinstance(e, CallEvent | RefusedEvent):
            continue
        if not e.is_top and e.name not in seen_registered:
            frame = e.frame.get("url") if e.frame is not None else None
            record.unwitnessed.append(f"{_call_key(e.name, e.args)} in the frame {frame}")
            continue
        shim.append(e)
    cdp = [e for e in cdp_events if e.get("event") == "toolInvoked"]
    unseen_by_cdp: Counter[str] = Counter()
    for event in shim:
        same = next((c for c in cdp if _same_call(event, c)), None)
        if same is None:
            unseen_by_cdp[_call_key(event.name, event.args)] += 1
        else:
            cdp.remove(same)
    unseen_by_shim = Counter(_call_key(c.get("toolName"), c.get("input")) for c in cdp)
    for call, n in unseen_by_cdp.items():
        record.disagreements.append(f"the shim saw {n}× {call}; DevTools did not")
    for call, n in unseen_by_shim.items():
        record.disagreements.append(f"DevTools saw {n}× {call}; the shim did not")
    return record


def _call_key(name: Any, args: Any) -> str:
    return f"{name} {json.dumps(args or {}, sort_keys=True, ensure_ascii=False)}"


def _same_call(shim: CallEvent | RefusedEvent, cdp: dict[str, Any]) -> bool:
    if shim.name != cdp.get("toolName"):
        return False
    if cdp.get("top") is not None and cdp["top"] != shim.is_top:
        return False  # a frame's call is not the top page's call of a tool with the same name
    sent, seen = cdp.get("input") or {}, shim.args or {}
    if shim.declarative and isinstance(sent, dict):
        return all(k in seen and seen[k] == v for k, v in sent.items())
    return _call_key("", seen) == _call_key("", sent)
