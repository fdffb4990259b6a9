"""Benchmark (not a test): what the runner costs per trial, in one run and one table.

For each site (the demo site, and the static tea shop served by Python's
http.server under /demo/) it plays the site's cases with the reference agent:

  bare    — a plain Playwright loop: fresh context, go to the start route, the
            case's navigations, reloads and clicks, and before each planned
            call a wait for its tool (the shop registers some late), the same
            calls through page.webmcp; nothing recorded;
  runner  — webmcp-eval without the proxy;
  full    — webmcp-eval with the proxy (the default, live);
  replay  — webmcp-eval answering from fixtures recorded just before (untimed).

The modes take turns round by round (bare, runner, full, replay, bare, ...),
so a machine that slows down mid-run slows them all alike. Each row gives the
median seconds per trial and its ratio to the bare loop of the same site.

Then, on the demo site, the bare loop played --trials times over (its wall
time is the floor a -j 1 run is held against), and a whole run of every case x
--trials with -j 1 and with -j 2 (the default run: proxy, live): wall seconds,
trials per second, the whole run's wall time per trial against the bare loop's
(means, where the table above gives medians), the -j 2 / -j 1 throughput
ratio, and the peak memory of the whole run
(this process with the runner, the proxy and the sites, plus the browser
and driver processes: the sum of their proportional set sizes, sampled).

Last, the median of each phase of a trial (the traces' own timings) for the
full mode. The load average is printed beside every table: on a shared
machine a figure means little without it.

Usage: .venv/bin/python bench/runner_overhead.py [--rounds N] [--trials T] [--site demo|shop|both]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from static_server import CASES as SHOP_CASES  # noqa: E402
from static_server import static_site  # noqa: E402

from runner.agents.reference import ReferenceAgent  # noqa: E402
from runner.play.browser import launch  # noqa: E402
from runner.play.fixture_store import FixtureStore  # noqa: E402
from runner.play.locate import locate  # noqa: E402
from runner.play.run import RunOptions, run_suite  # noqa: E402
from runner.suite.case import ClickAction, NavigateAction, ReloadAction, UserStep  # noqa: E402
from runner.suite.loader import LoadedCase, load_cases  # noqa: E402
from runner.suite.matchers import MISSING, resolve, substitute  # noqa: E402
from runner.suite.site import SiteConfig, demo_site_config  # noqa: E402
from site_under_test.server import SiteServer  # noqa: E402

PHASES = ("reset_ms", "context_ms", "goto_ms", "tools_ms", "observe_ms", "state_after_ms")


@dataclass
class Site:
    name: str
    cases: list[LoadedCase]
    config: SiteConfig
    reset: bool  # the demo site's world reset (the bare loop does it too)
    times: dict[str, list[float]] = field(default_factory=dict)
    phases: dict[str, list[float]] = field(default_factory=dict)


def load() -> str:
    return "load " + " ".join(f"{x:.1f}" for x in os.getloadavg())


# -- the bare loop ----------------------------------------------------------------


async def _wait_for_tool(page: Any, name: str, timeout_s: float = 5) -> None:
    """Until the tool a planned call needs is registered (the shop registers some late)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if name in {t["name"] for t in await page.webmcp.tools()}:
                return
        except Exception:
            pass
        await asyncio.sleep(0.02)


async def _bare_action(page: Any, site: Site, step: Any) -> None:
    """What the person does in the case that changes the page; the site's test hooks are left out."""
    if isinstance(step, NavigateAction):
        await page.goto(site.config.url_for(step.to))
    elif isinstance(step, ReloadAction):
        await page.reload()
    elif isinstance(step, ClickAction):
        for _ in range(step.times):
            await locate(page, step.target).first.click()


async def bare_loop(site: Site, repeat: int = 1) -> list[float]:
    """Per-trial seconds for the plain Playwright equivalent of each case's plan (every case, repeat times)."""
    base_url = site.config.base_url
    times = []
    async with async_playwright() as p:
        browser, _ = await launch(p.chromium)
        for lc in [lc for _ in range(repeat) for lc in site.cases]:
            start = time.perf_counter()
            context = await browser.new_context(base_url=base_url)
            page = await context.new_page()
            if site.reset:
                world = f"bare-{lc.case.id}"
                await context.add_cookies([{"name": "wmcp_world", "value": world, "url": base_url}])
                await page.request.post(site.config.url_for("/__test__/reset"), data={"world": world})
            await page.goto(site.config.url_for(lc.case.start_route))
            captures: dict = {}
            for step in lc.case.steps:
                if not isinstance(step, UserStep):
                    with contextlib.suppress(Exception):  # as a failed call, a failed action is no figure
                        await _bare_action(page, site, step)
                    continue
                for planned in step.plan:
                    await _wait_for_tool(page, planned.call)
                    try:
                        result = await page.webmcp.call_tool(planned.call, substitute(planned.args, captures))
                    except Exception:
                        result = None
                    for name, path in planned.capture.items():
                        value = resolve({"result": result}, path)
                        if value is not MISSING:
                            captures[name] = value
            await context.close()
            times.append(time.perf_counter() - start)
        await browser.close()
    return times


# -- the runner -------------------------------------------------------------------


async def runner_loop(site: Site, **options: Any) -> list[Any]:
    with tempfile.TemporaryDirectory() as out:
        run = RunOptions(
            ReferenceAgent, out_root=Path(out), run_id="bench", base_url=site.config.base_url, site_config=site.config
        )
        for key, value in options.items():
            setattr(run, key, value)
        return (await run_suite(site.cases, run)).traces


