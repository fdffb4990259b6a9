"""Loading case files: YAML to ``Case``, with file:line for every problem.

A malformed file never raises a traceback at the user: every problem becomes a
``Problem`` that names the file, the line and the field path, on one line.
The YAML itself is read by ``webmcp_eval.data_file`` (the one loader of every file
the runner reads), with its guards: size, depth, aliases, a key given twice,
YAML beyond JSON and numbers that are not finite, each refused at its line.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from webmcp_eval.data_file import (
    MAX_YAML_BYTES,
    DataFileError,
    FieldPath,
    FileProblem,
    LineMap,
    parse_yaml,
    read_text,
    rename_keys,
    say_renamed,
)
from webmcp_eval.suite.case import RENAMED_KEYS, Case


@dataclass(frozen=True)
class Problem:
    file: str
    line: int
    field: str
    message: str
    of_case: bool = True  # False for a rule about the whole suite (coverage): the case itself is sound

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        text = f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        return _one_line(text)


def _one_line(text: str) -> str:
    """Every problem is one line that starts with file:line (a key or value may hold a newline)."""
    return re.sub(r"\s*[\r\n]+\s*", " ", text)


@dataclass
class LoadedCase:
    case: Case
    file: str
    lines: LineMap  # field path -> line, for later problems (validate)

    def line_of(self, *path: str | int) -> int:
        return line_for(self.lines, path)


class CaseLoadError(Exception):
    def __init__(self, problems: list[Problem]):
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


STEP_TAGS = {"user", "action"}
SETUP_TAGS = {"call", "action"}
NODE_LISTS, NODE_TAGS = {"expected", "ordered", "unordered"}, {"call", "ordered", "unordered"}
HISTORY_TAGS = {"user", "model", "call"}
ACTION_TAGS = {"navigate", "reload", "click", "press", "expire_session", "change", "fault", "wait_for"}


def _clean_loc(loc: Iterable[str | int]) -> list[str | int]:
    """Drop pydantic's union tags from an error location, keeping real field names."""
    parts = list(loc)
    out: list[str | int] = []
    for i, part in enumerate(parts):
        after_step_index = i >= 2 and parts[i - 2] == "steps" and isinstance(parts[i - 1], int)
        if after_step_index and part in STEP_TAGS:
            continue
        after_setup_index = i >= 2 and parts[i - 2] == "setup" and isinstance(parts[i - 1], int)
        if after_setup_index and part in SETUP_TAGS and i + 1 < len(parts):
            continue  # which kind of setup step pydantic tried: a call's own field 'call' comes after it
        if part in ACTION_TAGS and i >= 1 and parts[i - 1] == "action":
            continue
        # a union tag sits between a list index and the member's own field (a str); a real path has none
        after_index = i >= 2 and isinstance(parts[i - 1], int) and i + 1 < len(parts) and isinstance(parts[i + 1], str)
        if after_index and parts[i - 2] in NODE_LISTS and part in NODE_TAGS:
            continue  # an expected call or group: which union member pydantic tried
        if after_index and parts[i - 2] == "history" and part in HISTORY_TAGS:
            continue
        out.append(part)
    return out


def line_for(lines: LineMap, loc: Iterable[str | int]) -> int:
    """The line of the deepest part of ``loc`` that exists in the file."""
    best = lines.get((), 1)
    path: FieldPath = ()
    for part in _clean_loc(loc):
        candidate = (*path, part)
        if candidate in lines:
            path = candidate
            best = lines[path]
        # other parts are pydantic's union tags (e.g. 'navigate'); skip them
    return best


def field_path(loc: Iterable[str | int]) -> str:
    """A location as a user reads it: ``expect.calls.expected[0].args.city``."""
    parts = _clean_loc(loc)
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".")


def parse_case(text: str, file: str) -> LoadedCase:
    try:
        data, lines = parse_yaml(text)
    except DataFileError as err:
        raise CaseLoadError([Problem(file, err.line or 1, err.field, err.message)]) from None
    if not isinstance(data, dict):
        raise CaseLoadError([Problem(file, 1, "", "a case file must be a YAML mapping (id, behaviour, ...)")])
    say_renamed(file, rename_keys(data, RENAMED_KEYS, lines))
    try:
        case = Case.model_validate(data)
    except ValidationError as err:
        problems = [Problem(file, line_for(lines, e["loc"]), field_path(e["loc"]), _message(e)) for e in err.errors()]
        raise CaseLoadError(problems) from None
    return LoadedCase(case, file, lines)


def _message(error: ErrorDetails) -> str:
    if error["type"] == "extra_forbidden":
        return "unknown field"
    if error["type"] == "missing":
        return "required field is missing"
    return error["msg"]


CASE_SUFFIXES = (".yaml", ".yml")
# Files a suite folder holds that are never cases (webmcp_eval.suite.folder reads suite.yaml).
NOT_CASES = frozenset({"suite.yaml", "suite.yml", "site.yaml", "site.yml"})


def is_case_file(path: Path, ignore: Iterable[str] = ()) -> bool:
    """A YAML file of a suite folder that is a case: not the suite's config, not one it ignores."""
    if path.suffix not in CASE_SUFFIXES or path.name in NOT_CASES:
        return False
    return not any(fnmatch.fnmatch(path.name, pattern) for pattern in ignore)


def case_files(paths: Iterable[str | Path], ignore: Iterable[str] = ()) -> list[Path]:
    """A folder gives its case files (see ``is_case_file``); a file given by name is read as a case."""
    files: list[Path] = []
    ignore = list(ignore)
    for p in map(Path, paths):
        if p.is_dir():
            # a link to nothing is listed too: reading it is a problem at its name, never a silent skip
            files.extend(sorted(f for f in p.iterdir() if (f.is_file() or f.is_symlink()) and is_case_file(f, ignore)))
        else:
            files.append(p)
    return files


def load_cases(paths: Iterable[str | Path], ignore: Iterable[str] = ()) -> tuple[list[LoadedCase], list[Problem]]:
    """Load every case; return the good ones and the problems of the bad ones."""
    loaded: list[LoadedCase] = []
    problems: list[Problem] = []
    for f in case_files(paths, ignore):
        try:
            text = read_text(f, MAX_YAML_BYTES)
        except FileProblem as err:
            problems.append(Problem(str(f), err.line or 1, "", err.what))
            continue
        try:
            loaded.append(parse_case(text, str(f)))
        except CaseLoadError as err:
            problems.extend(err.problems)
    return loaded, problems
