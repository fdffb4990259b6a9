"""A suite: a folder of case files and the one ``suite.yaml`` beside them that describes it.

``suite.yaml`` says which site the cases are for (the embedded demo site, or a
site config: base URL, hooks, network policy — ``webmcp_eval.suite.site.SiteConfig``
unchanged), where the catalog is, which behaviours the suite defines and how
many cases each needs, and which other YAML files in the folder are not cases.
``validate`` and ``run`` take all of it from the folder they are pointed at
(or the folder of the case files they are given), never from the package's
own ``cases/``; every message names the config and catalog it used.

A folder without ``suite.yaml`` is read with the seed suite's rules (its ten
behaviours, two cases each) and no site: every message says so.
"""

from __future__ import annotations

import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from webmcp_eval.data_file import FileProblem, LineMap, load_yaml, rename_keys, say_renamed
from webmcp_eval.errors import InvalidInput
from webmcp_eval.suite.browser_context import (
    DEFAULT_LOCALE,
    DEFAULT_TIMEZONE,
    BrowserContextSettings,
    check_locale,
    check_timezone,
)
from webmcp_eval.suite.case import BEHAVIOURS
from webmcp_eval.suite.loader import case_files, line_for
from webmcp_eval.suite.site import RENAMED_KEYS as SITE_RENAMED_KEYS
from webmcp_eval.suite.site import SiteConfig, ignore_path_problem

SUITE_FILE = "suite.yaml"
DEFAULT_CATALOG = "catalog.json"


class SuiteError(InvalidInput):
    """A suite that cannot be used; the message is one line for the user."""


def harness_argv(command: str) -> list[str]:
    """A harness command line as its argument list: it must parse, name a program that is there and ask for the
    prompt (ValueError says why).

    Both the suite's ``agent.command`` and ``run --harness`` are checked by this one rule."""
    try:
        argv = shlex.split(command)
    except ValueError as err:
        raise ValueError(f"not a command line: {err}") from None
    if not argv:
        raise ValueError("an empty command line")
    if not any("{prompt}" in token for token in argv):
        raise ValueError("needs a {prompt} placeholder: the user's message goes there")
    if shutil.which(argv[0]) is None:  # validate says so, not the first trial of a run
        raise ValueError(f"no program {argv[0]!r} found (not on PATH, or not an executable file)")
    return argv


class HarnessEntry(BaseModel):
    """An external harness as the suite's agent (webmcp_eval/agents/harness.py); ``run --harness`` wins over it."""

    model_config = ConfigDict(extra="forbid")
    command: str = Field(
        description="the harness's command line, with {prompt} (the user's message) and {mcp_config} or {mcp_url}; "
        "placeholders are filled per argument, never through a shell"
    )
    max_seconds: float | None = Field(default=None, gt=0, description="per step (default: run --max-seconds)")

    @field_validator("command")
    @classmethod
    def _command_line(cls, value: str) -> str:
        harness_argv(value)
        return value


