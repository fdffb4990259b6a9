"""Mutation testing of a suite against a site: ``webmcp-eval mutate``.

Does the suite notice when the site is wrong? Each mutant is one realistic
site bug, applied without touching the site: in the page (an init script that
wraps ``registerTool``/``execute`` or changes the DOM, ``webmcp_eval/mutation/mutate.js``) or
in the proxy (a rewriter of the site's answers, ``webmcp_eval/proxies/mutations.py``).

1. Clean runs: every case is played unmutated, twice, with an observer in the
   proxy. What a case touches (tools, results, routes, requests, controls)
   decides which mutants it can see; whatever differs between its two clean
   runs is noise and never counts as a difference.
2. Each mutant is played on the cases that can see it, one case after
   another, until a case kills it (fails or cannot run) — like mutmut or
   Stryker. Every trial is played in one run as soon as it is decided, on
   the next free worker: no round waits for its slowest trial.
3. A mutant no case failed is *equivalent* when no trace differed from its
   clean runs in anything observable (the mutant changed nothing a check could
   see), else it *survived*: those cases saw the bug and passed. Mutants with
   no case that touches their target are *unseen*.

The score is killed / (killed + survived).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from webmcp_eval.agents.reference import ReferenceAgent
from webmcp_eval.mutation.evidence import CleanRun, differences, observable
from webmcp_eval.mutation.generate import generate
from webmcp_eval.mutation.mutants import OPERATORS, CaseRun, Mutant
from webmcp_eval.play.run.run import OpenRun, open_run
from webmcp_eval.play.run.settings import RunSettings, TrialHook, surface_checks
from webmcp_eval.proxies import mutations as proxy_ops
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.suite.browser_context import BrowserContextSettings
from webmcp_eval.suite.loader import LoadedCase
from webmcp_eval.suite.site import SiteConfig, demo_site_config
from webmcp_eval.trace import Trace, write_atomic

if TYPE_CHECKING:
    from rich.console import Console


# ---- running ---------------------------------------------------------------------------


@dataclass
class MutateOptions:
    out_root: Path = Path("traces")
    run_id: str = "mutate"
    workers: int = 2
    operators: list[str] | None = None  # None: all
    base_url: str | None = None
    site_config: SiteConfig | None = None
    chromium: str | None = None
    catalog_tools: set[str] = field(default_factory=set)
    catalog_hints: dict[str, Any] | None = None  # the suite catalog's hints: every trial holds the tools to them
    catalog_schemas: dict[str, Any] | None = None  # its input schemas and what the server enforces (tools.schemas)
    clean_runs: int = 2
    confirm: str = "doubtful"  # which failing cases are played again before they kill: doubtful, all or none
    browser_context: BrowserContextSettings = field(default_factory=BrowserContextSettings)  # the suite's zone, locale


@dataclass
class MutationResult:
    mutants: list[Mutant]
    clean_failed: dict[str, str]  # case -> why it was left out
    out_dir: Path
    clean_flaky: dict[str, str] = field(default_factory=dict)  # case -> its failure before it passed

    def count(self, status: str) -> int:
        return sum(1 for m in self.mutants if m.status == status)

    @property
    def run(self) -> int:
        return self.count("killed") + self.count("survived")

    @property
    def score(self) -> float | None:
        return self.count("killed") / self.run if self.run else None

    def to_json(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "killed": self.count("killed"),
            "survived": self.count("survived"),
            "run": self.run,
            "equivalent": self.count("equivalent"),
            "unseen": self.count("unseen"),
            "clean_failed": self.clean_failed,
            "clean_flaky": self.clean_flaky,
            "operators": {name: {"side": op.side, "what": op.what} for name, op in OPERATORS.items()},
            "mutants": [asdict(m) for m in self.mutants],
        }


def _renamed(lc: LoadedCase, suffix: str) -> LoadedCase:
    return LoadedCase(lc.case.model_copy(update={"id": f"{lc.case.id}-{suffix}"}), lc.file, lc.lines)


class _Trials:
    """One open run for the whole mutation: each trial is played as soon as it is decided, on the next free
    worker. No round waits for its slowest trial and the browser, proxy and site start once."""

    def __init__(self, run: OpenRun, workers: int):
        self.run = run
        self.free: asyncio.Queue[int] = asyncio.Queue()  # worker numbers (a remote browser is a worker's own)
        for number in range(max(1, workers)):
            self.free.put_nowait(number)

    async def play(self, lc: LoadedCase, suffix: str, hook: TrialHook) -> Trace:
        """The case, renamed ``<case>-<suffix>``, once with the trial hook; waits for a free worker (first come)."""
        case = _renamed(lc, suffix)
        worker = await self.free.get()
        try:
            return await self.run.play(case, 0, worker, hook)
        finally:
            self.free.put_nowait(worker)


@contextlib.asynccontextmanager
async def _open(options: MutateOptions, run_id: str, config: SiteConfig) -> AsyncIterator[_Trials]:
    settings = RunSettings(
        agent_factory=ReferenceAgent,  # a mutant is killed by the cases' own plans: deterministic evidence
        out_root=options.out_root / options.run_id,
        run_id=run_id,
        workers=options.workers,
        site_config=config,
        chromium=options.chromium,
        screenshots="off",  # a killed mutant's evidence is its trace; nobody looks at its screen
        browser_context=options.browser_context,
        # the catalog's hints and schemas and the audit's rule, as every run has them
        **surface_checks(options.catalog_hints, options.catalog_schemas),
    )
    async with open_run([], settings, planned=False) as run:
        yield _Trials(run, options.workers)


async def _play(
    pairs: list[tuple[LoadedCase, str, TrialHook]], options: MutateOptions, run_id: str, config: SiteConfig
) -> dict[str, Trace]:
    """Each (case, job suffix, trial hook) once, in one run; traces by job id."""
    async with _open(options, run_id, config) as trials:
        traces = await asyncio.gather(*(trials.play(lc, suffix, hook) for lc, suffix, hook in pairs))
    return {t.case_id: t for t in traces}


async def clean_runs(cases: list[LoadedCase], trials: _Trials, runs: int) -> list[CleanRun]:
    """``runs`` passing runs of every case; a case that fails is played again (twice at most).

    A case that cannot pass unmutated is left out (its mutants would die of the case, not the bug).
    """
    wanted = max(1, runs)
    passing: dict[str, list[Trace]] = {lc.case.id: [] for lc in cases}
    failing: dict[str, Trace] = {}
    observers: dict[str, proxy_ops.Observer] = {}

    async def play(lc: LoadedCase, attempt: int) -> None:
        observer = proxy_ops.Observer()
        trace = await trials.play(lc, f"B{attempt}", TrialHook(proxy=observer))
        if trace.verdict == "passed":
            passing[lc.case.id].append(trace)
            observers.setdefault(lc.case.id, observer)
        else:
            failing[lc.case.id] = trace

    # the wanted runs at once (they are independent), in attempt order: the first passing one is the case's clean run
    await asyncio.gather(*(play(lc, attempt) for attempt in range(1, wanted + 1) for lc in cases))
    for lc in cases:
        passing[lc.case.id].sort(key=lambda t: t.case_id)
    for attempt in (wanted + 1, wanted + 2):
        todo = [lc for lc in cases if len(passing[lc.case.id]) < wanted]
        if not todo or len(todo) == len(cases):  # every case failing is the site or the machine: stop
            break
        await asyncio.gather(*(play(lc, attempt) for lc in todo))
    out = []
    for lc in cases:
        runs_of = passing[lc.case.id]
        if not runs_of:
            out.append(CleanRun(lc, failing[lc.case.id], [], set()))
            continue
        noise: set[str] = set()
        for other in runs_of[1:]:
            noise |= set(differences(observable(runs_of[0]), observable(other), set()))
        flaky = f"failed once unmutated ({failing[lc.case.id].verdict_reason})" if lc.case.id in failing else None
        out.append(CleanRun(lc, runs_of[0], observers[lc.case.id].exchanges, noise, flaky))
    return out


async def mutate(cases: list[LoadedCase], options: MutateOptions, progress: Callable[[str], None]) -> MutationResult:
    out_dir = options.out_root / options.run_id
    out_dir.mkdir(parents=True, exist_ok=True)
    with _Site(options) as config:
        async with _open(options, "play", config) as trials:
            progress(f"clean runs: {len(cases)} case(s) × {options.clean_runs}")
            base = await clean_runs(cases, trials, options.clean_runs)
            failed = {b.id: b.trace.verdict_reason for b in base if b.trace.verdict != "passed"}
            usable = [b for b in base if b.id not in failed]
            mutants = generate(usable, options.catalog_tools)
            if options.operators:
                mutants = [m for m in mutants if m.operator in options.operators]
            pending = [m for m in mutants if m.status == "pending"]
            progress(f"{len(mutants)} mutant(s), {len(pending)} with cases that can see them")
            hunt = _Hunt(trials, {b.id: b for b in usable}, options.confirm, len(pending), progress)
            await asyncio.gather(*(hunt.mutant(m) for m in pending))
    for m in mutants:
        if m.status == "pending":
            m.status = "survived" if any(r.differs for r in m.runs) else "equivalent"
    result = MutationResult(mutants, failed, out_dir, {b.id: b.flaky for b in usable if b.flaky})
    write_atomic(RunDir(out_dir).mutation, json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n")
    return result


@dataclass
class _Hunt:
    """Each mutant on the cases that can see it, one case after another, until one kills it."""

    trials: _Trials
    by_id: dict[str, CleanRun]
    confirm: str  # doubtful, all or none: which failing cases are played again before they kill
    total: int
    progress: Callable[[str], None]
    done: int = 0

    async def mutant(self, m: Mutant) -> None:
        for case_id in m.cases:
            b = self.by_id[case_id]
            hook = m.hook()
            trace = await self.trials.play(b.case, m.id, hook)
            if trace.verdict != "passed" and self._confirms(b, trace):
                again = m.hook()
                second = await self.trials.play(b.case, f"{m.id}-again", again)
                if second.verdict == "passed":  # a failure that does not repeat is the machine, not the mutant
                    _judge(m, b, second, again, flaky=f"{trace.verdict}: {trace.verdict_reason}")
                    continue
            _judge(m, b, trace, hook)
            if m.status == "killed":
                break
        self.done += 1
        verdict = "killed by " + m.runs[-1].case if m.status == "killed" else f"passed {len(m.runs)} case(s)"
        self.progress(f"[{self.done}/{self.total}] {m.id} {m.operator} {m.target}: {verdict}")

    def _confirms(self, b: CleanRun, trace: Trace) -> bool:
        """Whether a failing case is played again before it kills (docs/suite-validity.md says why).

        A failure is doubtful when the trial could not run (the machine or the site, as often as the
        mutant), when the case failed once unmutated too, or when nothing a check reads differs from
        the case's passing clean runs: then nothing in the trace ties the failure to the mutant.
        """
        if self.confirm != "doubtful":
            return self.confirm == "all"
        changed = [key for key in differences(b.observed, observable(trace), b.noise) if key != "verdict"]
        return trace.verdict == "not_run" or b.flaky is not None or not changed


def _judge(m: Mutant, b: CleanRun, trace: Trace, hook: TrialHook, flaky: str | None = None) -> None:
    diff = differences(b.observed, observable(trace), b.noise)
    bad = [f"{a.id}: {a.why}" for a in trace.assertions if a.status != "passed"]
    if trace.verdict == "not_run" and not bad:
        bad = [trace.verdict_reason]
    fired = getattr(hook.proxy, "fired", None)
    where = RunDir.relative_trace(trace.trial_id, trace.run_id)
    m.runs.append(CaseRun(b.id, trace.verdict, diff, bad, fired, where, flaky))
    if trace.verdict != "passed":
        m.status = "killed"


class _Site:
    """The embedded demo site (test mode), started once for every round; or the given one."""

    def __init__(self, options: MutateOptions):
        self.options = options
        self.server: Any = None

    def __enter__(self) -> SiteConfig:
        if self.options.site_config or self.options.base_url:
            config = self.options.site_config or SiteConfig(base_url=self.options.base_url or "")
            if self.options.base_url:
                config.base_url = self.options.base_url
            return config
        from webmcp_eval.site_under_test.server import SiteServer

        self.server = SiteServer(test_mode=True)
        self.server.__enter__()
        return demo_site_config(self.server.url)

    def __exit__(self, *exc: object) -> None:
        if self.server is not None:
            self.server.__exit__(*exc)


# ---- the report --------------------------------------------------------------------------


def print_report(result: MutationResult, console: Console) -> None:
    from rich.table import Table

    table = Table(title="mutants")
    for col in ("mutant", "operator", "target", "status", "cases"):
        table.add_column(col)
    style = {"killed": "green", "survived": "bold red", "equivalent": "cyan", "unseen": "yellow"}
    for m in sorted(
        result.mutants, key=lambda m: (["survived", "killed", "equivalent", "unseen"].index(m.status), m.id)
    ):
        table.add_row(m.id, m.operator, m.target, f"[{style.get(m.status, '')}]{m.status}[/]", _cases_cell(m))
    console.print(table)
    for case, why in result.clean_failed.items():
        console.print(f"[yellow]left out[/] {case}: it does not pass unmutated ({why})", highlight=False)
    for case, why in result.clean_flaky.items():
        console.print(f"[yellow]flaky[/] {case}: {why}", markup=False, highlight=False)
    survivors = [m for m in result.mutants if m.status == "survived"]
    if survivors:
        console.print("[bold]survivors: the cases saw the bug and passed[/]")
        for m in survivors:
            for r in m.runs:
                if r.differs:
                    console.print(
                        f"  {m.id} {m.operator} {m.target}: {r.case} passed although its "
                        f"{', '.join(r.differs)} differed from the clean runs ({r.trace})",
                        markup=False,
                        highlight=False,
                    )
    console.print(summary_line(result), highlight=False)


def _cases_cell(m: Mutant) -> str:
    if m.status == "killed":
        return "killed by " + ", ".join(r.case for r in m.runs if r.verdict != "passed")
    if m.status == "survived":
        return "passed in " + ", ".join(r.case for r in m.runs if r.differs)
    if m.status == "equivalent":
        return "no difference in " + ", ".join(r.case for r in m.runs)
    return "no case touches it"


def summary_line(result: MutationResult) -> str:
    score = f"{result.score:.1%}" if result.score is not None else "n/a"
    return (
        f"mutation score {score} ({result.count('killed')} killed / {result.run} run) · "
        f"{result.count('survived')} survived · {result.count('equivalent')} equivalent · "
        f"{result.count('unseen')} unseen (no case touches them) · {RunDir(result.out_dir).mutation}"
    )
