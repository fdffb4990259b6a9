"""``webmcp-eval audit``: the command line in front of runner/audit (parse, check, run the engine, write views).

Every usage mistake (a URL that is not HTTP, a corrupt contract, a bad
setting in suite.yaml) is one line and exit 2 before any browser starts.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from runner.errors import CannotRun, UsageError
from runner.report.sanitise import terminal

if TYPE_CHECKING:
    from runner.audit.engine import AuditOptions

DEFAULT_HTML = "audit-report.html"
P = TypeVar("P", bound=argparse.ArgumentParser)  # the command line's parser class


def add_audit_parser(sub: argparse._SubParsersAction[P]) -> None:
    audit = sub.add_parser(
        "audit",
        help="judge a site's WebMCP tools themselves: lint, smoke calls, timeline, contract, score",
        description="Open URL (and each --route, and up to --max-pages same-origin pages) in Chromium, read every "
        "frame's tools, and judge them: static rules on names, descriptions, schemas, sensitive data, frames and "
        "refused registrations; the registration timeline; with --smoke, calls with inputs drawn from each "
        "schema, judged on their answers and on the writes the proxy counts. Writes an HTML report. Exit 0 when "
        "clean, 1 for an error-level finding or a page that failed to load, 2 for a usage error.",
    )
    audit.add_argument("url", help="the page, or the base URL the routes resolve under (http or https)")
    audit.add_argument("--route", action="append", default=[], help="a route under URL to audit (repeatable)")
    audit.add_argument(
        "--max-pages",
        type=int,
        default=1,
        metavar="N",
        help="follow same-origin links up to N pages in all (default 1: no crawl; never submits forms)",
    )
    audit.add_argument("--smoke", action="store_true", help="call the read-only tools with inputs from their schemas")
    audit.add_argument(
        "--all-tools",
        action="store_true",
        help="with --smoke: call the other tools too, each call in a fresh world (the site's hooks)",
    )
    audit.add_argument(
        "--watch-ms",
        type=int,
        default=5000,
        metavar="MS",
        help="watch each page this long after its load event (default 5000)",
    )
    audit.add_argument("--json", metavar="FILE", help="write the report as JSON")
    audit.add_argument("--sarif", metavar="FILE", help="write SARIF 2.1.0 (CI code scanning)")
    audit.add_argument("--markdown", metavar="FILE", help="write a Markdown summary (CI job summary, PR comment)")
    audit.add_argument("--html", metavar="FILE", default=DEFAULT_HTML, help=f"the HTML report (default {DEFAULT_HTML})")
    audit.add_argument("--contract", metavar="FILE", help="compare the surface with this reviewed contract")
    audit.add_argument("--update-contract", action="store_true", help="write the surface to --contract FILE instead")
    audit.add_argument(
        "--suite",
        metavar="DIR",
        help="a suite folder: its suite.yaml's audit rules and site hooks, and its cases for coverage",
    )
    audit.add_argument(
        "--fail-on",
        choices=("error", "warning", "note"),
        default="error",
        help="exit 1 for a finding at this level or worse (default error); a page that did not load always fails",
    )
    audit.add_argument("--junit", metavar="FILE", help="write JUnit XML: one test case per rule and page (CI)")
    audit.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="send this header to the audited origin only (repeatable; e.g. a login); its value is redacted "
        "from every output",
    )
    audit.add_argument(
        "--storage-state",
        metavar="FILE",
        help="open every page with this Playwright storage state (cookies, localStorage: a logged-in session); "
        "its values are redacted from every output",
    )
    audit.add_argument("--chromium", help="the Chromium binary")
    audit.set_defaults(func=cmd_audit)


def cmd_audit(args: argparse.Namespace) -> int:
    options = _options(args)
    from runner.audit.engine import audit
    from runner.audit.writers import html_report, json_text, junit_report, markdown_report, sarif_report, text_report
    from runner.play.browser.browser import ChromiumNotFound

    try:
        report = asyncio.run(audit(options))
    except ChromiumNotFound as err:
        raise CannotRun(str(err), named=True) from None
    import json

    outputs: dict[str | None, Callable[[], str]] = {
        args.json: lambda: json_text(report),
        args.sarif: lambda: json.dumps(sarif_report(report), indent=2, ensure_ascii=False) + "\n",
        args.markdown: lambda: markdown_report(report),
        args.html: lambda: html_report(report),
        args.junit: lambda: junit_report(report, args.fail_on),
    }
    redact = options.access.redact  # no output shows a header value or a storage-state secret
    if options.all_tools and not (options.site and options.site.hooks.reset):
        sys.stdout.write(
            "note: no reset hook (--suite DIR whose site has hooks.reset): each call of a tool that may write got "
            "a fresh document with the origin's cookies and storage cleared, but the server's state was not reset "
            "between calls\n"
        )
    sys.stdout.write(terminal(redact(text_report(report)), lines=True))
    for path, render in outputs.items():
        if path:
            try:
                Path(path).write_text(redact(render()), encoding="utf-8")
            except OSError as err:
                raise UsageError(f"cannot write {path}: {err.strerror or err}") from None
    sys.stdout.write(f"report: {args.html}\n")
    return report.exit_code_at(args.fail_on)


def _options(args: argparse.Namespace) -> AuditOptions:  # AuditOptions imported late to keep --help fast
    from runner.audit.config import AuditConfigError, parse_audit_config
    from runner.audit.contract import ContractError, read_contract
    from runner.audit.engine import AuditOptions
    from runner.play.page.surface.model import origin_of
    from runner.suite.folder import SuiteError, find_suite
    from runner.suite.site import SiteConfig, demo_site_config, split_credentials

    # user:password@ in the URL: the browser's HTTP authentication, never in a report (as run and init take it)
    url, credentials = split_credentials(args.url)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"{url}: not an http(s) URL (e.g. http://127.0.0.1:8000/demo/)")
    if not 1 <= args.max_pages <= 1000:
        raise UsageError(f"--max-pages {args.max_pages}: give 1 to 1000")
    if not 0 <= args.watch_ms <= 120_000:
        raise UsageError(f"--watch-ms {args.watch_ms}: give 0 to 120000 ms")
    if args.all_tools and not args.smoke:
        raise UsageError("--all-tools calls tools: give it with --smoke")
    if args.update_contract and not args.contract:
        raise UsageError("--update-contract needs --contract FILE (where to write it)")
    if args.contract and not args.update_contract:
        try:
            read_contract(Path(args.contract))  # a corrupt contract stops here, before any browser
        except ContractError as err:
            raise UsageError(str(err)) from None
    from runner.audit.access import Access, AccessError, parse_header, read_storage_state

    try:
        headers = dict(parse_header(h) for h in args.header)
        state = read_storage_state(Path(args.storage_state)) if args.storage_state else None
    except AccessError as err:
        raise UsageError(str(err)) from None
    options = AuditOptions(
        url=url,
        access=Access(origin_of(url), headers, state, credentials),
        routes=args.route,
        max_pages=args.max_pages,
        smoke=args.smoke,
        all_tools=args.all_tools,
        watch_ms=args.watch_ms,
        chromium=args.chromium,
        contract=Path(args.contract) if args.contract else None,
        update_contract=args.update_contract,
    )
    if args.suite:
        try:
            suite = find_suite([], Path(args.suite))
        except SuiteError as err:
            raise UsageError(str(err)) from None
        try:
            options.config = parse_audit_config(suite.config.audit)
        except AuditConfigError as err:
            raise UsageError(f"{suite.where(*err.field.split('.'))}: {err}") from None
        site = suite.config.site
        options.site = demo_site_config(args.url) if site == "demo" else site if isinstance(site, SiteConfig) else None
        if options.site:
            options.site.take_credentials()  # its hooks authenticate as the browser does
        from runner.audit.coverage import suite_coverage

        options.coverage = suite_coverage(suite)
    return options
