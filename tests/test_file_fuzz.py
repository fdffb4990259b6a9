"""Every other file the runner reads, damaged the ways a person or a crash damages it: a bounded fuzz.

The case fuzz (test_case_fuzz.py) covers scripted case files; this one covers the rest, each kind
through the real entry point a user reaches it by: ``suite.yaml`` (the suite and the site a run
uses), goal cases (the ``user:`` block and ``setup``), ``catalog.json`` (then the seed cases checked
against it), ``schema.json`` (import's tool list), ``evals.json``, a run's traces, ``run.json`` and
``plan.json`` (``report``, ``analyze``, ``compare``, ``rejudge``), import → export → import round
trips, and the pytest plugin's option values. Damage: a value of another type at a random place, a
key dropped or misspelt, a truncated file, a bad byte, a NUL, JSON's NaN/Infinity, nesting past the
stack, a key given twice, YAML tags beyond JSON, alias bombs and recursive aliases.

Each probe must end in the kind's own one-line refusal (or be accepted): never an internal error
(an exception the entry point does not raise on purpose, or exit 3 from a command), never a hang
(each probe runs under a 10 s alarm). ``python tests/test_file_fuzz.py`` prints the figures per kind.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import shutil
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from eval_support import cli

from webmcp_eval.rundir.plan import make_plan, write_plan
from webmcp_eval.suite.evals_json import load_evals
from webmcp_eval.suite.folder import SuiteError, find_suite, site_for_run
from webmcp_eval.suite.peer_files import PeerFileError, catalog_from_tools, read_schema_tools, tools_from_catalog
from webmcp_eval.suite.validate import CatalogError, SuiteCatalog, load_suite

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "cases"
DAY26 = ROOT / "traces" / "day26"
SHOP = ROOT / "tests" / "static_site"
HANG_SECONDS = 10
DEEP = "[" * 3000 + "]" * 3000
VALUES: list[Any] = [None, True, 0, -1, 1.5, 10**30, "", "x", "../../x", "/", "\n", [], {}, [1, "a"], {"a": None}]
TAGS = ["!!binary aGVsbG8=", "!!set {a, b}", "!!timestamp 2024-01-01", "!!python/none ''", "2024-01-01", ".nan"]


class Hang(Exception):
    pass


@dataclass
class Kind:
    probes: int = 0
    refused: int = 0
    accepted: int = 0
    internal: list[str] = field(default_factory=list)
    slowest: float = 0.0


@dataclass
class Figures:
    kinds: dict[str, Kind] = field(default_factory=dict)

    def line(self) -> str:
        return "; ".join(
            f"{name} {k.probes} (refused {k.refused}, accepted {k.accepted}, internal errors {len(k.internal)}, "
            f"slowest {k.slowest:.1f} s)"
            for name, k in self.kinds.items()
        )

    def internal(self) -> list[str]:
        return [f"{name}: {e}" for name, k in self.kinds.items() for e in k.internal]


# ---- damage -----------------------------------------------------------------------------------


def _paths(data: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(data, dict):
        for k, v in data.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += _paths(v, (*prefix, i))
    return out


def damage_data(data: Any, rng: random.Random, under: tuple = ()) -> Any:
    """A value of another type at a random place (under ``under``), or a key dropped or misspelt."""
    data = copy.deepcopy(data)
    paths = [p for p in _paths(data) if p and p[: len(under)] == under] or [p for p in _paths(data) if p]
    if not paths:
        return rng.choice(VALUES)
    path = rng.choice(paths)
    parent = data
    for part in path[:-1]:
        parent = parent[part]
    how = rng.choice(["value", "value", "drop", "rename"])
    if how == "drop" and isinstance(parent, dict):
        del parent[path[-1]]
    elif how == "rename" and isinstance(parent, dict):
        parent[str(path[-1]) + "x"] = parent.pop(path[-1])
    else:
        parent[path[-1]] = copy.deepcopy(rng.choice(VALUES))
    return data


def damage_text(text: str, rng: random.Random, yaml_file: bool) -> bytes:
    """The file's bytes broken as a crash, an editor or a person breaks them."""
    shapes = ["truncate", "byte", "nul", "deep", "empty", "scalar", "duplicate", "bom"]
    shapes += ["tag", "bomb", "recursive"] if yaml_file else ["nan", "infinity", "huge"]
    shape = rng.choice(shapes)
    cut = rng.randrange(max(1, len(text)))
    if shape == "truncate":
        return text[:cut].encode()
    if shape == "byte":
        raw = text.encode()
        return raw[:cut] + b"\xff" + raw[cut:]
    if shape == "nul":
        return (text[:cut] + "\x00" + text[cut:]).encode()
    if shape == "empty":
        return b""
    if shape == "scalar":
        return rng.choice([b"[]", b"null", b'"x"', b"3", b"- a\n- b\n" if yaml_file else b"[1, 2]"])
    if shape == "bom":
        return b"\xef\xbb\xbf" + text.encode()
    if yaml_file:
        lines = text.splitlines(keepends=True) or ["a: 1\n"]
        top = [i for i, line in enumerate(lines) if line[:1].isalpha()] or [0]
        n = rng.choice(top)
        key = lines[n].split(":", 1)[0]
        if shape == "deep":
            lines[n] = f"{key}: {DEEP}\n"
        elif shape == "duplicate":
            lines.append(lines[n] if lines[n].rstrip().endswith(":") is False else f"{key}: 1\n")
        elif shape == "tag":
            lines[n] = f"{key}: {rng.choice(TAGS)}\n"
        elif shape == "bomb":
            bomb = "".join(f"  x{i}: &x{i} [{', '.join([f'*x{i - 1}'] * 9) if i else 'a'}]\n" for i in range(8))
            lines[n] = f"{key}:\n{bomb}"
        else:
            lines[n] = f"{key}: &r [*r]\n"
        return "".join(lines).encode()
    if shape == "deep":
        return (text[:cut] + DEEP + text[cut:]).encode() if rng.random() < 0.5 else DEEP.encode()
    if shape == "duplicate":
        return text.replace("{", '{"x": 1, "x": 2, ', 1).encode()
    number = rng.choice(["NaN", "Infinity", "-Infinity"] if shape != "huge" else ["1e999", "-1e999"])
    return text.replace(": 1", f": {number}", 1).replace(": true", f": {number}", 1).encode()


