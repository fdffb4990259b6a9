"""The HTML report's drill-down into one trial: the prompt, the catalog per step, the tool-call timeline with
arguments and results, every assertion with why, writes, the state diff, the screenshot and the Playwright trace."""

from __future__ import annotations

import base64
import difflib
import json
import os
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from webmcp_eval.report.rendering import _json, _short_json, urlpath
from webmcp_eval.report.timeline import TimeEvent, TimeFigure, time_figure
from webmcp_eval.results.run_results import TrialFigures, seconds, series_label
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.rundir.reading import trace_dir
from webmcp_eval.trace import Assertion, Trace

MAX_SCREENSHOT_BYTES = 15 * 1024 * 1024
MAX_DIFF_LINES = 600
IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"RIFF", "image/webp"),
    (b"GIF8", "image/gif"),
)


# --------------------------------------------------------------------------- one trial


@dataclass
class DiffLine:
    kind: str  # add, del, hunk, ctx
    text: str


@dataclass
class CallView:
    index: int
    step: int
    tool: str
    args: str
    result: str
    result_summary: str
    error: str | None
    refused: bool
    in_catalog: bool
    route: str
    instance: int | None
    started_ms: float
    frame: str | None  # the URL of the frame whose tool it called; None: the top page's
    duration_ms: float
    left_pct: float
    width_pct: float


@dataclass
class StepView:
    index: int
    kind: str
    input: str
    route_before: str
    route_after: str
    catalog: list[str]
    added: list[str]
    removed: list[str]
    calls: list[int]
    reply: str | None
    error: str | None
    stale: str | None
    duration_ms: float


@dataclass
class TrialView:
    trace: Trace
    anchor: str
    series_label: str
    assertions: list[Assertion]
    failed: list[Assertion]
    counted: int
    steps: list[StepView]
    calls: list[CallView]
    state_diff: list[dict[str, str]]
    state_lines: list[DiffLine]
    state_lines_cut: int
    state_before: str | None
    state_after: str | None
    screenshot_uri: str | None
    screenshot_note: str
    playwright_trace: str | None
    tokens: int | None
    extras: dict[str, str]
    rubric: list[dict[str, str]] = field(default_factory=list)  # the case's criteria in words: labelling controls
    retry: str = ""  # "2 attempts; attempt 1: not_run (infrastructure): …" for a retried trial
    attempt_links: list[tuple[str, str]] = field(default_factory=list)  # (label, href) of earlier attempts' traces
    timeline: TimeFigure | None = None  # registrations, steps, calls and writes on one time axis


def _steps(t: Trace) -> list[StepView]:
    out = []
    for s in t.steps:
        before, after = list(s.catalog), list(s.catalog_after)
        out.append(
            StepView(
                index=s.index,
                kind=s.kind,
                input=s.input if isinstance(s.input, str) else _short_json(s.input, 2000),
                route_before=s.route_before,
                route_after=s.route_after,
                catalog=before,
                added=[n for n in after if n not in before] if s.catalog_after else [],
                removed=[n for n in before if n not in after] if s.catalog_after else [],
                calls=list(s.calls),
                reply=s.reply,
                error=s.error,
                stale=_json(s.stale_registrations) if s.stale_registrations else None,
                duration_ms=s.duration_ms,
            )
        )
    return out


def _result_summary(result: object) -> str:
    if isinstance(result, dict):
        parts = [f"{k}: {result[k]}" for k in ("status", "code") if isinstance(result.get(k), str | int | bool)]
        if isinstance(result.get("message"), str):
            parts.append(result["message"])
        if parts:
            return " · ".join(parts)
    return _short_json(result, 120)


def _calls(t: Trace) -> list[CallView]:
    end = max([t.duration_ms, *(c.started_ms + c.duration_ms for c in t.calls)], default=0.0) or 1.0
    out = []
    for c in t.calls:
        left = max(0.0, min(100.0, 100 * c.started_ms / end))
        width = max(0.6, min(100.0 - left, 100 * c.duration_ms / end))
        out.append(
            CallView(
                index=c.index,
                step=c.step,
                tool=c.tool,
                args=_json(c.args),
                result=_json(c.result),
                result_summary=_result_summary(c.result) if c.result is not None else "",
                error=c.error,
                refused=c.refused,
                in_catalog=c.in_catalog,
                route=c.route,
                instance=c.instance,
                started_ms=c.started_ms,
                frame=c.frame.url if c.frame else None,
                duration_ms=c.duration_ms,
                left_pct=round(left, 2),
                width_pct=round(width, 2),
            )
        )
    return out


