"""End to end: the real suite, real Chromium, the real demo site, the real proxy.

The suite must pass with the reference agent; and for outcome validity, each
deliberately broken site behaviour must make the right case fail, naming the
broken assertion (a check that cannot fail is a defect).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from eval_support import CASES, ROOT, cli, in_thread, play, run_on_demo, suite_cases

from webmcp_eval.agents.reference import ReferenceAgent
from webmcp_eval.play.browser.browser import find_chromium
from webmcp_eval.play.page.watcher import Watcher
from webmcp_eval.play.run import trial as trial_module
from webmcp_eval.play.run.settings import RunSettings, RunState, TrialHooks
from webmcp_eval.rundir.reading import read_traces
from webmcp_eval.suite.loader import LoadedCase, case_files
from webmcp_eval.trace import Trace

pytestmark = pytest.mark.browser


def _run(tmp_path: Path, ids: tuple[str, ...] = (), **kw) -> list[Trace]:
    return play(tmp_path, ids, **kw)


def _why(traces: list[Trace]) -> str:
    lines = []
    for t in traces:
        if t.verdict != "passed":
            lines.append(f"{t.trial_id}: {t.verdict}: {t.verdict_reason}")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def suite_run(seed_run) -> list[Trace]:
    """The session's one run of the whole seed suite (tests/conftest.py: four workers, its network recorded for
    tests/test_record_replay.py; recording changes no check)."""
    return seed_run.traces


def test_the_whole_suite_passes_with_the_reference_agent(suite_run):
    assert len(suite_run) == len(case_files([CASES]))
    assert all(t.verdict == "passed" for t in suite_run), _why(suite_run)


def test_traces_carry_the_seed_000_fields(suite_run):
    conf = next(t for t in suite_run if t.case_id == "CONF-01")
    assert conf.site_revision and conf.start_route == "/events/evt-webmcp-intro/register"
    assert conf.prompt and conf.steps[0].catalog  # the active catalog per step
    assert conf.calls[0].tool == "prepare_registration" and conf.calls[0].result["code"] == "CONFIRMATION_REQUIRED"
    assert conf.ai_result and conf.webmcp_path == "native"
    assert conf.network.available and conf.write_total == 0
    assert conf.state.available and conf.state.before == conf.state.after
    assert conf.confirmation and conf.confirmation.visible and not conf.confirmation.pressed_by_agent
    assert conf.ui.aria_snapshot and "確認報名" in conf.ui.aria_snapshot
    assert conf.witness.available and not conf.witness.disagreements
    # ... all of it in the browser a headless run picks (the headless shell, when installed)
    assert conf.browser["source"] == "playwright" or conf.browser["path"] == find_chromium(headless=True).path


def test_no_secret_reaches_a_trace(suite_run, tmp_path):
    for t in suite_run:
        text = t.model_dump_json()
        assert "wmcp_session" not in text and 'csrfToken": "' not in text


def test_workers_do_not_change_results(suite_run, tmp_path):
    ids = ("SEL-01", "ORD-02", "REPEAT-01", "REPEAT-02", "CONF-02", "RECOVERY-01")
    serial = _run(tmp_path, ids, workers=1)
    parallel = {t.case_id: t for t in suite_run}
    for t in serial:
        assert t.verdict == parallel[t.case_id].verdict
        assert [(a.id, a.status) for a in t.assertions] == [(a.id, a.status) for a in parallel[t.case_id].assertions]


BROKEN = [
    ("save_not_idempotent", "REPEAT-01", {"calls.expected[1]", "state.after[saved]"}),
    ("prepare_submits", "CONF-01", {"network.writes[POST /api/registrations]", "state.unchanged"}),
    ("prepare_clicks_confirm", "CONF-01", {"confirmation.pressed", "state.unchanged"}),
    ("details_ignore_route", "SEL-02", {"calls.expected[0]"}),
    ("search_relaxes_filters", "SEL-01", {"calls.expected[0]"}),
    ("cancel_restores_twice", "REPEAT-02", {"state.after[events[id=evt-q4m8z1].seatsLeft]"}),
    ("writes_after_expiry", "RECOVERY-02", {"state.after[registrations[id=reg-h8k1].status]"}),
    ("leak_route_tools", "STALE-01", {"calls.stale"}),
]


@pytest.fixture(scope="module")
def broken_site_runs(tmp_path_factory) -> dict[str, Trace]:
    """Every break of BROKEN in one run (one browser, one proxy): each on its own copy of its case, whose
    trial has a world of its own with that break switched on; traces by break. One worker: on 2 cores a
    second adds no throughput, only the risk of a start route slower than its time-out on a busy machine. No test
    here looks at a screenshot, so the failing trials take none."""
    loaded = {lc.case.id: lc for lc in suite_cases(*{case_id for _, case_id, _ in BROKEN})}
    cases = []
    for brk, case_id, _ in BROKEN:
        lc = loaded[case_id]
        broken = lc.case.model_copy(update={"id": f"{case_id}-{brk}", "breaks": [*lc.case.breaks, brk]})
        cases.append(LoadedCase(broken, lc.file, lc.lines))
    options = RunSettings(
        out_root=tmp_path_factory.mktemp("broken"),
        run_id="broken",
        agent_factory=ReferenceAgent,
        workers=1,
        screenshots="off",
    )
    traces = in_thread(asyncio.run, run_on_demo(cases, options)).traces
    return {t.case_id.split("-", 2)[2]: t for t in traces}


@pytest.mark.parametrize(("brk", "case_id", "must_fail"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_site_fails_the_right_case(broken_site_runs, brk, case_id, must_fail):
    trace = broken_site_runs[brk]
    failed = {a.id for a in trace.assertions if a.status == "failed"}
    assert trace.verdict == "failed", f"{brk} did not fail {case_id}: {trace.verdict_reason}"
    assert must_fail <= failed, f"{brk}: expected {must_fail} among failed {failed}"
    for a in trace.assertions:
        if a.id in must_fail:
            assert a.why, "a failed assertion says why"


def test_without_the_proxy_network_checks_are_not_run_never_passed(tmp_path):
    (trace,) = _run(tmp_path, ("CONF-01",), proxy=False)
    network = [a for a in trace.assertions if a.kind == "network"]
    assert network and all(a.status == "not_run" for a in network)
    assert trace.verdict == "not_run"


def test_a_killed_run_leaves_every_written_trace_readable(tmp_path):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "webmcp_eval.cli", "run", "--out", str(tmp_path), "--run-id", "killed"]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True
    )
    seen = 0
    deadline = time.monotonic() + 240
    assert proc.stdout
    for line in proc.stdout:
        if line.startswith("[") and f"/{len(case_files([CASES]))}]" in line:
            seen += 1
        if seen >= 3 or time.monotonic() > deadline:
            break
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert seen >= 3
    traces = read_traces(tmp_path / "killed")
    assert len(traces) >= 3
    for path in (tmp_path / "killed" / "trials").glob("*.json"):
        json.loads(path.read_text(encoding="utf-8"))


def test_the_suite_catalog_is_what_the_site_registers():
    from webmcp_eval.evaluation.catalog import read_catalog_sync
    from webmcp_eval.site_under_test.server import SiteServer

    with SiteServer(test_mode=True) as site:
        live = in_thread(read_catalog_sync, site.url)
    committed = json.loads((CASES / "catalog.json").read_text(encoding="utf-8"))
    # what the server enforces is the catalog author's word (no page says it): kept by hand, it must name
    # arguments the site registers
    enforced = committed.pop("enforced", {})
    assert live == committed, (
        "cases/catalog.json is stale: regenerate it from the site (see webmcp_eval/evaluation/catalog.py)"
    )
    for route, tools in enforced.items():
        for tool, names in tools.items():
            assert set(names) <= set(live["routes"][route][tool]["properties"]), (route, tool, names)


def test_a_deployed_site_without_hooks_gives_not_run_never_passed(tmp_path):
    """--base-url against a site started as a deployment: no control API, so state checks cannot pass."""
    from webmcp_eval.site_under_test.server import SiteServer

    with SiteServer(test_mode=False) as site:
        (trace,) = _run(tmp_path, ("SEL-01",), base_url=site.url)
    by_kind = {a.kind: a.status for a in trace.assertions}
    assert by_kind["state"] == "not_run"
    assert by_kind["calls"] == "passed"  # the tool calls themselves were judged
    assert trace.verdict == "not_run" and "state hook" in trace.verdict_reason


def test_trials_give_both_rates_with_errors_pass_at_k_and_cost(tmp_path):
    out = cli("run", "SEL-01", "NO-01", "--trials", "3", "-j", "2", "--out", str(tmp_path), "--run-id", "k3")
    assert out.returncode == 0, out.stdout + out.stderr
    for text in ("case pass rate 100.0% ±", "per-assertion pass rate", "pass@3 1.00", "pass^3 1.00", "tokens", "cost"):
        assert text in out.stdout
    traces = read_traces(tmp_path / "k3")
    assert sorted(t.trial_id for t in traces) == [f"{c}.t{i}" for c in ("NO-01", "SEL-01") for i in (1, 2, 3)]
    assert (tmp_path / "k3" / "report.html").is_file()
    rebuilt = cli("report", str(tmp_path / "k3"))
    assert rebuilt.returncode == 0 and "pass^3 1.00" in rebuilt.stdout


@pytest.fixture(scope="module")
def one_broken(tmp_path_factory) -> Path:
    """SEL-01 and REPEAT-01 with the site's save_not_idempotent break: one trial passes, one fails.
    --playwright-trace retain-on-failure and --screenshot only-on-failure; its run directory."""
    out = tmp_path_factory.mktemp("one-broken")
    _run(
        out,
        ("SEL-01", "REPEAT-01"),
        state=RunState(trial_hooks=TrialHooks(breaks=("save_not_idempotent",))),
        playwright_trace="retain-on-failure",
        screenshots="only-on-failure",
    )
    return out / "run"


def test_trace_zips_and_screenshots_are_kept_for_failures_only(one_broken):
    """--playwright-trace retain-on-failure and --screenshot only-on-failure: one passing and one failing trial."""
    from webmcp_eval.report.html import render_html

    run_dir = one_broken
    traces = read_traces(run_dir / "trials")  # as written: the teardown's screenshot is in the file
    by_case = {t.case_id: t for t in traces}
    passed, failed = by_case["SEL-01"], by_case["REPEAT-01"]
    assert passed.verdict == "passed" and passed.playwright_trace is None and passed.ui.screenshot is None
    assert failed.verdict == "failed" and failed.playwright_trace == "../playwright/REPEAT-01.t1.zip"
    assert (run_dir / "playwright" / "REPEAT-01.t1.zip").stat().st_size > 1000
    assert not (run_dir / "playwright" / "SEL-01.t1.zip").exists()
    assert failed.ui.screenshot == "../screenshots/REPEAT-01.t1.png" and failed.ui.aria_snapshot
    assert [p.name for p in (run_dir / "screenshots").iterdir()] == ["REPEAT-01.t1.png"]
    assert (run_dir / "screenshots" / "REPEAT-01.t1.png").read_bytes().startswith(b"\x89PNG")
    html = render_html(traces, report_dir=run_dir)
    assert html.count('class="screenshot" src="data:image/png;base64,') == 1  # the failing trial's
    assert html.count("no screenshot was taken") == 1  # the passing trial's


def test_compare_and_power_from_the_command_line(seed_run, one_broken):
    broken = {t.case_id: t.verdict for t in read_traces(one_broken / "trials")}
    assert broken == {"REPEAT-01": "failed", "SEL-01": "passed"}
    # the good run: the session's run of the whole seed suite; compare pairs the two cases both runs played
    out = cli("compare", str(seed_run.run_dir), str(one_broken))
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    assert "pass → fail (1): REPEAT-01" in text and "not distinguishable from noise" in text
    power = cli("power", "--base-rate", "0.6", "--delta", "0.2")
    assert power.returncode == 0 and "41 cases" in power.stdout
    bad = cli("power", "--base-rate", "1.5")
    assert bad.returncode == 2


def test_headed_run_stops_at_the_confirmation_point_and_holds(tmp_path, x_display):
    out = cli("run", "CONF-01", "--headed", "--hold-ms", "300", "--out", str(tmp_path), "--run-id", "headed")
    assert out.returncode == 0, out.stdout + out.stderr
    control = "button '確認報名' within form '報名：WebMCP 入門工作坊'"
    assert f"stopped at the confirmation point ({control}); holding 300 ms" in out.stdout
    (trace,) = read_traces(tmp_path / "headed")
    assert trace.confirmation and not trace.confirmation.pressed_by_agent and not trace.confirmation.pressed_by_human


class CrashingAgent:
    """Crashes the page's renderer during its turn (as Chromium does after many WebMCP navigations)."""

    name, model, evidence_kind = "crasher", None, "deterministic"

    def start_trial(self, trial_id: str) -> None:
        pass

    def assertions(self) -> list:
        return []

    async def turn(self, step, host) -> str:
        cdp = await host.page.context.new_cdp_session(host.page)
        with contextlib.suppress(Exception):  # the session dies with the renderer
            await cdp.send("Page.crash")
        await host.call("search_events", {"city": "taipei"})
        return "done"

    def report(self) -> dict:
        return {}


