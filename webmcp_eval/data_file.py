"""Reading a YAML or JSON file the runner is handed: one loader with one set of guards for every kind.

Case files, ``suite.yaml``, a site config, a catalog, ``schema.json``, an ``evals.json``, traces,
``run.json`` and ``plan.json`` all come through here, so each says the same thing the same way when
it cannot be used, on one line that names the file and the line (or the JSON path) of the problem:
no such file, a directory, unreadable, not UTF-8, larger than the kind allows, not valid YAML or
JSON, nested deeper than ``MAX_DEPTH``, more than ``MAX_NODES`` values once YAML aliases are expanded
(an alias bomb), an alias inside the node it names, a key given twice, a YAML type beyond JSON
(``!!binary``, ``!!set``, ``!!timestamp``, a custom tag) and a number that is not finite (``NaN``,
``Infinity``, ``.inf``): every file holds JSON values, what tools take and give.

An unquoted date (``2024-01-01``) is read as the text it shows, as in YAML 1.2 and JSON.

Over 500 lines on purpose: YAML and JSON side by side under one set of guards and one wording of a
problem, so a case, a catalog and a trace refuse the same shapes in the same words.
"""

from __future__ import annotations

import bisect
import json
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeAlias

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

JSON: TypeAlias = "None | bool | int | float | str | list[JSON] | dict[str, JSON]"
"""A JSON value, what tools take and give and what every data file holds."""
FieldPath: TypeAlias = tuple[str | int, ...]
"""Where a value sits in a file: its keys and indexes from the top, ``("expect", "calls", 0)``."""
LineMap: TypeAlias = dict[FieldPath, int]
"""The 1-based line of every field path of a file."""

MAX_DEPTH = 100  # nesting levels of a file a person writes (the seed cases use under 10)
RUN_FILE_DEPTH = 200  # a trace, plan.json or run.json: the runner's own nesting plus a tool's deep answer
MAX_NODES = 20_000  # values in a YAML file once aliases are expanded (the seed cases have a few hundred)
MAX_YAML_BYTES = 1_000_000  # a YAML file this size parses in about a second
MAX_JSON_BYTES = 100_000_000  # traces hold page snapshots; beyond this a file is not one the runner wrote
MAX_PERSON_JSON_BYTES = 20_000_000  # a catalog, schema.json or evals.json a person or a tool wrote


class FileProblem(Exception):
    """Why a file's text cannot be had; ``line`` when the problem is at a place in the file."""

    def __init__(self, what: str, line: int | None = None) -> None:
        super().__init__(what)
        self.what, self.line = what, line

    def at(self, path: Path | str) -> str:
        """``path[:line]: what``, the one-line form every file error takes."""
        return f"{path}:{self.line}: {self.what}" if self.line else f"{path}: {self.what}"


class DataFileError(FileProblem):
    """A file whose text was read but cannot be used as data: the line and the field path of the problem."""

    def __init__(self, what: str, line: int | None = None, field: str = "") -> None:
        super().__init__(f"{field}: {what}" if field else what, line)
        self.message, self.field = what, field


def read_text(path: Path, max_bytes: int | None = None) -> str:
    """The file's text, decoded as UTF-8 (a byte-order mark dropped); FileProblem when it cannot be had."""
    try:
        if max_bytes is not None and path.is_file() and path.stat().st_size > max_bytes:
            raise FileProblem(f"refused: larger than {max_bytes:,} bytes")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise FileProblem("no such file") from None
    except IsADirectoryError:
        raise FileProblem("is a directory, not a file") from None
    except OSError as err:
        raise FileProblem(f"cannot read: {err.strerror or err}") from None
    if max_bytes is not None and len(raw) > max_bytes:  # a pipe or device has no size beforehand
        raise FileProblem(f"refused: larger than {max_bytes:,} bytes")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise FileProblem(f"not UTF-8: {err.reason} at byte {err.start}; save it as UTF-8", line) from None


