"""Expectation kinds: each block of a case's ``expect:``, with everything that judges it.

A kind names its model (what one block says), its checker (the block and a trace become assertions),
the evidence it reads (fields of the trace, each with the part of it ``mutate`` compares between a
clean run and a mutant) and what makes a stored trace unable to answer it (``rejudge``); where it has
them, its rules against the suite (``validate``: the catalog's tools, the site's write methods, the
reference plan; ``validate_absent``, what leans on the block where a case lacks it; ``warn``, what is
allowed but likely wrong), what it reads of the page after the steps (``observe``) or after each tool call
(``watch_calls``), and whether it makes the case one about a write (``about_writes``). The checks,
``validate``, the case model, the trial, the page observer, ``rejudge`` and ``mutate`` take their lists from
the kinds (``module_kinds``; webmcp_eval/judge/checks.py ``KINDS``), so no kind is judged by one and
forgotten by another.

Every kind is a module of this package (its ``KIND``), complete on its own: the case model takes its
``expect:`` field from it (webmcp_eval/suite/case.py) and ``webmcp-eval schema`` shows it. Such a module
imports nothing above this package (docs/architecture.md; the case model, the checks and validate import
it): this package and its shared ``_`` modules, another kind whose captures or models it reads, the
trace, the value matchers and the data-file helpers.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, Field

from webmcp_eval.data_file import FieldPath
from webmcp_eval.kinds._locator import Locator
from webmcp_eval.matchers import short
from webmcp_eval.trace import (
    Assertion,
    ConfirmationRecord,
    ConsistencyRecord,
    Status,
    ToolCall,
    Trace,
    UiObservation,
    UntrustedText,
)

E = TypeVar("E")

# What the checker of the calls gathered for the later ones: capture name -> value (``$ref``, ``{name}`` paths).
Captures = dict[str, Any]

# Trace fields that say how the trial was run, not what the site did: any check may read them, and a
# clean run and its mutant share them (or the verdict shows the difference), so they are no kind's evidence.
FRAME = frozenset({"case_id", "case", "network_mode", "stopped", "catalog_hints", "catalog_schemas"})

# The kinds judged first, in this order (a verdict lists their assertions so, and the case's JSON Schema
# its fields); every other kind comes after them, by module name. The calls come first: their captures
# reach the kinds after them.
FIRST = ("calls", "network", "ui", "state", "answer", "confirmation", "untrusted")

# A problem of an expectation: the field path in the case file (from ``expect``) and what is wrong.
RuleProblem = tuple[FieldPath, str]


class Catalog(Protocol):
    """The site's tools per route (webmcp_eval/suite/catalog.py ``SuiteCatalog``), as a kind's rules read it."""

    def tools(self) -> set[str]: ...
    def argument_names(self, tool: str) -> set[str] | None: ...
    def argument_schemas(self, tool: str, name: str) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class CaseFacts:
    """What a kind's ``validate`` holds its block to, besides the block itself."""

    steps: Sequence[Any]  # the case's steps (user steps and actions)
    setup: Sequence[Any]  # its setup (calls and actions played before the agent's turn)
    user_steps: list[int]  # the positions of its user steps among them
    expect: Any  # the case's whole expect: (a kind's rules may name what another kind captures)
    planned: list[tuple[int, str]] | None  # the reference plan's calls (step, tool); None: it plays none
    catalog: Catalog | None  # None: no catalog, tools are not checked
    write_methods: tuple[str, ...]  # the request methods the proxy counts as writes


class PageReader(Protocol):
    """What a kind's ``observe`` may read of the page after the steps (webmcp_eval/play/page/observe.py)."""

    async def target(self, target: Locator, pairs: bool = False) -> UiObservation: ...
    async def confirmation(
        self, control: Locator, trial_id: str, at_press: ConfirmationRecord | None = None
    ) -> ConfirmationRecord: ...
    async def untrusted(self, calls: list[Any]) -> list[UntrustedText] | None: ...