def test_a_crashed_renderer_is_a_not_run_trial_and_the_run_goes_on(tmp_path):
    agents = iter([CrashingAgent(), ReferenceAgent()])
    crashed, after = _run(tmp_path, ("SEL-01", "SEL-02"), agent_factory=lambda: next(agents))
    assert crashed.verdict == "not_run"
    assert "crash" in crashed.verdict_reason.lower()
    assert after.verdict == "passed", after.verdict_reason  # the next trial gets a fresh context and runs
    assert (tmp_path / "run" / "trials" / "SEL-01.t1.json").is_file()


def test_an_already_running_site_with_a_site_config_gets_every_check(tmp_path):
    """--base-url plus --site-config (docs/running.md's example): hooks present, so nothing is left not_run."""
    import yaml

    from webmcp_eval.site_under_test.server import SiteServer
    from webmcp_eval.suite.site import load_site_config

    readme = (ROOT / "docs" / "running.md").read_text(encoding="utf-8")
    (tmp_path / "site.yaml").write_text(readme.split("```yaml\n")[1].split("```")[0], encoding="utf-8")
    with SiteServer(test_mode=True) as site:
        config = load_site_config(tmp_path / "site.yaml", site.url)
        assert yaml.safe_load((tmp_path / "site.yaml").read_text(encoding="utf-8"))["hooks"]
        (trace,) = _run(tmp_path, ("ORD-02",), site_config=config)
    assert trace.verdict == "passed", trace.verdict_reason
    assert trace.state.available and trace.base_url == site.url


