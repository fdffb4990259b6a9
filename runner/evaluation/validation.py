"""validate: the suite checked (file:line), against a catalog or the live site, and its do-nothing control."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.errors import EXIT_FAILED, EXIT_NOT_RUN, EXIT_OK, CannotRun, InvalidInput, UsageError
from runner.evaluation.loading import (
    LoadedCases,
    load_cases,
    surface_checks_of,
)
from runner.evaluation.output import check_writable_dir, console, report_problems, say
from runner.evaluation.run import site_config_for

if TYPE_CHECKING:
    from runner.suite.folder import Suite
    from runner.suite.loader import LoadedCase, Problem


def validate_command(args: argparse.Namespace) -> int:
    from runner.suite.validate import scope_warnings

    if args.route and not args.live:
        raise UsageError("--route names a route whose tools --live reads: give --live URL too")
    suite = _validate_live(args) if args.live else load_cases(args.paths, args.catalog, args.suite)
    loaded, problems, catalog_note = suite.cases, suite.problems, suite.note
    for warning in scope_warnings(loaded):
        say(f"warning: {warning}")
    problems = problems + _audit_catalog(args.paths, args.catalog, args.suite)
    if problems:
        report_problems(problems)
        raise InvalidInput(catalog_note)
    console.print(
        f"{len(loaded)} case(s) valid; {catalog_note}. (This says nothing about any agent.)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    return _validate_control(args, loaded, suite.suite) if args.control else EXIT_OK


def _validate_control(args: argparse.Namespace, loaded: list[LoadedCase], suite: Suite) -> int:
    """validate --control: the null agent over the suite; a case it passes must say why (null_agent).

    Exit 1 names each unexplained pass; 3 when some case could not be judged (the site or browser failed).
    """
    from runner.agents.null import NullAgent
    from runner.play.run.run import new_run_id, run_suite
    from runner.play.run.settings import RunSettings
    from runner.results.health import control_health

    check_writable_dir(Path(args.out), "--out")
    settings = RunSettings(
        agent_factory=NullAgent,
        out_root=Path(args.out),
        run_id=f"control-{new_run_id()}",
        workers=args.workers,
        base_url=args.base_url,
        site_config=site_config_for(args, suite),
        screenshots="off",
        browser_context=suite.config.browser_context(),  # the suite's time zone and locale, as every run of it
        **surface_checks_of(args, suite),  # as every run of the suite holds its tools to them
    )
    console.print(f"control: the null agent over {len(loaded)} case(s) (reads the tools, calls none)")
    result = asyncio.run(run_suite(loaded, settings))
    health = control_health(result.traces)
    for line in health.lines():
        console.print(f"  {line}", markup=False, highlight=False)
    console.print(f"traces: {result.out_dir}", markup=False, highlight=False)
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


def _validate_live(args: argparse.Namespace) -> LoadedCases:
    """``validate --live URL``: every rule checked against the tools the cases' routes register now."""
    import tempfile

    from runner.evaluation.catalog import DISCOVERY_SETTLE_MS, list_tools
    from runner.suite.case import NavigateAction
    from runner.suite.init import route_key

    if args.catalog:
        raise UsageError("--live reads the tools from the site; give --live URL or --catalog FILE, not both")
    if "://" not in args.live:
        raise UsageError(f"--live {args.live}: not a URL (e.g. http://127.0.0.1:8000/demo/)")
    first = load_cases(args.paths, None, args.suite)
    if first.problems:
        return first  # a case that does not load is reported as it is, before any browser starts
    loaded = first.cases
    routes = {lc.case.start_route for lc in loaded} | set(args.route or [])
    routes |= {s.to for lc in loaded for s in lc.case.steps if isinstance(s, NavigateAction)}
    listing = asyncio.run(list_tools(args.live, sorted(routes), settle_ms=DISCOVERY_SETTLE_MS))
    broken = [r for r in listing if r.error]
    if broken:
        raise CannotRun(
            f"--live: {broken[0].url}: {broken[0].error} (the tools could not be read; nothing was checked)"
        )
    catalog = {"routes": {k: v for r in listing for k, v in _route_tools(r, route_key).items()}}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "live-catalog.json"
        path.write_text(json.dumps(catalog), encoding="utf-8")
        checked = load_cases(args.paths, str(path), args.suite)
    shown = ", ".join(sorted(catalog["routes"]))
    return dataclasses.replace(checked, note=f"tools checked against {args.live} as it is now (routes {shown})")


def _route_tools(reading: Any, route_key: Callable[[str], str]) -> dict[str, dict[str, Any]]:
    from runner.suite.init import offered  # the top page's tools, then its frames': what an agent is offered

    return {route_key(reading.route): {t.name: t.input_schema or {"type": "object"} for t in offered(reading)}}


def _audit_catalog(paths: list[str], catalog: str | None, suite_dir: str | None) -> list[Problem]:
    """The audit's static rules on the suite's catalog: each finding a line; a bad audit setting is a problem."""
    from runner.audit.catalog_lint import catalog_audit

    lines, problems = catalog_audit(paths, catalog, suite_dir)
    for line in lines:
        say(line)
    return problems