def _page_clock(t: Trace) -> tuple[float | None, str]:
    """What to add to the page's clock (the shim's ``t``) to get ms since the trial started, and how it was found.

    The shim stamps its events with the page's clock; the trial's own times run from the trial's start.
    DevTools' first toolsAdded (trial time) and the shim's first register (page time) are the same moment;
    without the DevTools witness, the start page's first load is put at the start of navigation.
    """
    stamped = [(r, r.model_extra.get("t")) for r in t.registrations if r.model_extra]
    stamped = [(r, v) for r, v in stamped if isinstance(v, int | float)]
    first_reg = next((v for r, v in stamped if r.type == "register"), None)
    added = next((e.t_ms for e in t.witness.events if e.event == "toolsAdded" and e.t_ms is not None), None)
    if first_reg is not None and added is not None:
        return added - first_reg, "registrations placed by DevTools' first toolsAdded"
    loaded = next((v for r, v in stamped if r.type == "loaded" and r.route not in (None, "blank")), None)
    tm = t.timings
    if loaded is not None and all(k in tm for k in ("setup_ms", "tools_ms", "goto_ms")):
        goto = tm["setup_ms"] - tm["tools_ms"] - tm["goto_ms"]
        return (
            goto - loaded,
            f"registrations placed by the start page's load at the start of navigation (± {seconds(tm['goto_ms'])})",
        )
    return None, "registrations not placed: the trace has no times to place them by"


def _registration_events(t: Trace, offset: float | None) -> list[TimeEvent]:
    if offset is None:
        return []
    out: list[TimeEvent] = []
    for r in t.registrations:
        stamp = (r.model_extra or {}).get("t")
        if not isinstance(stamp, int | float):
            continue
        ms = stamp + offset
        name = r.tool_name or (r.route or "")
        kind = {"register": "register", "unregister": "unregister", "loaded": "loaded"}.get(r.type, "refused")
        if r.type == "loaded" and r.route == "blank":
            continue
        out.append((kind, ms, None, f"{seconds(ms)}: {r.type} {name}" + (f": {r.error}" if r.error else "")))
    return out


def _trial_timeline(t: Trace) -> TimeFigure | None:
    """Registrations, steps, tool calls and the writes they made on one time axis (ms since the trial started)."""
    if not (t.steps or t.calls or t.registrations):
        return None
    offset, how = _page_clock(t)
    regs = _registration_events(t, offset)
    begin = t.timings.get("setup_ms", 0.0)  # steps run one after another once the page and its tools are ready
    steps: list[TimeEvent] = []
    for s in t.steps:
        said = s.input if isinstance(s.input, str) else _short_json(s.input, 80)
        steps.append(
            ("step", begin, begin + s.duration_ms, f"step {s.index} ({s.kind}), {seconds(s.duration_ms)}: {said[:120]}")
        )
        begin += s.duration_ms
    calls: list[TimeEvent] = []
    writes: list[TimeEvent] = []
    for c in t.calls:
        end = c.started_ms + c.duration_ms
        bad = c.error or ("refused: not in the active catalog" if c.refused else "")
        tip = f"#{c.index} {c.tool} at {seconds(c.started_ms)}, {seconds(c.duration_ms)}" + (f": {bad}" if bad else "")
        calls.append(("call-error" if bad else "call", c.started_ms, end, tip))
        for w in c.writes or []:
            writes.append(("write", c.started_ms, end, f"{w} during call #{c.index} {c.tool}"))
    moments = [e[2] if e[2] is not None else e[1] for e in regs + steps + calls]
    end = max([t.duration_ms, *moments], default=0.0) or 1.0
    start = min([0.0, *(e[1] for e in regs)])
    untimed = len(t.network.writes) - len(writes) if t.network.available else 0
    caption = (
        f"ms since the trial started; {how}; steps follow the setup ({seconds(t.timings.get('setup_ms'))}); "
        f"writes shown during the call that made them"
        + (f"; {untimed} write(s) outside tool calls have no time" if untimed > 0 else "")
        + (f"; {t.network.requests} request(s) in all" if t.network.available else "")
        + ". Purple: a page loaded, green: a tool registered, red: withdrawn or refused (a red call failed); "
        "hover a mark for what it was."
    )
    lanes: list[tuple[str, Sequence[TimeEvent]]] = [
        ("registrations", regs),
        ("steps", steps),
        ("tool calls", calls),
        ("writes", writes),
    ]
    rules = [(t.timings["setup_ms"], "ready")] if "setup_ms" in t.timings else []
    return time_figure(f"Timeline of {t.trial_id}", caption, lanes, start, end, rules)


def _state(t: Trace) -> tuple[list[dict[str, str]], list[DiffLine], int, str | None, str | None]:
    st = t.state
    if not st.available:
        return [], [], 0, None, None
    rows = [
        {
            "path": d.path,
            "change": d.change,
            "before": _short_json(d.before, 400),
            "after": _short_json(d.after, 400),
        }
        for d in st.diff
    ]
    before = json.dumps(st.before, indent=2, ensure_ascii=False, sort_keys=True, default=str)
    after = json.dumps(st.after, indent=2, ensure_ascii=False, sort_keys=True, default=str)
    lines = []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), "before", "after", n=3, lineterm=""):
        if line.startswith(("---", "+++")):
            continue
        kind = "hunk" if line.startswith("@@") else "add" if line[:1] == "+" else "del" if line[:1] == "-" else "ctx"
        lines.append(DiffLine(kind, line))
    cut = max(0, len(lines) - MAX_DIFF_LINES)
    return rows, lines[:MAX_DIFF_LINES], cut, before, after


