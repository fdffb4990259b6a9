"""The run plan: which trials a run means to play, written before the first one.

``<run dir>/plan.json`` says what was planned; ``trials/`` says what happened.
A run whose traces do not cover its plan (killed, interrupted) is incomplete,
never a quietly smaller run; ``run --resume`` plays only what is missing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import secrets
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NotRequired, TypeVar

from pydantic import ConfigDict, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict  # pydantic validates only this TypedDict on Python < 3.12

from webmcp_eval.data_file import RUN_FILE_DEPTH, FileProblem, load_json
from webmcp_eval.errors import InvalidInput
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.trace import EvidenceKind, StoredEvidenceKind, Trace, write_atomic


@with_config(ConfigDict(extra="forbid"))
class PlannedCase(TypedDict):
    id: str
    file: str  # as the run was given it: relative to the plan's root when not absolute
    sha256: NotRequired[str]  # the file's contents when planned: --resume refuses to mix versions


@with_config(ConfigDict(extra="forbid"))
class PlannedFile(TypedDict):
    file: str  # suite.yaml or the catalog, as the run found it: relative to the plan's root when not absolute
    sha256: str  # its contents when planned: --resume refuses to judge one run by two versions


@with_config(ConfigDict(extra="forbid"))
class PlannedContext(TypedDict):
    timezone_id: str  # every browser context of the run: one run, one clock
    locale: str


@with_config(ConfigDict(extra="forbid"))
class PlannedTrial(TypedDict):
    case_id: str
    trial_index: int
    trial_id: str


@with_config(ConfigDict(extra="forbid"))
class ShardInfo(TypedDict):
    index: int  # 1-based
    count: int
    planned_trials: int  # trials in the whole plan, all shards together


@with_config(ConfigDict(extra="forbid"))
class HarnessInfo(TypedDict):
    command: str
    source: str  # "--harness", or the suite.yaml that named it


@with_config(ConfigDict(extra="forbid"))
class RunPlan(TypedDict):
    run_id: str
    created_at: str  # ISO 8601, UTC
    cases: list[PlannedCase]
    trials_per_case: int
    trials: list[PlannedTrial]
    agent: str
    model: str | None
    evidence_kind: StoredEvidenceKind  # a stored plan's old kind name reads as today's
    plan_hash: NotRequired[str]  # the whole plan's identity (plan_hash below), the same in every shard
    world_key: NotRequired[str]  # a random part of every world's name: two runs with one run id stay apart
    root: NotRequired[str]  # the folder the case files' relative paths start from: resumable from anywhere
    # --resume --force-replan: the plan hashes the run's earlier traces were played under
    replanned_from: NotRequired[list[str]]
    shard: NotRequired[ShardInfo]  # this run plays only its part of the plan
    harness: NotRequired[HarnessInfo]  # the external harness that played the agent, and who chose it
    suite_files: NotRequired[list[PlannedFile]]  # suite.yaml and the catalog the cases were judged by
    browser_context: NotRequired[PlannedContext]  # the time zone and locale every trial is played in


_PLAN = TypeAdapter(RunPlan)


class ShardError(InvalidInput, ValueError):
    """A --shard or --durations value that cannot be used."""


class PlanError(InvalidInput, ValueError):
    """plan.json exists but is not a run plan."""


def trial_id_for(case_id: str, index: int) -> str:
    """``CASE.tN``: the trace file name of a case's N-th trial (1-based)."""
    return f"{case_id}.t{index + 1}"


def make_plan(
    run_id: str,
    cases: Iterable[tuple[str, str]],
    trials_per_case: int,
    *,
    agent: str,
    model: str | None,
    evidence_kind: EvidenceKind,
) -> RunPlan:
    """The plan for (case id, case file) pairs, each played trials_per_case times, in suite order."""
    pairs = list(cases)
    return {
        "run_id": run_id,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "root": str(Path.cwd()),
        "world_key": secrets.token_hex(3),
        "cases": [_with_sha(PlannedCase(id=case_id, file=file), Path(file)) for case_id, file in pairs],
        "trials_per_case": trials_per_case,
        "trials": [
            {"case_id": case_id, "trial_index": i, "trial_id": trial_id_for(case_id, i)}
            for case_id, _ in pairs
            for i in range(trials_per_case)
        ],
        "agent": agent,
        "model": model,
        "evidence_kind": evidence_kind,
    }


Planned = TypeVar("Planned", PlannedCase, PlannedFile)


def _with_sha(case: Planned, path: Path) -> Planned:
    """The planned case (or suite file) with its file's hash as it is now."""
    out = case.copy()
    with contextlib.suppress(OSError):  # a case made in memory (tests, the pytest plugin's own): nothing to compare
        out["sha256"] = file_sha256(path)
    return out


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def case_path(plan: RunPlan, case: PlannedCase | PlannedFile) -> Path:
    """A planned case's file as this process reaches it: relative paths start from the plan's root."""
    path = Path(case["file"])
    if path.is_absolute() or "root" not in plan or Path.cwd() == Path(plan["root"]):
        return path
    return Path(plan["root"]) / path


def changed_files(plan: RunPlan) -> list[str]:
    """The planned case files, suite.yaml and catalog whose contents are not what they were when the run was
    planned."""
    changed = []
    planned: list[PlannedCase | PlannedFile] = [*plan["cases"], *plan.get("suite_files", [])]
    for case in planned:
        path = case_path(plan, case)
        try:
            now = file_sha256(path)
        except OSError:
            now = "gone"
        if "sha256" in case and now != case["sha256"] and case["file"] not in changed:
            changed.append(case["file"])
    return changed


