"""import, export, tools, init, schema: suite folders and the site's tools, read and written."""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from webmcp_eval.audit.catalog_lint import finding_line, lint_listing
from webmcp_eval.errors import EXIT_NOT_RUN, EXIT_OK, InvalidInput, Outcome, UsageError
from webmcp_eval.evaluation.output import console, errors, report_problems
from webmcp_eval.report.files import check_outputs, discarded
from webmcp_eval.report.sanitise import terminal
from webmcp_eval.suite.browser_context import DEFAULT_LOCALE, DEFAULT_TIMEZONE
from webmcp_eval.suite.case import case_json_schema
from webmcp_eval.suite.evals_json import WEAKER, write_suite
from webmcp_eval.suite.folder import SuiteError, find_suite
from webmcp_eval.suite.init import check_folder, init_suite, reading_setup
from webmcp_eval.suite.peer_files import (
    SCHEMA_FILE,
    PeerFileError,
    check_against_catalog,
    export_cases,
    place_catalog,
    read_schema_tools,
    tools_from_catalog,
    write_export,
)
from webmcp_eval.suite.site import page_url_problem, route_problem, shown_url
from webmcp_eval.suite.starters import Starter, ToolProbe
from webmcp_eval.suite.validate import CatalogError, SuiteCatalog, load_suite
from webmcp_eval.trace import write_atomic

if TYPE_CHECKING:
    from webmcp_eval.evaluation.catalog import RouteTools
    from webmcp_eval.suite.case import SetupStep
    from webmcp_eval.suite.folder import Suite


@dataclass(frozen=True)
class ImportRequest:
    """import: a webmcp-evals evals.json into a new suite folder (``output``)."""

    evals: str
    output: str
    base_url: str | None = None
    schema: str | None = None  # default: schema.json beside the evals, when there is one


@dataclass(frozen=True)
class ExportRequest:
    """export: a suite folder as evals.json and schema.json in ``output``; ``lossy`` writes a weaker one anyway."""

    suite: str
    output: str
    lossy: bool = False


@dataclass(frozen=True)
class ToolsRequest:
    """tools: the tools a page (and each route under it) registers, as text or JSON."""

    url: str
    route: tuple[str, ...] = ()  # none: the page at url itself
    json: bool = False
    settle_ms: int | None = None  # default DISCOVERY_SETTLE_MS
    chromium: str | None = None
    setup: str | None = None  # a YAML file of setup steps (a case's setup: syntax), before the tools are read
    step: tuple[str, ...] = ()  # setup steps after --setup's ('click:text=Start')


@dataclass(frozen=True)
class InitRequest:
    """init: a suite folder (``output``) for the live site at ``base_url``."""

    base_url: str
    route: tuple[str, ...] = ()  # default: /
    output: str = "suite"
    settle_ms: int | None = None  # default DISCOVERY_SETTLE_MS
    chromium: str | None = None
    step: tuple[str, ...] = ()  # setup steps before the tools are read ('click:text=Start'), as a case's setup:
    setup: str | None = None  # a YAML file of setup steps (a case's setup: syntax); --step ones come after
    no_probe: bool = False  # only read the tools: no live call, starters from the schemas alone
    no_control: bool = False  # do not play the null agent over the starters written


@dataclass(frozen=True)
class SchemaRequest:
    """schema: the JSON Schema of the case format, to ``output`` (None: stdout)."""

    output: str | None = None


def import_command(request: ImportRequest) -> Outcome:
    """An evals.json as a suite folder of YAML cases, for editing (webmcp_eval/suite/evals_json.py converts)."""
    source, out = Path(request.evals), Path(request.output)
    if not source.is_file():
        raise UsageError(f"{source}: no such file (give a webmcp-evals evals.json)")
    if problem := output_folder_problem(out):
        raise UsageError(problem)
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"-o {out}: exists and is not an empty folder; give a new one")
    catalog_note = _import_schema(source, out, request.schema)
    written, problems, notes = write_suite(source, out, request.base_url)
    if catalog_note and not problems:
        problems = check_against_catalog(out)
    if problems and catalog_note:  # nothing written: the folder is as empty as it was
        for placed in [*written, out / "suite.yaml", out / "catalog.json", out / "schema.json"]:
            placed.unlink(missing_ok=True)
    if catalog_note and not problems:
        notes = [catalog_note, *notes]
    if problems:
        report_problems(problems)
        raise InvalidInput(f"nothing written: fix {source} (an unknown $ operator or key is never ignored)")
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
    run = f"webmcp-eval run {out}" + ("" if request.base_url else " --base-url URL")
    console.print(f"next: webmcp-eval validate {out}; {run}", markup=False, highlight=False, soft_wrap=True)
    return Outcome(EXIT_OK)


