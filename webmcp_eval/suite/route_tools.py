"""The tools a case can call where it calls them: setup and plan calls checked against their route.

A page registers the tools of its own route only, so a setup call or a reference-plan call is checked
against the catalog's tools of the route the case is on at that point, never the whole catalog (a
call of a tool the page does not have is not_run at every trial). The route is followed as the case
moves: it starts at ``start_route``, a ``navigate`` action goes to its route (which must be one of
the catalog's), and a click may go anywhere, so after one the route is no longer known and the
checks stop. A ``wait_for`` that waits for tools waits for tools of the route it is on.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from webmcp_eval.data_file import FieldPath
from webmcp_eval.suite.case import ClickAction, NavigateAction, SetupCall, UserStep, WaitForAction
from webmcp_eval.suite.loader import LoadedCase, Problem, field_path


class RoutesOfCatalog(Protocol):
    """What this module reads of webmcp_eval.suite.validate.SuiteCatalog (which calls it: no import back)."""

    routes: dict[str, dict[str, Any]]

    def route_pattern(self, route: str) -> str | None: ...

    def tools(self) -> set[str]: ...


def _at(lc: LoadedCase, loc: FieldPath, message: str) -> Problem:
    return Problem(lc.file, lc.line_of(*loc), field_path(loc), message)


def _timeline(lc: LoadedCase) -> Iterator[tuple[FieldPath, Any]]:
    """Every setup step, then every step, with where it is in the file."""
    yield from ((("setup", i), step) for i, step in enumerate(lc.case.setup))
    yield from ((("steps", i), step) for i, step in enumerate(lc.case.steps))


def _offered(catalog: RoutesOfCatalog, route: str | None) -> tuple[str | None, set[str] | None]:
    """The catalog's route pattern for ``route`` and its tools; (None, None) when the route is not known."""
    pattern = catalog.route_pattern(route) if route is not None else None
    return pattern, (set(catalog.routes[pattern]) if pattern is not None else None)


def _not_here(tool: str, pattern: str, what: str) -> str:
    return f"{what} {tool!r} is not a tool of {pattern}, the route it runs on (a page registers its own tools only)"


def route_problems(lc: LoadedCase, catalog: RoutesOfCatalog | None) -> list[Problem]:
    """Setup calls, plan calls, navigate targets and wait_for tools, each checked on the route it runs on."""
    if catalog is None:
        return []
    out: list[Problem] = []
    known = catalog.tools()
    route: str | None = lc.case.start_route
    for where, step in _timeline(lc):
        pattern, tools = _offered(catalog, route)
        if isinstance(step, SetupCall) and tools is not None and step.call in known and step.call not in tools:
            out.append(_at(lc, (*where, "call"), _not_here(step.call, pattern or "", "the setup call")))
        elif isinstance(step, UserStep):
            for pi, planned in enumerate(step.plan):
                if tools is not None and planned.call in known and planned.call not in tools:
                    loc = (*where, "plan", pi, "call")
                    out.append(_at(lc, loc, _not_here(planned.call, pattern or "", "the planned call")))
        elif isinstance(step, NavigateAction):
            route = step.to
            if catalog.route_pattern(step.to) is None:
                out.append(_at(lc, (*where, "to"), f"{step.to} is not a route of the site's catalog"))
                route = None
        elif isinstance(step, WaitForAction):
            for ti, tool in enumerate(step.tools):
                if tool not in known:
                    out.append(_at(lc, (*where, "tools", ti), f"unknown tool {tool!r}: the wait could never end"))
                elif tools is not None and tool not in tools:
                    out.append(_at(lc, (*where, "tools", ti), _not_here(tool, pattern or "", "the awaited tool")))
        elif isinstance(step, ClickAction):
            route = None  # a click may follow a link: where it lands is not known before the run
    goal = lc.case.user
    if goal is not None and goal.plan:
        pattern, tools = _offered(catalog, route)
        for pi, planned in enumerate(goal.plan):
            if tools is not None and planned.call in known and planned.call not in tools:
                loc = ("user", "plan", pi, "call")
                out.append(_at(lc, loc, _not_here(planned.call, pattern or "", "the planned call")))
    return out