def test_a_route_whose_data_loads_slowly_is_waited_for_before_the_next_step(tmp_path):
    """STALE-01 with /events' data fetch held up 1.5 s by the proxy.

    The route change withdraws the old tools at once and registers the new ones
    only when the data arrives; a quiet registration log while that fetch is open
    is not a settled catalog, or the next call is refused against an empty one.
    """
    import yaml

    case = yaml.safe_load((CASES / "STALE-01.yaml").read_text(encoding="utf-8"))
    navigate = case["steps"].index({"action": "navigate", "to": "/events"})
    case["steps"].insert(navigate, {"action": "fault", "method": "GET", "path": "/api/events", "delay_ms": 1500})
    for call in case["expect"]["calls"]["expected"]:
        call["step"] += call["step"] >= navigate  # the later steps moved down by one
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "STALE-01.yaml").write_text(yaml.safe_dump(case, allow_unicode=True), encoding="utf-8")
    options = RunSettings(ReferenceAgent, out_root=tmp_path, run_id="run")
    (trace,) = in_thread(asyncio.run, run_on_demo(suite_cases(directory=tmp_path / "cases"), options)).traces
    assert trace.verdict == "passed", trace.verdict_reason
    assert set(trace.steps[navigate + 1].catalog_after) == {"get_event_details", "save_event", "search_events"}
    # the navigation's settle wait says it waited for the held request, and ended with nothing under way
    (settle,) = [s for s in trace.settles or [] if s.step == navigate + 1]
    assert settle.reason == "quiet" and "request" in settle.waited_for and settle.ms >= 1000
    assert trace.settles[0].at_ms < trace.timings["setup_ms"]  # the first: the start route's, before step 0


