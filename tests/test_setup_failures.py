"""Setup, site and checker failures are never the agent's: each trial is not_run with its reason.

Real Chromium, the real proxy and the real demo site (or none where the site
is meant to be down); the run always goes on to the next trial.
"""

from __future__ import annotations

import asyncio
import socket

import pytest
from eval_support import in_thread, play, run_on_demo, suite_cases

from webmcp_eval.agents.reference import ReferenceAgent
from webmcp_eval.judge import checks
from webmcp_eval.play.run.settings import RunSettings
from webmcp_eval.suite.loader import LoadedCase

pytestmark = pytest.mark.browser


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_check_that_raises_is_not_run_and_the_run_goes_on(tmp_path, monkeypatch):
    real = checks.evaluate

    def flaky(case, trace):
        if case.id == "SEL-01":
            raise ValueError("a matcher fell over")
        return real(case, trace)

    monkeypatch.setattr(checks, "evaluate", flaky)
    broken, after = play(tmp_path, ("SEL-01", "SEL-02"))
    assert broken.verdict == "not_run"
    assert broken.verdict_reason == "checker error: ValueError: a matcher fell over"
    assert broken.not_run_kind == "checker"  # never retried: it would fall over again
    assert (tmp_path / "run" / "trials" / "SEL-01.t1.json").is_file()
    assert after.verdict == "passed", after.verdict_reason


@pytest.mark.parametrize("proxy", [True, False], ids=["proxy", "no-proxy"])
def test_an_unreachable_site_without_hooks_is_not_run_never_failed(tmp_path, proxy):
    url = f"http://127.0.0.1:{_closed_port()}"
    (trace,) = play(tmp_path, ("SEL-01",), base_url=url, proxy=proxy)
    assert trace.verdict == "not_run", trace.verdict_reason
    assert trace.verdict_reason.startswith("setup: ")
    assert trace.not_run_kind == "infrastructure"  # --retries plays it again
    assert "/events" in trace.verdict_reason and f"check that the site is running at {url}" in trace.verdict_reason
    if proxy:
        assert "502" in trace.verdict_reason


def test_a_start_route_without_tools_is_not_run_with_what_to_check(tmp_path):
    from webmcp_eval.site_under_test.server import SiteServer

    (loaded,) = suite_cases("SEL-01")
    no_tools = LoadedCase(loaded.case.model_copy(update={"start_route": "/api/version"}), loaded.file, loaded.lines)
    with SiteServer(test_mode=False) as site:
        options = RunSettings(ReferenceAgent, out_root=tmp_path, run_id="run", base_url=site.url)
        (trace,) = in_thread(asyncio.run, run_on_demo([no_tools], options)).traces
    assert trace.verdict == "not_run", trace.verdict_reason
    assert "no WebMCP tools were registered at the start route /api/version" in trace.verdict_reason
    assert trace.not_run_kind == "setup"
    assert "registerTool" in trace.verdict_reason


class SiteKiller:
    """The reference agent, but the site goes away just before its first turn."""

    name, model, evidence_kind = "reference", None, "deterministic"

    def __init__(self, site) -> None:  # noqa: ANN001 - SiteServer
        self.site = site
        self.inner = ReferenceAgent()

    def start_trial(self, trial_id: str) -> None:
        self.inner.start_trial(trial_id)

    def assertions(self) -> list:
        return []

    def report(self) -> dict:
        return {}

    async def turn(self, step, host) -> str:  # noqa: ANN001
        if self.site.url:
            await asyncio.to_thread(self.site.stop)
            self.site.url = ""
        return await self.inner.turn(step, host)


def test_killing_the_site_mid_run_gives_not_run_about_the_site(tmp_path):
    """ORD-01's plan captures an id from a search; with the site gone the search cannot answer."""
    from webmcp_eval.site_under_test.server import SiteServer
    from webmcp_eval.suite.site import demo_site_config

    site = SiteServer(test_mode=True).start()
    url = site.url
    options = RunSettings(
        out_root=tmp_path,
        run_id="run",
        base_url=url,
        site_config=demo_site_config(url),
        agent_factory=lambda: SiteKiller(site),
    )
    try:
        traces = in_thread(asyncio.run, run_on_demo(suite_cases("ORD-01", "SEL-01"), options)).traces
    finally:
        site.stop()
    assert [t.verdict for t in traces] == ["not_run", "not_run"], [t.verdict_reason for t in traces]
    during, after = traces
    assert "the site stopped answering during the trial" in during.verdict_reason
    assert during.not_run_kind == after.not_run_kind == "infrastructure"
    assert f"check that the site is running at {url}" in during.verdict_reason
    assert "before it was captured" not in during.verdict_reason
    assert after.verdict_reason.startswith("setup: the site's reset hook at ")


def test_a_reference_capture_that_found_nothing_names_the_call_outcome():
    from webmcp_eval.agents.protocol import AgentError
    from webmcp_eval.suite.case import UserStep
    from webmcp_eval.trace import ToolCall

    class Host:
        async def call(self, name, args):  # noqa: ANN001
            return ToolCall(index=0, step=0, tool=name, args=args, route="/events", result={"status": "error"})

    step_one = UserStep.model_validate(
        {"user": "find", "plan": [{"call": "search_events", "capture": {"first": "result.data.events[0].id"}}]}
    )
    step_two = UserStep.model_validate(
        {"user": "open", "plan": [{"call": "get_event_details", "args": {"eventId": {"$ref": "first"}}}]}
    )
    agent = ReferenceAgent()
    agent.start_trial("SEL-01.t1")
    in_thread(asyncio.run, agent.turn(step_one, Host()))  # pytest-playwright may hold this thread's loop
    with pytest.raises(AgentError) as caught:
        in_thread(asyncio.run, agent.turn(step_two, Host()))
    why = str(caught.value)
    assert "search_events call gave nothing at result.data.events[0].id" in why
    assert '"status": "error"' in why


@pytest.mark.parametrize("proxy", [False, True])
def test_a_hook_that_cannot_be_reached_is_a_setup_failure(tmp_path, proxy):
    from webmcp_eval.suite.site import demo_site_config

    url = f"http://127.0.0.1:{_closed_port()}"
    options = dict(base_url=url, site_config=demo_site_config(url), proxy=proxy)
    (trace,) = play(tmp_path, ("SEL-02",), **options)
    assert trace.verdict == "not_run"
    # the proxy never heard of the trial (it failed before): no network evidence, never an empty "0 requests"
    assert trace.network.available is False
    assert trace.verdict_reason.startswith(f"setup: the site's reset hook at {url}/__test__/reset could not be reached")
