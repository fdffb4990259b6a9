"""Play action.yml's steps on this machine, as a GitHub runner would, with no network.

    python scripts/action_local.py --input command=run --input base-url=http://127.0.0.1:8000/demo/ ...

Each shell step runs as GitHub runs it (``bash --noprofile --norc -eo pipefail``), with its ``env:`` and
the ``${{ }}`` expressions it uses (inputs, steps' outputs, github.action_path, runner.temp) filled in, and
GITHUB_OUTPUT, GITHUB_PATH and GITHUB_STEP_SUMMARY handled as on GitHub. A step that ``uses:`` another
action (the uploads) is not run: what it would upload is checked instead (the folder exists and is not
empty; the SARIF file is SARIF 2.1.0; ``--without-security-events`` refuses the SARIF as GitHub refuses a
fork's pull request). ``continue-on-error`` and ``steps.ID.outcome`` work as on GitHub. Exit code: the
action's (0 when every step passed or went on, else 1).
tests/test_wheel.py plays the documented workflows through it against the static test shop.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}")
NAME = r"[A-Za-z_][A-Za-z0-9_-]*"
UNSAFE_ARTIFACT_NAME = re.compile(r'[":<>|*?\\/\r\n]')


class Context:
    """What the expressions of a composite action can see here: inputs, steps' outputs, two paths."""

    def __init__(self, action: dict[str, Any], given: dict[str, str], action_path: Path, temp: Path) -> None:
        unknown = set(given) - set(action.get("inputs", {}))
        if unknown:
            raise SystemExit(f"action_local: no such input: {', '.join(sorted(unknown))}")
        self.inputs = {k: str(given.get(k, v.get("default", ""))) for k, v in action.get("inputs", {}).items()}
        self.steps: dict[str, dict[str, str]] = {}
        self.outcomes: dict[str, str] = {}  # step id -> success, failure or skipped
        self.action_path, self.temp = str(action_path), str(temp)
        self.failed = False

    def value(self, expression: str) -> Any:
        """A GitHub expression of the kinds action.yml uses: contexts, literals, ==, !=, &&, ||, !, always()."""
        python = re.sub(rf"\binputs\.({NAME})", lambda m: f"_i[{m.group(1)!r}]", expression)
        step_output = rf"\bsteps\.({NAME})\.outputs\.({NAME})"
        python = re.sub(step_output, lambda m: f"_s({m.group(1)!r}, {m.group(2)!r})", python)
        # a step's outcome: success, failure or skipped ("" before it ran), before continue-on-error
        python = re.sub(rf"\bsteps\.({NAME})\.outcome\b", lambda m: f"_o({m.group(1)!r})", python)
        python = python.replace("github.action_path", "_path").replace("runner.temp", "_temp")
        python = python.replace("always()", "True").replace("success()", "(not _failed)")
        python = python.replace("failure()", "_failed")
        python = re.sub(r"!(?!=)", " not ", python.replace("&&", " and ").replace("||", " or "))
        names = {
            "_i": self.inputs,
            "_s": lambda s, o: self.steps.get(s, {}).get(o, ""),
            "_o": lambda s: self.outcomes.get(s, ""),
            "_path": self.action_path,
            "_temp": self.temp,
            "_failed": self.failed,
        }
        return eval(python, {"__builtins__": {}}, names)  # noqa: S307 - action.yml's own expressions

    def fill(self, text: str) -> str:
        return EXPRESSION.sub(lambda m: str(self.value(m.group(1))), text)

    def should_run(self, step: dict[str, Any]) -> bool:
        condition = str(step.get("if", "success()"))
        return bool(self.value(condition[3:-2] if condition.startswith("${{") else condition))


def read_outputs(path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT's lines: key=value, or key<<DELIMITER ... DELIMITER."""
    outputs, lines = {}, path.read_text(encoding="utf-8").splitlines()
    while lines:
        line = lines.pop(0)
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delimiter = line.split("<<", 1)
            end = lines.index(delimiter)
            outputs[key], lines = "\n".join(lines[:end]), lines[end + 1 :]
        elif "=" in line:
            key, value = line.split("=", 1)
            outputs[key] = value
    return outputs


def shell_step(step: dict[str, Any], ctx: Context, env: dict[str, str], files: dict[str, Path], cwd: Path) -> int:
    files["GITHUB_OUTPUT"].write_text("", encoding="utf-8")
    step_env = {**env, **{k: ctx.fill(str(v)) for k, v in (step.get("env") or {}).items()}}
    step_env.update({k: str(v) for k, v in files.items()})
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", ctx.fill(step["run"])], cwd=cwd, env=step_env
    )
    if step.get("id"):
        ctx.steps[step["id"]] = read_outputs(files["GITHUB_OUTPUT"])
    added = [line for line in files["GITHUB_PATH"].read_text(encoding="utf-8").splitlines() if line]
    env["PATH"] = os.pathsep.join([*reversed(added), env["PATH"]])
    files["GITHUB_PATH"].write_text("", encoding="utf-8")
    return done.returncode