def shown_field(path: Sequence[str | int]) -> str:
    """A path of keys and indexes as a person reads it: ``expect.calls.expected[0].args``."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def deepest_line(lines: Mapping[FieldPath, int], path: Sequence[str | int]) -> int:
    """The line of the deepest part of a field path that exists in the file (the file's first line when none)."""
    best = lines.get((), 1)
    at: FieldPath = ()
    for part in path:
        at = (*at, part)
        if at not in lines:
            break
        best = lines[at]
    return best


# ---- YAML -------------------------------------------------------------------------------------


class InputRefused(yaml.MarkedYAMLError):
    """Valid YAML that the loader will not build: too deep, too large, or recursive."""


_YAML = "tag:yaml.org,2002:"
JSON_TAGS = frozenset(_YAML + t for t in ("str", "int", "float", "bool", "null", "seq", "map", "merge"))


class _Bounded:
    """A loader that measures the document as it composes it, before constructing anything.

    Plain scalars never resolve to timestamps: ``2024-01-01`` stays the text it shows.
    """

    yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != _YAML + "timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def _start_measuring(self) -> None:
        self._depth = 0
        self._total = 0
        self._open_anchors: set[str] = set()
        self._measure: dict[int, tuple[int, int]] = {}  # id(node) -> (expanded size, expanded height)

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event = self.peek_event()  # type: ignore[attr-defined]  # of the parser class it is mixed with
        mark: yaml.error.Mark = event.start_mark
        if isinstance(event, yaml.AliasEvent):
            if event.anchor in self._open_anchors:
                raise InputRefused(None, None, f"recursive alias *{event.anchor} inside the node it names", mark)
            node: yaml.Node = super().compose_node(parent, index)  # type: ignore[misc]
            size, height = self._measure[id(node)]
            self._grow(size, self._depth + height, mark)
            return node
        self._grow(1, self._depth + 1, mark)
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            self._open_anchors.add(anchor)
        self._depth += 1
        try:
            node = super().compose_node(parent, index)  # type: ignore[misc]
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


class BoundedLoader(_Bounded, yaml.SafeLoader):
    """The pure-Python loader: its errors name the line and the problem as this module words them."""

    def __init__(self, text: str):
        yaml.SafeLoader.__init__(self, text)
        self._start_measuring()


if yaml.__with_libyaml__:  # PyYAML's wheels carry libyaml
    from yaml._yaml import CParser

    class _FastBoundedLoader(_Bounded, Composer, CParser, SafeConstructor, Resolver):
        """libyaml's scanner and parser under the same composer and guards: about ten times faster on a
        case file. A text it refuses is read again by :class:`BoundedLoader`, whose message is the one given."""

        def __init__(self, text: str):
            CParser.__init__(self, text)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)
            self._start_measuring()

    _FAST: type[_Bounded] | None = _FastBoundedLoader
else:
    _FAST = None
# What the pure-Python reader refuses up front, and the characters around which libyaml reads some texts
# otherwise than PyYAML does (a tab inside a plain scalar, a byte-order mark past the start, a bare "!"
# tag, a "?" key inside a flow mapping): such a text is read by the pure-Python loader alone.
_SLOW_PATH = re.compile(f"{yaml.reader.Reader.NON_PRINTABLE.pattern}|[\t\ufeff!?]")


def _not_json(node: yaml.Node, path: FieldPath) -> DataFileError:
    tag = node.tag.replace(_YAML, "!!")
    return DataFileError(
        f"YAML tag {tag} is not allowed: the file holds JSON values "
        "(text, numbers, true/false, null, lists, mappings): write it as one of those",
        node.start_mark.line + 1,
        shown_field(path) or "(top level)",
    )


_NOT_FINITE = re.compile(r"[-+]?\.(inf|Inf|INF|nan|NaN|NAN)")


def _json_only(node: yaml.Node, path: FieldPath) -> None:
    if node.tag not in JSON_TAGS:
        raise _not_json(node, path)
    if node.tag == _YAML + "float" and isinstance(node, yaml.ScalarNode) and _NOT_FINITE.fullmatch(node.value):
        raise DataFileError(
            f"{node.value} is not a finite number: JSON has no NaN or infinity",
            node.start_mark.line + 1,
            shown_field(path) or "(top level)",
        )


