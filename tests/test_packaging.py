"""Packaging without building: one import name, the default suite
from the user's folder or the shipped seed suite, and --version. tests/test_wheel.py builds and runs the wheel."""

from __future__ import annotations

import ast
import importlib.util
import re
import shutil

import pytest
from eval_support import ROOT, cli

import webmcp_eval
from webmcp_eval.evaluation.loading import default_suite_dir


def test_the_code_is_imported_by_one_name_only() -> None:
    """The package is webmcp_eval in a clone, an editable install and the wheel: no module of the checkout
    imports an old top-level name, and none names one of them in a string (import_module, a patch target)."""
    old = ("runner", "proxies", "site_under_test")
    by_name = re.compile(rf"^({'|'.join(old)})(\.\w+)+(:\w+)?$")
    for folder in ("webmcp_eval", "tests", "bench", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                if folder == "webmcp_eval" and isinstance(node, ast.Constant) and isinstance(node.value, str):
                    assert not by_name.match(node.value), (path, node.lineno, node.value)
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                assert not [n for n in names if n.split(".")[0] in old], (path, node.lineno, names)


def test_the_build_is_setuptools_own() -> None:
    import tomllib

    build = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]
    assert build["build-backend"] == "setuptools.build_meta" and "backend-path" not in build


def test_the_seed_suite_lies_beside_the_code_in_a_checkout() -> None:
    assert webmcp_eval.SEED_SUITE == ROOT / "cases" and (webmcp_eval.SEED_SUITE / "suite.yaml").is_file()
    assert webmcp_eval.HOME == ROOT


