"""Commands over the suite and the site's tools: validate, import, export, tools, init, schema, audit."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runner.cli.common import (
    POSITIVE,
    base_url_type,
)
from runner.evaluation.loading import (
    load_cases,
)
from runner.evaluation.output import (
    EXIT_FAILED,
    EXIT_INVALID,
    EXIT_NOT_RUN,
    EXIT_OK,
    UsageError,
    check_writable_dir,
    console,
    errors,
    report_problems,
    say,
)
from runner.evaluation.run import site_config_for


def _cmd_validate(args: argparse.Namespace) -> int:
    from runner.suite.plan_contradictions import plan_warnings
    from runner.suite.validate import scope_warnings

    if args.route and not args.live:
        raise UsageError("--route names a route whose tools --live reads: give --live URL too")
    suite = _validate_live(args) if args.live else load_cases(args.paths, args.catalog, args.suite)
    if isinstance(suite, int):
        return suite
    loaded, problems, catalog_note, _ = suite
    for warning in scope_warnings(loaded) + plan_warnings(loaded):
        say(f"warning: {warning}")
    problems = problems + _audit_catalog(args.paths, args.catalog, args.suite)
    if problems:
        report_problems(problems)
        say(catalog_note)
        return EXIT_INVALID
    console.print(
        f"{len(loaded)} case(s) valid; {catalog_note}. (This says nothing about any agent.)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    return _validate_baselines(args, loaded, suite[3]) if args.baselines else EXIT_OK


def _validate_baselines(args: argparse.Namespace, loaded: list, suite: Any) -> int:
    """validate --baselines: the null agent over the suite; a case it passes must say why (null_agent).

    Exit 1 names each unexplained pass; 3 when some case could not be judged (the site or browser failed).
    """
    from runner.agents.null import NullAgent
    from runner.play.browser import ChromiumNotFound
    from runner.play.run import RunOptions, new_run_id, run_suite
    from runner.results.health import baseline_health

    check_writable_dir(Path(args.out), "--out")
    options = RunOptions(
        agent_factory=NullAgent,
        out_root=Path(args.out),
        run_id=f"baselines-{new_run_id()}",
        workers=args.workers,
        base_url=args.base_url,
        site_config=site_config_for(args, suite),
        screenshots="off",
        browser_context=suite.config.browser_context(),  # the suite's time zone and locale, as every run of it
    )
    console.print(f"baseline: the null agent over {len(loaded)} case(s) (reads the tools, calls none)")
    try:
        result = asyncio.run(run_suite(loaded, options))
    except ChromiumNotFound as err:
        say(str(err))
        return EXIT_NOT_RUN
    health = baseline_health(result.traces)
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


def _validate_live(args: argparse.Namespace) -> tuple[list, list, str, Any] | int:
    """``validate --live URL``: every rule checked against the tools the cases' routes register now."""
    import tempfile

    from runner.play.browser import ChromiumNotFound
    from runner.play.catalog import DISCOVERY_SETTLE_MS, list_tools
    from runner.suite.case import NavigateAction
    from runner.suite.init import route_key

    if args.catalog:
        raise UsageError("--live reads the tools from the site; give --live URL or --catalog FILE, not both")
    if "://" not in args.live:
        raise UsageError(f"--live {args.live}: not a URL (e.g. http://127.0.0.1:8000/demo/)")
    first = load_cases(args.paths, None, args.suite)
    if isinstance(first, int) or first[1]:
        return first  # a case that does not load is reported as it is, before any browser starts
    loaded = first[0]
    routes = {lc.case.start_route for lc in loaded} | set(args.route or [])
    routes |= {s.to for lc in loaded for s in lc.case.steps if isinstance(s, NavigateAction)}
    try:
        listing = asyncio.run(list_tools(args.live, sorted(routes), settle_ms=DISCOVERY_SETTLE_MS))
    except ChromiumNotFound as err:
        say(str(err))
        return EXIT_NOT_RUN
    broken = [r for r in listing if r.error]
    if broken:
        say(f"--live: {broken[0].url}: {broken[0].error} (the tools could not be read; nothing was checked)")
        return EXIT_NOT_RUN
    catalog = {"routes": {k: v for r in listing for k, v in _route_tools(r, route_key).items()}}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "live-catalog.json"
        path.write_text(json.dumps(catalog), encoding="utf-8")
        checked = load_cases(args.paths, str(path), args.suite)
    if isinstance(checked, int):
        return checked
    shown = ", ".join(sorted(catalog["routes"]))
    return checked[0], checked[1], f"tools checked against {args.live} as it is now (routes {shown})", checked[3]


