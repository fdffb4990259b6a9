"""validate: the suite checked (file:line), against a catalog or the live site, and its do-nothing control."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from webmcp_eval.agents.null import NullAgent
from webmcp_eval.audit.catalog_lint import catalog_audit
from webmcp_eval.errors import EXIT_FAILED, EXIT_NOT_RUN, EXIT_OK, CannotRun, InvalidInput, Outcome, UsageError
from webmcp_eval.evaluation.loading import LoadedCases, load_cases, site_config_for, surface_checks_of
from webmcp_eval.evaluation.output import check_writable_dir, console, report_problems, say
from webmcp_eval.play.run.settings import RunSettings
from webmcp_eval.results.health import ControlHealth, control_health
from webmcp_eval.suite.case import Case, NavigateAction
from webmcp_eval.suite.init import offered
from webmcp_eval.suite.loader import LoadedCase, Problem
from webmcp_eval.suite.site import route_key
from webmcp_eval.suite.validate import case_warnings

if TYPE_CHECKING:
    from webmcp_eval.play.page.surface.discover import RouteTools
    from webmcp_eval.suite.folder import Suite


@dataclass(frozen=True)
class ValidateRequest:
    """validate: the case files or folders (none: cases/), the catalog or the live site they are checked against,
    and whether the null agent plays the suite too (``control``, with its site, out and workers)."""

    paths: tuple[str, ...] = ()
    catalog: str | None = None
    suite: str | None = None
    live: str | None = None  # a URL: the tools its pages register now, instead of a catalog file
    route: tuple[str, ...] = ()
    control: bool = False
    base_url: str | None = None
    site_config: str | None = None
    out: str = "traces"
    workers: int = 1


def validate_command(request: ValidateRequest) -> Outcome:
    """The suite checked as every command loads it; exit 2 with every problem, else 0 (or --control's code)."""
    if request.route and not request.live:
        raise UsageError("--route names a route whose tools --live reads: give --live URL too")
    suite = _validate_live(request) if request.live else load_cases(list(request.paths), request.catalog, request.suite)
    loaded, problems, catalog_note = suite.cases, suite.problems, suite.note
    for warning in case_warnings(loaded):
        say(f"warning: {warning}")
    problems = problems + _audit_catalog(list(request.paths), request.catalog, request.suite)
    if problems:
        report_problems(problems)
        raise InvalidInput(catalog_note)
    console.print(
        f"{len(loaded)} case(s) valid; {catalog_note}. (This says nothing about any agent.)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    return Outcome(_validate_control(request, loaded, suite.suite) if request.control else EXIT_OK)


def _validate_control(request: ValidateRequest, loaded: list[LoadedCase], suite: Suite) -> int:
    """validate --control: the null agent over the suite; a case it passes must say why (null_agent).

    Exit 1 names each unexplained pass; 3 when some case could not be judged (the site or browser failed).
    """
    check_writable_dir(Path(request.out), "--out")
    console.print(f"control: the null agent over {len(loaded)} case(s) (reads the tools, calls none)")
    health, out_dir = _play_control(loaded, suite, request)
    for line in health.lines():
        console.print(f"  {line}", markup=False, highlight=False)
    boundary = [lc.case.id for lc in loaded if boundary_only(lc.case)]
    if boundary:  # a do-nothing agent passes these by design: they say what must not happen, nothing more
        console.print(
            f"  boundary only (expect no call, nothing that shows an agent acted): {len(boundary)} of "
            f"{len(loaded)} case(s): {', '.join(boundary)}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    positive = [cid for cid in health.passed if cid not in boundary]
    console.print(
        f"  positive cases the null agent passes: {len(positive)} of {len(loaded) - len(boundary)}"
        + (f" ({', '.join(positive)})" if positive else ""),
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    console.print(f"traces: {out_dir}", markup=False, highlight=False)
    said = {lc.case.id for lc in loaded if lc.case.null_agent}
    for cid in sorted(said - set(health.passed) - set(health.not_judged)):
        say(f"warning: {cid}: says null_agent passes, but the null agent did not pass it: drop null_agent")
    for cid in health.unexplained:
        file = next(lc.file for lc in loaded if lc.case.id == cid)
        say(
            f"{file}: {cid} passes with no agent, and the case does not say why: strengthen its answer or UI "
            "checks so a silent agent fails, or add null_agent: {passes: true, reason: ...}"
        )
    if health.unexplained:
        return EXIT_FAILED
    return EXIT_NOT_RUN if health.not_judged else EXIT_OK


def boundary_only(case: Case) -> bool:
    """A case that tests only a boundary: it expects no call and nothing an agent's work would show (no answer,
    UI, state or confirmation check), so a do-nothing agent meets it by doing nothing."""
    expect = case.expect
    return not (expect.calls.expected or expect.answer or expect.ui or expect.state or expect.confirmation)


def _play_control(loaded: list[LoadedCase], suite: Suite, request: ValidateRequest) -> tuple[ControlHealth, Path]:
    """The null agent over the cases, as every run of the suite plays them; its health and where its traces are."""
    # playing opens a browser: the browser stack loads only for --control, a plain validate stays quick
    from webmcp_eval.evaluation.demo_site import with_demo_site
    from webmcp_eval.play.run.run import new_run_id, run_suite

    settings = RunSettings(
        agent_factory=NullAgent,
        out_root=Path(request.out),
        run_id=f"control-{new_run_id()}",
        workers=request.workers,
        base_url=request.base_url,
        site_config=site_config_for(suite, request.base_url, request.site_config),
        screenshots="off",
        browser_context=suite.config.browser_context(),  # the suite's time zone and locale, as every run of it
        **surface_checks_of(request.catalog, suite),  # as every run of the suite holds its tools to them
    )
    result = asyncio.run(run_suite(loaded, settings, with_demo_site()))
    return control_health(list(result.kept)), result.out_dir


def control_over(folder: Path, out: Path, workers: int = 2) -> ControlHealth:
    """The null agent over a suite folder's cases (init's check of the starters it wrote)."""
    suite = load_cases([str(folder)], None)
    if suite.problems:
        report_problems(suite.problems)
        raise InvalidInput(f"{folder}: the cases written do not load; nothing was played")
    return _play_control(suite.cases, suite.suite, ValidateRequest((str(folder),), out=str(out), workers=workers))[0]


def _validate_live(request: ValidateRequest) -> LoadedCases:
    """``validate --live URL``: every rule checked against the tools the cases' routes register now."""
    # reading the site opens a browser: the browser stack loads only for --live, a plain validate stays quick
    from webmcp_eval.evaluation.catalog import DISCOVERY_SETTLE_MS, list_tools

    if request.catalog:
        raise UsageError("--live reads the tools from the site; give --live URL or --catalog FILE, not both")
    live = request.live or ""
    if "://" not in live:
        raise UsageError(f"--live {request.live}: not a URL (e.g. http://127.0.0.1:8000/demo/)")
    first = load_cases(list(request.paths), None, request.suite)
    if first.problems:
        return first  # a case that does not load is reported as it is, before any browser starts
    loaded = first.cases
    routes = {lc.case.start_route for lc in loaded} | set(request.route or [])
    routes |= {s.to for lc in loaded for s in lc.case.steps if isinstance(s, NavigateAction)}
    listing = asyncio.run(list_tools(live, sorted(routes), settle_ms=DISCOVERY_SETTLE_MS))
    broken = [r for r in listing if r.error]
    if broken:
        raise CannotRun(
            f"--live: {broken[0].url}: {broken[0].error} (the tools could not be read; nothing was checked)"
        )
    catalog = {"routes": {k: v for r in listing for k, v in _route_tools(r).items()}}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "live-catalog.json"
        path.write_text(json.dumps(catalog), encoding="utf-8")
        checked = load_cases(list(request.paths), str(path), request.suite)
    shown = ", ".join(sorted(catalog["routes"]))
    return dataclasses.replace(checked, note=f"tools checked against {request.live} as it is now (routes {shown})")


def _route_tools(reading: RouteTools) -> dict[str, dict[str, object]]:
    """The tools an agent is offered on a route (the top page's, then its frames'), as a catalog lists them."""
    return {route_key(reading.route): {t.name: t.input_schema or {"type": "object"} for t in offered(reading)}}


def _audit_catalog(paths: list[str], catalog: str | None, suite_dir: str | None) -> list[Problem]:
    """The audit's static rules on the suite's catalog: each finding a line; a bad audit setting is a problem."""
    lines, problems = catalog_audit(paths, catalog, suite_dir)
    for line in lines:
        say(line)
    return problems