def _image_uri(path: Path) -> tuple[str | None, str]:
    try:
        if not path.is_file():
            return None, f"screenshot not found: {path}"
        if path.stat().st_size > MAX_SCREENSHOT_BYTES:
            return None, f"screenshot too large to embed: {path}"
        data = path.read_bytes()
    except OSError as err:
        return None, f"screenshot unreadable: {path}: {err}"
    mime = next((m for magic, m in IMAGE_MAGIC if data.startswith(magic)), None)
    if mime == "image/webp" and data[8:12] != b"WEBP":
        mime = None
    if mime is None:
        return None, f"not an image (PNG, JPEG, WebP or GIF): {path}"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}", str(path)


def _playwright_trace(t: Trace, trace_dir: Path, report_dir: Path) -> str | None:
    """The Playwright trace file kept for the trial, as a link relative to the report.

    Read from a ``playwright_trace`` field (a path relative to the trace file,
    like the screenshot) when the trace has one, else looked for beside the
    run: ``<run>/playwright/<trial>.zip`` or ``<run>/trials/<trial>.zip``.
    """
    candidates = []
    named = getattr(t, "playwright_trace", None)
    if isinstance(named, str) and named:
        candidates.append(trace_dir / named)
    candidates += [
        RunDir(trace_dir.parent).playwright_trace(t.trial_id),
        trace_dir / f"{t.trial_id}.zip",
        trace_dir / f"{t.trial_id}.trace.zip",
    ]
    for c in candidates:
        if c.is_file() and c.resolve().is_relative_to(trace_dir.resolve().parent):  # inside the run folder only
            return os.path.relpath(c.resolve(), report_dir.resolve()).replace(os.sep, "/")
    return None


def _relative(path: Path, report_dir: Path) -> str:
    return os.path.relpath(os.path.normpath(path.absolute()), report_dir.absolute()).replace(os.sep, "/")


def _trial_view(
    f: TrialFigures, anchor: str, report_dir: Path, trace_dirs: Path | Mapping[str, Path] | None
) -> TrialView:
    t = f.trace
    tdir = trace_dir(t, report_dir, trace_dirs)
    uri, note = (None, "no screenshot was taken")
    if t.ui.screenshot:
        shot = (tdir / t.ui.screenshot).resolve()
        if shot.is_relative_to(tdir.resolve().parent):  # the run's own folder: never another file on the disk
            uri, note = _image_uri(shot)
        else:
            note = f"screenshot outside the run folder, not embedded: {t.ui.screenshot}"
    rows, lines, cut, before, after = _state(t)
    order = {"failed": 0, "not_run": 1, "passed": 2}
    assertions = sorted(t.assertions, key=lambda a: order[a.status])  # stable: case order within each status
    extras = {}
    for name, value in (
        ("DevTools WebMCP witness", t.witness.model_dump() if t.witness.available else None),
        ("shim registration log", t.registrations or None),
        ("agent log", t.agent_log or None),
        ("timings", t.timings or None),
        (
            "browser",
            {**t.browser, "timezone_id": t.timezone_id, "locale": t.locale} if t.timezone_id else t.browser or None,
        ),
    ):
        if value:
            extras[name] = _json(value)
    return TrialView(
        trace=t,
        anchor=anchor,
        series_label=series_label(f.series),
        assertions=assertions,
        failed=[a for a in t.assertions if a.status == "failed"],
        counted=f.assertions_counted,
        steps=_steps(t),
        calls=_calls(t),
        state_diff=rows,
        state_lines=lines,
        state_lines_cut=cut,
        state_before=before,
        state_after=after,
        screenshot_uri=uri,
        screenshot_note=note,
        playwright_trace=_playwright_trace(t, tdir, report_dir),
        tokens=f.tokens,
        extras=extras,
        retry=f.retry_text(),
        rubric=_rubric(t) if t.verdict != "not_run" else [],  # a trial that did not run has nothing to judge
        attempt_links=[
            (f"attempt {a.attempt}", urlpath(_relative(tdir / a.trace, report_dir))) for a in t.earlier_attempts
        ],
        timeline=_trial_timeline(t),
    )


def _rubric(t: Trace) -> list[dict[str, str]]:
    criteria = ((t.case.get("expect") or {}).get("answer") or {}).get("rubric") or []
    return [{"id": str(c["id"]), "criterion": str(c.get("criterion") or "")} for c in criteria if c.get("id")]


def _anchors(traces: Sequence[Trace]) -> dict[int, str]:
    dup: defaultdict[str, int] = defaultdict(int)
    for t in traces:
        dup[t.trial_id] += 1
    out: dict[int, str] = {}
    used: set[str] = set()
    for t in traces:
        base = t.trial_id if dup[t.trial_id] == 1 else f"{t.run_id}-{t.trial_id}"
        base = "trial-" + re.sub(r"[^A-Za-z0-9_.:-]", "_", base)
        anchor, i = base, 1
        while anchor in used:
            i += 1
            anchor = f"{base}-{i}"
        used.add(anchor)
        out[id(t)] = anchor
    return out