def yaml_line_map(node: yaml.Node, path: FieldPath = (), out: LineMap | None = None) -> LineMap:
    """Map every field path in a composed YAML tree to its 1-based line (and refuse what is not JSON)."""
    out = {} if out is None else out
    out.setdefault(path, node.start_mark.line + 1)
    _json_only(node, path)
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                shape = "a list" if isinstance(key, yaml.SequenceNode) else "a mapping"
                raise DataFileError(
                    f"a key must be a plain name, not {shape} (a YAML '? ' key)",
                    key.start_mark.line + 1,
                    shown_field(path) or "(top level)",
                )
            _json_only(key, (*path, key.value))
            if key.value in seen:
                # PyYAML keeps the last of two equal keys: an expectation would vanish unseen.
                where = shown_field((*path, key.value))
                raise DataFileError("duplicate key (the first would be ignored)", key.start_mark.line + 1, where)
            seen.add(key.value)
            child = (*path, key.value)
            out[child] = key.start_mark.line + 1
            yaml_line_map(value, child, out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            yaml_line_map(item, (*path, i), out)
    return out


def _yaml_error(err: yaml.YAMLError, text: str) -> DataFileError:
    """One line, at the line of the problem itself."""
    if isinstance(err, yaml.reader.ReaderError):
        line = text[: err.position].count("\n") + 1
        code = err.character if isinstance(err.character, int) else ord(err.character)
        shown = f"character U+{code:04X}" if err.encoding == "unicode" else f"byte 0x{code:02x}"
        return DataFileError(f"not valid YAML: {shown} ({err.reason})", line)
    mark = getattr(err, "problem_mark", None)
    line = mark.line + 1 if mark else 1
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    if isinstance(err, InputRefused):
        return DataFileError(f"refused: {problem}", line)
    context, context_mark = getattr(err, "context", None), getattr(err, "context_mark", None)
    if context and context_mark is not None and context_mark.line != (mark.line if mark else None):
        problem += f" ({context} from line {context_mark.line + 1})"
    return DataFileError(f"not valid YAML: {problem}", line)


def parse_yaml(text: str) -> tuple[JSON, LineMap]:
    """(data, line of every field path) of a YAML text; DataFileError at the line of the first problem.

    An empty document is None."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_YAML_BYTES:
        raise DataFileError(f"refused: larger than {MAX_YAML_BYTES:,} bytes")
    if _FAST is not None and not _SLOW_PATH.search(text):
        try:
            return _load(_FAST(text))  # type: ignore[call-arg]
        except (yaml.YAMLError, RecursionError, DataFileError):
            pass  # read again below, for the message (and the line) the pure-Python reader gives
    try:
        loader = BoundedLoader(text)  # its reader refuses a control character here already
    except yaml.YAMLError as err:
        raise _yaml_error(err, text) from None
    try:
        return _load(loader)
    except yaml.YAMLError as err:
        raise _yaml_error(err, text) from None
    except RecursionError:  # a merge chain deeper than the guards see
        raise DataFileError(f"refused: nested deeper than {MAX_DEPTH} levels") from None


def _load(loader: _Bounded) -> tuple[JSON, LineMap]:
    """The document of a loader and its line map; the loader is disposed of."""
    try:
        root = loader.get_single_node()  # type: ignore[attr-defined]
        if root is None:
            return None, {}
        lines = yaml_line_map(root)  # before construction: a merge key (<<) rewrites the node
        return loader.construct_document(root), lines  # type: ignore[attr-defined]
    finally:
        loader.dispose()  # type: ignore[attr-defined]


def load_yaml(path: Path) -> tuple[JSON, LineMap]:
    """A YAML file's data and line map; FileProblem (or DataFileError) says why not."""
    return parse_yaml(read_text(path, MAX_YAML_BYTES))


# ---- JSON -------------------------------------------------------------------------------------

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]|-?Infinity|NaN')