def _route_tools(reading: Any, route_key: Callable[[str], str]) -> dict[str, dict[str, Any]]:
    from runner.suite.init import offered  # the top page's tools, then its frames': what an agent is offered

    return {route_key(reading.route): {t.name: t.input_schema or {"type": "object"} for t in offered(reading)}}


def _audit_catalog(paths: list[str], catalog: str | None, suite_dir: str | None) -> list:
    """The audit's static rules on the suite's catalog: each finding a line; a bad audit setting is a problem."""
    from runner.audit.catalog_lint import catalog_audit

    lines, problems = catalog_audit(paths, catalog, suite_dir)
    for line in lines:
        say(line)
    return problems


def _cmd_import(args: argparse.Namespace) -> int:
    """An evals.json as a suite folder of YAML cases, for editing (runner/suite/evals_json.py converts)."""
    from runner.suite.evals_json import WEAKER, write_suite

    source, out = Path(args.evals), Path(args.output)
    if not source.is_file():
        raise UsageError(f"{source}: no such file (give a webmcp-evals evals.json)")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"-o {out}: exists and is not an empty folder; give a new one")
    catalog_note = _import_schema(source, out, args.schema)
    written, problems, notes = write_suite(source, out, args.base_url)
    if catalog_note and not problems:
        from runner.suite.peer_files import check_against_catalog

        problems = check_against_catalog(out)
    if problems and catalog_note:  # nothing written: the folder is as empty as it was
        for placed in [*written, out / "suite.yaml", out / "catalog.json", out / "schema.json"]:
            placed.unlink(missing_ok=True)
    if catalog_note and not problems:
        notes = [catalog_note, *notes]
    if problems:
        report_problems(problems)
        say(f"nothing written: fix {source} (an unknown $ operator or key is never ignored)")
        return EXIT_INVALID
    console.print(f"{len(written)} case(s) and suite.yaml written to {out}", markup=False, highlight=False)
    made_up = [line.split(": made up ", 1)[0] for line in notes if ": made up " in line]
    if made_up:  # the reference plan plays them: a site that checks the value refuses the call (then not_run)
        console.print(
            f"made up {len(made_up)} plan value(s), marked synthesized in the cases: {'; '.join(made_up)}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    for line in notes:
        console.print(f"note: {line}", markup=False, highlight=False, soft_wrap=True)
    console.print("where the webmcp-evals format is weaker, a run here is stricter:", markup=False, highlight=False)
    for line in WEAKER:
        console.print(f"  - {line}", markup=False, highlight=False, soft_wrap=True)
    run = f"webmcp-eval run {out}" + ("" if args.base_url else " --base-url URL")
    console.print(f"next: webmcp-eval validate {out}; {run}", markup=False, highlight=False, soft_wrap=True)
    return EXIT_OK


def _import_schema(source: Path, out: Path, schema: str | None) -> str | None:
    """The peer's schema.json (given, or beside the evals) as the suite's catalog, before the cases are checked."""
    from runner.suite.peer_files import SCHEMA_FILE, PeerFileError, place_catalog

    path = Path(schema) if schema else source.with_name(SCHEMA_FILE)
    if not schema and not path.is_file():
        return None
    try:
        return place_catalog(path, out)
    except PeerFileError as err:
        raise UsageError(str(err)) from None


def _cmd_export(args: argparse.Namespace) -> int:
    """A suite as the public webmcp-evals files (runner/suite/peer_files.py writes them)."""
    from runner.suite.folder import SuiteError, find_suite
    from runner.suite.loader import load_cases
    from runner.suite.peer_files import SCHEMA_FILE, PeerFileError, export_suite, read_schema_tools

    folder = Path(args.suite)
    if not folder.is_dir():
        raise UsageError(f"{folder}: not a suite folder")
    try:
        suite = find_suite([folder])
        loaded, problems = load_cases(suite.case_files([folder]), suite.config.ignore)
        catalog_file, _ = suite.catalog_path()
        catalog = (
            json.loads(catalog_file.read_text(encoding="utf-8")) if catalog_file and catalog_file.is_file() else {}
        )
        described = read_schema_tools(folder / SCHEMA_FILE) if (folder / SCHEMA_FILE).is_file() else None
    except (SuiteError, PeerFileError, ValueError) as err:
        raise UsageError(str(err)) from None
    if problems:
        report_problems(problems)
        say(f"nothing written: fix the cases of {folder} first (webmcp-eval validate {folder})")
        return EXIT_INVALID
    count, skipped = export_suite([c.case for c in loaded], catalog, described, Path(args.output))
    console.print(
        f"{count} eval(s) written to {Path(args.output) / 'evals.json'}, the tool list to "
        f"{Path(args.output) / SCHEMA_FILE}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    for line in skipped:
        console.print(f"left out: {line}", markup=False, highlight=False, soft_wrap=True)
    return EXIT_OK


def _cmd_tools(args: argparse.Namespace) -> int:
    """What a page registers, per route (runner/play/catalog.py does the reading)."""
    from runner.play.browser import ChromiumNotFound
    from runner.play.catalog import DISCOVERY_SETTLE_MS, list_tools, tools_json, tools_text

    if "://" not in args.url:
        errors.print(f"{args.url}: not a URL (e.g. http://127.0.0.1:8000/demo/)", markup=False)
        return EXIT_INVALID
    settle_ms = DISCOVERY_SETTLE_MS if args.settle_ms is None else args.settle_ms
    if not 0 <= settle_ms <= 10_000:
        errors.print(f"--settle-ms {settle_ms}: give 0 to 10000 ms", markup=False)
        return EXIT_INVALID
    try:
        listing = asyncio.run(list_tools(args.url, args.route, chromium=args.chromium, settle_ms=settle_ms))
    except ChromiumNotFound as err:
        errors.print(str(err), markup=False)
        return EXIT_NOT_RUN
    sys.stdout.write(tools_json(listing) if args.json else tools_text(listing))
    return EXIT_NOT_RUN if any(r.error for r in listing) else EXIT_OK


def _cmd_init(args: argparse.Namespace) -> int:
    """A suite folder from a live site's tools (runner/play/catalog.py reads them, runner/suite/init.py writes it)."""
    from runner.play.browser import ChromiumNotFound
    from runner.play.catalog import DISCOVERY_SETTLE_MS, list_tools
    from runner.suite.init import InitError, check_folder, init_suite

    if "://" not in args.base_url:
        raise UsageError(f"--base-url {args.base_url}: not a URL (e.g. http://127.0.0.1:8000/demo/)")
    settle_ms = DISCOVERY_SETTLE_MS if args.settle_ms is None else args.settle_ms
    if not 0 <= settle_ms <= 10_000:
        raise UsageError(f"--settle-ms {settle_ms}: give 0 to 10000 ms")
    folder = Path(args.output)
    try:
        check_folder(folder)  # before any browser starts
        listing = asyncio.run(
            list_tools(args.base_url, args.route or ["/"], chromium=args.chromium, settle_ms=settle_ms)
        )
        result = init_suite(args.base_url, listing, folder, settle_ms)
    except InitError as err:
        errors.print(f"webmcp-eval init: {err}", markup=False, highlight=False, soft_wrap=True)
        return err.exit_code
    except ChromiumNotFound as err:
        errors.print(str(err), markup=False)
        return EXIT_NOT_RUN
    console.print(result.summary(), markup=False, highlight=False, soft_wrap=True)
    from runner.audit.catalog_lint import finding_line, lint_listing

    for finding in lint_listing(listing):  # the audit's static rules on what was read (webmcp-eval audit: all)
        console.print(finding_line(finding), markup=False, highlight=False, soft_wrap=True)
    return EXIT_OK


def _cmd_schema(args: argparse.Namespace) -> int:
    from runner.suite.case import case_json_schema

    text = json.dumps(case_json_schema(), indent=2, ensure_ascii=False) + "\n"
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as err:
            raise UsageError(
                f"-o {args.output}: cannot write it ({err.strerror or err}); give a writable path"
            ) from None
    else:
        sys.stdout.write(text)
    return EXIT_OK


def add_validate(sub: argparse._SubParsersAction) -> None:
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
    base = val.add_argument_group("the do-nothing baseline")
    base.add_argument(
        "--baselines",
        action="store_true",
        help="also play the null agent (reads the tools, calls none, answers nothing) over the suite: exit 1 "
        "naming each case it passes that does not say why (null_agent: {passes: true, reason: ...})",
    )
    base.add_argument("--base-url", type=base_url_type, help="with --baselines: the site (default: the suite's own)")
    base.add_argument("--site-config", help="with --baselines: YAML naming the site's hooks")
    base.add_argument("--out", default="traces", help="with --baselines: where its run directory goes (traces/)")
    base.add_argument("-j", "--workers", type=POSITIVE, default=1, help="with --baselines: trials in parallel (1)")
    val.set_defaults(func=_cmd_validate)


def add_import_(sub: argparse._SubParsersAction) -> None:
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
    imp.set_defaults(func=_cmd_import)


def add_export(sub: argparse._SubParsersAction) -> None:
    exp = sub.add_parser(
        "export",
        help="write a suite as a webmcp-evals evals.json and its tool list (schema.json)",
        description="Write SUITE's cases as one eval each into -o DIR/evals.json, and the tools of its catalog "
        "(with the descriptions of an imported schema.json) as DIR/schema.json. A case the public format cannot "
        "say (scripted steps, forbidden calls, an operator it lacks) is left out and named.",
    )
    exp.add_argument("suite", help="the suite folder")
    exp.add_argument("-o", "--output", required=True, metavar="DIR", help="where evals.json and schema.json go")
    exp.set_defaults(func=_cmd_export)


def add_tools(sub: argparse._SubParsersAction) -> None:
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
        type=int,
        help="quiet time that counts as settled (default 1000; raise it for tools that register later)",
    )
    tools.add_argument("--chromium", help="the Chromium binary")
    tools.set_defaults(func=_cmd_tools)


def add_init(sub: argparse._SubParsersAction) -> None:
    ini = sub.add_parser(
        "init",
        help="write a suite folder for a live site: suite.yaml, its catalog, one starter case per tool",
        description="Open --base-url (and each --route under it) in Chromium, read the WebMCP tools each page "
        "registers, and write into -o DIR (new or empty): suite.yaml (the site's base URL, settle time and "
        "network policy, the catalog, the behaviours), catalog.json (the tools per route, as read), and one "
        "starter case per tool that validates and runs green with the reference agent. A tool marked "
        "readOnlyHint is called with schema-valid example arguments; any other tool may write, so its starter "
        "asks about it and expects it not to be called. Exit 2 for a non-empty DIR, 3 when the site cannot "
        "be opened or registers no tools.",
    )
    ini.add_argument("--base-url", required=True, help="the site, with its path (e.g. http://host/demo/)")
    ini.add_argument("--route", action="append", help="a route under the base URL to read (default /; repeatable)")
    ini.add_argument("-o", "--output", default="suite", metavar="DIR", help="the new suite folder (default suite)")
    ini.add_argument(
        "--settle-ms",
        type=int,
        help="quiet time that counts as settled, also written to suite.yaml (default 1000)",
    )
    ini.add_argument("--chromium", help="the Chromium binary")
    ini.set_defaults(func=_cmd_init)


def add_schema(sub: argparse._SubParsersAction) -> None:
    schema = sub.add_parser("schema", help="print the JSON Schema of the case format")
    schema.add_argument("-o", "--output", help="write it to this file")
    schema.set_defaults(func=_cmd_schema)


def add_audit(sub: argparse._SubParsersAction) -> None:
    from runner.audit.command import add_audit_parser  # webmcp-eval audit: its own module

    add_audit_parser(sub)
