"""The project's structure in figures, from its own imports: for a reader, and for before/after notes.

    python scripts/structure.py [--repo DIR] [--top N]

Rooms are the top-level parts of the code (each package under webmcp_eval/, each
module directly in webmcp_eval/, and bench/); tests are
left out. An arrow is an import of one room by another, at module level or
inside a function, typing-only imports included. Floors stack the rooms so that
every arrow points down where it can: floor 1 imports no other room. An arrow
that points up, or sideways within one floor, is part of a circle of rooms.
File-level circles are modules that import each other, directly or round a loop.
"""

from __future__ import annotations

import argparse
import ast
from collections import defaultdict
from pathlib import Path

TOP_LEVEL = ("bench",)


def room_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] in TOP_LEVEL:
        return parts[0]
    if parts[0] == "webmcp_eval" and len(parts) > 1:
        return f"webmcp_eval.{parts[1]}"
    return None


def module_name(repo: Path, path: Path) -> str:
    rel = path.relative_to(repo).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def sources(repo: Path) -> list[Path]:
    roots = [repo / "webmcp_eval", *(repo / name for name in TOP_LEVEL)]
    return sorted(p for root in roots if root.exists() for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def imports_of(tree: ast.Module, here: str, is_package: bool) -> tuple[set[str], int]:
    """The modules a file imports (absolute and relative), and how many imports stand inside functions."""
    found: set[str] = set()
    inside = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            inside += sum(isinstance(n, ast.Import | ast.ImportFrom) for n in ast.walk(node))
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = here.split(".") if is_package else here.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, base] if base else package)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found, inside


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one node (the circles)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def floors(graph: dict[str, set[str]], circles: list[list[str]]) -> dict[str, int]:
    """Floor 1 imports nothing; a room stands one floor above the highest room it imports (a circle shares one)."""
    group = {node: tuple(c) for c in circles for node in c}
    memo: dict[tuple[str, ...], int] = {}

    def floor(members: tuple[str, ...]) -> int:
        if members not in memo:
            memo[members] = 0  # a guard; a circle is one group, so the condensation has no loop
            below = {group.get(n, (n,)) for m in members for n in graph.get(m, ()) if group.get(n, (n,)) != members}
            memo[members] = 1 + max((floor(b) for b in below), default=0)
        return memo[members]

    return {node: floor(group.get(node, (node,))) for node in graph}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent, help="the checkout")
    parser.add_argument("--top", type=int, default=8, help="how many of the biggest modules and longest functions")
    args = parser.parse_args()
    repo = args.repo.resolve()

    modules: dict[str, set[str]] = {}
    inside: dict[str, int] = defaultdict(int)
    lines: dict[str, int] = {}
    functions: list[tuple[int, str]] = []
    for path in sources(repo):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        name = module_name(repo, path)
        found, within = imports_of(tree, name, path.name == "__init__.py")
        modules[name] = found
        inside[room_of(name) or name] += within
        lines[str(path.relative_to(repo))] = len(text.splitlines())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                functions.append((length, f"{path.relative_to(repo)}:{node.lineno} {node.name}"))

    files = {m: {i for i in imported if i in modules and i != m} for m, imported in modules.items()}
    rooms: dict[str, set[str]] = defaultdict(set)
    for m, imported in files.items():
        room = room_of(m)
        if room:
            rooms[room].update(r for r in (room_of(i) for i in imported) if r and r != room)
            rooms.setdefault(room, set())
    room_circles = strongly_connected(rooms)
    file_circles = strongly_connected(files)
    level = floors(rooms, room_circles)
    upward = sorted((a, b) for a, targets in rooms.items() for b in targets if level[b] >= level[a])
    arrows = sum(len(t) for t in rooms.values())

    print(f"rooms {len(rooms)}, floors {max(level.values(), default=0)}, arrows {arrows}")
    print(f"arrows up or sideways {len(upward)}" + "".join(f"\n  {a} -> {b}" for a, b in upward))
    print(f"circles of rooms {len(room_circles)}" + "".join(f"\n  {' <-> '.join(c)}" for c in room_circles))
    print(f"circles of files {len(file_circles)}" + "".join(f"\n  {' <-> '.join(c)}" for c in file_circles))
    for number in range(max(level.values(), default=0), 0, -1):
        print(f"floor {number}: {', '.join(sorted(r for r, f in level.items() if f == number))}")
    biggest = sorted(lines.items(), key=lambda item: -item[1])[: args.top]
    print("biggest modules (lines): " + ", ".join(f"{path} {n}" for path, n in biggest))
    longest = sorted(functions, reverse=True)[: args.top]
    print("longest functions (lines): " + ", ".join(f"{where} {n}" for n, where in longest))
    print("imports inside functions: " + ", ".join(f"{r} {n}" for r, n in sorted(inside.items()) if n))


if __name__ == "__main__":
    main()
