"""The cases of a command, loaded and validated exactly as ``validate`` does; the site and checks they run with."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webmcp_eval import SEED_SUITE, __version__
from webmcp_eval.errors import InvalidInput, UsageError
from webmcp_eval.evaluation.output import say
from webmcp_eval.play.run.settings import surface_checks
from webmcp_eval.suite.evals_json import BEHAVIOURS, load_evals, looks_like_evals
from webmcp_eval.suite.folder import Suite, SuiteConfig, SuiteError, find_suite, site_for_run
from webmcp_eval.suite.loader import LoadedCase, Problem
from webmcp_eval.suite.site import SiteConfig
from webmcp_eval.suite.validate import CatalogError, SuiteCatalog, find_catalog, load_suite

DEFAULT_CASES = "cases"


def default_suite_dir() -> Path:
    """cases/ in the user's folder, else the seed suite shipped with the package (never a folder inside the package)."""
    here = Path(DEFAULT_CASES)
    return here if here.is_dir() else SEED_SUITE


def seed_suite_note() -> str | None:
    """The one line that says the shipped seed suite is played, when the user's folder has no cases/."""
    if Path(DEFAULT_CASES).is_dir():
        return None
    return (
        f"no {DEFAULT_CASES}/ here: using the seed suite shipped with webmcp-eval {__version__} (the embedded "
        "demo site's cases); `webmcp-eval init --base-url URL -o DIR` starts a suite of your own"
    )


@dataclass(frozen=True)
class LoadedCases:
    """A suite's cases as ``validate`` checks them: every case that loaded, every problem of every file,
    the line that says which suite config and catalog checked them, the suite, and its catalog (None: none)."""

    cases: list[LoadedCase]
    problems: list[Problem]
    note: str
    suite: Suite
    catalog: SuiteCatalog | None

    @property
    def live_rules(self) -> bool:
        """No catalog file: each trial checks the rules against the tools its pages register."""
        return self.catalog is None


def load_cases(paths: list[str], catalog: str | None, suite_dir: str | None = None) -> LoadedCases:
    """Load and validate cases exactly as ``validate`` does; InvalidInput (one line) when there is nothing to load.

    ``run``, ``record``, ``validate``, ``rejudge``, ``mutate`` and the pytest plugin's ``--webmcp-suite`` all come
    through here, before any browser starts; the suite (webmcp_eval/suite/folder.py) is the folder the cases come from,
    or ``--suite DIR``.
    """
    if suite_dir and not Path(suite_dir).is_dir():
        raise InvalidInput(f"--suite {suite_dir}: not a folder (a suite is a folder of case files and its suite.yaml)")
    missing = [p for p in paths if not Path(p).exists() and not Path(p).is_symlink()]
    if missing:
        raise InvalidInput(f"{missing[0]}: no such file or folder")
    if not paths and not suite_dir and (note := seed_suite_note()):
        say(note)
    paths = paths or [suite_dir or str(default_suite_dir())]
    if any(is_evals(p) for p in paths):
        return load_evals_file(paths, catalog)
    suite = find_suite([Path(p) for p in paths], Path(suite_dir) if suite_dir else None)
    if not suite.case_files([Path(p) for p in paths]):
        raise InvalidInput(
            f"no case files in {' '.join(paths)} (cases are *.yaml / *.yml files; "
            "suite.yaml and the files it ignores are not cases)"
        )
    suite_catalog, note = find_catalog(paths, catalog, suite)
    whole_suite = any(Path(p).is_dir() for p in paths)
    loaded, problems = load_suite(paths, suite_catalog, whole_suite, suite)
    return LoadedCases(loaded, problems, shown(f"{suite.describe()}; {note}"), suite, suite_catalog)


def shown(message: str) -> str:
    """A message with the shipped seed suite's folder as ``<seed suite>``: the user's paths, not the package's."""
    return message.replace(str(SEED_SUITE), "<seed suite>")


def surface_checks_of(catalog_file: str | None, suite: Suite) -> dict[str, Any]:
    """The settings of every trial's built-in surface checks (webmcp_eval/play/run/settings.py surface_checks) from
    the suite's catalog (--catalog, else the suite's own), read and checked when the cases were loaded."""
    try:
        catalog, _ = find_catalog([], catalog_file, suite)
    except CatalogError:
        catalog = None
    return surface_checks(catalog.annotations if catalog else None, catalog.schema_surface() if catalog else None)


def site_config_for(suite: Suite, base_url: str | None, site_config_file: str | None) -> SiteConfig | None:
    """--site-config, else the suite's own site (suite/folder.py); None: the embedded demo or a bare --base-url."""
    try:
        return site_for_run(suite, base_url, site_config_file)
    except SuiteError as err:
        raise UsageError(str(err)) from None


def is_evals(path: str) -> bool:
    return looks_like_evals(Path(path))


def load_evals_file(paths: list[str], catalog: str | None) -> LoadedCases:
    """A public webmcp-evals file, converted in memory into cases (webmcp_eval/suite/evals_json.py) and validated."""
    if len(paths) > 1:
        raise InvalidInput(f"an evals.json is a suite of its own: give it alone ({' '.join(paths)})")
    path = Path(paths[0])
    suite = Suite(path.parent.resolve(), SuiteConfig(behaviours=BEHAVIOURS, min_cases_per_behaviour=0))
    suite_catalog, note = find_catalog(paths, catalog, suite)
    loaded, problems, converted = load_evals(path, suite_catalog)
    for line in converted.notes:
        say(f"note: {line}")
    what = f"{path}: webmcp-evals format, {len(loaded)} eval(s) read as cases (calls in exact order, as there)"
    return LoadedCases(loaded, problems, f"{what}; {note}", suite, suite_catalog)
