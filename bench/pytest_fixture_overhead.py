"""Benchmark (not a test): what the pytest plugin's ``webmcp`` fixture costs per test.

One pytest session (a subprocess, one Chromium) against the static test shop
(webmcp_eval/examples/shop/), with N rounds of three tests that do the same work (open
the shop, wait until ``add_to_cart`` is listed, call it once), interleaved so
load changes hit all three alike:

  bare    — pytest-playwright's ``page`` alone: ``page.webmcp`` polled and called;
  webmcp  — the ``webmcp`` fixture (shim, binding, DevTools witness): ``wait_for_tools``, ``call``, ``calls()``;
  proxy   — the same with ``@pytest.mark.webmcp(proxy=True)`` (the context through the counting proxy).

Each test's setup, call and teardown times come from pytest's own reports. The
first round is left out of the figures (it launches the browser and starts the
proxy) and shown apart. Prints per kind the medians, p90 of the whole test, and
the difference to bare.

Usage: .venv/bin/python bench/pytest_fixture_overhead.py [-n 15]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from static_server import static_site  # noqa: E402

# The browser as docs/pytest.md's conftest picks it: headless, the headless shell when it is installed.
CONFTEST = """
import json, os
import pytest
from webmcp_eval.play.browser.browser import find_chromium, launch_args

@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args, browser_name):
    if browser_name != "chromium":
        return browser_type_launch_args
    chromium = find_chromium(headless=browser_type_launch_args.get("headless", True)).path
    return {**browser_type_launch_args, "executable_path": chromium, "args": launch_args()}

def pytest_runtest_logreport(report):
    with open(os.environ["BENCH_TIMES"], "a") as out:
        out.write(json.dumps({"test": report.nodeid, "when": report.when, "s": report.duration,
                              "outcome": report.outcome}) + "\\n")
"""

ROUND = """
def test_{i:02d}_bare(page, base_url):
    page.goto(base_url)
    while "add_to_cart" not in {{t["name"] for t in page.webmcp.tools()}}:
        page.wait_for_timeout(50)
    assert page.webmcp.call_tool("add_to_cart", {{"product_id": "tea-green-01"}})["status"] == "ok"


def test_{i:02d}_webmcp(page, webmcp, base_url):
    page.goto(base_url)
    webmcp.wait_for_tools("add_to_cart")
    assert webmcp.call("add_to_cart", {{"product_id": "tea-green-01"}})["status"] == "ok"
    assert len(webmcp.calls()) == 1


@pytest.mark.webmcp(proxy=True)
def test_{i:02d}_proxy(page, webmcp, base_url):
    page.goto(base_url)
    webmcp.wait_for_tools("add_to_cart")
    assert webmcp.call("add_to_cart", {{"product_id": "tea-green-01"}})["status"] == "ok"
    assert len(webmcp.calls()) == 1
"""

KINDS = ("bare", "webmcp", "proxy")
WIDTHS = (8, 4, 11, 10, 10, 11, 9, 10)


def _ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))] * 1000


def _browser() -> str:
    from webmcp_eval.play.browser.browser import find_chromium

    return find_chromium(headless=True).path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=15, help="rounds (each: one test of each kind)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, static_site(Path(tmp) / "shop") as shop:
        work = Path(tmp) / "bench"
        work.mkdir()
        (work / "conftest.py").write_text(CONFTEST, encoding="utf-8")
        body = "import pytest\n" + "".join(ROUND.format(i=i) for i in range(args.n))
        (work / "test_overhead.py").write_text(body, encoding="utf-8")
        times = work / "times.jsonl"
        env = {**os.environ, "BENCH_TIMES": str(times), "PYTHONPATH": str(ROOT)}
        load_before = os.getloadavg()
        started = time.monotonic()
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--base-url", shop.url]
        done = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=3600)
        wall = time.monotonic() - started
        load_after = os.getloadavg()
        if done.returncode != 0:
            print(done.stdout[-3000:], done.stderr[-2000:])
            return 1
        records = [json.loads(line) for line in times.read_text().splitlines()]
    per: dict[str, dict[str, dict[str, float]]] = {}  # test -> when -> seconds
    for r in records:
        per.setdefault(r["test"], {})[r["when"]] = r["s"]
    print(f"pytest session: {len(per)} tests in {wall:.1f}s wall, one Chromium ({_browser()}); site: the static shop")
    print(f"load average before {load_before[0]:.1f}, after {load_after[0]:.1f} ({os.cpu_count()} cores)")
    print()
    print(
        f"{'kind':<8}{'n':>4}{'setup ms':>11}{'call ms':>10}{'teardown':>10}{'total ms':>11}{'p90':>9}{'vs bare':>10}"
    )
    totals: dict[str, list[float]] = {}
    for kind in KINDS:
        tests = [t for t in per if t.endswith(f"_{kind}[chromium]") and "test_00_" not in t]
        phases = {w: [per[t][w] for t in tests] for w in ("setup", "call", "teardown")}
        totals[kind] = [sum(per[t].values()) for t in tests]
        diff = _ms(totals[kind]) - _ms(totals["bare"])
        print(
            f"{kind:<8}{len(tests):>4}{_ms(phases['setup']):>11.0f}{_ms(phases['call']):>10.0f}"
            f"{_ms(phases['teardown']):>10.0f}{_ms(totals[kind]):>11.0f}{_p90(totals[kind]):>9.0f}"
            f"{('+' if diff >= 0 else '') + f'{diff:.0f}':>10}"
        )
    first = {k: sum(per[f"test_overhead.py::test_00_{k}[chromium]"].values()) * 1000 for k in KINDS}
    print()
    print(
        "first round, left out above (browser launch, proxy start): "
        + ", ".join(f"{k} {v:.0f} ms" for k, v in first.items())
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