def planned_files(paths: Iterable[Path]) -> list[PlannedFile]:
    """suite.yaml and the catalog as they are now, for the plan (a file that is not there is not planned)."""
    out: list[PlannedFile] = []
    here = Path.cwd()
    for path in paths:
        shown = path.relative_to(here) if path.is_absolute() and path.is_relative_to(here) else path  # as cases are
        with contextlib.suppress(OSError):
            out.append({"file": str(shown), "sha256": file_sha256(path)})
    return out


def plan_hashes(plan: RunPlan) -> set[str]:
    """Every plan hash this run's traces may carry: the plan's, and those before --force-replan."""
    return {h for h in [plan.get("plan_hash"), *plan.get("replanned_from", [])] if h}


def replanned(plan: RunPlan, context: PlannedContext | None = None) -> RunPlan:
    """The plan with the case and suite files as they are now (--resume --force-replan), and the browser context
    given: new file hashes and plan hash, the old plan hash kept as one the run's earlier traces may carry."""
    new = plan.copy()
    new["cases"] = [_with_sha(c, case_path(plan, c)) for c in plan["cases"]]
    if "suite_files" in plan:
        new["suite_files"] = [_with_sha(f, case_path(plan, f)) for f in plan["suite_files"]]  # named as planned
    if context is not None:
        new["browser_context"] = context
    old = plan.get("plan_hash")
    if old:
        new["replanned_from"] = [*plan.get("replanned_from", []), old]
        now = [c.get("sha256", "") for c in [*new["cases"], *new.get("suite_files", [])]]
        digest = hashlib.sha256(old.encode() + "".join(now).encode() + json.dumps(context, sort_keys=True).encode())
        new["plan_hash"] = digest.hexdigest()
    return new


def write_plan(run_dir: Path, plan: RunPlan) -> Path:
    path = RunDir(run_dir).plan
    write_atomic(path, json.dumps(plan, indent=2, ensure_ascii=False) + "\n")
    return path


def read_plan(run_dir: Path) -> RunPlan | None:
    """The run's plan; None for a run written before plans existed. PlanError when it is broken."""
    path = RunDir(run_dir).plan
    if not (path.exists() or path.is_symlink()):
        return None
    try:
        data = load_json(path, RUN_FILE_DEPTH)
    except FileProblem as err:
        raise PlanError(f"{err.at(path)} (the run plan)") from None
    try:
        plan = _PLAN.validate_python(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise PlanError(f"{path}: not a run plan: {where}: {first['msg']}") from None
    problem = plan_problem(plan)
    if problem:
        raise PlanError(f"{path}: not a run plan: {problem}")
    return plan


HEX = re.compile(r"[0-9a-f]+")
SAFE_ID = re.compile(r"[A-Za-z0-9_.-]{1,100}")  # run and case ids name files: no '/', no control characters


def plan_problem(plan: RunPlan) -> str | None:
    """What a plan's shape allows but no run writes: a hand-edited or damaged plan.json, refused before any use
    (its trial ids name trace files, its world key is part of every world's name)."""
    if plan["trials_per_case"] < 1:
        return f"trials_per_case: {plan['trials_per_case']} (at least 1)"
    world_key = plan.get("world_key")
    if world_key is not None and not HEX.fullmatch(world_key):
        return f"world_key: {world_key!r} is not what a run writes (hex digits; it names the run's worlds)"
    if not SAFE_ID.fullmatch(plan["run_id"]) or plan["run_id"] in (".", ".."):
        return f"run_id: {plan['run_id']!r} (letters, digits, '.', '_' and '-' only)"
    for trial in plan["trials"]:
        if not SAFE_ID.fullmatch(trial["case_id"]) or trial["trial_index"] < 0:
            return f"trials: {trial['case_id']!r} / {trial['trial_index']} is not a case id and trial number"
        expected = trial_id_for(trial["case_id"], trial["trial_index"])
        if trial["trial_id"] != expected:
            return f"trials: trial_id {trial['trial_id']!r} is not {expected}"
    shard = plan.get("shard")
    if shard and not 1 <= shard["index"] <= shard["count"]:
        return f"shard: {shard['index']}/{shard['count']} (the index is 1 to the count)"
    return None


def missing_trials(plan: RunPlan, traces: Iterable[Trace], *, rerun_not_run: bool = False) -> list[PlannedTrial]:
    """Planned trials with no trace (and, when asked, those whose trace says not_run), in plan order."""
    verdicts = {t.trial_id: t.verdict for t in traces}
    return [
        t
        for t in plan["trials"]
        if t["trial_id"] not in verdicts or (rerun_not_run and verdicts[t["trial_id"]] == "not_run")
    ]


def completeness(plan: RunPlan, traces: Iterable[Trace]) -> tuple[int, int]:
    """(planned trials that have a trace, planned trials)."""
    seen = {t.trial_id for t in traces}
    return sum(t["trial_id"] in seen for t in plan["trials"]), len(plan["trials"])


def plan_hash(case_files: Iterable[Path], case_ids: Sequence[str], trials_per_case: int, **settings: Any) -> str:
    """sha256 over the suite files' contents, the chosen cases, trials per case and the settings."""
    digest = hashlib.sha256()
    for path in sorted({Path(p) for p in case_files}, key=str):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    who = {"cases": list(case_ids), "trials_per_case": trials_per_case, **settings}
    digest.update(json.dumps(who, sort_keys=True, default=str).encode())
    return digest.hexdigest()
