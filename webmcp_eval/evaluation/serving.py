"""mcp, site, mutate: a live page served over MCP, the demo site served, the site broken on purpose."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from playwright.async_api import Error as PlaywrightError

from webmcp_eval.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_NOT_RUN,
    EXIT_OK,
    CannotRun,
    InvalidInput,
    Outcome,
    UsageError,
)
from webmcp_eval.evaluation.loading import default_suite_dir, load_cases
from webmcp_eval.evaluation.mcp_serve import serve_page
from webmcp_eval.evaluation.output import console, report_problems
from webmcp_eval.mutation.mutants import OPERATORS
from webmcp_eval.mutation.mutate import MutateOptions, mutate, print_report
from webmcp_eval.play.run.run import new_run_id, select_cases
from webmcp_eval.suite.site import SiteConfigError, load_site_config
from webmcp_eval.suite.validate import SuiteCatalog


@dataclass(frozen=True)
class McpRequest:
    """mcp: the page at base_url + route served over MCP (stdio, or streamable HTTP on host:port)."""

    base_url: str
    route: str = "/"
    transport: str = "stdio"
    host: str = "127.0.0.1"
    port: int = 8765
    chromium: str | None = None
    log: str | None = None
    allow_host: tuple[str, ...] = ()  # HTTP: host names a request's Host and Origin may name beside loopback


@dataclass(frozen=True)
class SiteRequest:
    """site: the demo events site served on host:port."""

    host: str = "127.0.0.1"
    port: int = 8000
    test_mode: bool = False
    data_dir: str | None = None


@dataclass(frozen=True)
class ServeExampleRequest:
    """serve-example: an example site that ships with the package, served on loopback."""

    example: str = "shop"
    port: int = 8000


@dataclass(frozen=True)
class MutateRequest:
    """mutate: the cases (ids, globs, files; none: cases/), the site, the operators and how kills are confirmed."""

    cases: tuple[str, ...] = ()
    base_url: str | None = None
    site_config: str | None = None
    operators: str | None = None  # comma-separated; None: all
    workers: int = 2
    min_score: float = 0.0
    clean_runs: int = 2
    confirm: str = "doubtful"
    no_confirm: bool = False
    out: str = "traces"
    run_id: str | None = None
    chromium: str | None = None


def mcp_command(request: McpRequest) -> Outcome:
    """Serve the live page's active catalog as an MCP server (stdio or streamable HTTP)."""
    try:
        code = asyncio.run(
            serve_page(
                request.base_url,
                request.route,
                request.transport,
                request.host,
                request.port,
                chromium=request.chromium,
                log_path=request.log,
                allow_hosts=request.allow_host,
            )
        )
    except PlaywrightError as err:  # the site is down or the page does not open: not the user's typing
        raise CannotRun(f"{request.base_url}: the page could not be opened: {str(err).splitlines()[0]}") from None
    except KeyboardInterrupt:  # the client is gone: the server ends without a line of its own
        return Outcome(EXIT_INTERRUPTED)
    return Outcome(code)


def site_command(request: SiteRequest) -> Outcome:
    """Serve the demo site until Ctrl-C."""
    from webmcp_eval.site_under_test.server import (  # the demo site's server loads only to serve it
        SiteStartError,
        run_site,
    )

    if request.data_dir and Path(request.data_dir).exists() and not Path(request.data_dir).is_dir():
        raise UsageError(f"--data-dir {request.data_dir}: is a file; give a directory (it is made if missing)")
    try:
        run_site(host=request.host, port=request.port, test_mode=request.test_mode, data_dir=request.data_dir)
    except SiteStartError as err:
        raise UsageError(str(err)) from None
    return Outcome(EXIT_OK)


def serve_example_command(request: ServeExampleRequest) -> Outcome:
    """Serve an example site until Ctrl-C; a port that cannot be listened on is a usage error (one line)."""
    from webmcp_eval.examples.shop_server import serve_example

    try:
        serve_example(request.example, request.port)
    except OSError as err:
        raise UsageError(f"--port {request.port}: {err.strerror or err}; pick another with --port") from None
    return Outcome(EXIT_OK)


def mutate_command(request: MutateRequest) -> Outcome:
    """Mutation testing of the suite against the site: does it notice a broken site?"""
    operators = [o.strip() for o in (request.operators or "").split(",") if o.strip()] or None
    unknown = sorted(set(operators or []) - set(OPERATORS))
    if unknown:
        raise InvalidInput(f"--operators: unknown operator(s) {', '.join(unknown)}; one of: {', '.join(OPERATORS)}")
    try:
        site_config = load_site_config(Path(request.site_config), request.base_url) if request.site_config else None
    except SiteConfigError as err:
        raise InvalidInput(f"--site-config {err}") from None
    suite = load_cases([a for a in request.cases if Path(a).exists()], None)
    loaded, problems, the_suite = suite.cases, suite.problems, suite.suite
    if problems:
        report_problems(problems)
        raise InvalidInput("no mutant played: fix the cases above")
    chosen = select_cases(loaded, [a for a in request.cases if not Path(a).exists()], None, [])
    if not chosen:
        raise InvalidInput("No case matches the selection " + " ".join(request.cases))
    catalog_path = default_suite_dir() / "catalog.json"
    catalog = SuiteCatalog.load(catalog_path) if catalog_path.is_file() else None
    options = MutateOptions(
        out_root=Path(request.out),
        run_id=request.run_id or f"mutate-{new_run_id()}",
        workers=request.workers,
        operators=operators,
        base_url=request.base_url,
        site_config=site_config,
        chromium=request.chromium,
        catalog_tools=catalog.tools() if catalog else set(),
        catalog_hints=catalog.annotations if catalog else None,
        catalog_schemas=catalog.schema_surface() if catalog else None,
        clean_runs=request.clean_runs,
        confirm="none" if request.no_confirm else request.confirm,
        browser_context=the_suite.config.browser_context(),
    )
    # Ctrl-C: the command line says "interrupted" and ends with 130, as for every command
    result = asyncio.run(mutate(chosen, options, lambda line: console.print(line, highlight=False)))
    print_report(result, console)
    if result.score is None:
        return Outcome(EXIT_NOT_RUN)
    return Outcome(EXIT_FAILED if result.score * 100 < request.min_score else EXIT_OK)