def test_a_folder_without_cases_uses_the_shipped_seed_suite_and_says_so_in_one_line(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert default_suite_dir() == webmcp_eval.SEED_SUITE
    done = cli("validate", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("no cases/ here: using the seed suite shipped with webmcp-eval")
    assert done.stderr.count("\n") == 1 and "webmcp-eval init" in done.stderr
    assert "webmcp_eval/cases" not in done.stdout + done.stderr and "no such file" not in done.stderr
    assert str(webmcp_eval.SEED_SUITE) not in done.stdout and "suite config <seed suite>/suite.yaml" in done.stdout


def test_the_users_own_cases_folder_comes_first(tmp_path) -> None:
    shutil.copytree(ROOT / "cases", tmp_path / "cases")
    done = cli("validate", cwd=tmp_path)
    assert done.returncode == 0 and "seed suite shipped" not in done.stderr, done.stderr
    assert str(tmp_path / "cases" / "suite.yaml") in done.stdout or "cases/suite.yaml" in done.stdout


def test_version_names_the_package_playwright_and_chromium() -> None:
    from importlib import metadata

    assert "--version" in cli("--help").stdout
    done = cli("--version")
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert lines[0] == f"webmcp-eval {webmcp_eval.__version__}" == f"webmcp-eval {metadata.version('webmcp-eval')}"
    assert lines[1] == f"playwright {metadata.version('playwright')}"
    assert lines[2].startswith("chromium ")


def test_a_chromium_that_states_no_version_is_said_so() -> None:
    from webmcp_eval.cli.version import chromium_version

    assert chromium_version("/bin/true") is None and chromium_version("/no/such/chromium") is None


def action_local():
    spec = importlib.util.spec_from_file_location("action_local", ROOT / "scripts" / "action_local.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_local_action_player_fails_as_github_does_and_still_runs_always_steps(tmp_path, capfd) -> None:
    (tmp_path / "action.yml").write_text(
        """
inputs: {word: {default: hello}}
runs:
  using: composite
  steps:
    - id: first
      shell: bash
      env: {WORD: "${{ inputs.word }}"}
      run: |
        echo "said=$WORD" >> "$GITHUB_OUTPUT"; mkdir -p bin; echo "$PWD/bin" >> "$GITHUB_PATH"
        printf '#!/bin/sh\\necho tool ran\\n' > bin/tool; chmod +x bin/tool
    - if: steps.first.outputs.said == 'bye' && !failure()
      shell: bash
      run: tool > ran.txt; exit 3
    - name: after a failure, skipped
      shell: bash
      run: echo should not run
    - if: always()
      shell: bash
      run: echo "always ran"
""",
        encoding="utf-8",
    )
    player = action_local()
    code = player.main(["--action", str(tmp_path / "action.yml"), "--workspace", str(tmp_path), "--input", "word=bye"])
    out = capfd.readouterr().out
    assert code == 1 and "step failed: ${{ steps.first" not in out and "exit 3" in out, out
    assert (tmp_path / "ran.txt").read_text(encoding="utf-8") == "tool ran\n"  # GITHUB_PATH reached the next step
    assert "skipped: after a failure, skipped" in out and "should not run" not in out and "always ran" in out
    with pytest.raises(SystemExit, match="no such input: wrod"):
        player.main(["--action", str(tmp_path / "action.yml"), "--input", "wrod=x"])


def test_the_actions_inputs_are_described_and_its_uploads_known_to_the_local_player() -> None:
    import re

    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    inputs = action["inputs"]
    assert all(spec.get("description") for spec in inputs.values())
    used = set(re.findall(r"inputs\.([a-z-]+)", (ROOT / "action.yml").read_text(encoding="utf-8")))
    assert used == set(inputs), used ^ set(inputs)
    uses = {step["uses"].split("@")[0] for step in action["runs"]["steps"] if "uses" in step}
    assert uses == {"actions/upload-artifact", "github/codeql-action/upload-sarif"}


def test_label_never_writes_into_the_shipped_seed_suite(tmp_path) -> None:
    done = cli("label", str(ROOT / "traces" / "day26"), cwd=tmp_path)
    assert done.returncode == 2 and "no cases/ here to keep labels.json beside: give --labels FILE" in done.stderr
    assert done.stderr.count("\n") == 1


def test_a_recorded_trace_finds_its_case_file_from_any_folder(tmp_path, monkeypatch) -> None:
    """traces/day26 names its case files relative to the checkout; installed, it lies in the package."""
    from webmcp_eval.evaluation.replay_trace import case_file_near

    monkeypatch.chdir(tmp_path)
    trace = ROOT / "traces" / "day26" / "trials" / "SEL-01.t1.json"
    assert case_file_near("traces/day26/cases/SEL-01.yaml", trace) == str(ROOT / "traces/day26/cases/SEL-01.yaml")
    (tmp_path / "trials").mkdir()
    shutil.copy2(trace, tmp_path / "trials" / trace.name)
    done = cli("replay", str(tmp_path / "trials" / trace.name), cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "cannot replay: its case file traces/day26/cases/SEL-01.yaml is found neither here" in done.stderr


@pytest.mark.parametrize("found", [True, False])
def test_the_actions_chromium_step_installs_debians_only_when_none_is_found(tmp_path, found) -> None:
    """The step's own script, with a webmcp-eval and an apt-get that only say what they were asked."""
    import subprocess

    import yaml

    steps = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["runs"]["steps"]
    script = next(s["run"] for s in steps if s.get("name", "").startswith("Find Chromium"))
    answer = "chromium 156.0.1.2 (/usr/bin/chromium, system)" if found else "chromium: not found (docs/browser.md ...)"
    fakes = {
        "webmcp-eval": f'echo "webmcp-eval 0.1.0"; echo "{answer}"',
        "apt-get": f'echo "apt-get $*" >> {tmp_path}/asked',
        "sudo": '"$@"',
        "id": "echo 0",
    }
    for name, body in fakes.items():
        (tmp_path / name).write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        (tmp_path / name).chmod(0o755)
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin"}
    done = subprocess.run(["bash", "-eo", "pipefail", "-c", script], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    asked = (tmp_path / "asked").read_text(encoding="utf-8") if (tmp_path / "asked").exists() else ""
    if found:
        assert asked == "" and answer in done.stdout
    else:
        assert asked == "apt-get update -q\napt-get install -y -q chromium chromium-headless-shell\n"


def _action_steps() -> list[dict]:
    import yaml

    return yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["runs"]["steps"]


@pytest.mark.parametrize("python", ["python3", "tools/python3", "no-such-python"])
def test_the_actions_python_input_is_resolved_on_path_never_dot(tmp_path, python) -> None:
    """The install step's own script with a fake interpreter: a bare name is the one PATH finds (its folder, not
    ".", goes onto GITHUB_PATH); a path is taken as it is; a name PATH lacks is one ::error:: line."""
    import subprocess

    script = next(s["run"] for s in _action_steps() if s.get("name") == "Install webmcp-eval")
    for folder in ("bin", "tools"):
        (tmp_path / folder).mkdir()
        fake = tmp_path / folder / "python3"
        fake.write_text(f'#!/bin/sh\necho "{folder}: $*" >> {tmp_path}/asked\n', encoding="utf-8")
        fake.chmod(0o755)
    paths = tmp_path / "github_path"
    env = {"PATH": f"{tmp_path}/bin:/usr/bin:/bin", "PYTHON": python, "PACKAGE": "the-wheel.whl", "PIP_ARGS": ""}
    env.update(VENV=str(tmp_path / "venv"), GITHUB_PATH=str(paths))
    done = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    if python == "no-such-python":
        assert (
            done.returncode == 1 and done.stdout == "::error::webmcp-eval action: python: no no-such-python on PATH\n"
        )
        return
    assert done.returncode == 0, done.stderr
    folder = "bin" if python == "python3" else "tools"
    asked = (tmp_path / "asked").read_text(encoding="utf-8")
    assert asked == f"{folder}: -m pip install --disable-pip-version-check --quiet the-wheel.whl\n"
    on_path = paths.read_text(encoding="utf-8").splitlines()
    assert on_path == ([str(tmp_path / "bin")] if python == "python3" else ["tools"])


@pytest.mark.parametrize("allowed", [True, False])
def test_a_refused_sarif_upload_leaves_the_job_green_with_a_note(tmp_path, capfd, allowed) -> None:
    """action.yml's own SARIF steps, after a stand-in for the audit that leaves a SARIF file, played by the local
    player with and without security-events: write (a fork's pull request): the job goes on either way, and
    only a refused upload writes the note, to the log and the job summary."""
    import yaml

    steps = _action_steps()
    sarif_steps = [s for s in steps if s.get("id") == "sarif" or s.get("name") == "Say why the SARIF was not sent"]
    assert len(sarif_steps) == 2 and sarif_steps[0]["continue-on-error"] is True
    audit = {
        "id": "command",
        "shell": "bash",
        "run": 'mkdir -p out && echo \'{"version": "2.1.0", "runs": [{}]}\' > out/audit.sarif\n'
        'echo "sarif=out/audit.sarif" >> "$GITHUB_OUTPUT"',
    }
    inputs = {"command": {"default": "audit"}, "upload-sarif": {"default": "true"}}
    action = {"inputs": inputs, "runs": {"using": "composite", "steps": [audit, *sarif_steps]}}
    (tmp_path / "action.yml").write_text(yaml.safe_dump(action), encoding="utf-8")
    argv = ["--action", str(tmp_path / "action.yml"), "--workspace", str(tmp_path)]
    code = action_local().main(argv + ([] if allowed else ["--without-security-events"]))
    out = capfd.readouterr().out
    summary = (
        (tmp_path / "step-summary.md").read_text(encoding="utf-8") if (tmp_path / "step-summary.md").exists() else ""
    )
    assert code == 0, out
    if allowed:
        assert "what it would upload is there" in out and "skipped: Say why the SARIF was not sent" in out
        assert "security-events" not in summary
    else:
        assert "the job goes on (continue-on-error)" in out and "Resource not accessible by integration" in out
        assert "::warning::the audit's SARIF was not sent to code scanning: the job needs 'permissions: " in out
        assert "**Note:** the audit's SARIF was not sent" in summary and "out/audit.sarif" in summary
