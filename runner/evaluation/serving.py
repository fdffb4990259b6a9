"""mcp, site, mutate: a live page served over MCP, the demo site served, the site broken on purpose."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from runner.errors import EXIT_FAILED, EXIT_INVALID, EXIT_NOT_RUN, EXIT_OK, CannotRun, InvalidInput, UsageError
from runner.evaluation.loading import (
    default_suite_dir,
    load_cases,
)
from runner.evaluation.output import console, errors, report_problems


def mcp_command(args: argparse.Namespace) -> int:
    """Serve the live page's active catalog as an MCP server (stdio or streamable HTTP)."""
    from playwright.async_api import Error as PlaywrightError

    from runner.evaluation.mcp_serve import serve_page

    try:
        return asyncio.run(
            serve_page(
                args.base_url,
                args.route,
                args.transport,
                args.host,
                args.port,
                chromium=args.chromium,
                log_path=args.log,
            )
        )
    except PlaywrightError as err:  # the site is down or the page does not open: not the user's typing
        raise CannotRun(f"{args.base_url}: the page could not be opened: {str(err).splitlines()[0]}") from None
    except KeyboardInterrupt:
        return 130


def site_command(args: argparse.Namespace) -> int:
    from site_under_test.server import SiteStartError, run_site

    if args.data_dir and Path(args.data_dir).exists() and not Path(args.data_dir).is_dir():
        raise UsageError(f"--data-dir {args.data_dir}: is a file; give a directory (it is made if missing)")
    try:
        run_site(host=args.host, port=args.port, test_mode=args.test_mode, data_dir=args.data_dir)
    except SiteStartError as err:
        raise UsageError(str(err)) from None
    return EXIT_OK


def mutate_command(args: argparse.Namespace) -> int:
    """Mutation testing of the suite against the site: does it notice a broken site?"""
    from runner.mutation.mutate import OPERATORS, MutateOptions, mutate, print_report
    from runner.play.run.run import new_run_id, select_cases
    from runner.suite.site import SiteConfigError, load_site_config
    from runner.suite.validate import SuiteCatalog

    operators = [o.strip() for o in (args.operators or "").split(",") if o.strip()] or None
    unknown = sorted(set(operators or []) - set(OPERATORS))
    if unknown:
        raise InvalidInput(f"--operators: unknown operator(s) {', '.join(unknown)}; one of: {', '.join(OPERATORS)}")
    try:
        site_config = load_site_config(Path(args.site_config), args.base_url) if args.site_config else None
    except SiteConfigError as err:
        raise InvalidInput(f"--site-config {err}") from None
    suite = load_cases([a for a in args.cases if Path(a).exists()], None)
    loaded, problems, the_suite = suite.cases, suite.problems, suite.suite
    if problems:
        report_problems(problems)
        return EXIT_INVALID
    chosen = select_cases(loaded, [a for a in args.cases if not Path(a).exists()], None, [])
    if not chosen:
        raise InvalidInput("No case matches the selection " + " ".join(args.cases))
    catalog_path = default_suite_dir() / "catalog.json"
    catalog = SuiteCatalog.load(catalog_path) if catalog_path.is_file() else None
    options = MutateOptions(
        out_root=Path(args.out),
        run_id=args.run_id or f"mutate-{new_run_id()}",
        workers=args.workers,
        operators=operators,
        base_url=args.base_url,
        site_config=site_config,
        chromium=args.chromium,
        catalog_tools=catalog.tools() if catalog else set(),
        catalog_hints=catalog.annotations if catalog else None,
        clean_runs=args.clean_runs,
        confirm="none" if args.no_confirm else args.confirm,
        browser_context=the_suite.config.browser_context(),
    )
    try:
        result = asyncio.run(mutate(chosen, options, lambda line: console.print(line, highlight=False)))
    except KeyboardInterrupt:
        errors.print("interrupted")
        return 130
    print_report(result, console)
    if result.score is None:
        return EXIT_NOT_RUN
    return EXIT_FAILED if result.score * 100 < args.min_score else EXIT_OK
