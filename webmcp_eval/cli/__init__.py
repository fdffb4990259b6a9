"""webmcp-eval: can an agent use this site correctly, safely and repeatably?

Runs eval cases against a website that exposes WebMCP tools, in a real
Chromium through a counting proxy, and says passed, failed or not_run for
every trial, with a trace of the evidence.

Exit codes: 0 every trial passed; 1 some trial failed; 2 invalid input or
usage (a broken case file, an unknown option); 3 some trial could not run
(runner error, crashed browser, missing site hook, an incomplete run) and
none failed; 130 interrupted (Ctrl-C); 143 ended by SIGTERM (129 by SIGHUP), as Ctrl-C ends it.
"""

from __future__ import annotations

import argparse
import os

from webmcp_eval.cli import results, run, serve, suite
from webmcp_eval.cli.common import Parser
from webmcp_eval.cli.version import VersionAction
from webmcp_eval.errors import EXIT_INTERRUPTED, EXIT_INVALID, EXIT_NOT_RUN, EXIT_OK, EvalError, Outcome
from webmcp_eval.evaluation.output import SHOWN_PROBLEMS, ends_like_ctrl_c, errors, one_line, say
from webmcp_eval.report.sanitise import terminal

__all__ = ["SHOWN_PROBLEMS", "build_parser", "main"]

# The commands in the order --help lists them; each module declares a command's arguments beside its handler.
COMMANDS = (
    run.add_run,
    run.add_record,
    results.add_report,
    results.add_replay,
    results.add_compare,
    results.add_analyze,
    results.add_rejudge,
    results.add_power,
    serve.add_mutate,
    results.add_label,
    results.add_calibrate,
    serve.add_mcp,
    suite.add_validate,
    suite.add_import_,
    suite.add_export,
    suite.add_tools,
    suite.add_init,
    suite.add_schema,
    suite.add_audit,
    serve.add_site,
    serve.add_serve_example,
)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="webmcp-eval", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--version", action=VersionAction, help="print the versions of webmcp-eval, Playwright and Chromium, and exit"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    with ends_like_ctrl_c() as signals:
        code = _main(argv)
    if signals and code == EXIT_INTERRUPTED:
        return 128 + signals[0]  # 143 for SIGTERM, as a process ended by it
    return code


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return EXIT_INVALID if exit_.code not in (0, None) else EXIT_OK
    try:
        outcome: Outcome = args.func(args)  # the command's own function (set_defaults(func=...))
        return outcome.exit_code
    except EvalError as err:  # what the user did or has: one line, and the exit code the error carries
        say(terminal(err.line(args.command)))
        return err.exit_code
    except KeyboardInterrupt:
        errors.print("interrupted", markup=False, highlight=False)
        return EXIT_INTERRUPTED
    except Exception as err:  # a bug of ours: one line for the user, the traceback only when asked
        if os.environ.get("WEBMCP_EVAL_DEBUG"):
            raise
        errors.print(
            f"webmcp-eval {args.command}: internal error: {type(err).__name__}: {one_line(err)} "
            "(WEBMCP_EVAL_DEBUG=1 shows the traceback)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        return EXIT_NOT_RUN
