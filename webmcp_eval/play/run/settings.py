"""What a run is handed: its settings (what the user chose, frozen) apart from its state (the plan, the
selection, the live objects and the test seam).

``RunSettings`` is built once by the front end that plays (``run``, ``replay``, ``validate --control``,
``mutate``, the pytest plugin's suite items) and never changed after: a run that needs other settings (the
control run inside ``run --control none``, a replay's recorded origin) gets a copy made with
``dataclasses.replace``. ``RunState`` holds what is not a choice: the plan when it is built already, the
selection of planned trials to play, the objects that keep count as the trials play (the fixture store, the
model grader), what starts the embedded demo site for a run whose settings name no site (the front end's
choice: play/ never imports the site), and ``TrialHooks``, the trial hooks: the seam through which tests and
``mutate`` change trials (not the site hooks, the site's own test endpoints of webmcp_eval/suite/site.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from webmcp_eval.agents.protocol import Agent
from webmcp_eval.play.evidence.fixture_store import FixtureStore
from webmcp_eval.rundir.plan import RunPlan
from webmcp_eval.suite.browser_context import BrowserContextSettings
from webmcp_eval.suite.site import SiteConfig

if TYPE_CHECKING:
    from webmcp_eval.agents.simulated_user import SimulatedUser
    from webmcp_eval.judge.grader import ModelGrader


@dataclass
class TrialHook:
    """A trial hook: a change to one trial's world that leaves the site untouched (mutation testing).

    ``init_script`` runs in every document after the shim and before the page's
    own scripts; ``proxy`` sees the trial's traffic (``request(flow)`` and
    ``response(flow)``, mitmproxy flows) and may rewrite it.
    """

    init_script: str | None = None
    proxy: Any = None


@dataclass(frozen=True)
class TrialHooks:
    """The run's trial hooks, its test seam: changes to its trials that no command line asks for.

    ``breaks`` are site breaks added to every case (tests break the site without editing a case; they are part
    of the plan's hash). ``by_case`` changes the world of a case's trials (tests of the browser context; ``mutate``
    hands each mutant's trial hook to ``OpenRun.play`` instead, one trial at a time).
    """

    breaks: tuple[str, ...] = ()
    by_case: Mapping[str, TrialHook] = field(default_factory=dict)  # case id -> a change to its trials


@dataclass(frozen=True)
class OutputSettings:
    """Where a run goes (--out, --run-id) and whom it may push aside there (--force, --break-lock)."""

    out_root: Path = Path("traces")
    run_id: str | None = None
    # a run id whose directory already holds a run: replace that run (--force) instead of refusing
    force: bool = False
    # take the run directory's lock over whoever holds it (--break-lock: a run of another host that is gone)
    break_lock: bool = False


@dataclass(frozen=True)
class PlanSettings:
    """How much is played and how: trials per case, workers, the shard, retries."""

    trials: int = 1
    workers: int = 1
    shard: tuple[int, int] | None = None  # --shard i/n: a new run's plan holds only shard i of n
    durations: Mapping[str, float] | None = None  # trial id -> ms from an earlier run: balances the shards
    retries: int = 0  # attempts after the first for a trial that could not run for an infrastructure reason


@dataclass(frozen=True)
class BrowserSettings:
    """The browser the trials play in (--chromium, --connect, --connect-over-cdp, --headed, --slowmo, --hold-ms)
    and what each trial keeps of it (--playwright-trace, --screenshot)."""

    headed: bool = False
    slowmo: float | None = None
    hold_ms: int | None = None
    chromium: str | None = None
    connect: str | None = None  # a Playwright browser server's ws endpoint (playwright run-server)
    connect_over_cdp: str | None = None  # a running Chromium's DevTools endpoint
    playwright_trace: str = "off"  # off, on or retain-on-failure (--playwright-trace)
    screenshots: str = "only-on-failure"  # on, off or only-on-failure (--screenshot)


@dataclass(frozen=True)
class NetworkSettings:
    """The counting proxy (--no-proxy, --proxy-host, --proxy-advertise) and the network mode (--network)."""

    proxy: bool = True
    network_mode: str = "live"  # live, record or replay
    proxy_host: str = "127.0.0.1"  # where the proxy listens (a remote browser must reach it)
    proxy_advertise: str | None = None  # the proxy's host as the browser is told it (default: proxy_host)


@dataclass(frozen=True)
class SiteSettings:
    """The site the trials play against, its clock, and what its tools are held to."""

    base_url: str | None = None
    site_config: SiteConfig | None = None  # copied before a run opens: the run never changes the caller's
    # the suite's time zone and locale: every browser context is opened with them
    browser_context: BrowserContextSettings = field(default_factory=BrowserContextSettings)
    live_rules: bool = False  # no catalog file: each trial checks the case's rules against the tools it saw
    # the suite catalog's hints ({route pattern: {tool: {hint: true}}}): each trial holds live tools to them
    catalog_hints: dict[str, dict[str, dict[str, Any]]] | None = None
    # the suite catalog's input schemas and what the server enforces (SuiteCatalog.schema_surface): tools.schemas
    catalog_schemas: dict[str, Any] | None = None
    # each registered tool's description read for text that speaks to the agent (tools.descriptions, by the audit's
    # rule: webmcp_eval/judge/instructions.py); off: not read (a replay, a test's own settings)
    read_instructions: bool = False


GROUPS = {"output": OutputSettings, "plan": PlanSettings, "browser": BrowserSettings, "network": NetworkSettings}
GROUPS |= {"site": SiteSettings}
GROUP_OF = {f.name: group for group, kind in GROUPS.items() for f in fields(kind)}  # a setting's name -> its group


@dataclass(frozen=True, init=False)
class RunSettings:
    """What the user chose for a run (flags, suite.yaml, the front end's defaults), in the groups it feeds:
    frozen once built.

    Built from whole groups (``run`` hands on its request's), or from settings named one by one
    (``RunSettings(agent, trials=2, base_url=url)``: each goes into its group), or both: a named setting
    wins over its group's. ``dataclasses.replace`` takes either as well.
    """

    agent_factory: Callable[[], Agent]  # a fresh agent per trial: the command that runs chooses it
    output: OutputSettings
    plan: PlanSettings
    browser: BrowserSettings
    network: NetworkSettings
    site: SiteSettings
    # the external harness playing the agent: {command, source: "--harness" or the suite.yaml, max_seconds}
    harness: Mapping[str, Any] | None
    # plays the user of goal cases (user:), a fresh one per trial; without it a model agent's goal case is not_run
    simulator_factory: Callable[[], SimulatedUser] | None

    def __init__(
        self,
        agent_factory: Callable[[], Agent],
        *,
        harness: Mapping[str, Any] | None = None,
        simulator_factory: Callable[[], SimulatedUser] | None = None,
        **given: Any,
    ) -> None:
        unknown = sorted(set(given) - set(GROUPS) - set(GROUP_OF))
        if unknown:
            raise TypeError(f"RunSettings() got unexpected keyword argument(s) {', '.join(unknown)}")
        for group, kind in GROUPS.items():
            named = {name: value for name, value in given.items() if GROUP_OF.get(name) == group}
            object.__setattr__(self, group, replace(given.get(group) or kind(), **named))
        object.__setattr__(self, "agent_factory", agent_factory)
        object.__setattr__(self, "harness", harness)
        object.__setattr__(self, "simulator_factory", simulator_factory)


@dataclass(frozen=True)
class RunState:
    """What a run is handed that is not a choice: built once by the front end, like the settings.

    The selection is the one word for a subset of the planned trials: a new run's plan lists only the selection
    (pytest's ``-k``, ``--lf``); a resumed run keeps its whole plan and plays only the selection (its planned
    trials without a trace). A shard is a selection too, made by ``plan_of`` from ``--shard``.
    """

    # the run plan when the front end built it already (run's plan_of, or the resumed run's): written as it is
    plan: RunPlan | None = None
    selection: frozenset[str] | None = None  # the planned trials to play (trial ids); None: every planned trial
    resuming: bool = False  # --resume: the run directory holds this run already; its plan stays, nothing is claimed
    run_dir: Path | None = None  # --resume: the run directory played into (its name need not be the run id)
    fixtures: FixtureStore | None = None  # record/replay: where fixtures are kept and read; it counts what changed
    grader: ModelGrader | None = None  # when rubric criteria are to be judged; it counts its calls and costs
    # starts the embedded demo site (test mode) and yields its config, for settings that name no site (no base
    # URL, no site config); None: such a run is refused (webmcp_eval/evaluation/demo_site.py gives the one to pass)
    demo_site: Callable[[], AbstractContextManager[SiteConfig]] | None = None
    trial_hooks: TrialHooks = field(default_factory=TrialHooks)


def surface_checks(hints: dict[str, Any] | None, schemas: dict[str, Any] | None = None) -> dict[str, Any]:
    """The settings of a trial's built-in surface checks, the same for every front end that plays a suite (``run``,
    ``validate --control``, ``mutate``, the pytest plugin's suite items): the suite catalog's hints, which each trial
    holds the live tools to (``calls.annotations``; ``SuiteCatalog.annotations``, None: no catalog or no hints), its
    input schemas with what the server enforces (``tools.schemas``; ``SuiteCatalog.schema_surface``, None: no
    catalog), and the descriptions read for orders to the agent (``tools.descriptions``)."""
    return {"catalog_hints": hints, "catalog_schemas": schemas, "read_instructions": True}
