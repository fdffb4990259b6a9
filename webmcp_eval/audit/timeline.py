"""The registration timeline of a page: when its tools came, which came late, which came and went."""

from __future__ import annotations

from dataclasses import dataclass

from webmcp_eval.audit.config import AuditConfig
from webmcp_eval.audit.model import Finding, PageSurface


@dataclass
class Timeline:
    first_tool_ms: float | None  # from navigation start to the first registration (None: none came)
    late: dict[str, float]  # tool -> ms after the load event of its first registration, when later than allowed
    churn: dict[str, int]  # tool -> times it was withdrawn and registered again


def timeline_of(page: PageSurface, config: AuditConfig) -> Timeline:
    after = config.options("late-tool")["after_ms"]
    firsts: dict[str, float] = {}
    again: dict[str, int] = {}
    for frame in page.frames:
        withdrawn: set[str] = set()
        for e in sorted(frame.events, key=lambda e: e.t_ms):
            if e.type == "register":
                firsts.setdefault(e.name, e.t_ms)
                if e.name in withdrawn:
                    again[e.name] = again.get(e.name, 0) + 1
                    withdrawn.discard(e.name)
            elif e.type == "unregister":
                withdrawn.add(e.name)
    first = min(firsts.values(), default=None)
    return Timeline(
        first_tool_ms=None if first is None else round(max(0.0, first + (page.load_ms or 0.0)), 1),
        late={n: t for n, t in sorted(firsts.items()) if t - _since(page, t) > after},
        churn=dict(sorted(again.items())),
    )


def _since(page: PageSurface, t_ms: float) -> float:
    """What a registration's lateness is measured from: the load event, or the setup steps' start for a tool
    registered after they began (the steps bring it: a start button's, a login's)."""
    return page.setup_ms if page.setup_ms is not None and t_ms >= page.setup_ms else 0.0


def timeline_findings(page: PageSurface, config: AuditConfig) -> list[Finding]:
    if page.error:
        return []
    t = timeline_of(page, config)
    out: list[Finding] = []
    if config.enabled("late-tool"):
        after = config.options("late-tool")["after_ms"]
        for name, ms in t.late.items():
            out.append(
                Finding(
                    "late-tool",
                    config.severity("late-tool"),
                    f"{name} was registered {ms - _since(page, ms):.0f} ms after "
                    f"{'the setup steps began' if _since(page, ms) else 'the load event'} (later than {after} ms): "
                    "an agent may look before it is there",
                    page.url,
                    _frame_of(page, name),
                    name,
                )
            )
    if config.enabled("tool-churn"):
        times = config.options("tool-churn")["times"]
        for name, n in t.churn.items():
            if n >= times:
                out.append(
                    Finding(
                        "tool-churn",
                        config.severity("tool-churn"),
                        f"{name} was withdrawn and registered again {n} times while watched",
                        page.url,
                        _frame_of(page, name),
                        name,
                    )
                )
    return out


def _frame_of(page: PageSurface, name: str) -> str:
    for frame in page.frames:
        if any(e.name == name for e in frame.events):
            return frame.url
    return ""
