"""Benchmark (not a test): what the runner costs per trial, in one run and one table.

For each site (the demo site, and the static tea shop served by Python's
http.server under /demo/) it plays the site's cases with the reference agent:

  bare    — a plain Playwright loop: fresh context, go to the start route, the
            case's navigations, reloads and clicks, and before each planned
            call a wait for its tool (the shop registers some late), the same
            calls through page.webmcp; nothing recorded;
  runner  — webmcp-eval without the proxy;
  full    — webmcp-eval with the proxy (live) and --screenshot on: every piece of evidence;
  lean    — the same with --screenshot only-on-failure, the default (every trial here passes: no screenshot);
  chromium — lean in the full Chromium, where headless runs (this bare loop's too) take Debian's
            chromium-headless-shell, being installed;
  replay  — webmcp-eval answering from fixtures recorded just before (untimed).

The modes take turns round by round (bare, runner, full, lean, replay, bare, ...),
so a machine that slows down mid-run slows them all alike. Each row gives the
median seconds per trial and its ratio to the bare loop of the same site, and
the CPU seconds per trial of the whole mode: the browser with Playwright's
driver, plus this process (the runner, the proxy and the sites, which run
here as threads). CPU time is the steadier figure on a busy machine, and on a
machine whose cores are all busy it is what wall time follows.

Then, on the demo site, whole runs of every case x --trials: the bare loop
with one worker and with two sharing one browser (what this machine gives a
second worker with no runner at all), and the runner (proxy, live) with -j 1
and -j 2: wall seconds, trials per second, CPU seconds per trial, cores kept
busy, and the peak memory of the whole run (this process with the runner, the
proxy and the sites, plus the browser and driver processes: the sum of their
proportional set sizes, sampled). The runner's wall time per trial is given
against the bare loop's with as many workers, and each -j 2 / -j 1 ratio.

Then the median of each phase of a trial (the traces' own timings, and the steps summed) for the
full and lean modes, and one untimed pass of bare, full and lean with the driver's
protocol log on (bench/traffic.py): per trial, the Playwright protocol messages
between this process and the driver, the DevTools messages between the driver
and Chromium (and the commonest events), each per phase of the full trial; and
the CPU seconds of each process (the browser, its renderers, GPU and utility
processes, the driver, this one). Those counts do not change with the load.
The load average is printed beside every table: on a shared machine a figure
means little without it.

Usage: .venv/bin/python bench/runner_overhead.py [--rounds N] [--trials T] [--site demo|shop|both]
       [--no-throughput] [--no-traffic] [--cases N] [--jobs 1,2]
       .venv/bin/python bench/runner_overhead.py --ci [--cases N]

--ci is CI's short run (.ci/run, after the tests; never a gate): the bare loop and the lean runner
over the first 6 cases of the demo site (or --cases N), one round, and one line of lean/bare
ratios, wall and CPU, with the load, so that a regression shows in every log.

The whole-run figure of docs/speed.md (20 cases x 10 trials at -j 2, beside the bare loop):
       .venv/bin/python bench/runner_overhead.py --site demo --cases 20 --trials 10 --jobs 2 --no-traffic
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
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
from traffic import PHASES as TRAFFIC_PHASES  # noqa: E402
from traffic import (  # noqa: E402
    Traffic,
    cpu_by_process,
    devtools_log,
    driver_messages,
    per_phase,
    phase_marks,
    phase_of,
)

from webmcp_eval.agents.reference import ReferenceAgent  # noqa: E402
from webmcp_eval.matchers import MISSING, resolve, substitute  # noqa: E402
from webmcp_eval.play.browser.browser import find_chromium, launch  # noqa: E402
from webmcp_eval.play.evidence.fixture_store import FixtureStore  # noqa: E402
from webmcp_eval.play.page.locate import locate  # noqa: E402
from webmcp_eval.play.run.run import run_suite  # noqa: E402
from webmcp_eval.play.run.settings import RunSettings, RunState  # noqa: E402
from webmcp_eval.site_under_test.server import SiteServer  # noqa: E402
from webmcp_eval.suite.case import ClickAction, NavigateAction, ReloadAction, UserStep  # noqa: E402
from webmcp_eval.suite.loader import LoadedCase, load_cases  # noqa: E402
from webmcp_eval.suite.site import SiteConfig, demo_site_config  # noqa: E402

PHASES = ("reset_ms", "context_ms", "goto_ms", "tools_ms", "observe_ms", "state_after_ms", "press_ms")
STEPS = "steps_ms"  # the trial's steps (each with its settle), summed: no phase timer covers them


@dataclass
class Site:
    name: str
    cases: list[LoadedCase]
    config: SiteConfig
    reset: bool  # the demo site's world reset (the bare loop does it too)
    times: dict[str, list[float]] = field(default_factory=dict)
    phases: dict[str, dict[str, list[float]]] = field(default_factory=dict)  # mode -> phase -> ms of each trial
    cpu: dict[str, list[Cpu]] = field(default_factory=dict)  # mode -> CPU of each of its runs


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


async def _bare_trial(browser: Any, site: Site, lc: LoadedCase, tag: str) -> float:
    """One trial of the bare loop; its seconds."""
    base_url = site.config.base_url
    start = time.perf_counter()
    context = await browser.new_context(base_url=base_url)
    page = await context.new_page()
    if site.reset:
        world = f"bare-{tag}-{lc.case.id}"
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
    return time.perf_counter() - start


async def bare_loop(site: Site, repeat: int = 1, workers: int = 1) -> list[float]:
    """Per-trial seconds for the plain Playwright equivalent of each case's plan (every case, repeat times).

    With workers > 1, that many loops share one browser and take the next trial from one queue,
    as the runner's -j does: the most a machine gives to parallel trials without any runner at all.
    """
    queue = [lc for _ in range(repeat) for lc in site.cases]
    times: list[float] = []
    async with async_playwright() as p:
        browser, _ = await launch(p.chromium)

        async def worker(n: int) -> None:
            while queue:
                times.append(await _bare_trial(browser, site, queue.pop(0), f"w{n}-{len(queue)}"))

        await asyncio.gather(*(worker(n) for n in range(workers)))
        await browser.close()
    return times


# -- the runner -------------------------------------------------------------------


async def runner_loop(site: Site, fixtures: FixtureStore | None = None, **settings: Any) -> list[Any]:
    with tempfile.TemporaryDirectory() as out:
        chosen = RunSettings(
            ReferenceAgent,
            out_root=Path(out),
            run_id="bench",
            base_url=site.config.base_url,
            site_config=site.config,
            **settings,
        )
        return (await run_suite(site.cases, chosen, RunState(fixtures=fixtures))).traces


def _timed(site: Site, mode: str, play: Any) -> list[Any]:
    """Run one loop (a coroutine) and keep its CPU per trial under the mode's name."""
    with cpu_used() as cpu:
        results = asyncio.run(play)
    if results:
        site.cpu.setdefault(mode, []).append(Cpu(cpu.own / len(results), cpu.children / len(results)))
    return results