class SuiteConfig(BaseModel):
    """The contents of ``suite.yaml``; every key optional."""

    model_config = ConfigDict(extra="forbid")
    site: Literal["demo"] | SiteConfig | None = Field(
        default=None,
        description="'demo': the embedded demo site, started per run in test mode; or a site config "
        "(base_url, hooks, network policy); none: give --base-url (and --site-config) on the command line",
    )
    catalog: str | None = Field(
        default=None, description=f"the site's tools per route, relative to the folder (default {DEFAULT_CATALOG})"
    )
    behaviours: dict[str, str] | None = Field(
        default=None, description="behaviour -> what it tests; default: the seed suite's ten"
    )
    min_cases_per_behaviour: int = Field(default=2, ge=0, description="a whole-suite check: cases each behaviour needs")
    ignore: list[str] = Field(
        default_factory=list, description="globs of YAML files in the folder that are not cases (labels, notes)"
    )
    harness: HarnessEntry | None = Field(
        default=None,
        description="the agent of every run of this suite: an external harness, as a command line or "
        "{command, max_seconds}; run --harness overrides it",
    )
    # The person's clock and language, pinned in every browser context: what a page shows never
    # depends on the machine that runs the suite.
    timezone_id: str = Field(
        default=DEFAULT_TIMEZONE, description=f"IANA time zone of every browser context (default {DEFAULT_TIMEZONE})"
    )
    locale: str = Field(
        default=DEFAULT_LOCALE, description=f"BCP 47 locale of every browser context (default {DEFAULT_LOCALE})"
    )

    @field_validator("timezone_id")
    @classmethod
    def _timezone(cls, value: str) -> str:
        return check_timezone(value)

    @field_validator("locale")
    @classmethod
    def _locale(cls, value: str) -> str:
        return check_locale(value)

    def browser_context(self) -> BrowserContextSettings:
        return BrowserContextSettings(self.timezone_id, self.locale)

    audit: dict[str, Any] | None = Field(
        default=None,
        description="webmcp-eval audit's rules: {rules: {RULE: off | error | warning | note | {severity, OPTION: "
        "value}}} (webmcp_eval/audit/config.py checks it)",
    )

    @field_validator("harness", mode="before")
    @classmethod
    def _harness_line(cls, value: object) -> Any:
        return {"command": value} if isinstance(value, str) else value

    @field_validator("behaviours")
    @classmethod
    def _named(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        if value is not None and not value:
            raise ValueError("an empty list of behaviours leaves no case valid; omit it for the seed suite's ten")
        return value


@dataclass
class Suite:
    """One suite as the commands use it: its folder, its config, and where each came from."""

    folder: Path | None
    config: SuiteConfig = field(default_factory=SuiteConfig)
    config_file: Path | None = None
    lines: LineMap = field(default_factory=dict)  # field path in suite.yaml -> its line

    def where(self, *path: str) -> str:
        """``suite.yaml:LINE`` of a field, for a message about its value."""
        return f"{self.config_file}:{line_for(self.lines, path)}"

    @property
    def behaviours(self) -> dict[str, str]:
        return self.config.behaviours if self.config.behaviours is not None else BEHAVIOURS

    def catalog_path(self) -> tuple[Path | None, bool]:
        """The catalog file, and whether suite.yaml names it (then it must exist)."""
        if self.folder is None:
            return None, False
        if self.config.catalog:
            return self.folder / self.config.catalog, True
        return self.folder / DEFAULT_CATALOG, False

    def describe(self) -> str:
        """Which config the suite used, for every message."""
        if self.config_file is not None:
            return f"suite config {self.config_file}"
        where = f" in {self.folder}" if self.folder is not None else ""
        return f"no {SUITE_FILE}{where}: the seed suite's behaviours and rules"

    def case_files(self, paths: list[Path]) -> list[Path]:
        """The case files among ``paths``: a folder gives its case files (never suite.yaml or what it ignores)."""
        return case_files(paths, self.config.ignore)


def read_suite_config(path: Path) -> SuiteConfig:
    return read_suite_file(path)[0]


def read_suite_file(path: Path) -> tuple[SuiteConfig, LineMap]:
    """suite.yaml checked, and the line of each of its fields; a problem is one line: file:line: field: what."""
    try:
        data, lines = load_yaml(path)
    except FileProblem as err:
        raise SuiteError(err.at(path)) from None
    if data is None:
        data = {}  # an empty suite.yaml: every key has its default
    if not isinstance(data, dict):
        raise SuiteError(f"{path}:1: a suite config is a YAML mapping (site, catalog, behaviours, ...)")
    site_keys = {("site", *old): new for old, new in SITE_RENAMED_KEYS.items()}
    say_renamed(str(path), rename_keys(data, site_keys, lines))
    try:
        return SuiteConfig.model_validate(data), lines
    except ValidationError as err:
        # a mapping under site: is a site config; that it is not the word 'demo' says nothing
        found = [e for e in err.errors() if not any(str(p).startswith("literal[") for p in e["loc"][1:])]
        found = found or err.errors()
        first = found[0]
        loc = [p for p in first["loc"] if not str(p).startswith(("function-", "literal[")) and p != "SiteConfig"]
        where = ".".join(str(p) for p in loc)
        message = "unknown field" if first["type"] == "extra_forbidden" else first["msg"].removeprefix("Value error, ")
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise SuiteError(f"{path}:{line_for(lines, loc)}: {where or 'suite'}: {message}{more}") from None


def suite_folder(paths: list[Path]) -> Path | None:
    """The one folder the given cases come from; cases of two suites in one command are refused."""
    folders = list(dict.fromkeys((p if p.is_dir() else p.parent).resolve() for p in paths))
    with_config = [f for f in folders if (f / SUITE_FILE).is_file()]
    if len(with_config) > 1:
        configs = ", ".join(str(f / SUITE_FILE) for f in with_config)
        raise SuiteError(f"cases from more than one suite: {configs}; run each alone")
    if with_config:
        return with_config[0]
    return folders[0] if folders else None


def find_suite(paths: list[Path], suite_dir: Path | None = None) -> Suite:
    """The suite of these case paths (or of ``--suite DIR``), with its config read and checked."""
    if suite_dir is not None:
        if not suite_dir.is_dir():
            raise SuiteError(f"--suite {suite_dir}: not a folder")
        folder: Path | None = suite_dir.resolve()
    else:
        folder = suite_folder(paths)
    if folder is None:
        return Suite(None)
    config_file = folder / SUITE_FILE
    if (config_file.exists() or config_file.is_symlink()) and not config_file.is_file():
        raise SuiteError(f"{shown_path(config_file)}: not a file (a folder, or a link to nothing); suite.yaml is YAML")
    if not config_file.is_file():
        return Suite(folder)
    config, lines = read_suite_file(config_file)
    return Suite(folder, config, shown_path(config_file), lines)


def shown_path(path: Path) -> Path:
    """A path as the user would type it: relative to the working folder when under it."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def site_for_run(suite: Suite, base_url: str | None, site_config_file: str | None) -> SiteConfig | None:
    """The site a run uses: ``--site-config``, else the suite's own; None: the embedded demo (or bare --base-url).

    ``--base-url`` overrides the base URL of either.
    """
    if site_config_file:
        from webmcp_eval.suite.site import SiteConfigError, load_site_config

        try:
            return load_site_config(Path(site_config_file), base_url)
        except SiteConfigError as err:
            raise SuiteError(f"--site-config {err}") from None
    site = suite.config.site
    if not isinstance(site, SiteConfig):
        return None
    config = site.model_copy(deep=True)
    if base_url:
        config.base_url = base_url
    if not config.base_url:
        raise SuiteError(f"{suite.config_file}: site has no base_url: add one, or pass --base-url URL")
    for prefix in config.ignore_paths:  # checked again under the base URL the run uses
        problem = ignore_path_problem(prefix, config.base_url)
        if problem:
            where = suite.where("site", "ignore_paths")
            raise SuiteError(f"{where}: site.ignore_paths {prefix!r} under --base-url {config.base_url}: {problem}")
    return config


def dump_suite_config(config: SuiteConfig) -> dict[str, Any]:
    """suite.yaml as written by ``init``: only what is set."""
    return config.model_dump(mode="json", exclude_defaults=True)
