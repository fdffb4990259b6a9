"""replay: recorded traces played again offline (or live), their tool results diffed."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from webmcp_eval.errors import EXIT_OK, InvalidInput, Outcome
from webmcp_eval.evaluation.output import console
from webmcp_eval.evaluation.replay_trace import ReplayOutcome, TraceAgent, case_of, result_diffs
from webmcp_eval.evaluation.reporting import exit_for
from webmcp_eval.play.evidence.fixture_store import FixtureStore
from webmcp_eval.play.run.run import run_suite
from webmcp_eval.play.run.settings import RunSettings, RunState
from webmcp_eval.report.writers import VERDICT_STYLE
from webmcp_eval.suite.browser_context import DEFAULT_LOCALE, DEFAULT_TIMEZONE, BrowserContextSettings
from webmcp_eval.trace import Trace, read_trace


@dataclass(frozen=True)
class ReplayRequest:
    """replay: recorded trace files, played again offline against their fixtures or, with ``live``, a deployment."""

    traces: tuple[str, ...]
    fixtures: str | None = None  # default: the fixtures/ beside the trace's trials/
    live: bool = False
    base_url: str | None = None
    out: str = "traces/replays"
    chromium: str | None = None


def replay_command(request: ReplayRequest) -> Outcome:
    """Re-run recorded traces against their fixtures (offline) or a live deployment, and compare."""
    if request.live and not request.base_url:
        raise InvalidInput("--live needs --base-url URL (the deployment to compare with)")
    out = Path(request.out)
    worst = EXIT_OK
    for path in map(Path, request.traces):
        try:
            recorded = read_trace(path)
            loaded = case_of(recorded, path)
        except (OSError, ValueError) as err:
            why = str(err).removeprefix(f"{path}: ")  # read_trace names the file already
            raise InvalidInput(f"{path}: cannot replay: {why}") from None
        fixtures_dir = Path(request.fixtures) if request.fixtures else path.resolve().parent.parent / "fixtures"
        fixtures = None if request.live else FixtureStore(fixtures_dir, "replay", max_age_days=None)
        if fixtures is not None and not fixtures.path_for(recorded.case_id).is_file():
            raise InvalidInput(f"{path}: no fixture at {fixtures.path_for(recorded.case_id)} (use --fixtures DIR)")
        settings = RunSettings(
            out_root=out,
            run_id=recorded.trial_id,
            base_url=request.base_url if request.live else None,
            network_mode="live" if request.live else "replay",
            agent_factory=partial(TraceAgent, recorded),
            chromium=request.chromium,
            browser_context=_recorded_context(recorded),
            force=True,  # replaying a trace again replaces its last replay
        )
        (replayed,) = asyncio.run(run_suite([loaded], settings, RunState(fixtures=fixtures))).traces
        outcome = ReplayOutcome(recorded, replayed, result_diffs(recorded, replayed))
        written = outcome.write(out)
        style = VERDICT_STYLE[replayed.verdict]
        same = "same as recorded" if outcome.same_verdict else f"recorded: {recorded.verdict}"
        console.print(f"[{style}]{replayed.verdict}[/] {recorded.trial_id} ({same}) → {written}", highlight=False)
        if outcome.diffs:
            console.print("  tool results differ from the recording:")
            for line in outcome.diffs:
                console.print(f"  {line}", markup=False, highlight=False)
        else:
            console.print(f"  all {len(replayed.calls)} tool result(s) as recorded", highlight=False)
        if replayed.verdict != "passed":
            console.print(f"  why: {replayed.verdict_reason}", markup=False, highlight=False)
        worst = max(worst, exit_for([replayed]))
    return Outcome(worst)


def _recorded_context(recorded: Trace) -> BrowserContextSettings:
    """The time zone and locale a recorded trial was played with (the defaults for traces older than that)."""
    return BrowserContextSettings(recorded.timezone_id or DEFAULT_TIMEZONE, recorded.locale or DEFAULT_LOCALE)
