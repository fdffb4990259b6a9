"""The options of a run: built once by the command (or the pytest plugin), passed down to every trial as is."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.agents.protocol import Agent
from runner.play.evidence.fixture_store import FixtureStore
from runner.rundir.plan import RunPlan
from runner.suite.browser_context import BrowserContextSettings
from runner.suite.site import SiteConfig

if TYPE_CHECKING:
    from runner.agents.simulated_user import SimulatedUser
    from runner.judge.grader import ModelGrader


@dataclass
class TrialHook:
    """A change to one trial's world that leaves the site untouched (mutation testing).

    ``init_script`` runs in every document after the shim and before the page's
    own scripts; ``proxy`` sees the trial's traffic (``request(flow)`` and
    ``response(flow)``, mitmproxy flows) and may rewrite it.
    """

    init_script: str | None = None
    proxy: Any = None


@dataclass
class RunOptions:
    agent_factory: Callable[[], Agent]  # a fresh agent per trial: the command that runs chooses it
    out_root: Path = Path("traces")
    run_id: str | None = None
    trials: int = 1
    workers: int = 1
    headed: bool = False
    slowmo: float | None = None
    hold_ms: int | None = None
    base_url: str | None = None
    site_config: SiteConfig | None = None
    proxy: bool = True
    network_mode: str = "live"
    live_rules: bool = False  # no catalog file: each trial checks the case's rules against the tools it saw
    # the suite catalog's hints ({route pattern: {tool: {hint: true}}}): each trial holds live tools to them
    catalog_hints: dict[str, Any] | None = None
    # the audit's rule for text that speaks to the agent (runner/audit/trust.py instructions_in), handed down by
    # the command: each registered tool's description is read with it (tools.descriptions); None: not read
    instructions_in: Callable[[str, Iterable[str]], list[str]] | None = None
    chromium: str | None = None
    fixtures: FixtureStore | None = None  # record/replay: where fixtures are kept and read
    breaks: list[str] = field(default_factory=list)  # extra site breaks for every case (tests)
    playwright_trace: str = "off"  # off, on or retain-on-failure (--trace)
    screenshots: str = "only-on-failure"  # on, off or only-on-failure (--screenshot)
    # --resume: play only these planned trials into the existing run directory (its plan stays)
    only_trials: set[str] | None = None
    hooks: dict[str, TrialHook] = field(default_factory=dict)  # case id -> a change to its trials (mutate)
    grader: ModelGrader | None = None  # when rubric criteria are to be judged
    shard: tuple[int, int] | None = None  # (i, n): play only shard i of n of the plan
    durations: dict[str, float] | None = None  # trial id -> ms from an earlier run: balances the shards
    # a selection of the planned trials (pytest's -k, --lf): the plan lists and the run plays only these
    select_trials: set[str] | None = None
    retries: int = 0  # attempts after the first for a trial that could not run for an infrastructure reason
    connect: str | None = None  # a Playwright browser server's ws endpoint (playwright run-server)
    connect_over_cdp: str | None = None  # a running Chromium's DevTools endpoint
    proxy_host: str = "127.0.0.1"  # where the proxy listens (a remote browser must reach it)
    proxy_advertise: str | None = None  # the proxy's host as the browser is told it (default: proxy_host)
    # the external harness playing the agent: {command, source: "--harness" or the suite.yaml, max_seconds}
    harness: dict[str, Any] | None = None
    # the suite's time zone and locale: every browser context is opened with them
    browser_context: BrowserContextSettings = field(default_factory=BrowserContextSettings)
    # plays the user of goal cases (user:), a fresh one per trial; without it a model agent's goal case is not_run
    simulator_factory: Callable[[], SimulatedUser] | None = None
    # the run plan when the command built it already (run.py's plan_of): written as it is, never built again
    plan: RunPlan | None = None
    # a run id whose directory already holds a run: replace that run (--force) instead of refusing
    force: bool = False
