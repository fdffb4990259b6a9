"""``webmcp-eval audit``: a request in front of webmcp_eval/audit (check it, run the engine, write the views).

Every usage mistake (a URL that is not HTTP, a corrupt contract, a bad
setting in suite.yaml) is one line and exit 2 before any browser starts.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from webmcp_eval.audit.access import Access, AccessError, parse_header, read_storage_state
from webmcp_eval.audit.audit_report import AuditReport
from webmcp_eval.audit.config import AuditConfigError, parse_audit_config
from webmcp_eval.audit.contract import ContractError, read_contract
from webmcp_eval.audit.coverage import suite_coverage
from webmcp_eval.audit.engine import AuditOptions, audit
from webmcp_eval.audit.html_page import html_report
from webmcp_eval.audit.sarif import sarif_report
from webmcp_eval.audit.writers import json_text, junit_report, markdown_report, text_report
from webmcp_eval.errors import CannotRun, Outcome, UsageError
from webmcp_eval.play.browser.browser import ChromiumNotFound
from webmcp_eval.play.page.surface.model import origin_of
from webmcp_eval.proxies.files import write_atomic
from webmcp_eval.report.files import check_outputs, discarded
from webmcp_eval.report.sanitise import terminal
from webmcp_eval.suite.folder import SuiteError, find_suite
from webmcp_eval.suite.init import reading_setup
from webmcp_eval.suite.site import (
    SiteConfig,
    demo_site_config,
    page_url_problem,
    route_problem,
    shown_url,
    split_credentials,
)

DEFAULT_HTML = "audit-report.html"


@dataclass(frozen=True)
class AuditRequest:
    """What ``audit`` is asked to do (each field is the flag of its name; README.md lists them)."""

    url: str
    route: tuple[str, ...] = ()
    max_pages: int = 1
    smoke: bool = False
    all_tools: bool = False
    watch_ms: int = 5000
    json: str | None = None
    sarif: str | None = None
    site_root: str | None = None  # the repository's folder the site is served from: SARIF names its files
    markdown: str | None = None
    html: str = DEFAULT_HTML
    contract: str | None = None
    update_contract: bool = False
    suite: str | None = None
    fail_on: str = "error"  # exit 1 for a finding at this level or worse: error, warning or note
    junit: str | None = None
    header: tuple[str, ...] = ()  # 'NAME: VALUE', sent to the audited origin only
    storage_state: str | None = None
    chromium: str | None = None
    setup: str | None = None  # a YAML file of setup steps (a case's setup: syntax), before the tools are read
    step: tuple[str, ...] = ()  # setup steps after --setup's ('click:text=Start')


@dataclass(frozen=True)
class AuditOutcome(Outcome):
    """The audit's exit code (0 clean, 1 a finding at --fail-on or a page that did not load) and its report."""

    report: AuditReport


def audit_command(request: AuditRequest) -> AuditOutcome:
    """Check the request, audit the site, print the text report and write every view asked for."""
    options = audit_options(request)
    site_root = Path(request.site_root) if request.site_root else None
    try:
        report = asyncio.run(audit(options))
    except ChromiumNotFound as err:
        raise CannotRun(str(err), named=True) from None
    outputs: dict[str | None, Callable[[], str]] = {
        request.json: lambda: json_text(report),
        request.sarif: lambda: (
            json.dumps(sarif_report(report, site_root=site_root), indent=2, ensure_ascii=False) + "\n"
        ),
        request.markdown: lambda: markdown_report(report),
        request.html: lambda: html_report(report),
        request.junit: lambda: junit_report(report, request.fail_on),
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
        if path and not discarded(Path(path)):  # --html /dev/null: no page
            try:
                write_atomic(Path(path), redact(render()))
            except OSError as err:
                raise UsageError(f"cannot write {path}: {err.strerror or err}") from None
    sys.stdout.write(f"report: {request.html}\n")
    return AuditOutcome(report.exit_code_at(request.fail_on), report)


def _check_files(request: AuditRequest) -> None:
    """The reports go to files of their own: never one the audit reads (the login file, the contract it
    checks, the setup file), a pipe or a device, and no two to one file."""
    contract = Path(request.contract) if request.contract else None
    views = ("json", "sarif", "markdown", "html", "junit")
    outputs = [(f"--{v}", Path(str(getattr(request, v))) if getattr(request, v) else None) for v in views]
    outputs.append(("--contract", contract if request.update_contract else None))
    read = [Path(p) if p else None for p in (request.storage_state, request.setup)]
    check_outputs(outputs, [*read, None if request.update_contract else contract])


def audit_options(request: AuditRequest) -> AuditOptions:
    """The engine's options from the request; UsageError (one line) for anything that cannot work."""
    # user:password@ in the URL: the browser's HTTP authentication, never in a report (as run and init take it)
    if problem := page_url_problem(request.url):  # a file: URL is a page opened from disk, as a browser opens it
        raise UsageError(f"{shown_url(request.url)}: {problem}")
    url, credentials = split_credentials(request.url)
    for route in request.route:  # the audited origin's pages only: never a file of the machine, never a script
        if problem := route_problem(url, route):
            raise UsageError(f"--route {route}: {problem}")
    if not 1 <= request.max_pages <= 1000:
        raise UsageError(f"--max-pages {request.max_pages}: give 1 to 1000")
    if not 0 <= request.watch_ms <= 120_000:
        raise UsageError(f"--watch-ms {request.watch_ms}: give 0 to 120000 ms")
    if request.site_root and not Path(request.site_root).is_dir():
        raise UsageError(f"--site-root {request.site_root}: not a folder (the folder the site is served from)")
    if request.all_tools and not request.smoke:
        raise UsageError("--all-tools calls tools: give it with --smoke")
    _check_files(request)
    if request.update_contract and not request.contract:
        raise UsageError("--update-contract needs --contract FILE (where to write it)")
    if request.contract and not request.update_contract:
        try:
            read_contract(Path(request.contract))  # a corrupt contract stops here, before any browser
        except ContractError as err:
            raise UsageError(str(err)) from None
    try:
        headers = dict(parse_header(h) for h in request.header)
        state = read_storage_state(Path(request.storage_state)) if request.storage_state else None
    except AccessError as err:
        raise UsageError(str(err)) from None
    options = AuditOptions(
        url=url,
        setup=reading_setup(request.setup, request.step),
        access=Access(origin_of(url), headers, state, credentials),
        routes=list(request.route),
        max_pages=request.max_pages,
        smoke=request.smoke,
        all_tools=request.all_tools,
        watch_ms=request.watch_ms,
        chromium=request.chromium,
        contract=Path(request.contract) if request.contract else None,
        update_contract=request.update_contract,
    )
    if request.suite:
        try:
            suite = find_suite([], Path(request.suite))
        except SuiteError as err:
            raise UsageError(str(err)) from None
        try:
            options.config = parse_audit_config(suite.config.audit)
        except AuditConfigError as err:
            raise UsageError(f"{suite.where(*err.field.split('.'))}: {err}") from None
        site = suite.config.site
        options.site = (
            demo_site_config(request.url) if site == "demo" else site if isinstance(site, SiteConfig) else None
        )
        if options.site:
            options.site.take_credentials()  # its hooks authenticate as the browser does
        options.coverage = suite_coverage(suite)
    return options
