"""Commands that serve or break a site: mcp, site, serve-example, mutate."""

from __future__ import annotations

import argparse
import re

from webmcp_eval.cli.common import (
    PERCENT,
    PORT,
    TRIALS,
    WORKERS,
    DeprecatedSpelling,
    Subcommands,
    base_url_type,
    request_of,
)
from webmcp_eval.errors import Outcome

_HOST_NAME = re.compile(r"^([A-Za-z0-9]([A-Za-z0-9-]{0,62}\.?)*|\[[0-9A-Fa-f:.]+\])$")


def host_name_type(text: str) -> str:
    """A host name or address as a Host header names it (no scheme, port or path): devbox.lan, 10.0.0.5, [fe80::1]."""
    if len(text) > 253 or not _HOST_NAME.match(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a host name (e.g. devbox.lan, 10.0.0.5, [fe80::1])")
    return text.lower()


# Each handler builds its command's request and calls the command's core, imported when the command runs: the
# cores load the browser stack and the demo site's server, which --help and a usage mistake skip.


def handle_mutate(args: argparse.Namespace) -> Outcome:
    from webmcp_eval.evaluation.serving import MutateRequest, mutate_command

    return mutate_command(request_of(MutateRequest, args))


def handle_mcp(args: argparse.Namespace) -> Outcome:
    from webmcp_eval.evaluation.serving import McpRequest, mcp_command

    return mcp_command(request_of(McpRequest, args))


def handle_site(args: argparse.Namespace) -> Outcome:
    from webmcp_eval.evaluation.serving import SiteRequest, site_command

    return site_command(request_of(SiteRequest, args))


def handle_serve_example(args: argparse.Namespace) -> Outcome:
    from webmcp_eval.evaluation.serving import ServeExampleRequest, serve_example_command

    return serve_example_command(request_of(ServeExampleRequest, args))


def add_mutate(sub: Subcommands) -> None:
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
    mut.add_argument("-j", "--workers", type=WORKERS, default=2, help="trials in parallel (default 2)")
    mut.add_argument(
        "--min-score", type=PERCENT, default=0.0, metavar="PCT", help="exit 1 below this score in %% (0-100)"
    )
    mut.add_argument(
        "--clean-runs",
        type=TRIALS,
        default=2,
        help="clean runs of each case (no mutant); what differs between them is noise (default 2)",
    )
    # the unmutated runs are clean runs, not a baseline (the word meant four things): the old spelling, one release
    mut.add_argument(
        "--baseline-runs", dest="clean_runs", type=TRIALS, action=DeprecatedSpelling, instead="--clean-runs"
    )
    mut.add_argument(
        "--confirm",
        choices=("doubtful", "all", "none"),
        default="doubtful",
        help="which failing cases are played again before they count as a kill: doubtful ones (default: "
        "not_run, a case that failed once unmutated, or a failure with no difference from its clean runs), "
        "all, or none",
    )
    mut.add_argument("--no-confirm", action="store_true", help="the same as --confirm none")
    mut.add_argument("--out", default="traces", help="where the run directory goes (default traces/)")
    mut.add_argument("--run-id", help="name of the run directory (default mutate-<timestamp>)")
    mut.add_argument("--chromium", help="the Chromium binary")
    mut.set_defaults(func=handle_mutate)


def add_mcp(sub: Subcommands) -> None:
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
    mcp.add_argument(
        "--allow-host",
        action="append",
        type=host_name_type,
        metavar="NAME",
        help="HTTP: also answer requests whose Host or Origin names NAME (repeatable; by default only loopback: "
        "127.0.0.1, localhost, [::1], so a web page cannot reach the server through DNS rebinding)",
    )
    mcp.add_argument("--chromium", help="the Chromium binary")
    mcp.add_argument("--log", help="on exit, write the shim's log of registrations and calls here (JSON)")
    mcp.set_defaults(func=handle_mcp)


def add_site(sub: Subcommands) -> None:
    site = sub.add_parser("site", help="serve the demo events site")
    site.add_argument("--host", default="127.0.0.1", help="bind address (default: loopback only)")
    site.add_argument("--port", type=PORT, default=8000, help="port; 0 picks a free one")
    site.add_argument("--test-mode", action="store_true", help="enable worlds and the /__test__ control API")
    site.add_argument("--data-dir", default=None, help="where the SQLite files live (default: a temp dir)")
    site.set_defaults(func=handle_site)


def add_serve_example(sub: Subcommands) -> None:
    example = sub.add_parser(
        "serve-example",
        help="serve an example site that ships with webmcp-eval (the static tea shop), to try the tools on",
        description="Serve an example site that ships with webmcp-eval on loopback until Ctrl-C. shop: a static "
        "tea shop at http://127.0.0.1:PORT/demo/ (tools registered late, a declarative form tool, a web font and "
        "a sharing service on a second host, its CDN, on a free port); docs/pytest.md's example tests run "
        "against it. A taken port is one line, exit 2.",
    )
    example.add_argument("example", choices=("shop",), help="which example: shop")
    example.add_argument("--port", type=PORT, default=8000, help="the site's port; 0 picks a free one (default 8000)")
    example.set_defaults(func=handle_serve_example)
