"""The run directory's layout is spelled once (webmcp_eval/rundir/layout.py RunDir): checked on the source, and RunDir's
own answers."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from webmcp_eval.rundir.layout import RunDir

ROOT = Path(__file__).resolve().parent.parent
NAMES = {v for k, v in vars(RunDir).items() if k.isupper() and isinstance(v, str)}
PATH_CALLS = {"joinpath", "glob", "rglob", "with_name", "Path", "RunDir"}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _path_positions(tree: ast.AST) -> set[int]:
    """String nodes used as a path component: beside ``/``, handed to a path call, or listed with another name."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            found |= {id(node.left), id(node.right)}
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in PATH_CALLS:
                found |= {id(a) for a in node.args}
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            named = [e for e in node.elts if isinstance(e, ast.Constant) and e.value in NAMES]
            if len(named) > 1:  # a list of the run's files, such as the ones --force removes
                found |= {id(e) for e in named}
    return found


def _spells_a_name(text: str, in_path_position: bool) -> bool:
    if any(c.isspace() for c in text):  # prose: help text or a message naming a file for a person
        return False
    if text in NAMES:  # a bare folder name ("trials") is also a word of the JSON: only as a path it counts
        return in_path_position or "." in text or text.startswith("-")
    segments = text.split("/")
    return len(segments) > 1 and any(s in NAMES for s in segments)


def spelled_run_dir_names(root: Path, skip: str = "webmcp_eval/rundir") -> list[str]:
    """``file:line: 'name'`` for every run-directory file name spelled in Python source under root, outside skip."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(skip + "/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs, paths = _docstrings(tree), _path_positions(tree)
        subscripts = {id(n.slice) for n in ast.walk(tree) if isinstance(n, ast.Subscript)}
        keys = {id(k) for n in ast.walk(tree) if isinstance(n, ast.Dict) for k in n.keys if k is not None}
        for node in ast.walk(tree):
            pieces: list[tuple[ast.AST, ast.Constant]] = []
            if isinstance(node, ast.JoinedStr):
                pieces = [(node, v) for v in node.values if isinstance(v, ast.Constant)]
            elif isinstance(node, ast.Constant) and id(node) not in docs | subscripts | keys:
                pieces = [(node, node)]
            for owner, piece in pieces:
                text = piece.value
                if isinstance(text, str) and _spells_a_name(text, id(owner) in paths):
                    found.append(f"{rel}:{piece.lineno}: {text!r}")
    return sorted(set(found))


def test_no_module_outside_rundir_spells_a_run_directory_file_name() -> None:
    """Every file of a run directory is named by RunDir: plan.json, trials/, summary.json, screenshots/, .lock ..."""
    assert spelled_run_dir_names(ROOT / "webmcp_eval", skip="rundir") == []


def test_the_source_check_sees_a_spelled_name_and_lets_json_keys_and_prose_pass(tmp_path: Path) -> None:
    (tmp_path / "fine.py").write_text(
        '"""Writes summary.json into the run directory."""\n'
        "from pathlib import Path\n"
        "def f(plan: dict, out: Path) -> object:\n"
        '    n = len(plan["trials"])\n'
        '    help = "the JSON report (default: summary.json in the run directory)"\n'
        '    return {"trials": n, "attempts": 1}, help, "playwright"\n'
    )
    assert spelled_run_dir_names(tmp_path) == []
    (tmp_path / "wrong.py").write_text(
        "from pathlib import Path\n"
        "def f(out: Path, trial: str, run_id: str) -> object:\n"
        '    a = out / "trials" / f"{trial}.json"\n'
        '    b = out.joinpath("screenshots")\n'
        '    c = f"{run_id}/attempts/{trial}.a2.json"\n'
        '    d = ("plan.json", "run.json")\n'
        '    e = f"{run_id}-control"\n'
        '    return a, b, c, d, e, f"../playwright/{trial}.zip"\n'
    )
    assert spelled_run_dir_names(tmp_path) == [
        "wrong.py:3: 'trials'",
        "wrong.py:4: 'screenshots'",
        "wrong.py:5: '/attempts/'",
        "wrong.py:6: 'plan.json'",
        "wrong.py:6: 'run.json'",
        "wrong.py:7: '-control'",
        "wrong.py:8: '../playwright/'",
    ]


def test_run_dir_names_every_file_where_runs_have_always_had_it(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    files = {
        run.plan: "plan.json",
        run.run_info: "run.json",
        run.lock: ".lock",
        run.summary: "summary.json",
        run.junit: "junit.xml",
        run.report_html: "report.html",
        run.health: "health.json",
        run.mutation: "mutation.json",
        run.analysis_html: "analysis.html",
        run.trace("SEL-01.t1"): "trials/SEL-01.t1.json",
        run.attempt("SEL-01.t1", 2): "attempts/SEL-01.t1.a2.json",
        run.screenshot("SEL-01.t1"): "screenshots/SEL-01.t1.png",
        run.playwright_trace("SEL-01.t1"): "playwright/SEL-01.t1.zip",
        run.control("r1").path: "r1-control",
    }
    assert {p.relative_to(tmp_path).as_posix(): want for p, want in files.items()} == {w: w for w in files.values()}
    assert RunDir.link_from_trace(run.screenshot("x")) == "../screenshots/x.png"
    assert RunDir.relative_trace("SEL-01.t1", "r1") == "r1/trials/SEL-01.t1.json"


@pytest.mark.parametrize(
    ("relative", "owned"),
    [
        ("plan.json", True),
        ("run.json", True),
        ("trials/SEL-01.t1.json", True),
        ("screenshots/x.png", True),
        ("playwright/x.zip", True),
        ("attempts/x.a1.json", True),
        ("summary.json", False),
        ("report.html", False),
        ("sub/report.html", False),
    ],
)
def test_run_dir_owns_its_record_and_not_its_reports(tmp_path: Path, relative: str, owned: bool) -> None:
    assert RunDir(tmp_path).owns(tmp_path / relative) is owned
    assert RunDir(tmp_path / "other").owns(tmp_path / relative) is False


def test_a_trace_file_is_a_json_file_in_trials_and_nothing_else(tmp_path: Path) -> None:
    assert RunDir.is_trace_file(RunDir(tmp_path).trace("A.t1"))
    assert not RunDir.is_trace_file(RunDir(tmp_path).summary)
    assert not RunDir.is_trace_file(RunDir(tmp_path).trials / ".A.t1.json.tmp")
    assert not RunDir.is_trace_file(RunDir(tmp_path).attempt("A.t1", 1))


def test_clearing_a_run_removes_what_a_run_writes_and_leaves_the_rest(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    written = (run.plan, run.run_info, run.summary, run.junit, run.report_html, run.trace("A.t1"), run.screenshot("A"))
    for path in written:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    for control in (run.control("r1").plan, tmp_path / "r1-baseline" / "plan.json"):  # today's name, and before
        control.parent.mkdir()
        control.write_text("{}")
    (tmp_path / "notes.txt").write_text("mine")
    assert run.holds_run()
    run.clear("r1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    assert not run.holds_run()