def _import_schema(source: Path, out: Path, schema: str | None) -> str | None:
    """The peer's schema.json (given, or beside the evals) as the suite's catalog, before the cases are checked."""
    path = Path(schema) if schema else source.with_name(SCHEMA_FILE)
    if not schema and not path.is_file():
        return None
    try:
        return place_catalog(path, out)
    except PeerFileError as err:
        raise UsageError(str(err)) from None


def output_folder_problem(out: Path) -> str | None:
    """Why ``-o`` cannot be the folder a command fills (a file, or a file on its way), or None."""
    for place in (out, *out.parents):
        if place.exists() and not place.is_dir():
            return f"-o {out}: {place} is a file, not a folder; give a new folder"
    return None


def export_command(request: ExportRequest) -> Outcome:
    """A suite as the public webmcp-evals files (webmcp_eval/suite/peer_files.py writes them)."""
    folder, out = Path(request.suite), Path(request.output)
    if not folder.is_dir():
        raise UsageError(f"{folder}: not a suite folder")
    if problem := output_folder_problem(out):
        raise UsageError(problem)
    check_outputs([("-o", out / "evals.json"), ("-o", out / SCHEMA_FILE)])  # never a folder or a pipe there
    try:
        suite = find_suite([folder])
        described = read_schema_tools(folder / SCHEMA_FILE) if (folder / SCHEMA_FILE).is_file() else None
        tools = _export_tools(suite, described)
        # validate's reading of every case (its catalog, its plan): a case validate refuses is never exported. The
        # coverage rule (cases per behaviour) is the suite's as a benchmark: evals.json has no behaviours
        loaded, every = load_suite(suite.case_files([folder]), _suite_catalog(suite), True, suite)
        problems = [p for p in every if p.of_case]
    except (SuiteError, PeerFileError, CatalogError) as err:
        raise UsageError(str(err)) from None
    if problems:
        report_problems(problems)
        raise InvalidInput(f"nothing written: fix the cases of {folder} first (webmcp-eval validate {folder})")
    exported = export_cases([c.case for c in loaded])
    exported.dropped += _suite_context_dropped(suite)
    lines = [f"left out: {line}" for line in exported.left_out] + [f"dropped: {line}" for line in exported.dropped]
    if exported.weaker and not request.lossy:
        for line in lines:
            errors.print(f"would be {line}", markup=False, highlight=False, soft_wrap=True)
        raise InvalidInput(
            f"nothing written: evals.json would hold a weaker suite than {folder} ({len(exported.left_out)} case(s) "
            f"left out, {len(exported.dropped)} expectation(s) dropped); --lossy writes it with this list"
        )
    write_export(exported, tools, out)
    where = f"{out / 'evals.json'}" + (f", the tool list to {out / SCHEMA_FILE}" if tools is not None else "")
    console.print(f"{len(exported.evals)} eval(s) written to {where}", markup=False, highlight=False, soft_wrap=True)
    if tools is None:
        console.print(
            f"no catalog in {folder}: no {SCHEMA_FILE} written", markup=False, highlight=False, soft_wrap=True
        )
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    return Outcome(EXIT_OK)


def _suite_context_dropped(suite: Suite) -> list[str]:
    """suite.yaml's clock and language for every case: the public tool opens every eval in its own browser's."""
    config = suite.config
    pinned = {"timezone_id": (config.timezone_id, DEFAULT_TIMEZONE), "locale": (config.locale, DEFAULT_LOCALE)}
    return [f"suite.yaml: {name} {value}" for name, (value, default) in pinned.items() if value != default]


def _suite_catalog(suite: Suite) -> SuiteCatalog | None:
    """The suite's catalog (it must load when suite.yaml names it), or None when it has none."""
    catalog_file, named = suite.catalog_path()
    if catalog_file is not None and (named or catalog_file.is_file()):
        return SuiteCatalog.load(catalog_file)
    return None