# The full Chromium, where a headless run (the bare loop's and the runner's own choice) takes the headless shell.
FULL_CHROMIUM = find_chromium().path if find_chromium(headless=True) != find_chromium() else None
# mode, proxy, --screenshot, --chromium (None: the runner's own choice, as the bare loop's)
RUNNER_MODES = [
    ("runner", False, "on", None),
    ("full", True, "on", None),
    ("lean", True, "only-on-failure", None),
] + ([("chromium", True, "only-on-failure", FULL_CHROMIUM)] if FULL_CHROMIUM else [])


def play_modes(site: Site, rounds: int) -> None:
    for _ in range(rounds):
        site.times.setdefault("bare", []).extend(_timed(site, "bare", bare_loop(site)))
        for mode, proxy, shots, chromium in RUNNER_MODES:
            traces = _timed(site, mode, runner_loop(site, proxy=proxy, screenshots=shots, chromium=chromium))
            site.times.setdefault(mode, []).extend(t.duration_ms / 1000 for t in traces)
            if mode in ("full", "lean"):
                phases = site.phases.setdefault(mode, {})
                for phase in PHASES:  # press_ms: only the trials that press in a fork (0 for the others)
                    phases.setdefault(phase, []).extend(t.timings.get(phase, 0.0) for t in traces)
                phases.setdefault(STEPS, []).extend(sum(s.duration_ms or 0.0 for s in t.steps) for t in traces)
        with tempfile.TemporaryDirectory() as fixtures:
            store = Path(fixtures)
            with cpu_used():  # the recording is not timed; its browser is waited for here, not in the replay's figure
                asyncio.run(runner_loop(site, network_mode="record", fixtures=FixtureStore(store, "record")))
            replay = FixtureStore(store, "replay")
            traces = _timed(site, "replay", runner_loop(site, network_mode="replay", fixtures=replay))
            site.times.setdefault("replay", []).extend(t.duration_ms / 1000 for t in traces)


