"""The wheel as a user installs it: built from the source, installed with pip into a fresh venv, run from an
empty folder. No download: the wheel is built by setuptools' backend from this venv (the PEP 517 hook pip
calls), and the fresh venv takes its dependencies from this venv's site-packages, linked
read-only (every distribution but webmcp-eval's own), so ``pip check`` can say they meet the wheel's
requirements. docs/packaging.md says what the wheel holds and why."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest
from eval_support import ROOT

import webmcp_eval

pytestmark = pytest.mark.browser  # the wheel's run and audit start Chromium

# What a source distribution holds (pyproject.toml's packages and MANIFEST.in), so what a build sees.
SOURCE = (
    "pyproject.toml",
    "README.md",
    "MANIFEST.in",
    "setup.py",
    "webmcp_eval",
    "cases",
    "traces/day26",
)
OURS = re.compile(r"^(webmcp_eval[-_.]|__editable__)|\.pth$|^__pycache__$")  # not linked into the fresh venv
OLD_NAMES = ("runner", "proxies", "site_under_test")  # top-level names the package once had, never installed
SHIPPED_KINDS = {".py", ".js", ".html", ".css", ".j2", ".json", ".yaml"}  # the package's code and data
# Seed cases the installed wheel plays: one per start route of the demo site, the suite's other time zone, the
# confirmation point, the untrusted page text. Every seed case passing is tests/test_suite_e2e.py's claim, on the
# same files the wheel holds (test_the_wheel_has_one_top_level_name_and_ships_the_seed_suite).
WHEEL_CASES = ("SEL-01", "SEL-02-LA", "CONF-01", "RECOVERY-02", "INJECT-01")


# A user's environment: not this checkout's PYTHONPATH (tests/conftest.py sets it), nor this venv.
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


def run(argv: list, cwd: Path, timeout: float = 600, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env or CLEAN_ENV
    )


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built from a copy of the source by setuptools' build_wheel hook: once for the session."""
    src, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("dist")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in SOURCE:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=ignore)
        else:
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    hook = "import sys; from setuptools import build_meta; print(build_meta.build_wheel(sys.argv[1]))"
    built = run([sys.executable, "-c", hook, out], src)
    assert built.returncode == 0, built.stderr[-3000:]
    return out / built.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="session")
