"""Commands over the suite and the site's tools: validate, import, export, tools, init, schema, audit."""

from __future__ import annotations

import argparse

from webmcp_eval.cli.common import (
    SETTLE_MS,
    WORKERS,
    DeprecatedSpelling,
    Subcommands,
    base_url_type,
    request_of,
)
from webmcp_eval.errors import Outcome

# Each handler builds its command's request from the parsed arguments and calls the command's core, imported when
# the command runs: the cores load the suite, audit and browser stacks, which --help and a usage mistake skip.


def handle_validate(args: argparse.Namespace) -> Outcome:
    from webmcp_eval.evaluation.validation import ValidateRequest, validate_command

    return validate_command(request_of(ValidateRequest, args))


def handle_import(args: argparse.Namespace) -> Outcome:
    from webmcp_eval.evaluation.suite_files import ImportRequest, import_command

    return import_command(request_of(ImportRequest, args))


def handle_export(args: argparse.Namespace) -> Outcome:
    from webmcp_eval.evaluation.suite_files import ExportRequest, export_command

    return export_command(request_of(ExportRequest, args))


def handle_tools(args: argparse.Namespace) -> Outcome:
    from webmcp_eval.evaluation.suite_files import ToolsRequest, tools_command

    return tools_command(request_of(ToolsRequest, args))


def handle_init(args: argparse.Namespace) -> Outcome:
    from webmcp_eval.evaluation.suite_files import InitRequest, init_command

    return init_command(request_of(InitRequest, args))


def handle_schema(args: argparse.Namespace) -> Outcome:
    from webmcp_eval.evaluation.suite_files import SchemaRequest, schema_command

    return schema_command(request_of(SchemaRequest, args))


def handle_audit(args: argparse.Namespace) -> Outcome:
    from webmcp_eval.audit.command import AuditRequest, audit_command

    return audit_command(request_of(AuditRequest, args))


def add_validate(sub: Subcommands) -> None:
    val = sub.add_parser("validate", help="check the case suite itself (file:line for every problem)")
    val.add_argument(
        "paths", nargs="*", help="case files or directories (default cases/), or one webmcp-evals evals.json"
    )
    val.add_argument("--catalog", help="the site's tools per route (default: catalog.json beside the cases)")
    val.add_argument("--suite", metavar="DIR", help="the suite folder (default: the folder of the paths given)")
    val.add_argument(
        "--live",
        metavar="URL",
        help="check every rule against the tools the site at URL registers now, on each case's start route "
        "and the routes it navigates to (instead of a catalog file; nothing is played)",
    )
    val.add_argument(
        "--route", action="append", metavar="R", help="with --live: also read the tools of this route (repeatable)"
    )
    base = val.add_argument_group("the control: the null agent over the suite")
    base.add_argument(
        "--control",
        action="store_true",
        help="also play the null agent (reads the tools, calls none, answers nothing) over the suite: exit 1 "
        "naming each case it passes that does not say why (null_agent: {passes: true, reason: ...})",
    )
    # the null agent's run is the control (baseline meant four other things): the old spelling, one release
    base.add_argument(
        "--baselines", dest="control", nargs=0, const=True, action=DeprecatedSpelling, instead="--control"
    )
    base.add_argument("--base-url", type=base_url_type, help="with --control: the site (default: the suite's own)")
    base.add_argument("--site-config", help="with --control: YAML naming the site's hooks")
    base.add_argument("--out", default="traces", help="with --control: where its run directory goes (traces/)")
    base.add_argument("-j", "--workers", type=WORKERS, default=1, help="with --control: trials in parallel (1)")
    val.set_defaults(func=handle_validate)


def add_import_(sub: Subcommands) -> None:
    imp = sub.add_parser(
        "import",
        help="convert a webmcp-evals evals.json into a suite folder of YAML cases",
        description="Write one YAML case per eval of a public webmcp-evals evals.json, and suite.yaml, into "
        "-o DIR: messages become the step (earlier turns its history), expectedCall both the expectation and "
        "the reference plan, null 'no tool calls'; groups, optional calls and matchers map one to one. "
        "An unknown $ operator or a misspelled key is an error (exit 2, nothing written). "
        "run and validate also take an evals.json directly.",
    )
    imp.add_argument("evals", help="the evals.json (a JSON array of {name, messages, expectedCall})")
    imp.add_argument("-o", "--output", required=True, metavar="DIR", help="a new or empty folder for the suite")
    imp.add_argument("--base-url", help="the site the evals are for, written into suite.yaml")
    imp.add_argument(
        "--schema",
        help="the webmcp-evals tool list (schema.json) as the suite's catalog "
        "(default: schema.json beside the evals, when there is one)",
    )
    imp.set_defaults(func=handle_import)


