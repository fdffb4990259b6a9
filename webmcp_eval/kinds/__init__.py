"""Expectation kinds: each block of a case's ``expect:``, with everything that judges it.

A kind names its model (what one block says), its checker (the block and a trace become assertions),
the evidence it reads (fields of the trace, each with the part of it ``mutate`` compares between a
clean run and a mutant) and what makes a stored trace unable to answer it (``rejudge``). The checks,
``rejudge`` and ``mutate`` take their lists from the kinds (webmcp_eval/judge/checks.py ``KINDS`` holds them all), so
no kind is judged by one and forgotten by another.

A kind that is a module of this package is complete on its own: the case model takes its ``expect:``
field from it (an optional block; absent, nothing is checked) and ``webmcp-eval schema`` shows it. Such a
module imports neither the case model nor the checks (webmcp_eval/suite/case.py imports it): only this
package and the trace.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from webmcp_eval.trace import Assertion, Status, Trace

E = TypeVar("E")

# What the checker of the calls gathered for the later ones: capture name -> value (``$ref``, ``{name}`` paths).
Captures = dict[str, Any]

# Trace fields that say how the trial was run, not what the site did: any check may read them, and a
# clean run and its mutant share them (or the verdict shows the difference), so they are no kind's evidence.
FRAME = frozenset({"case_id", "case", "network_mode", "stopped", "catalog_hints", "catalog_schemas"})


@dataclass(frozen=True)
class Evidence:
    """A part of the trace a checker reads."""

    name: str  # its name where mutate lists what differed from the clean runs
    fields: tuple[str, ...]  # the trace fields it is made of
    read: Callable[[Trace], Any]  # what of them a check could see: without timings, ids of worlds or file names


@dataclass(frozen=True)
class Kind(Generic[E]):
    """One block of ``expect:``: ``name`` is its field there, its value an ``E``."""

    name: str
    model: type[BaseModel]  # one expectation of the kind (``E`` is it, or a list of it)
    check: Callable[[E, Trace, Captures], list[Assertion]]
    reads: tuple[Evidence, ...]
    unanswerable: Callable[[E, Trace], str]  # why a stored trace cannot answer the block ("" when it can)
    description: str = ""  # the field's description in the case's JSON Schema (a module kind's own field)

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"kind {self.name!r}: its name is the field of expect: it judges")
        if not (isinstance(self.model, type) and issubclass(self.model, BaseModel)):
            raise ValueError(f"kind {self.name}: its model is the pydantic class of one expectation")
        if not self.reads:
            raise ValueError(f"kind {self.name}: it names no evidence it reads (mutate would compare nothing of it)")
        unknown = sorted({f for e in self.reads for f in e.fields} - set(Trace.model_fields))
        if unknown or not all(e.fields for e in self.reads):
            raise ValueError(f"kind {self.name}: its evidence names no trace field or fields the trace lacks {unknown}")

    @property
    def fields(self) -> frozenset[str]:
        """The trace fields its checker and its ``unanswerable`` may read."""
        return frozenset(f for e in self.reads for f in e.fields)


def answerable(value: object, trace: Trace) -> str:
    """For a kind whose evidence every trace that played to the end holds, or whose checker says not_run
    when it is missing (no proxy, no state hook): a stored trace always answers it."""
    return ""


@cache
def module_kinds() -> tuple[Kind[Any], ...]:
    """The kinds that are a module of this package (its ``KIND``), by module name."""
    found: list[Kind[Any]] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        kind = getattr(module, "KIND", None)
        if not isinstance(kind, Kind):
            raise TypeError(f"{module.__name__} is in the package of expectation kinds and has no KIND")
        found.append(kind)
    return tuple(found)


def assertion(
    id: str, kind: str, description: str, ok: bool | None, why: str = "", evidence: object = None
) -> Assertion:
    """An assertion of a check: passed or failed, or not_run (``ok`` None) when its evidence is missing."""
    status: Status = "not_run" if ok is None else "passed" if ok else "failed"
    return Assertion(id=id, kind=kind, description=description, status=status, why=why, evidence=evidence)
