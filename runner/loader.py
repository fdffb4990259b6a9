"""Loading case files: YAML to ``Case``, with file:line for every problem.

A malformed file never raises a traceback at the user: every problem becomes a
``Problem`` that names the file, the line and the field path.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from runner.case import Case


@dataclass(frozen=True)
class Problem:
    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


@dataclass
class LoadedCase:
    case: Case
    file: str
    lines: dict[tuple, int]  # field path -> line, for later problems (validate)

    def line_of(self, *path: Any) -> int:
        return line_for(self.lines, path)


class DuplicateKey(Exception):
    def __init__(self, line: int, field: str):
        super().__init__(field)
        self.line, self.field = line, field


class CaseLoadError(Exception):
    def __init__(self, problems: list[Problem]):
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


def _line_map(node: yaml.Node, path: tuple = (), out: dict | None = None) -> dict[tuple, int]:
    """Map every field path in a composed YAML tree to its 1-based line."""
    out = {} if out is None else out
    out.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            if key.value in seen:
                # PyYAML keeps the last of two equal keys: an expectation would vanish unseen.
                raise DuplicateKey(key.start_mark.line + 1, ".".join(map(str, (*path, key.value))))
            seen.add(key.value)
            child = (*path, key.value)
            out[child] = key.start_mark.line + 1
            _line_map(value, child, out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _line_map(item, (*path, i), out)
    return out


STEP_TAGS = {"user", "action"}
ACTION_TAGS = {"navigate", "reload", "click", "expire_session", "change", "fault", "wait_for"}


def _clean_loc(loc: Iterable[Any]) -> list[Any]:
    """Drop pydantic's union tags from an error location, keeping real field names."""
    parts = list(loc)
    out: list[Any] = []
    for i, part in enumerate(parts):
        after_step_index = i >= 2 and parts[i - 2] == "steps" and isinstance(parts[i - 1], int)
        if after_step_index and part in STEP_TAGS:
            continue
        if part in ACTION_TAGS and i >= 1 and parts[i - 1] == "action":
            continue
        out.append(part)
    return out


def line_for(lines: dict[tuple, int], loc: Iterable[Any]) -> int:
    """The line of the deepest part of ``loc`` that exists in the file."""
    best = lines.get((), 1)
    path: tuple = ()
    for part in _clean_loc(loc):
        candidate = (*path, part)
        if candidate in lines:
            path = candidate
            best = lines[path]
        # other parts are pydantic's union tags (e.g. 'navigate'); skip them
    return best


def _field_path(loc: Iterable[Any]) -> str:
    parts = _clean_loc(loc)
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".")


def _parse_yaml(text: str) -> tuple[yaml.Node | None, Any]:
    """One parse gives both the node tree (for line numbers) and the data."""
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        return root, (loader.construct_document(root) if root is not None else None)
    finally:
        loader.dispose()


def parse_case(text: str, file: str) -> LoadedCase:
    try:
        root, data = _parse_yaml(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        raise CaseLoadError([Problem(file, line, "", f"not valid YAML: {getattr(err, 'problem', err)}")]) from None
    if root is None or not isinstance(data, dict):
        raise CaseLoadError([Problem(file, 1, "", "a case file must be a YAML mapping (id, behaviour, ...)")])
    try:
        lines = _line_map(root)
    except DuplicateKey as dup:
        raise CaseLoadError(
            [Problem(file, dup.line, dup.field, "duplicate key (the first would be ignored)")]
        ) from None
    try:
        case = Case.model_validate(data)
    except ValidationError as err:
        problems = [Problem(file, line_for(lines, e["loc"]), _field_path(e["loc"]), _message(e)) for e in err.errors()]
        raise CaseLoadError(problems) from None
    return LoadedCase(case, file, lines)


def _message(error: dict[str, Any]) -> str:
    if error["type"] == "extra_forbidden":
        return "unknown field"
    if error["type"] == "missing":
        return "required field is missing"
    return error["msg"]


def case_files(paths: Iterable[str | Path]) -> list[Path]:
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files.extend(sorted(p.glob("*.yaml")) + sorted(p.glob("*.yml")))
        else:
            files.append(p)
    return files


def load_cases(paths: Iterable[str | Path]) -> tuple[list[LoadedCase], list[Problem]]:
    """Load every case; return the good ones and the problems of the bad ones."""
    loaded: list[LoadedCase] = []
    problems: list[Problem] = []
    for f in case_files(paths):
        try:
            text = f.read_text(encoding="utf-8")
        except OSError as err:
            problems.append(Problem(str(f), 1, "", f"cannot read: {err.strerror}"))
            continue
        except UnicodeDecodeError as err:
            problems.append(Problem(str(f), 1, "", f"not UTF-8: {err.reason} at byte {err.start}"))
            continue
        try:
            loaded.append(parse_case(text, str(f)))
        except CaseLoadError as err:
            problems.extend(err.problems)
    return loaded, problems
