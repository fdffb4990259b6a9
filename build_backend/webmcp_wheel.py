"""The build backend: setuptools' own, with one step added to the wheel.

The repository keeps its layout (``runner/``, ``proxies/``, ``site_under_test/`` at the top, imported by those
names). Installed, those are generic names that any other distribution may also use, so the wheel holds one
import root, ``webmcp_eval``: setuptools builds the wheel as usual, then ``map_wheel`` moves each package
under the root, rewrites the absolute imports of the moved modules and the entry points to match, and adds
the seed suite and the recorded demo run beside them (``webmcp_eval/cases``, ``webmcp_eval/traces/day26``),
where ``runner.SEED_SUITE`` finds them. An editable install (``pip install -e``) is setuptools' own: a
checkout keeps its names. docs/packaging.md says why; tests/test_wheel.py builds, installs and runs it.
"""

from __future__ import annotations

import ast
import base64
import csv
import hashlib
import io
import re
import zipfile
from pathlib import Path

from setuptools import build_meta
from setuptools.build_meta import (  # noqa: F401 - the hooks that stay setuptools' own
    build_editable,
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

ROOT = "webmcp_eval"
MAPPED = ("runner", "proxies", "site_under_test")  # the repository's import packages, under ROOT once installed
SHIPPED_DATA = ("cases", "traces/day26")  # folders of the repository shipped under ROOT as they are
SKIPPED_PARTS = ("__pycache__", ".pytest_cache")
ROOT_INIT = (
    '"""webmcp-eval, installed: the repository\'s runner/, proxies/ and site_under_test/ live under this one\n'
    'import root, so that no generic top-level name is taken (docs/packaging.md)."""\n'
)
ROOT_MAIN = "import sys\n\nfrom webmcp_eval.runner.cli import main\n\nsys.exit(main())\n"


class MappingError(Exception):
    """A module whose imports cannot be mapped under ROOT without changing what they bind."""


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):  # noqa: ANN001, ANN201
    name = build_meta.build_wheel(wheel_directory, config_settings, metadata_directory)
    map_wheel(Path(wheel_directory) / name, Path.cwd())
    return name


def map_wheel(wheel: Path, source: Path) -> None:
    """Rewrite the wheel setuptools built, in place: one import root, the shipped data, a new RECORD."""
    with zipfile.ZipFile(wheel) as old:
        files = {info.filename: old.read(info) for info in old.infolist() if not info.is_dir()}
    mapped: dict[str, bytes] = {}
    for name, data in files.items():
        top = name.split("/", 1)[0]
        if top.endswith(".dist-info"):
            mapped[name] = dist_info_file(name, data)
        elif top in MAPPED and name.endswith(".py"):
            mapped[f"{ROOT}/{name}"] = map_imports(data.decode("utf-8"), name).encode()
        elif top in MAPPED:
            mapped[f"{ROOT}/{name}"] = data
        else:
            raise MappingError(f"{name}: the wheel has a top-level name the build does not map ({top})")
    mapped[f"{ROOT}/__init__.py"] = ROOT_INIT.encode()
    mapped[f"{ROOT}/__main__.py"] = ROOT_MAIN.encode()
    for folder in SHIPPED_DATA:
        for path in sorted((source / folder).rglob("*")):
            if path.is_file() and path.suffix != ".pyc" and not set(path.parts) & set(SKIPPED_PARTS):
                mapped[f"{ROOT}/{path.relative_to(source).as_posix()}"] = path.read_bytes()
    write_wheel(wheel, mapped)


def dist_info_file(name: str, data: bytes) -> bytes:
    if name.endswith("/top_level.txt"):
        return f"{ROOT}\n".encode()
    if name.endswith("/entry_points.txt"):
        pattern = rf"=\s*({'|'.join(MAPPED)})\b"
        return re.sub(pattern, lambda m: f"= {ROOT}.{m.group(1)}", data.decode("utf-8")).encode()
    return data


def map_imports(source: str, filename: str) -> str:
    """The module's source with every absolute import of a MAPPED package under ROOT; lines keep their numbers.

    ``from runner.x import y`` -> ``from webmcp_eval.runner.x import y``; ``import runner.x as y`` likewise;
    ``import runner`` -> ``import webmcp_eval.runner as runner``. ``import runner.x`` (no ``as``) binds the
    name ``runner`` and has no mapped equivalent: refused, so the build fails instead of the installed code."""
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, str, str]] = []  # (line index, byte column, old text, new text)
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            top = node.module.split(".")[0]
            if top in MAPPED:
                line = lines[node.lineno - 1].encode()
                found = re.compile(rb"from\s+").match(line, node.col_offset)
                if not found:
                    raise MappingError(f"{filename}:{node.lineno}: cannot find the module of this import")
                edits.append((node.lineno - 1, found.end(), top, f"{ROOT}.{top}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top not in MAPPED:
                    continue
                if alias.asname is None and alias.name != top:
                    raise MappingError(
                        f"{filename}:{node.lineno}: `import {alias.name}` binds `{top}`; "
                        f"write `from {alias.name.rsplit('.', 1)[0]} import ...` or `import {alias.name} as ...`"
                    )
                new = f"{ROOT}.{alias.name}" + (f" as {top}" if alias.asname is None else "")
                edits.append((alias.lineno - 1, alias.col_offset, alias.name, new))
    for index, column, old, new in sorted(edits, reverse=True):
        line = lines[index].encode()
        if line[column : column + len(old)] != old.encode():
            raise MappingError(f"{filename}:{index + 1}: expected `{old}` at column {column}")
        lines[index] = (line[:column] + new.encode() + line[column + len(old) :]).decode()
    return "".join(lines)


def write_wheel(wheel: Path, files: dict[str, bytes]) -> None:
    """The wheel anew, with a RECORD of every file's hash and size (the wheel format's manifest)."""
    record_name = next(n for n in files if n.endswith(".dist-info/RECORD"))
    rows = io.StringIO()
    writer = csv.writer(rows, lineterminator="\n")
    for name, data in files.items():
        if name != record_name:
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            writer.writerow((name, f"sha256={digest}", len(data)))
    writer.writerow((record_name, "", ""))
    files[record_name] = rows.getvalue().encode()
    ordered = sorted(files, key=lambda n: (".dist-info/" in n, n))  # the dist-info last, as the format advises
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as out:
        for name in ordered:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            out.writestr(info, files[name])