def _mean_cpu(runs: list[Cpu]) -> Cpu:
    return Cpu(statistics.mean(c.own for c in runs), statistics.mean(c.children for c in runs))


def print_modes(site: Site, loads: tuple[str, str]) -> None:
    bare = statistics.median(site.times["bare"])
    bare_cpu = _mean_cpu(site.cpu["bare"]).total
    print(f"\n{site.name}: {len(site.cases)} cases, median per trial ({loads[0]} -> {loads[1]})")
    print("CPU s/trial: the browser and driver + this process (runner, proxy, site), mean over the mode's runs")
    print(f"{'mode':<8} {'trials':>6} {'s/trial':>8} {'trials/s':>9} {'x bare':>7} {'CPU s/trial':>19} {'x bare':>7}")
    for mode, values in site.times.items():
        med = statistics.median(values)
        cpu = _mean_cpu(site.cpu[mode])
        split = f"{cpu.total:.2f} ({cpu.children:.2f}+{cpu.own:.2f})"
        row = f"{med:>8.3f} {1 / med:>9.2f} {med / bare:>7.2f} {split:>19} {cpu.total / bare_cpu:>7.2f}"
        print(f"{mode:<8} {len(values):>6} {row}")
    full, runner = statistics.median(site.times["full"]), statistics.median(site.times["runner"])
    print(f"the proxy's own cost: full / runner = {full / runner:.2f}")


def print_phases(site: Site) -> None:
    """Each phase's median ms (the reset overlaps the context, the state after the observe; press: the fork's, over
    the trials that press in one)."""
    for mode, phases in site.phases.items():
        row = "  ".join(
            f"{phase.removesuffix('_ms')} {statistics.median([x for x in v if x] or [0.0]):.0f}"
            for phase, v in phases.items()
        )
        print(f"{site.name} phases of a {mode} trial, median ms: {row}")


# -- messages and CPU per process -------------------------------------------------

KINDS = ("browser", "renderer", "gpu", "utility", "zygote", "driver", "runner")


def count_traffic(site: Site) -> None:
    """One untimed pass of bare, full, lean (and chromium), each counted (protocol messages, CDP, CPU per process)."""
    rows: dict[str, tuple[int, Traffic, Any]] = {}
    for mode in ("bare", "full", "lean", *(("chromium",) if FULL_CHROMIUM else ())):
        traffic = Traffic()
        with (
            tempfile.TemporaryDirectory() as tmp,
            devtools_log(traffic, Path(tmp)),
            driver_messages(traffic),
            phase_marks(traffic),
            cpu_used() as total,
            cpu_by_process() as kinds,
        ):
            if mode == "bare":
                n = len(asyncio.run(bare_loop(site)))
            else:
                shots = "on" if mode == "full" else "only-on-failure"
                chromium = FULL_CHROMIUM if mode == "chromium" else None
                n = len(asyncio.run(runner_loop(site, screenshots=shots, chromium=chromium)))
        rows[mode] = (n, traffic, (kinds, total))
    print(f"\n{site.name}: messages and CPU per trial, one untimed pass each with the protocol log on ({load()})")
    head = f"{'mode':<6} {'runner->driver':>14} {'driver->runner':>14} {'CDP sent':>9} {'CDP answers':>11}"
    print(head + f" {'CDP events':>10}")
    for mode, (n, t, _) in rows.items():
        counts = (len(t.to_driver), len(t.from_driver), len(t.cdp_sent), len(t.cdp_answers), len(t.cdp_events))
        a, b, c, d, e = (x / n for x in counts)
        print(f"{mode:<6} {a:>14.0f} {b:>14.0f} {c:>9.0f} {d:>11.0f} {e:>10.0f}")
    print("CPU s/trial by process (sampled; 'all children' is the kernel's exact total of every child):")
    print(f"{'mode':<6} " + " ".join(f"{k:>8}" for k in KINDS) + f" {'all children':>13}")
    for mode, (n, _, (kinds, total)) in rows.items():
        print(f"{mode:<6} " + " ".join(f"{kinds.get(k, 0) / n:>8.3f}" for k in KINDS) + f" {total.children / n:>13.3f}")
    n, full, _ = rows["full"]
    spans = phase_of(full)
    series = {
        "runner->driver": per_phase(full.to_driver, spans),
        "driver->runner": per_phase(full.from_driver, spans),
        "CDP sent": per_phase(full.cdp_sent, spans),
        "CDP events": per_phase([at for at, _ in full.cdp_events], spans),
    }
    print("full, per trial and phase:")
    print(f"{'phase':<8} " + " ".join(f"{name:>14}" for name in series))
    for phase in (*TRAFFIC_PHASES, "between"):
        print(f"{phase:<8} " + " ".join(f"{series[name][phase] / n:>14.1f}" for name in series))
    for mode in ("bare", "full"):
        m, t, _ = rows[mode]
        top = Counter(method for _, method in t.cdp_events).most_common(8)
        print(f"{mode} CDP events per trial: " + ", ".join(f"{method} {c / m:.0f}" for method, c in top))
        top = Counter(t.cdp_commands).most_common(10)
        print(f"{mode} CDP commands per trial: " + ", ".join(f"{method} {c / m:.1f}" for method, c in top))


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