def variant(seed: Any, text: str, rng: random.Random, yaml_file: bool, under: tuple = ()) -> bytes:
    """Half the time the data damaged and written back, half the time the bytes."""
    if rng.random() < 0.5:
        data = damage_data(seed, rng, under)
        if yaml_file:
            return yaml.safe_dump(data, allow_unicode=True, sort_keys=False).encode()
        return json.dumps(data, ensure_ascii=False, indent=1).encode()
    return damage_text(text, rng, yaml_file)


# ---- probes -------------------------------------------------------------------------------------


def probe(figures: Figures, kind: str, label: str, run: Callable[[], bool], allowed: tuple = ()) -> None:
    """One probe under the hang alarm: ``run`` says whether the input was accepted; ``allowed`` exceptions
    are the entry point's own refusals."""
    k = figures.kinds.setdefault(kind, Kind())
    k.probes += 1

    def ring(*_: Any) -> None:
        raise Hang(f"over {HANG_SECONDS} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(HANG_SECONDS)
    started = time.monotonic()
    try:
        if run():
            k.accepted += 1
        else:
            k.refused += 1
    except allowed as err:
        if "\n" in str(err).strip() or "Traceback" in str(err):
            k.internal.append(f"{label}: not one line: {str(err)[:200]}")
        k.refused += 1
    except Hang as err:
        k.internal.append(f"{label}: hang {err}")
    except Exception as err:  # noqa: BLE001 - the point: nothing else may escape
        k.internal.append(f"{label}: {type(err).__name__}: {str(err)[:200]}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        k.slowest = max(k.slowest, time.monotonic() - started)


def command(*args: str) -> bool:
    """A command in process: exit 2 is a refusal; an internal error (exit 3 that says so) raises; the rest
    (passed, failed, not_run or an incomplete run) is an answer about the input."""
    out = cli(*args)
    said = out.stdout + out.stderr
    if "internal error" in said or "Traceback" in said:
        raise RuntimeError(f"exit {out.returncode}: {said.strip().splitlines()[-1][:200]}")
    return out.returncode != 2


def _suite_yaml(figures: Figures, tmp: Path, rng: random.Random, n: int) -> None:
    rich = (SHOP / "site.yaml").read_text(encoding="utf-8")
    seeds = [
        (CASES / "suite.yaml").read_text(encoding="utf-8"),
        "site:\n"
        + "".join(f"  {line}\n" for line in rich.splitlines() if line.strip())
        + "catalog: catalog.json\nmin_cases_per_behaviour: 0\nharness: 'sh {prompt}'\n"
        "audit:\n  rules:\n    name-invalid: {pattern: '^[a-z_]+$'}\n    too-many-tools: warning\n",
    ]
    for i in range(n):
        text = rng.choice(seeds)
        folder = tmp / f"suite{i}"
        folder.mkdir()
        (folder / "suite.yaml").write_bytes(variant(yaml.safe_load(text), text, rng, True))

        def run(folder: Path = folder) -> bool:
            suite = find_suite([folder])
            site_for_run(suite, None, None)
            return True

        probe(figures, "suite.yaml", f"suite{i}", run, (SuiteError,))


def _goal_cases(figures: Figures, tmp: Path, rng: random.Random, n: int) -> None:
    seeds = sorted(CASES.glob("*-G.yaml"))
    for i in range(n):
        source = rng.choice(seeds)
        text = source.read_text(encoding="utf-8")
        file = tmp / f"{source.stem}.g{i}.yaml"
        under = rng.choice([("user",), ("setup",), ("user", "plan")])
        file.write_bytes(variant(yaml.safe_load(text), text, rng, True, under))

        def run(file: Path = file) -> bool:
            loaded, problems = load_suite([file], CATALOG, whole_suite=False)
            bad = [str(p) for p in problems if not str(p).startswith(f"{file}:") or "\n" in str(p)]
            if bad:
                raise AssertionError(f"a problem without its file:line: {bad[0]}")
            return not problems

        probe(figures, "goal cases", file.name, run)


CATALOG = SuiteCatalog.load(CASES / "catalog.json")
SOME_CASES = [CASES / name for name in ("SEL-01.yaml", "CONF-01.yaml", "AMB-02-G.yaml")]


def _catalog(figures: Figures, tmp: Path, rng: random.Random, n: int) -> None:
    text = (CASES / "catalog.json").read_text(encoding="utf-8")
    seed = json.loads(text)
    for i in range(n):
        path = tmp / f"catalog{i}.json"
        path.write_bytes(variant(seed, text, rng, False, ("routes",)))

        def run(path: Path = path) -> bool:
            catalog = SuiteCatalog.load(path)
            _, problems = load_suite(SOME_CASES, catalog, whole_suite=False)
            tools_from_catalog(catalog.routes)
            return not problems

        probe(figures, "catalog.json", path.name, run, (CatalogError,))


def _schema(figures: Figures, tmp: Path, rng: random.Random, n: int) -> None:
    seed = {"tools": tools_from_catalog(CATALOG.routes)}
    text = json.dumps(seed, ensure_ascii=False, indent=1)
    for i in range(n):
        path = tmp / f"schema{i}.json"
        path.write_bytes(variant(seed, text, rng, False, ("tools",)))

        def run(path: Path = path) -> bool:
            SuiteCatalog(catalog_from_tools(read_schema_tools(path)))
            return True

        probe(figures, "schema.json", path.name, run, (PeerFileError, CatalogError))


def _evals(figures: Figures, tmp: Path, rng: random.Random, n: int) -> None:
    for i in range(n):
        source = rng.choice([SHOP / "evals.json", SHOP / "bistro-evals.json"])
        text = source.read_text(encoding="utf-8")
        path = tmp / f"evals{i}.json"
        path.write_bytes(variant(json.loads(text), text, rng, False))

        def run(path: Path = path) -> bool:
            _, problems, _ = load_evals(path)
            return not problems

        probe(figures, "evals json", path.name, run)


def _run_dir(tmp: Path, name: str) -> Path:
    run = tmp / name
    shutil.copytree(DAY26 / "trials", run / "trials")
    shutil.copy(DAY26 / "run.json", run / "run.json")
    cases = [(t.stem.split(".t")[0], f"{t.stem.split('.t')[0]}.yaml") for t in sorted((run / "trials").glob("*.json"))]
    write_plan(run, make_plan("day26", cases, 2, agent="reference", model=None, evidence_kind="deterministic"))
    return run


def _run_files(figures: Figures, tmp: Path, rng: random.Random, n: int) -> None:
    """Traces, run.json and plan.json of a stored run, read back by the commands that read runs."""
    for i in range(n):
        kind = ("traces", "run.json", "plan.json")[i % 3]
        run = _run_dir(tmp, f"run{i}")
        target = rng.choice(sorted((run / "trials").glob("*.json"))) if kind == "traces" else run / kind
        text = target.read_text(encoding="utf-8")
        under = rng.choice([(), ("trial_id",), ("verdict",), ("assertions",)]) if kind == "traces" else ()
        target.write_bytes(variant(json.loads(text), text, rng, False, under))
        which = rng.choice(["report", "report", "analyze", "compare", "rejudge"])
        args = {
            "compare": [str(run), str(run)],
            "rejudge": [str(run), "--suite", str(DAY26 / "cases"), "-o", str(tmp / f"rejudged{i}")],
        }.get(which, [str(run)])
        probe(figures, kind, f"{which} {target.name} ({i})", lambda w=which, a=args: command(w, *a))


def _round_trips(figures: Figures, tmp: Path, rng: random.Random, n: int) -> None:
    for i in range(n):
        text = (SHOP / "evals.json").read_text(encoding="utf-8")
        path = tmp / f"trip{i}" / "evals.json"
        path.parent.mkdir()
        path.write_bytes(variant(json.loads(text), text, rng, False))

        def run(path: Path = path, i: int = i) -> bool:
            first, out, second = (tmp / f"trip{i}" / name for name in ("first", "out", "second"))
            return (
                command("import", str(path), "-o", str(first))
                and command("export", str(first), "-o", str(out), "--lossy")
                and command("import", str(out / "evals.json"), "-o", str(second))
            )

        probe(figures, "import/export round trips", path.parent.name, run)


def _pytest_options(figures: Figures, rng: random.Random, n: int) -> None:
    from webmcp_eval.pytest_plugin.settings import http_url, timeout_ms, trials_count

    texts = ["1", "0", "-1", "1e9", "100000000", "x", "", " 3", "3.5", "http://127.0.0.1:9/", "ftp://x", "http://"]
    texts += ["http:///x", "\x00", "9" * 400, "https://[::1]:8000/", "https://[::1"]
    for _ in range(n):
        text = rng.choice(texts)
        name, option = rng.choice([("trials", trials_count), ("timeout", timeout_ms), ("url", http_url)])
        probe(
            figures,
            "pytest options",
            f"{name}({text!r})",
            lambda o=option, t=text: bool(o(t)),
            (argparse.ArgumentTypeError, pytest.UsageError),
        )


PER_KIND = 30  # about 9 s for the ten kinds


def run_fuzz(tmp: Path, per_kind: int = PER_KIND, seed: int = 5) -> Figures:
    rng = random.Random(seed)
    figures = Figures()
    _suite_yaml(figures, tmp, rng, per_kind)
    _goal_cases(figures, tmp, rng, per_kind)
    _catalog(figures, tmp, rng, per_kind)
    _schema(figures, tmp, rng, per_kind)
    _evals(figures, tmp, rng, per_kind)
    _run_files(figures, tmp, rng, per_kind * 2)
    _round_trips(figures, tmp, rng, per_kind // 2)
    _pytest_options(figures, rng, per_kind)
    return figures


def test_every_file_kind_is_refused_in_one_line_never_an_internal_error_or_a_hang(tmp_path, capsys):
    figures = run_fuzz(tmp_path)
    with capsys.disabled():
        print(f"\nfile fuzz: {figures.line()}")
    assert set(figures.kinds) == {
        "suite.yaml",
        "goal cases",
        "catalog.json",
        "schema.json",
        "evals json",
        "traces",
        "run.json",
        "plan.json",
        "import/export round trips",
        "pytest options",
    }
    assert figures.internal() == []
    assert all(k.probes >= 10 for k in figures.kinds.values()), figures.line()
    assert all(k.refused for name, k in figures.kinds.items() if name != "run.json"), figures.line()
    # a damaged run.json is read as no run.json: the run's folder names it (report still works)


if __name__ == "__main__":  # python tests/test_file_fuzz.py [probes per kind]
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        result = run_fuzz(Path(tmp), int(sys.argv[1]) if len(sys.argv) > 1 else PER_KIND)
    print(result.line().replace("; ", "\n"))
    for line in result.internal():
        print(" ", line)