def add_export(sub: Subcommands) -> None:
    exp = sub.add_parser(
        "export",
        help="write a suite as a webmcp-evals evals.json and its tool list (schema.json)",
        description="Write SUITE's cases as one eval each into -o DIR/evals.json, and the tools of its catalog "
        "(with the descriptions of an imported schema.json) as DIR/schema.json. A suite the public format would "
        "hold weaker (a case it cannot say: scripted steps, a goal; an expectation it drops: answer, network, UI, "
        "state, confirmation, forbidden calls, start route, setup, an operator it lacks) is refused with what "
        "would be lost (exit 2, nothing written), unless --lossy.",
    )
    exp.add_argument("suite", help="the suite folder")
    exp.add_argument("-o", "--output", required=True, metavar="DIR", help="where evals.json and schema.json go")
    exp.add_argument(
        "--lossy",
        action="store_true",
        help="write the weaker evals.json anyway: the cases it cannot say left out, and each dropped "
        "expectation listed",
    )
    exp.set_defaults(func=handle_export)


def add_tools(sub: Subcommands) -> None:
    tools = sub.add_parser(
        "tools",
        help="list the WebMCP tools a page registers, per route",
        description="Open URL (and each --route under it) in Chromium and list every tool the page registers: "
        "name, description, input schema, annotations (readOnlyHint, untrustedContentHint, ...), imperative "
        "(registerTool) or declarative (<form toolname>), and the native or polyfill WebMCP path. "
        "Exit 3 when a page cannot be opened.",
    )
    tools.add_argument("url", help="the page, or the base URL the routes resolve under (e.g. http://host/demo/)")
    tools.add_argument("--route", action="append", help="a route under URL, e.g. / or cart.html (repeatable)")
    tools.add_argument("--json", action="store_true", help="print JSON instead of text")
    tools.add_argument(
        "--settle-ms",
        type=SETTLE_MS,
        help="quiet time that counts as settled (default 1000; raise it for tools that register later)",
    )
    add_setup_arguments(tools)
    tools.add_argument("--chromium", help="the Chromium binary")
    tools.set_defaults(func=handle_tools)


def add_init(sub: Subcommands) -> None:
    ini = sub.add_parser(
        "init",
        help="write a suite folder for a live site: suite.yaml, its catalog, one starter case per tool",
        description="Open --base-url (and each --route under it) in Chromium, perform the setup steps (--setup, "
        "--step), read the WebMCP tools each page registers, call each tool live in a throw-away browser context "
        "with inputs the page itself suggests (its forms' options and bounds, the schema's enum, examples and "
        "formats, the ids it links to; a refused input is retried with the next), and write into -o DIR (new or "
        "empty): suite.yaml, catalog.json (the tools per route, as read, hash routes included) and per tool a "
        "positive starter (the call the site accepted, its answer's shape and what the page showed; a tool that "
        "may write is prepared and left for the person where the site asks for a confirmation, else its writes "
        "are counted) and, for a tool that may write, a boundary starter (asked about, not called). Then the "
        "null agent plays the starters: it must pass none of the positive ones. Exit 2 for a non-empty DIR or a "
        "bad step, 3 when the site cannot be opened or registers no tools.",
    )
    ini.add_argument("--base-url", required=True, help="the site, with its path (e.g. http://host/demo/)")
    ini.add_argument("--route", action="append", help="a route under the base URL to read (default /; repeatable)")
    ini.add_argument("-o", "--output", default="suite", metavar="DIR", help="the new suite folder (default suite)")
    ini.add_argument(
        "--settle-ms",
        type=SETTLE_MS,
        help="quiet time that counts as settled, also written to suite.yaml (default 1000)",
    )
    add_setup_arguments(ini)
    ini.add_argument(
        "--no-probe",
        action="store_true",
        help="call no tool while writing: only a tool marked readOnlyHint gets a positive starter, with arguments "
        "made from its schema",
    )
    ini.add_argument("--no-control", action="store_true", help="do not play the null agent over the starters")
    ini.add_argument("--chromium", help="the Chromium binary")
    ini.set_defaults(func=handle_init)


def add_setup_arguments(parser: argparse.ArgumentParser) -> None:
    """--setup and --step: the state the tools are read in, in the syntax of a case's setup: steps."""
    parser.add_argument(
        "--setup",
        metavar="FILE",
        help="a YAML list of setup steps (a case's setup: syntax, or a case file) performed on each page before "
        "its tools are read; the starters carry them",
    )
    parser.add_argument(
        "--step",
        action="append",
        metavar="STEP",
        help="one setup step after --setup's (repeatable): click:text=Start, click:role=button,name=Open, "
        "wait_for:text=Ready, navigate:/cart, call:start_game, reload, or a YAML mapping as in a case",
    )


def add_schema(sub: Subcommands) -> None:
    schema = sub.add_parser("schema", help="print the JSON Schema of the case format")
    schema.add_argument("-o", "--output", help="write it to this file")
    schema.set_defaults(func=handle_schema)


def add_audit(sub: Subcommands) -> None:
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
    audit.add_argument(
        "--site-root",
        metavar="DIR",
        help="the folder of the repository the site is served from: SARIF places a finding at the script (or page) "
        "that registered its tool as that file of the repository, so code scanning annotates a pull request "
        "(without it, a finding is named by its tool or page alone, never a URL as a file)",
    )
    audit.add_argument("--markdown", metavar="FILE", help="write a Markdown summary (CI job summary, PR comment)")
    audit.add_argument("--html", metavar="FILE", help="the HTML report (default audit-report.html)")
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
    add_setup_arguments(audit)
    audit.add_argument("--chromium", help="the Chromium binary")
    audit.set_defaults(func=handle_audit)