# What GitHub answers an upload to code scanning from a job without security-events: write (a fork's pull request)
NO_SECURITY_EVENTS = "Resource not accessible by integration (the job has no security-events: write)"


def checked_use(step: dict[str, Any], ctx: Context, cwd: Path, security_events: bool = True) -> str | None:
    """What an uploading step would have uploaded, checked: None when it holds, else why not."""
    given = {k: ctx.fill(str(v)) for k, v in (step.get("with") or {}).items()}
    uses = step["uses"].split("@")[0]
    if uses == "github/codeql-action/upload-sarif" and not security_events:
        return NO_SECURITY_EVENTS
    if uses == "actions/upload-artifact":
        folder = cwd / given["path"]
        if not given.get("name") or UNSAFE_ARTIFACT_NAME.search(given["name"]):
            return f"artifact name {given.get('name')!r} is not one upload-artifact takes"
        return None if folder.is_dir() and any(folder.iterdir()) else f"nothing to upload at {given['path']}"
    if uses == "github/codeql-action/upload-sarif":
        try:
            sarif = json.loads((cwd / given["sarif_file"]).read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            return f"no SARIF to send: {err}"
        return None if sarif.get("version") == "2.1.0" and sarif.get("runs") else "not SARIF 2.1.0"
    return f"action_local does not know {uses}: check it by hand"


def play(
    action_file: Path, given: dict[str, str], cwd: Path, summary: Path, temp: Path, security_events: bool = True
) -> int:
    action = yaml.safe_load(action_file.read_text(encoding="utf-8"))
    ctx = Context(action, given, action_file.parent.resolve(), temp)
    env = {**os.environ, "GITHUB_ACTIONS": "true", "RUNNER_TEMP": str(temp), "GITHUB_WORKSPACE": str(cwd)}
    files = {"GITHUB_OUTPUT": temp / "output", "GITHUB_PATH": temp / "path", "GITHUB_STEP_SUMMARY": summary}
    files["GITHUB_PATH"].write_text("", encoding="utf-8")
    for step in action["runs"]["steps"]:
        name = ctx.fill(step.get("name", step.get("uses", "step")))
        if not ctx.should_run(step):
            print(f"action_local: skipped: {name}", flush=True)
            ctx.outcomes[step.get("id", "")] = "skipped"
            continue
        print(f"action_local: {name}", flush=True)
        if "run" in step:
            code = shell_step(step, ctx, env, files, cwd)
            problem = f"exit {code}" if code else None
        else:
            problem = checked_use(step, ctx, cwd, security_events)
            print(f"action_local:   {step['uses']}: {problem or 'what it would upload is there'}", flush=True)
        ctx.outcomes[step.get("id", "")] = "failure" if problem else "success"
        if problem and str(step.get("continue-on-error", False)).lower() == "true":
            print(f"action_local: step failed, the job goes on (continue-on-error): {name}: {problem}", flush=True)
        elif problem:
            print(f"action_local: step failed: {name}: {problem}", flush=True)
            ctx.failed = True
    return 1 if ctx.failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", action="append", default=[], metavar="NAME=VALUE", help="an input of action.yml")
    parser.add_argument("--action", type=Path, default=ROOT / "action.yml", help="the action (default: the repo's)")
    parser.add_argument("--workspace", type=Path, default=Path.cwd(), help="the job's folder (default: here)")
    parser.add_argument("--summary", type=Path, help="GITHUB_STEP_SUMMARY (default: step-summary.md in the workspace)")
    parser.add_argument(
        "--without-security-events",
        action="store_true",
        help="the job has no security-events: write (a fork's pull request): the SARIF upload is refused",
    )
    args = parser.parse_args(argv)
    if bad := [i for i in args.input if "=" not in i]:
        parser.error(f"--input {bad[0]}: give NAME=VALUE")
    given = dict(i.split("=", 1) for i in args.input)
    with tempfile.TemporaryDirectory(prefix="action-local-") as temp:
        summary = args.summary or args.workspace / "step-summary.md"
        return play(args.action, given, args.workspace, summary, Path(temp), not args.without_security_events)


if __name__ == "__main__":
    sys.exit(main())