def play_modes(site: Site, rounds: int) -> None:
    for _ in range(rounds):
        site.times.setdefault("bare", []).extend(asyncio.run(bare_loop(site)))
        for mode, proxy in (("runner", False), ("full", True)):
            traces = asyncio.run(runner_loop(site, proxy=proxy))
            site.times.setdefault(mode, []).extend(t.duration_ms / 1000 for t in traces)
            if mode == "full":
                for phase in PHASES:
                    site.phases.setdefault(phase, []).extend(t.timings.get(phase, 0.0) for t in traces)
        with tempfile.TemporaryDirectory() as fixtures:
            store = Path(fixtures)
            asyncio.run(runner_loop(site, network_mode="record", fixtures=FixtureStore(store, "record")))
            replay = FixtureStore(store, "replay")
            traces = asyncio.run(runner_loop(site, network_mode="replay", fixtures=replay))
            site.times.setdefault("replay", []).extend(t.duration_ms / 1000 for t in traces)


def print_modes(site: Site, loads: tuple[str, str]) -> None:
    bare = statistics.median(site.times["bare"])
    print(f"\n{site.name}: {len(site.cases)} cases, median per trial ({loads[0]} -> {loads[1]})")
    print(f"{'mode':<8} {'trials':>6} {'s/trial':>8} {'trials/s':>9} {'x bare':>7}")
    for mode, values in site.times.items():
        med = statistics.median(values)
        print(f"{mode:<8} {len(values):>6} {med:>8.3f} {1 / med:>9.2f} {med / bare:>7.2f}")
    full, runner = statistics.median(site.times["full"]), statistics.median(site.times["runner"])
    print(f"the proxy's own cost: full / runner = {full / runner:.2f}")


def print_phases(site: Site) -> None:
    row = "  ".join(f"{phase.removesuffix('_ms')} {statistics.median(v):.0f}" for phase, v in site.phases.items())
    print(f"{site.name} phases of a full trial, median ms: {row}")


# -- throughput and memory --------------------------------------------------------


def _tree(pid: int) -> list[int]:
    """pid and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


@contextmanager
def peak_memory() -> Iterator[dict[str, float]]:
    """Samples the whole process tree's proportional set size every 0.2 s; yields {'peak_mb': ...}."""
    result = {"peak_mb": 0.0}
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            total = sum(_pss_kb(pid) for pid in _tree(os.getpid())) / 1024
            result["peak_mb"] = max(result["peak_mb"], total)
            stop.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield result
    finally:
        stop.set()
        sampler.join()


RUNS = (("-j 1", 1), ("-j 2", 2))  # (label, workers)


def throughput(site: Site, trials: int, rounds: int) -> None:
    walls: dict[str, list[float]] = {label: [] for label, _ in RUNS}
    peaks: dict[str, float] = dict.fromkeys(walls, 0.0)
    verdicts: set[str] = set()
    before = load()
    bare: list[float] = []
    for _ in range(rounds):
        started = time.perf_counter()  # the bare loop, as many trials one after another: the floor of -j 1
        asyncio.run(bare_loop(site, repeat=trials))
        bare.append(time.perf_counter() - started)
        for label, workers in RUNS:
            with peak_memory() as memory:
                started = time.perf_counter()
                traces = asyncio.run(runner_loop(site, trials=trials, workers=workers))
                walls[label].append(time.perf_counter() - started)
            peaks[label] = max(peaks[label], memory["peak_mb"])
            verdicts |= {t.verdict for t in traces}
    count = len(site.cases) * trials
    print(f"\n{site.name}: {len(site.cases)} cases x {trials} trials = {count} per run ({before} -> {load()})")
    print(f"{'run':<16} {'wall s':>7} {'trials/s':>9} {'peak MB':>8}")
    wall = {label: statistics.median(values) for label, values in walls.items()}
    floor = statistics.median(bare)
    print(f"{'bare loop':<16} {floor:>7.1f} {count / floor:>9.2f} {'':>8}")
    for label in walls:
        print(f"{label:<16} {wall[label]:>7.1f} {count / wall[label]:>9.2f} {peaks[label]:>8.0f}")
    print(f"wall per trial, whole run / bare loop: -j 1 {wall['-j 1'] / floor:.2f}x")
    print(f"-j 2 / -j 1 throughput: {wall['-j 1'] / wall['-j 2']:.2f}x   verdicts: {', '.join(sorted(verdicts))}")


# -- main -------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1, help="rounds of every mode (default 1)")
    parser.add_argument("--trials", type=int, default=2, help="trials per case in the -j runs (default 2)")
    parser.add_argument("--site", choices=("demo", "shop", "both"), default="both")
    parser.add_argument("--no-throughput", action="store_true", help="skip the -j 1 / -j 2 runs")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs, {load()}")

    if args.site in ("demo", "both"):
        cases, problems = load_cases([ROOT / "cases"])
        assert not problems, problems
        with SiteServer(test_mode=True) as server:
            demo = Site("demo site", cases, demo_site_config(server.url), reset=True)
            before = load()
            play_modes(demo, args.rounds)
            print_modes(demo, (before, load()))
            print_phases(demo)
            if not args.no_throughput:
                throughput(demo, args.trials, args.rounds)
    if args.site in ("shop", "both"):
        cases, problems = load_cases([SHOP_CASES])
        assert not problems, problems
        with tempfile.TemporaryDirectory() as tmp, static_site(Path(tmp)) as shop:
            site = Site("static shop under /demo/", cases, shop.config(), reset=False)
            before = load()
            play_modes(site, args.rounds)
            print_modes(site, (before, load()))
            print_phases(site)


if __name__ == "__main__":
    main()