class CallPageReader(Protocol):
    """What a kind's ``watch_calls`` may read of the page right after a tool call (webmcp_eval/play/run/trial.py)."""

    async def page_side(
        self, call: int, tool: str, selector: str, attribute: str | None, many: bool
    ) -> ConsistencyRecord: ...


# Reads the page after one tool call into the trace (a kind's ``watch_calls`` makes it for one trial).
CallWatch = Callable[[ToolCall, CallPageReader], Awaitable[None]]


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
    description: str = ""  # the field's description in the case's JSON Schema
    # the expect: field's type and its pydantic Field (default: an optional block, absent when not written)
    annotation: Any = None
    field: Any = None
    validate: Callable[[E, CaseFacts], list[RuleProblem]] | None = None  # the block's rules against the suite
    observe: Callable[[E, PageReader, Trace], Awaitable[None]] | None = None  # reads the page into the trace
    # the rules of the rest of the case when it has no such block (what leans on the block, e.g. a press on
    # the confirmation control): called for every case that lacks it, not for one that has it
    validate_absent: Callable[[CaseFacts], list[RuleProblem]] | None = None
    warn: Callable[[E, CaseFacts], list[RuleProblem]] | None = None  # allowed but likely wrong: warnings, not errors
    # before the steps, with the proxy up: starts the block's record in the trace and reads the page after each call
    watch_calls: Callable[[E, Trace], CallWatch] | None = None
    about_writes: Callable[[E], bool] | None = None  # whether the block makes the case one about a write

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

    def expect_field(self) -> tuple[Any, Any]:
        """Its field of the case's ``expect:``: (type, pydantic Field), as ``create_model`` takes it."""
        if self.annotation is not None:
            return self.annotation, self.field
        return self.model | None, Field(default=None, description=self.description or None)


def answerable(value: object, trace: Trace) -> str:
    """For a kind whose evidence every trace that played to the end holds, or whose checker says not_run
    when it is missing (no proxy, no state hook): a stored trace always answers it."""
    return ""


@cache
def module_kinds() -> tuple[Kind[Any], ...]:
    """Every kind: a module of this package (its ``KIND``), those of ``FIRST`` first, the rest by module name.

    A module whose name starts with ``_`` is no kind: it holds what the kinds share (the locator of an
    element, what they judge of a recorded examination)."""
    found: list[Kind[Any]] = []
    names = [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]  # _name: a shared helper
    names.sort(key=lambda n: (n not in FIRST, _rank(n), n))
    for name in names:
        module = importlib.import_module(f"{__name__}.{name}")
        kind = getattr(module, "KIND", None)
        if not isinstance(kind, Kind):
            raise TypeError(f"{module.__name__} is in the package of expectation kinds and has no KIND")
        found.append(kind)
    return tuple(found)


def _rank(name: str) -> int:
    return FIRST.index(name) if name in FIRST else len(FIRST)


def blocks(expect: BaseModel) -> list[tuple[Kind[Any], Any]]:
    """The blocks of a case's ``expect:`` with their kinds (an absent block has nothing to judge)."""
    return [(kind, value) for kind in module_kinds() if (value := getattr(expect, kind.name)) is not None]


def not_reached(trace: Trace, why: str) -> str:
    """Why evidence is missing: "not reached" when the trial stopped before reading it, else ``why``."""
    return f"not reached: the trial stopped first ({short(trace.stopped, 160)})" if trace.stopped else why


def assertion(
    id: str, kind: str, description: str, ok: bool | None, why: str = "", evidence: object = None
) -> Assertion:
    """An assertion of a check: passed or failed, or not_run (``ok`` None) when its evidence is missing."""
    status: Status = "not_run" if ok is None else "passed" if ok else "failed"
    return Assertion(id=id, kind=kind, description=description, status=status, why=why, evidence=evidence)
