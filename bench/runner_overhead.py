"""Benchmark (not a test): what the runner costs per trial.

Plays the 20-case suite with the reference agent three ways and prints the
per-trial median time of each:

  (a) bare    — a plain Playwright loop: fresh context, go to the start route,
                the same tool calls through page.webmcp, nothing recorded;
  (b) runner  — webmcp-eval without the proxy;
  (c) full    — webmcp-eval with the proxy (the default, live);
  (d) replay  — webmcp-eval answering from fixtures recorded just before
                (the site is not running).

(c) against (b) is the proxy's own overhead; (d) against (c) is replay's.

Usage: .venv/bin/python bench/runner_overhead.py [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from playwright.async_api import async_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runner.play.browser import launch  # noqa: E402
from runner.play.fixture_store import FixtureStore  # noqa: E402
from runner.play.run import RunOptions, run_suite  # noqa: E402
from runner.suite.case import UserStep  # noqa: E402
from runner.suite.loader import load_cases  # noqa: E402
from runner.suite.matchers import MISSING, resolve, substitute  # noqa: E402
from site_under_test.server import SiteServer  # noqa: E402


async def bare_loop(cases, base_url: str) -> list[float]:
    """Per-trial seconds for the plain Playwright equivalent of each case's plan."""
    times = []
    async with async_playwright() as p:
        browser, _ = await launch(p.chromium)
        for lc in cases:
            start = time.perf_counter()
            context = await browser.new_context(base_url=base_url)
            await context.add_cookies([{"name": "wmcp_world", "value": f"bare-{lc.case.id}", "url": base_url}])
            page = await context.new_page()
            await page.request.post(f"{base_url}/__test__/reset", data={"world": f"bare-{lc.case.id}"})
            await page.goto(lc.case.start_route)
            await page.wait_for_function("window.__siteReady !== undefined")
            captures: dict = {}
            for step in lc.case.steps:
                if not isinstance(step, UserStep):
                    continue  # scripted actions: not part of the bare loop
                for planned in step.plan:
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


async def runner_loop(cases, proxy: bool, mode: str = "live", fixtures: Path | None = None) -> list[float]:
    with tempfile.TemporaryDirectory() as out:
        store = FixtureStore(fixtures, mode) if fixtures else None
        options = RunOptions(out_root=Path(out), run_id="bench", proxy=proxy, network_mode=mode, fixtures=store)
        result = await run_suite(cases, options)
    return [t.duration_ms / 1000 for t in result.traces]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    cases, problems = load_cases([ROOT / "cases"])
    assert not problems, problems
    figures: dict[str, list[float]] = {"bare": [], "runner": [], "full": [], "replay": []}
    for _ in range(args.rounds):
        with SiteServer(test_mode=True) as site:
            figures["bare"] += asyncio.run(bare_loop(cases, site.url))
        figures["runner"] += asyncio.run(runner_loop(cases, proxy=False))
        figures["full"] += asyncio.run(runner_loop(cases, proxy=True))
        with tempfile.TemporaryDirectory() as fixtures:
            asyncio.run(runner_loop(cases, proxy=True, mode="record", fixtures=Path(fixtures)))
            figures["replay"] += asyncio.run(runner_loop(cases, proxy=True, mode="replay", fixtures=Path(fixtures)))
    bare = statistics.median(figures["bare"])
    print(f"{'mode':<8} {'trials':>6} {'median s/trial':>15} {'trials/s':>9} {'× bare':>7}")
    for mode, values in figures.items():
        med = statistics.median(values)
        print(f"{mode:<8} {len(values):>6} {med:>15.3f} {1 / med:>9.2f} {med / bare:>7.2f}")


if __name__ == "__main__":
    main()