def _line_at(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _too_deep_at(text: str, max_depth: int) -> int:
    """The line where the text first nests deeper than ``max_depth`` (strings skipped)."""
    depth = 0
    for token in _TOKENS.finditer(text):
        kind = token.group()[0]
        if kind in "[{":
            depth += 1
            if depth > max_depth:
                return _line_at(text, token.start())
        elif kind in "]}":
            depth -= 1
    return 1


def _not_finite_at(text: str) -> int:
    found = next((t for t in _TOKENS.finditer(text) if t.group()[0] in "-IN"), None)
    return _line_at(text, found.start()) if found else 1


def _refuse_constant(name: str) -> NoReturn:
    raise _NotFinite(name)


class _NotFinite(ValueError):
    pass


def _depth(value: JSON) -> int:
    """How deeply a parsed JSON value nests (iteratively: a deep value never reaches the stack limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def parse_json(text: str, max_depth: int = MAX_DEPTH) -> JSON:
    """A JSON text's value; DataFileError (with the line) for bad JSON, NaN/Infinity, or nesting past max_depth."""
    try:
        data: JSON = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as err:
        raise DataFileError(f"not valid JSON: {err.msg} (column {err.colno})", err.lineno) from None
    except _NotFinite as err:
        what = f"{err} is not a finite number: JSON has no NaN or infinity"
        raise DataFileError(what, _not_finite_at(text)) from None
    except RecursionError:
        raise DataFileError(f"refused: nested deeper than {max_depth} levels", _too_deep_at(text, max_depth)) from None
    if isinstance(data, dict | list) and _depth(data) > max_depth:
        raise DataFileError(f"refused: nested deeper than {max_depth} levels", _too_deep_at(text, max_depth))
    return data


def load_json(path: Path, max_depth: int = MAX_DEPTH, max_bytes: int = MAX_JSON_BYTES) -> JSON:
    """A JSON file's value; FileProblem (or DataFileError) says why not."""
    return parse_json(read_text(path, max_bytes), max_depth)


def json_lines(text: str, duplicates: list[tuple[FieldPath, int]] | None = None) -> LineMap:
    """The 1-based line of every value of a JSON text ``parse_json`` took, by path ((), (0,), (0, 'name'), ...).

    A key given twice in one object goes into ``duplicates`` (path, line): JSON keeps the last.
    """
    newlines = [i for i, c in enumerate(text) if c == "\n"]
    decode = json.JSONDecoder().raw_decode  # (value, end) of the JSON value at a position
    out: LineMap = {}

    def line(pos: int) -> int:
        return bisect.bisect_right(newlines, pos - 1) + 1

    def skip(pos: int) -> int:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        return pos

    def value(pos: int, path: FieldPath) -> int:
        pos = skip(pos)
        out.setdefault(path, line(pos))
        if text[pos] == "{":
            pos = skip(pos + 1)
            while text[pos] != "}":
                key: str
                key, pos = decode(text, pos)
                if (*path, key) in out and duplicates is not None:
                    duplicates.append(((*path, key), line(pos)))
                out[(*path, key)] = line(pos)
                pos = skip(value(skip(pos) + 1, (*path, key)))
                pos = skip(pos + 1) if text[pos] == "," else pos
            return pos + 1
        if text[pos] == "[":
            pos, i = skip(pos + 1), 0
            while text[pos] != "]":
                pos = skip(value(pos, (*path, i)))
                pos, i = (skip(pos + 1) if text[pos] == "," else pos), i + 1
            return pos + 1
        return decode(text, pos)[1]

    value(0, ())
    return out


@dataclass(frozen=True)
class JsonDocument:
    """A JSON file a person wrote: its value and the line of every value (a key given twice refused)."""

    data: JSON
    lines: LineMap

    def line_of(self, path: FieldPath) -> int:
        return deepest_line(self.lines, path)


def parse_json_document(text: str) -> JsonDocument:
    data = parse_json(text)
    twice: list[tuple[FieldPath, int]] = []
    lines = json_lines(text, twice)
    if twice:
        path, line = twice[0]
        raise DataFileError("duplicate key (the first would be ignored)", line, shown_field(path))
    return JsonDocument(data, lines)


def load_json_document(path: Path) -> JsonDocument:
    """A person's JSON file (a catalog, schema.json, evals.json) with its lines; FileProblem says why not."""
    return parse_json_document(read_text(path, MAX_PERSON_JSON_BYTES))


def strings_in(value: object) -> Iterator[str]:
    """Every string of a JSON value (a tool's result), depth first, in order."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings_in(v)


def nulls_in(value: object, pointer: str = "") -> Iterator[str]:
    """The JSON pointer (RFC 6901, under ``pointer``; the whole value: "/") of every null of a JSON value, in order:
    a schema's null literal (the audit's schema-null), a tool's answer (smoke-null)."""
    if value is None:
        yield pointer or "/"
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from nulls_in(v, f"{pointer}/{str(k).replace('~', '~0').replace('/', '~1')}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from nulls_in(v, f"{pointer}/{i}")


# ---- keys renamed: the old spelling read for one release --------------------------------------------
#
# A key a person types (a case file, a site config) that was renamed still reads as its new name for one
# release; the reader says so in one line at the key's line. A renames table maps the old key's path
# (dict keys from the top of the file) to the new last key.

Renames = dict[tuple[str, ...], str]


def rename_keys(
    data: object, renames: Renames, lines: dict[tuple[Any, ...], int] | None = None
) -> list[tuple[int, str, str]]:
    """Each old key of ``renames`` in ``data`` given its new name in place (its place in the mapping kept, and
    its line in ``lines``); (line, old path, new path) of each. An old key beside its new one is left as it is:
    the model then names it an unknown field."""
    found: list[tuple[int, str, str]] = []
    for path, new in renames.items():
        parent: Any = data
        for key in path[:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        old = path[-1]
        if not isinstance(parent, dict) or old not in parent or new in parent:
            continue
        items = [(new if k == old else k, v) for k, v in parent.items()]
        parent.clear()
        parent.update(items)
        line = 1
        if lines is not None:
            line = lines.get(path, lines.get((), 1))
            moved = {k: v for k, v in lines.items() if k[: len(path)] == path}
            for k, v in moved.items():
                del lines[k]
                lines[(*path[:-1], new, *k[len(path) :])] = v
        found.append((line, ".".join(path), ".".join((*path[:-1], new))))
    return found


def renamed_in_model(data: object, renames: Renames) -> Any:
    """A model's before-validator: its renamed keys (paths of one key) read under their new names, silently
    (stored traces and cases of old runs; a person's file says so at its line, see ``rename_keys``)."""
    if isinstance(data, dict) and any(path[0] in data for path in renames):
        data = dict(data)
        rename_keys(data, renames)
    return data


def say_renamed(file: str, found: list[tuple[int, str, str]]) -> None:
    """One line on stderr per old key read: where it is and what to write instead."""
    for line, old, new in found:
        print(f"{file}:{line}: {old} is deprecated: use {new}", file=sys.stderr)