def _export_tools(suite: Suite, described: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """The tools schema.json lists: the suite's catalog, else an imported schema.json, else none."""
    catalog = _suite_catalog(suite)
    return tools_from_catalog(catalog.routes, described) if catalog is not None else described


def _check_urls(url: str, routes: Iterable[str] | None, flag: str) -> None:
    """The page URL and its routes, before any browser starts: one line (exit 2) for one that cannot be opened."""
    if problem := page_url_problem(url):
        raise UsageError(f"{flag}{shown_url(url)}: {problem}")
    for route in routes or ():
        if problem := route_problem(url, route):
            raise UsageError(f"--route {route}: {problem}")


def _settle_ms(given: int | None, default: int) -> int:
    """--settle-ms of tools and init: one check, one error (a usage mistake, exit 2) for both."""
    settle_ms = default if given is None else given
    if not 0 <= settle_ms <= 10_000:
        raise UsageError(f"--settle-ms {settle_ms}: give 0 to 10000 ms")
    return settle_ms


def tools_command(request: ToolsRequest) -> Outcome:
    """What a page registers, per route (webmcp_eval/evaluation/catalog.py does the reading)."""
    # reading a page opens a browser: the browser stack loads only for tools and init, not import/export/schema
    from webmcp_eval.evaluation.catalog import DISCOVERY_SETTLE_MS, list_tools, tools_json, tools_text

    _check_urls(request.url, request.route, "")
    settle_ms = _settle_ms(request.settle_ms, DISCOVERY_SETTLE_MS)
    routes = list(request.route) or None
    setup = reading_setup(request.setup, request.step)
    listing = asyncio.run(list_tools(request.url, routes, chromium=request.chromium, settle_ms=settle_ms, setup=setup))
    sys.stdout.write(tools_json(listing) if request.json else terminal(tools_text(listing), lines=True))
    return Outcome(EXIT_NOT_RUN if any(r.error for r in listing) else EXIT_OK)


def init_command(request: InitRequest) -> Outcome:
    """A suite folder from a live site's tools (evaluation/catalog.py reads them, evaluation/probe.py calls each
    once in a throw-away context, suite/init.py writes it), then the null agent over what it wrote."""
    from webmcp_eval.evaluation.catalog import DISCOVERY_SETTLE_MS  # the browser stack loads with the reading

    _check_urls(request.base_url, request.route, "--base-url ")
    settle_ms = _settle_ms(request.settle_ms, DISCOVERY_SETTLE_MS)
    setup = reading_setup(request.setup, request.step)
    folder = Path(request.output)
    check_folder(folder)  # before any browser starts
    routes = list(request.route) or ["/"]
    listing, probes = asyncio.run(_read_and_probe(request, routes, settle_ms, setup))
    result = init_suite(request.base_url, listing, folder, settle_ms, probes, setup)
    console.print(result.summary(), markup=False, highlight=False, soft_wrap=True)
    for finding in lint_listing(listing):  # the audit's static rules on what was read (webmcp-eval audit: all)
        console.print(finding_line(finding), markup=False, highlight=False, soft_wrap=True)
    if not request.no_control:
        _init_control(folder, result.starters)
    return Outcome(EXIT_OK)


async def _read_and_probe(
    request: InitRequest, routes: list[str], settle_ms: int, setup: list[SetupStep]
) -> tuple[list[RouteTools], dict[str, ToolProbe] | None]:
    """init's reading of each route, then its probe of each tool, through one Playwright driver."""
    from webmcp_eval.evaluation.catalog import list_tools
    from webmcp_eval.evaluation.probe import probe_routes
    from webmcp_eval.play.browser.driver import playwright_driver

    async with playwright_driver() as p:
        chromium = request.chromium
        listing = await list_tools(
            request.base_url, routes, chromium=chromium, settle_ms=settle_ms, setup=setup, explore=True, playwright=p
        )
        if request.no_probe or any(r.error for r in listing):
            return listing, None
        probes = await probe_routes(
            request.base_url, listing, setup=setup, settle_ms=settle_ms, chromium=chromium, playwright=p
        )
        return listing, probes


def _init_control(folder: Path, starters: list[Starter]) -> None:
    """The null agent over the starters just written: how many positive starters it passes (the goal: none)."""
    from webmcp_eval.evaluation.validation import control_over

    with tempfile.TemporaryDirectory(prefix="init-control-") as out:  # its traces are not the suite's
        health = control_over(folder, out=Path(out))
    positive = {s.case["id"] for s in starters if s.kind == "call"}
    boundary = {s.case["id"] for s in starters if s.kind != "call"}
    passed = set(health.passed)
    judged = set(health.ran)
    console.print(
        f"control (the null agent) over the starters: passes {len(passed & positive)} of {len(positive & judged)} "
        f"positive starter(s) (goal 0) and {len(passed & boundary)} of {len(boundary & judged)} boundary "
        "starter(s) (a boundary is passed by doing nothing: marked null_agent)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    for cid in sorted(passed & positive):
        console.print(f"  warning: {cid}: a positive starter the null agent passes", markup=False, highlight=False)
    for cid, why in health.not_judged.items():
        console.print(f"  {cid}: not judged by the control ({why})", markup=False, highlight=False, soft_wrap=True)


def schema_command(request: SchemaRequest) -> Outcome:
    """The JSON Schema of the case format, to a file or stdout."""
    text = json.dumps(case_json_schema(), indent=2, ensure_ascii=False) + "\n"
    if request.output and discarded(Path(request.output)):
        return Outcome(EXIT_OK)
    if request.output:
        check_outputs([("-o", Path(request.output))])
        try:
            write_atomic(Path(request.output), text)
        except OSError as err:
            raise UsageError(
                f"-o {request.output}: cannot write it ({err.strerror or err}); give a writable path"
            ) from None
    else:
        sys.stdout.write(text)
    return Outcome(EXIT_OK)
