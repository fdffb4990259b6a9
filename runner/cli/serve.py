"""Commands that serve or break a site: mcp, site, mutate."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from runner.cli.common import (
    PERCENT,
    PORT,
    POSITIVE,
    base_url_type,
)
from runner.evaluation.loading import (
    default_suite_dir,
    load_cases,
)
from runner.evaluation.output import (
    EXIT_FAILED,
    EXIT_INVALID,
    EXIT_NOT_RUN,
    EXIT_OK,
    UsageError,
    console,
    errors,
    report_problems,
    say,
)


def _cmd_mcp(args: argparse.Namespace) -> int:
    """Serve the live page's active catalog as an MCP server (stdio or streamable HTTP)."""
    from playwright.async_api import Error as PlaywrightError

    from runner.agents.mcp_bridge import BridgeConfigError
    from runner.play.mcp_serve import serve_page

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
    except BridgeConfigError as err:
        errors.print(str(err), markup=False)
        return EXIT_INVALID
    except PlaywrightError as err:  # the site is down or the page does not open: not the user's typing
        say(f"{args.base_url}: the page could not be opened: {str(err).splitlines()[0]}")
        return EXIT_NOT_RUN
    except KeyboardInterrupt:
        return 130


def _cmd_site(args: argparse.Namespace) -> int:
    from site_under_test.server import SiteStartError, run_site

    if args.data_dir and Path(args.data_dir).exists() and not Path(args.data_dir).is_dir():
        raise UsageError(f"--data-dir {args.data_dir}: is a file; give a directory (it is made if missing)")
    try:
        run_site(host=args.host, port=args.port, test_mode=args.test_mode, data_dir=args.data_dir)
    except SiteStartError as err:
        raise UsageError(str(err)) from None
    return EXIT_OK


def _cmd_mutate(args: argparse.Namespace) -> int:
    """Mutation testing of the suite against the site: does it notice a broken site?"""
    from runner.mutation.mutate import OPERATORS, MutateOptions, mutate, print_report
    from runner.play.run import new_run_id, select_cases
    from runner.suite.site import SiteConfigError, load_site_config
    from runner.suite.validate import SuiteCatalog

    operators = [o.strip() for o in (args.operators or "").split(",") if o.strip()] or None
    unknown = sorted(set(operators or []) - set(OPERATORS))
    if unknown:
        say(f"--operators: unknown operator(s) {', '.join(unknown)}; one of: {', '.join(OPERATORS)}")
        return EXIT_INVALID
    try:
        site_config = load_site_config(Path(args.site_config), args.base_url) if args.site_config else None
    except SiteConfigError as err:
        say(f"--site-config {err}")
        return EXIT_INVALID
    suite = load_cases([a for a in args.cases if Path(a).exists()], None)
    if isinstance(suite, int):
        return suite
    loaded, problems, _note, the_suite = suite
    if problems:
        report_problems(problems)
        return EXIT_INVALID
    chosen = select_cases(loaded, [a for a in args.cases if not Path(a).exists()], None, [])
    if not chosen:
        errors.print("No case matches the selection " + " ".join(args.cases))
        return EXIT_INVALID
    catalog_path = default_suite_dir() / "catalog.json"
    options = MutateOptions(
        out_root=Path(args.out),
        run_id=args.run_id or f"mutate-{new_run_id()}",
        workers=args.workers,
        operators=operators,
        base_url=args.base_url,
        site_config=site_config,
        chromium=args.chromium,
        catalog_tools=SuiteCatalog.load(catalog_path).tools() if catalog_path.is_file() else set(),
        baseline_runs=args.baseline_runs,
        confirm_kills=not args.no_confirm,
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


def add_mutate(sub: argparse._SubParsersAction) -> None:
    mut = sub.add_parser(
        "mutate",
        help="mutation testing of the suite: site bugs made in the page and the proxy; does a case fail?",
        description="Play the cases against mutants of the site (bugs applied in the browser and the proxy, "
        "the site untouched) and report the mutation score (killed / run), the survivors with the cases "
        "that passed although they saw the bug, equivalent mutants and mutants no case touches. "
        "Writes --out/<run-id>/mutation.json. Exit 1 when the score is below --min-score.",
    )
    mut.add_argument("cases", nargs="*", help="case IDs or globs, or case files/directories (default cases/)")
    mut.add_argument("--base-url", help="an already running or deployed site instead of the embedded one")
    mut.add_argument("--site-config", help="YAML naming the site's hooks (reset, state, ...)")
    mut.add_argument("--operators", help="comma-separated operators (default: all); see docs/suite-validity.md")
    mut.add_argument("-j", "--workers", type=POSITIVE, default=2, help="trials in parallel (default 2)")
    mut.add_argument(
        "--min-score", type=PERCENT, default=0.0, metavar="PCT", help="exit 1 below this score in %% (0-100)"
    )
    mut.add_argument(
        "--baseline-runs",
        type=POSITIVE,
        default=2,
        help="unmutated runs; what differs between them is noise (default 2)",
    )
    mut.add_argument(
        "--no-confirm", action="store_true", help="count a failing case as a kill at once (default: play it again)"
    )
    mut.add_argument("--out", default="traces", help="where the run directory goes (default traces/)")
    mut.add_argument("--run-id", help="name of the run directory (default mutate-<timestamp>)")
    mut.add_argument("--chromium", help="the Chromium binary")
    mut.set_defaults(func=_cmd_mutate)


def add_mcp(sub: argparse._SubParsersAction) -> None:
    mcp = sub.add_parser(
        "mcp",
        help="serve a live page's WebMCP tools as an MCP server (stdio or streamable HTTP)",
        description="Open the page at --base-url + --route in Chromium with the shim and the DevTools "
        "witness, and serve its active catalog over MCP; the tool list is re-announced when the page's "
        "catalog changes, and every call goes through the page.",
    )
    mcp.add_argument("--base-url", type=base_url_type, required=True, help="the site, e.g. http://127.0.0.1:8000")
    mcp.add_argument("--route", default="/", help="the page to open (default /)")
    mcp.add_argument("--transport", choices=["stdio", "http"], default="stdio", help="stdio or streamable HTTP")
    mcp.add_argument("--host", default="127.0.0.1", help="HTTP: bind address (default loopback)")
    mcp.add_argument("--port", type=PORT, default=8765, help="HTTP: port; 0 picks a free one (default 8765)")
    mcp.add_argument("--chromium", help="the Chromium binary")
    mcp.add_argument("--log", help="on exit, write the shim's log of registrations and calls here (JSON)")
    mcp.set_defaults(func=_cmd_mcp)


def add_site(sub: argparse._SubParsersAction) -> None:
    site = sub.add_parser("site", help="serve the demo events site")
    site.add_argument("--host", default="127.0.0.1", help="bind address (default: loopback only)")
    site.add_argument("--port", type=PORT, default=8000, help="port; 0 picks a free one")
    site.add_argument("--test-mode", action="store_true", help="enable worlds and the /__test__ control API")
    site.add_argument("--data-dir", default=None, help="where the SQLite files live (default: a temp dir)")
    site.set_defaults(func=_cmd_site)
