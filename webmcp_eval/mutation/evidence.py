"""What a mutation trial shows: the observable evidence of a trace, and the clean runs each mutant is judged
against (what each case touches, what differs between its clean runs)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from webmcp_eval.judge import checks
from webmcp_eval.suite.loader import LoadedCase
from webmcp_eval.trace import Trace

MAX_FIELD_DEPTH = 2


# ---- what a trace shows: the observable evidence ----------------------------------


def observable(trace: Trace) -> dict[str, Any]:
    """The verdict and everything a check could look at (each kind's evidence), without timings, ids of worlds
    or file names."""
    return {"verdict": trace.verdict} | {part.name: part.read(trace) for part in checks.evidence()}


def differences(base: dict[str, Any], other: dict[str, Any], noise: set[str]) -> list[str]:
    return [key for key in base if key not in noise and base[key] != other.get(key)]


# ---- the clean runs: what each case touches -------------------------------------------


@dataclass
class CleanRun:
    """A case played with no mutant: its first passing clean run (or its failing one), the exchanges that run sent
    through the proxy, and what differed between its clean runs (noise, never a mutant's doing)."""

    case: LoadedCase
    trace: Trace
    exchanges: list[dict[str, Any]]
    noise: set[str]
    flaky: str | None = None  # it failed once unmutated, then passed

    @property
    def id(self) -> str:
        return self.case.case.id

    @property
    def observed(self) -> dict[str, Any]:
        return observable(self.trace)


def _result_data(call: Any) -> Any:
    return call.result.get("data") if isinstance(call.result, dict) else None


def field_paths(data: object, prefix: str = "", depth: int = 0) -> Iterable[tuple[str, str]]:
    """(path, kind) of a result's data: kind is scalar, object or list; list items as name[]."""
    if not isinstance(data, dict) or depth > MAX_FIELD_DEPTH:
        return
    for key, value in data.items():
        path = f"{prefix}{key}"
        if isinstance(value, list):
            yield path, "list" if len(value) > 1 else "short_list"
            for item in value:
                yield from field_paths(item, f"{path}[].", depth + 1)
        elif isinstance(value, dict):
            yield path, "object"
            yield from field_paths(value, f"{path}.", depth + 1)
        else:
            yield path, "scalar"