@dataclass
class Cpu:
    """CPU seconds of one block: this process, and the processes below it that ended within it."""

    own: float = 0.0  # the runner, the proxy and the sites (threads of this process)
    children: float = 0.0  # Playwright's driver and the browser: counted once they have exited and been waited for

    @property
    def total(self) -> float:
        return self.own + self.children


def _adopt_orphans() -> None:
    """Become the reaper of this process's orphaned descendants (Linux).

    Chromium's zygote and renderers outlive the browser process by a moment and would be
    re-parented to init, their CPU time lost; as their subreaper this process waits for
    them and the kernel adds their time to its children's.
    """
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def _reap_children(timeout_s: float = 5.0) -> None:
    """Wait for every process below this one to end (a browser just closed leaves a few exiting)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return  # none left
        if pid == 0:
            time.sleep(0.05)


@contextmanager
def cpu_used() -> Iterator[Cpu]:
    """The block's CPU time; the block must close its browser (each loop here does) or its cost is missed."""
    cpu = Cpu()
    before = os.times()
    try:
        yield cpu
    finally:
        _reap_children()
        after = os.times()
        cpu.own = (after.user - before.user) + (after.system - before.system)
        cpu.children = (after.children_user - before.children_user) + (after.children_system - before.children_system)


def throughput(site: Site, trials: int, rounds: int, jobs: tuple[int, ...] = (1, 2)) -> None:
    """Whole runs of every case x trials: the bare loop and the runner (proxy, live), with each number of workers."""
    RUNS = [(f"bare loop -j {j}", "bare", j) for j in jobs] + [(f"-j {j}", "runner", j) for j in jobs]
    walls: dict[str, list[float]] = {label: [] for label, _, _ in RUNS}
    cpus: dict[str, list[Cpu]] = {label: [] for label in walls}
    peaks: dict[str, float] = dict.fromkeys(walls, 0.0)
    verdicts: set[str] = set()
    before = load()
    count = len(site.cases) * trials
    for _ in range(rounds):
        for label, loop, workers in RUNS:
            if loop == "bare":
                play = bare_loop(site, trials, workers)
            else:
                play = runner_loop(site, trials=trials, workers=workers)
            with peak_memory() as memory, cpu_used() as cpu:
                started = time.perf_counter()
                results = asyncio.run(play)
                walls[label].append(time.perf_counter() - started)
            peaks[label] = max(peaks[label], memory["peak_mb"])
            cpus[label].append(cpu)
            if loop == "runner":
                verdicts |= {t.verdict for t in results}
    print(f"\n{site.name}: {len(site.cases)} cases x {trials} trials = {count} per run ({before} -> {load()})")
    print(f"{'run':<16} {'wall s':>7} {'trials/s':>9} {'CPU s/trial':>12} {'cores busy':>11} {'peak MB':>8}")
    wall = {label: statistics.median(values) for label, values in walls.items()}
    for label in walls:
        cpu = statistics.mean(c.total for c in cpus[label])
        row = f"{wall[label]:>7.1f} {count / wall[label]:>9.2f} {cpu / count:>12.2f} {cpu / wall[label]:>11.2f}"
        print(f"{label:<16} {row} {peaks[label]:>8.0f}")
    ratios = ", ".join(f"-j {j} {wall[f'-j {j}'] / wall[f'bare loop -j {j}']:.2f}x" for j in jobs)
    print(f"wall per trial, whole run / bare loop: {ratios}")
    if set(jobs) >= {1, 2}:
        bare1, bare2 = wall["bare loop -j 1"], wall["bare loop -j 2"]
        print(
            f"-j 2 / -j 1 throughput: runner {wall['-j 1'] / wall['-j 2']:.2f}x, bare loop {bare1 / bare2:.2f}x "
            "(the bare loop's is what this machine gives a second worker)"
        )
    print(f"verdicts: {', '.join(sorted(verdicts))}")