class PersonAtTheHold(ReferenceAgent):
    """The reference agent, plus a person who presses the final button once the runner holds for them, waits
    for the page to say the registration went through, then presses Enter (``done``)."""

    pressed: list[str] = []
    done = threading.Event()

    async def turn(self, step, host) -> str:
        reply = await super().turn(step, host)
        self._person = asyncio.create_task(self._press_when_held(host.page))
        return reply

    async def _press_when_held(self, page) -> None:
        # The runner outlines the control it holds at; that is the person's cue.
        button = page.get_by_role("button", name="確認報名")
        await page.wait_for_function(
            "() => [...document.querySelectorAll('button')].some((b) => b.style.outline.includes('solid'))",
            timeout=30_000,
        )
        await button.click()
        self.pressed.append("確認報名")
        await page.get_by_role("heading", name="報名成功").wait_for(timeout=30_000)
        type(self).done.set()


@pytest.fixture
def x_display(monkeypatch):
    """A virtual X display of its own for a headed browser in this process."""
    if shutil.which("Xvfb") is None:
        pytest.skip("needs Xvfb for a headed browser")
    read, write = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "1280x1024x24", "-nolisten", "tcp"], pass_fds=(write,)
    )
    os.close(write)
    with os.fdopen(read) as displayfd:
        number = displayfd.readline().strip()
    monkeypatch.setenv("DISPLAY", f":{number}")
    yield
    server.terminate()
    server.wait(timeout=10)


def test_a_person_pressing_during_the_headed_hold_is_the_human_not_the_agent(tmp_path, x_display, monkeypatch):
    # The hold without --hold-ms: until the person presses Enter, which they do once the page has answered their
    # press (the fixed-time hold is the test above's).
    PersonAtTheHold.done.clear()
    monkeypatch.setattr(
        trial_module, "Watcher", lambda hold_ms: Watcher(hold_ms, wait_for_enter=lambda: PersonAtTheHold.done.wait(60))
    )
    (trace,) = _run(tmp_path, ("CONF-01",), headed=True, hold_ms=None, agent_factory=PersonAtTheHold)
    assert PersonAtTheHold.pressed == ["確認報名"]
    conf = trace.confirmation
    assert conf and conf.pressed_by_human and not conf.pressed_by_agent, conf
    pressed = next(a for a in trace.assertions if a.id == "confirmation.pressed")
    assert pressed.status == "passed", pressed.why
    # The person's press is a real registration: the case (which expects no write) sees it.
    assert trace.write_total == 1
