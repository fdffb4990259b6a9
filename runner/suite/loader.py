"""Loading case files: YAML to ``Case``, with file:line for every problem.

A malformed file never raises a traceback at the user: every problem becomes a
``Problem`` that names the file, the line and the field path, on one line.
YAML input is bounded: nesting deeper than ``MAX_DEPTH``, more than
``MAX_NODES`` values once aliases are expanded (an alias bomb), and an alias
inside the node it names (``&L [*L]``) are refused at the line where they
happen, before anything is built from them.

A case holds JSON values only (what tools take and give): a key is a plain
scalar, never a list or mapping, and YAML's own types beyond JSON (``!!binary``,
``!!set``, ``!!timestamp``, ``!!omap``, any custom tag) are refused at their
line. An unquoted date (``2024-01-01``) is read as the text it shows, as in
YAML 1.2 and JSON: a tool's dates are text, so the matcher compares text.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from runner.suite.case import Case
from runner.suite.text_file import FileProblem, read_text


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
    lines: dict[tuple, int]  # field path -> line, for later problems (validate)

    def line_of(self, *path: Any) -> int:
        return line_for(self.lines, path)


class DuplicateKey(Exception):
    def __init__(self, line: int, field: str):
        super().__init__(field)
        self.line, self.field = line, field


class NotJson(Exception):
    """A node a case cannot hold: a key that is a list or mapping, or a YAML type beyond JSON."""

    def __init__(self, line: int, field: str, message: str):
        super().__init__(message)
        self.line, self.field, self.message = line, field, message


class CaseLoadError(Exception):
    def __init__(self, problems: list[Problem]):
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


MAX_DEPTH = 100  # nesting levels of a case file
MAX_NODES = 20_000  # values in a case file once aliases are expanded (the seed cases have a few hundred)


class InputRefused(yaml.MarkedYAMLError):
    """Valid YAML that the loader will not build: too deep, too large, or recursive."""


_YAML = "tag:yaml.org,2002:"
JSON_TAGS = frozenset(_YAML + t for t in ("str", "int", "float", "bool", "null", "seq", "map", "merge"))


class BoundedLoader(yaml.SafeLoader):
    """SafeLoader that measures the document as it composes it, before constructing anything.

    Plain scalars never resolve to timestamps: ``2024-01-01`` stays the text it shows.
    """

    yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != _YAML + "timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, text: str):
        super().__init__(text)
        self._depth = 0
        self._total = 0
        self._open_anchors: set[str] = set()
        self._measure: dict[int, tuple[int, int]] = {}  # id(node) -> (expanded size, expanded height)

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            if event.anchor in self._open_anchors:
                raise InputRefused(
                    None, None, f"recursive alias *{event.anchor} inside the node it names", event.start_mark
                )
            node = super().compose_node(parent, index)
            size, height = self._measure[id(node)]
            self._grow(size, self._depth + height, event.start_mark)
            return node
        self._grow(1, self._depth + 1, event.start_mark)
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            self._open_anchors.add(anchor)
        self._depth += 1
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
            self._open_anchors.discard(anchor)
        children = (
            [self._measure[id(n)] for pair in node.value for n in pair]
            if isinstance(node, yaml.MappingNode)
            else ([self._measure[id(n)] for n in node.value] if isinstance(node, yaml.SequenceNode) else [])
        )
        self._measure[id(node)] = (1 + sum(c[0] for c in children), 1 + max((c[1] for c in children), default=0))
        return node

    def _grow(self, nodes: int, depth: int, mark: yaml.Mark) -> None:
        self._total += nodes
        if depth > MAX_DEPTH:
            raise InputRefused(None, None, f"nested deeper than {MAX_DEPTH} levels", mark)
        if self._total > MAX_NODES:
            raise InputRefused(
                None, None, f"more than {MAX_NODES} values once aliases are expanded (an alias bomb?)", mark
            )


def _field(path: tuple) -> str:
    return field_path(path) or "(top level)"


def _json_only(node: yaml.Node, path: tuple) -> None:
    if node.tag not in JSON_TAGS:
        tag = node.tag.replace(_YAML, "!!")
        raise NotJson(
            node.start_mark.line + 1,
            _field(path),
            f"YAML tag {tag} is not allowed: a case holds JSON values "
            "(text, numbers, true/false, null, lists, mappings): write it as one of those",
        )


def _line_map(node: yaml.Node, path: tuple = (), out: dict | None = None) -> dict[tuple, int]:
    """Map every field path in a composed YAML tree to its 1-based line (and refuse what is not JSON)."""
    out = {} if out is None else out
    out.setdefault(path, node.start_mark.line + 1)
    _json_only(node, path)
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                shape = "a list" if isinstance(key, yaml.SequenceNode) else "a mapping"
                raise NotJson(
                    key.start_mark.line + 1, _field(path), f"a key must be a plain name, not {shape} (a YAML '? ' key)"
                )
            _json_only(key, (*path, key.value))
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
NODE_LISTS, NODE_TAGS = {"expected", "ordered", "unordered"}, {"call", "ordered", "unordered"}
HISTORY_TAGS = {"user", "model", "call"}
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
        # a union tag sits between a list index and the member's own field (a str); a real path has none
        after_index = i >= 2 and isinstance(parts[i - 1], int) and i + 1 < len(parts) and isinstance(parts[i + 1], str)
        if after_index and parts[i - 2] in NODE_LISTS and part in NODE_TAGS:
            continue  # an expected call or group: which union member pydantic tried
        if after_index and parts[i - 2] == "history" and part in HISTORY_TAGS:
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


def field_path(loc: Iterable[Any]) -> str:
    """A location as a user reads it: ``expect.calls.expected[0].args.city``."""
    parts = _clean_loc(loc)
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".")


def _parse_yaml(text: str) -> tuple[dict[tuple, int], Any]:
    """One bounded parse gives both the line of every field and the data."""
    loader = BoundedLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return {}, None
        lines = _line_map(root)  # before construction: a merge key (<<) rewrites the node
        return lines, loader.construct_document(root)
    finally:
        loader.dispose()


def _yaml_problem(err: yaml.YAMLError, text: str, file: str) -> Problem:
    """One line, at the line of the problem itself."""
    if isinstance(err, yaml.reader.ReaderError):
        line = text[: err.position].count("\n") + 1
        code = err.character if isinstance(err.character, int) else ord(err.character)
        shown = f"character U+{code:04X}" if err.encoding == "unicode" else f"byte 0x{code:02x}"
        return Problem(file, line, "", f"not valid YAML: {shown} ({err.reason})")
    mark = getattr(err, "problem_mark", None)
    line = mark.line + 1 if mark else 1
    problem = getattr(err, "problem", None) or str(err)
    if isinstance(err, InputRefused):
        return Problem(file, line, "", f"refused: {problem}")
    context, context_mark = getattr(err, "context", None), getattr(err, "context_mark", None)
    if context and context_mark is not None and context_mark.line != (mark.line if mark else None):
        problem += f" ({context} from line {context_mark.line + 1})"
    return Problem(file, line, "", f"not valid YAML: {problem}")


def parse_case(text: str, file: str) -> LoadedCase:
    try:
        lines, data = _parse_yaml(text)
    except DuplicateKey as dup:
        raise CaseLoadError(
            [Problem(file, dup.line, dup.field, "duplicate key (the first would be ignored)")]
        ) from None
    except NotJson as bad:
        raise CaseLoadError([Problem(file, bad.line, bad.field, bad.message)]) from None
    except yaml.YAMLError as err:
        raise CaseLoadError([_yaml_problem(err, text, file)]) from None
    if not isinstance(data, dict):
        raise CaseLoadError([Problem(file, 1, "", "a case file must be a YAML mapping (id, behaviour, ...)")])
    try:
        case = Case.model_validate(data)
    except ValidationError as err:
        problems = [Problem(file, line_for(lines, e["loc"]), field_path(e["loc"]), _message(e)) for e in err.errors()]
        raise CaseLoadError(problems) from None
    return LoadedCase(case, file, lines)


def _message(error: dict[str, Any]) -> str:
    if error["type"] == "extra_forbidden":
        return "unknown field"
    if error["type"] == "missing":
        return "required field is missing"
    return error["msg"]


CASE_SUFFIXES = (".yaml", ".yml")
# Files a suite folder holds that are never cases (runner.suite.folder reads suite.yaml).
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
            text = read_text(f)
        except FileProblem as err:
            problems.append(Problem(str(f), err.line or 1, "", err.what))
            continue
        try:
            loaded.append(parse_case(text, str(f)))
        except CaseLoadError as err:
            problems.extend(err.problems)
    return loaded, problems