# -- CI's short run ---------------------------------------------------------------

CI_CASES = 6  # enough for a median, few enough for CI's log (some 10 s on a quiet machine)


def ci_ratios(count: int) -> None:
    """The bare loop and the lean runner over the first count demo cases, once each: one line of ratios."""
    cases, problems = load_cases([ROOT / "cases"])
    assert not problems, problems
    with SiteServer(test_mode=True) as server:
        demo = Site("demo site", cases[:count], demo_site_config(server.url), reset=True)
        before = load()
        demo.times["bare"] = _timed(demo, "bare", bare_loop(demo))
        traces = _timed(demo, "lean", runner_loop(demo, proxy=True, screenshots="only-on-failure"))
        demo.times["lean"] = [t.duration_ms / 1000 for t in traces]
    wall = statistics.median(demo.times["lean"]) / statistics.median(demo.times["bare"])
    cpu = _mean_cpu(demo.cpu["lean"]).total / _mean_cpu(demo.cpu["bare"]).total
    verdicts = Counter(t.verdict for t in traces)
    print(
        f"lean / bare on the demo site, {len(demo.cases)} cases: wall {wall:.2f}x, CPU {cpu:.2f}x "
        f"(verdicts: {', '.join(f'{v} {n}' for v, n in sorted(verdicts.items()))}; {before} -> {load()})"
    )


# -- main -------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1, help="rounds of every mode (default 1)")
    parser.add_argument("--trials", type=int, default=2, help="trials per case in the -j runs (default 2)")
    parser.add_argument("--site", choices=("demo", "shop", "both"), default="both")
    parser.add_argument("--no-throughput", action="store_true", help="skip the -j 1 / -j 2 runs")
    parser.add_argument("--no-traffic", action="store_true", help="skip the counted pass (messages, CPU by process)")
    parser.add_argument("--cases", type=int, help="only the first N cases of the demo suite, in suite order")
    parser.add_argument("--jobs", default="1,2", help="worker counts of the whole runs, comma-separated (default 1,2)")
    parser.add_argument(
        "--ci", action="store_true", help=f"CI's short run: bare and lean, {CI_CASES} demo cases, one line of ratios"
    )
    args = parser.parse_args()
    jobs = tuple(int(j) for j in args.jobs.split(","))
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # each table as it is done
    _adopt_orphans()
    if args.ci:
        ci_ratios(args.cases or CI_CASES)
        return
    print(f"{os.cpu_count()} CPUs, {load()}")

    if args.site in ("demo", "both"):
        cases, problems = load_cases([ROOT / "cases"])
        assert not problems, problems
        cases = cases[: args.cases] if args.cases else cases
        with SiteServer(test_mode=True) as server:
            demo = Site("demo site", cases, demo_site_config(server.url), reset=True)
            before = load()
            play_modes(demo, args.rounds)
            print_modes(demo, (before, load()))
            print_phases(demo)
            if not args.no_traffic:
                count_traffic(demo)
            if not args.no_throughput:
                throughput(demo, args.trials, args.rounds, jobs)
    if args.site in ("shop", "both"):
        cases, problems = load_cases([SHOP_CASES])
        assert not problems, problems
        with tempfile.TemporaryDirectory() as tmp, static_site(Path(tmp)) as shop:
            site = Site("static shop under /demo/", cases, shop.config(), reset=False)
            before = load()
            play_modes(site, args.rounds)
            print_modes(site, (before, load()))
            print_phases(site)
            if not args.no_traffic:
                count_traffic(site)


if __name__ == "__main__":
    main()