def fresh(wheel, tmp_path_factory) -> Path:
    """A fresh venv with the wheel installed by pip (no index) and this venv's other distributions linked in."""
    home = tmp_path_factory.mktemp("venv")
    venv.create(home / "env", with_pip=False)
    python = home / "env" / "bin" / "python"
    deps = home / "deps"
    deps.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not OURS.search(entry.name):
            (deps / entry.name).symlink_to(entry)
    purelib = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], home).stdout.strip()
    Path(purelib, "webmcp_eval_test_deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    pip = [sys.executable, "-m", "pip", "--python", python, "--disable-pip-version-check"]
    installed = run([*pip, "install", "--no-deps", "--no-index", "--quiet", wheel], home)
    assert installed.returncode == 0, installed.stderr
    checked = run([*pip, "check"], home)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    return home / "env" / "bin"


def test_the_wheel_has_one_top_level_name_and_ships_the_seed_suite(wheel) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    dist_info = f"webmcp_eval-{webmcp_eval.__version__}.dist-info"
    assert {n.split("/")[0] for n in names} == {"webmcp_eval", dist_info}
    read = zipfile.ZipFile(wheel).read
    assert read(f"{dist_info}/top_level.txt") == b"webmcp_eval\n"
    points = read(f"{dist_info}/entry_points.txt").decode()
    assert "webmcp-eval = webmcp_eval.cli:main" in points
    assert "webmcp = webmcp_eval.pytest_plugin.plugin" in points
    seed = {p.name for p in (ROOT / "cases").iterdir() if p.is_file()}
    assert {n.removeprefix("webmcp_eval/cases/") for n in names if n.startswith("webmcp_eval/cases/")} == seed
    assert "webmcp_eval/traces/day26/trials/SEL-01.t1.json" in names
    # the example shop `webmcp-eval serve-example shop` serves: every file, its web font too
    shop = ROOT / "webmcp_eval" / "examples" / "shop"
    assert {p.relative_to(ROOT).as_posix() for p in shop.rglob("*") if p.is_file()} <= set(names)
    assert "webmcp_eval/examples/shop/cdn/leaf-sans.woff2" in names
    # every module and data file of the package (the shim, the site's pages, the report's template),
    # so a case played from the wheel has what the same case played from the source has
    for path in (ROOT / "webmcp_eval").rglob("*"):
        if path.suffix in SHIPPED_KINDS and "__pycache__" not in path.parts:
            assert path.relative_to(ROOT).as_posix() in names, path
    for name in (n for n in names if n.endswith(".py")):
        for node in ast.walk(ast.parse(read(name), name)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            assert not [m for m in modules if m.split(".")[0] in OLD_NAMES], (name, modules)


def started(argv: list, cwd: Path) -> subprocess.Popen[str]:
    """A command started and not waited for (``ended`` waits): commands a test runs side by side, as a user
    runs them in terminals of their own."""
    return subprocess.Popen(
        [str(a) for a in argv], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=CLEAN_ENV
    )


def ended(process: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    out, err = process.communicate(timeout=600)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_installed_from_an_empty_folder_it_answers_plays_seed_cases_and_audits_the_demo(fresh, tmp_path) -> None:
    # the run, the replay and the audit of the served demo read and write nothing of each other's: side by side
    (tmp_path / "play").mkdir()
    playing = started([fresh / "webmcp-eval", "run", *WHEEL_CASES, "-j", "2"], tmp_path / "play")
    try:
        version = run([fresh / "webmcp-eval", "--version"], tmp_path)
        assert version.returncode == 0 and version.stdout.startswith(f"webmcp-eval {webmcp_eval.__version__}\n"), (
            version
        )
        assert "\nplaywright " in version.stdout and "\nchromium " in version.stdout
        shipped = run([fresh / "python", "-c", "import webmcp_eval; print(webmcp_eval.__file__)"], tmp_path)
        day26 = Path(shipped.stdout.strip()).parent / "traces" / "day26" / "trials" / "SEL-01.t1.json"
        replayed = run([fresh / "webmcp-eval", "replay", day26, "--out", "replays"], tmp_path)
        assert replayed.returncode == 0 and "same as recorded" in replayed.stdout, replayed.stdout + replayed.stderr

        site = subprocess.Popen(
            [fresh / "webmcp-eval", "site", "--port", "0"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            text=True,
            env=CLEAN_ENV,
        )
        try:
            url = re.search(r"http://127\.0\.0\.1:\d+", site.stdout.readline()).group(0)
            audit = [fresh / "webmcp-eval", "audit", f"{url}/", "--watch-ms", "500", "--json", "audit.json"]
            audited = run(audit, tmp_path)
        finally:
            site.terminate()
            site.wait(timeout=30)
    except BaseException:
        playing.kill()  # the run is not left behind a failed assertion
        raise
    played = ended(playing)
    assert played.returncode == 0, played.stdout[-3000:] + played.stderr[-3000:]
    assert played.stderr.startswith("no cases/ here: using the seed suite shipped with webmcp-eval")
    assert f"{len(WHEEL_CASES)} passed, 0 failed, 0 not_run" in played.stdout
    (run_dir,) = (tmp_path / "play" / "traces").iterdir()
    info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert info["webmcp_eval_version"] == webmcp_eval.__version__ and info["embedded_site"] is True
    assert audited.returncode == 0, audited.stdout + audited.stderr
    (page,) = json.loads((tmp_path / "audit.json").read_text(encoding="utf-8"))["pages"]
    assert page["error"] is None and page["frames"][0]["tools"], page
    assert "site-packages" not in played.stdout + played.stderr + audited.stderr  # the user's paths only


def test_an_unrelated_projects_own_runner_is_never_shadowed(fresh, tmp_path) -> None:
    """The wheel installs no `runner`, `proxies` or `site_under_test`: a project's own modules of those names
    are the ones it imports, even in a pytest session that loads the webmcp plugin, and they do not break
    `python -m webmcp_eval` run from that project's folder."""
    assert run([fresh / "python", "-c", "import runner"], tmp_path).returncode == 1
    (tmp_path / "runner.py").write_text('OWNER = "this project"\n', encoding="utf-8")
    (tmp_path / "proxies.py").write_text('raise ImportError("this project\'s own proxies")\n', encoding="utf-8")
    (tmp_path / "test_own.py").write_text(
        "import runner\n\n"
        "def test_its_own_runner(pytestconfig):\n"
        "    assert runner.OWNER == 'this project'\n"
        "    assert pytestconfig.pluginmanager.get_plugin('webmcp') is not None\n",
        encoding="utf-8",
    )
    tested = run([fresh / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_own.py"], tmp_path)
    assert tested.returncode == 0 and "1 passed" in tested.stdout, tested.stdout + tested.stderr
    helped = run([fresh / "python", "-m", "webmcp_eval", "--help"], tmp_path)
    assert helped.returncode == 0 and "usage: webmcp-eval" in helped.stdout, helped.stderr


def action(workspace: Path, fresh: Path, wheel: Path, job: str, *options: str, **inputs: str) -> subprocess.Popen[str]:
    """action.yml played by scripts/action_local.py as one job (its step summary: JOB.md), started and not
    waited for: jobs run side by side, as a matrix's do. Its install step puts the wheel into the fresh venv."""
    given = {"python": str(fresh / "python"), "package": str(wheel), "pip-args": "--no-index --no-deps", **inputs}
    argv = [sys.executable, ROOT / "scripts" / "action_local.py", "--workspace", workspace, "--summary", f"{job}.md"]
    argv += [a for k, v in given.items() for a in ("--input", f"{k}={v}")] + list(options)
    return subprocess.Popen(
        [str(a) for a in argv],
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=CLEAN_ENV,
    )


def finished(job: subprocess.Popen[str]) -> str:
    """The job's output once it ended; it must have passed."""
    out, _ = job.communicate(timeout=600)
    assert job.returncode == 0, out[-4000:]
    return out


def test_the_actions_steps_play_the_documented_workflows_on_the_static_shop(fresh, wheel, tmp_path) -> None:
    """Shards then their merge, and an audit with its SARIF, as docs/running.md's two workflows use the action."""
    from static_server import CASES, SOURCE, static_site

    shutil.copytree(CASES, tmp_path / "shop-suite")
    (tmp_path / "shop-suite" / "suite.yaml").write_text("min_cases_per_behaviour: 0\n", encoding="utf-8")
    shutil.copy2(SOURCE / "site.yaml", tmp_path / "site.yaml")
    with static_site(tmp_path / "served") as shop:
        common = {"base-url": shop.url, "suite": "shop-suite", "site-config": "site.yaml", "fail": "false"}
        shards = [
            action(
                tmp_path, fresh, wheel, f"shard{i}", shard=f"{i}/2", args="SHOP-01 SHOP-02 --screenshot off", **common
            )
            for i in (1, 2)
        ]
        # the site's files lie in this workspace (served/site/): the SARIF names them; a fork's pull request
        # (no security-events: write) gets its SARIF refused, and the job goes on with a note
        audit = action(
            tmp_path,
            fresh,
            wheel,
            "audit",
            "--without-security-events",
            command="audit",
            args="--watch-ms 500",
            **{"base-url": shop.url, "site-root": "served/site"},
        )
        for shard in shards:
            assert "upload-artifact@v4: what it would upload is there" in finished(shard)
        merged = finished(action(tmp_path, fresh, wheel, "merge", command="report", runs="webmcp-eval/run-shard-*/"))
        audited = finished(audit)
    assert "webmcp-eval exited 0" in merged
    assert "2 passed, 0 failed, 0 not_run" in (tmp_path / "merge.md").read_text(encoding="utf-8")
    assert json.loads((tmp_path / "webmcp-eval/merged/summary.json").read_text(encoding="utf-8"))
    assert "upload-sarif@v3: Resource not accessible by integration" in audited and "webmcp-eval exited 0" in audited
    assert "WebMCP audit of" in (tmp_path / "audit.md").read_text(encoding="utf-8")
    assert "the audit's SARIF was not sent to code scanning" in (tmp_path / "audit.md").read_text(encoding="utf-8")
    sarif = json.loads((tmp_path / "webmcp-eval" / "audit" / "audit.sarif").read_text(encoding="utf-8"))
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for r in sarif["runs"][0]["results"]
        for loc in r["locations"]
        if "physicalLocation" in loc
    }
    assert uris and all(u.startswith("served/site/demo/") and (tmp_path / u).is_file() for u in uris), uris


def test_the_pytest_docs_example_runs_verbatim_from_the_wheel_on_the_served_example_shop(fresh, tmp_path) -> None:
    """docs/pytest.md's test file, as it is, in an empty folder, with the command its first line gives, against
    `webmcp-eval serve-example shop`: the public imports, the WebMCP Chromium with no conftest, three passes."""
    section = (ROOT / "docs" / "pytest.md").read_text(encoding="utf-8")
    block = section[section.index("```python\n") + len("```python\n") :]
    block = block[: block.index("```\n")]
    command = block.splitlines()[0].split(": ", 1)[1].split()  # "# test_shop_tools.py: pytest test_shop_tools.py …"
    assert command[:2] == ["pytest", "test_shop_tools.py"] and "--webmcp-chromium" in command
    (tmp_path / "test_shop_tools.py").write_text(block, encoding="utf-8")
    shop = started([fresh / "webmcp-eval", "serve-example", "shop", "--port", "0"], tmp_path)
    try:
        url = re.search(r"http://127\.0\.0\.1:\d+/demo/", shop.stdout.readline()).group(0)
        argv = [url if a.startswith("http://127.0.0.1:8000/") else a for a in command[1:]]
        tested = run([fresh / "python", "-m", "pytest", *argv, "-p", "no:cacheprovider"], tmp_path)
    finally:
        shop.terminate()
        ended(shop)
    assert tested.returncode == 0 and "3 passed" in tested.stdout, tested.stdout[-3000:] + tested.stderr[-2000:]
