"""--retries: only infrastructure not_runs are played again; failures never are; every attempt is kept and shown.

The browser test plays the static shop with a server that answers 503 once and an agent that closes
the whole browser once: each is retried and passes, with both attempts' traces kept. A case whose
plan fails is never retried. (A renderer that crashes, or a renderer, browser or driver killed, is
retried the same way: tests/test_faults.py.) The view tests check that every report shows retried trials and
flaky cases, from the one results layer.
"""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from eval_support import BreaksOnce, in_thread, run_on_demo
from rich.console import Console
from static_server import StaticSite
from test_static_site import _wrong_quantity, shop_cases, variant

from webmcp_eval.play.run.retry import retryable
from webmcp_eval.play.run.settings import RunSettings
from webmcp_eval.report.html import render_html
from webmcp_eval.report.reporters import markdown
from webmcp_eval.report.writers import print_console, summary_json, write_junit
from webmcp_eval.results.run_results import results_of
from webmcp_eval.trace import Trace


def _trace(trial_id: str, verdict: str, kind: str | None = None, **extra) -> Trace:
    case_id = trial_id.rsplit(".t", 1)[0]
    return Trace(
        run_id="r",
        trial_id=trial_id,
        case_id=case_id,
        behaviour="selection",
        start_route="/",
        verdict=verdict,
        verdict_reason=f"{verdict} for the test",
        not_run_kind=kind,
        **extra,
    )


def test_only_an_infrastructure_not_run_is_retryable():
    assert retryable(_trace("A.t1", "not_run", "infrastructure"))
    assert not retryable(_trace("A.t1", "failed"))
    assert not retryable(_trace("A.t1", "passed"))
    for kind in ("setup", "case", "fixture", "evidence", "checker", "step", "agent", "timeout", "runner"):
        assert not retryable(_trace("A.t1", "not_run", kind)), kind


def test_every_view_shows_retried_trials_and_flaky_cases():
    earlier = [
        {
            "attempt": 1,
            "verdict": "not_run",
            "kind": "infrastructure",
            "reason": "the page crashed (renderer process gone)",
            "trace": "../attempts/A.t1.a1.json",
        }
    ]
    traces = [
        _trace("A.t1", "passed", attempt=2, earlier_attempts=earlier),
        _trace("B.t1", "passed"),
        _trace("B.t2", "failed"),
        _trace("C.t1", "passed"),
        _trace("C.t2", "passed"),
    ]
    results = results_of(traces)
    assert [f.trace.trial_id for f in results.retried] == ["A.t1"]
    assert [c.case_id for c in results.flaky] == ["B"]  # C always passed, A ran once: neither is flaky
    assert results.counts.retried == 1

    console = Console(record=True, width=200)
    print_console(results, None, console)
    text = console.export_text()
    assert "↻ A.t1 passed after 2 attempts; attempt 1: not_run (infrastructure): the page crashed" in text
    assert "≈ B: passed 1 of 2 trials under the reference agent" in text and "1 retried" in text

    data = summary_json(results, report_dir=Path("/runs/r"))
    assert data["retried"] == ["A.t1"] and data["flaky"] == ["B"] and data["summary"]["retried"] == 1
    a1 = next(t for t in data["trials"] if t["trial_id"] == "A.t1")
    assert a1["attempt"] == 2 and a1["earlier_attempts"][0]["trace"] == "attempts/A.t1.a1.json"
    assert next(c for c in data["series"][0]["cases"] if c["case_id"] == "B")["flaky"] is True

    md = markdown(results)
    assert "### Retried" in md and "**A.t1** passed after 2 attempts" in md and "- B: passed 1 of 2" in md

    html = render_html(results, report_dir=Path("/runs/r"))
    assert 'id="retried"' in html and "↻ retried: 2 attempts" in html and "attempts/A.t1.a1.json" in html
    assert "B: passed 1 of 2 trials under the reference agent" in html


def test_junit_marks_retried_trials_and_flaky_cases(tmp_path):
    earlier = [{"attempt": 1, "verdict": "not_run", "kind": "infrastructure", "reason": "HTTP 503", "trace": "x"}]
    traces = [
        _trace("A.t1", "passed", attempt=2, earlier_attempts=earlier),
        _trace("B.t1", "passed"),
        _trace("B.t2", "failed"),
    ]
    write_junit(results_of(traces), tmp_path / "j.xml")
    root = ET.parse(tmp_path / "j.xml").getroot()
    props = {
        (tc.get("name"), p.get("name")): p.get("value") for tc in root.iter("testcase") for p in tc.iter("property")
    }
    assert props[("A.t1", "attempts")] == "2"
    assert props[("B.t2", "flaky")].startswith("B: passed 1 of 2")
    a1 = next(tc for tc in root.iter("testcase") if tc.get("name") == "A.t1")
    assert a1.find("system-out").text.startswith("retried: 2 attempts; attempt 1: not_run (infrastructure): HTTP 503")


class CrashOnce(BreaksOnce):
    """The first time it plays a victim trial it closes the whole browser under it (a lost connection)."""

    done: set[str] = set()

    async def breaks(self, what: str, host) -> None:  # noqa: ANN001
        await host.page.context.browser.close()


@pytest.mark.browser
def test_a_503_and_a_lost_browser_are_retried_into_passes_and_a_failure_is_never_retried(
    tmp_path: Path, static_shop: StaticSite
):
    cases = shop_cases()
    failing = variant("SHOP-01", "SHOP-01-WRONG", _wrong_quantity)
    static_shop.fail_once.add("/demo/")  # the first trial's start route answers 503, then the site is fine
    options = RunSettings(
        out_root=tmp_path,
        run_id="retry",
        base_url=static_shop.url,
        site_config=static_shop.config(),
        agent_factory=lambda: CrashOnce({"SHOP-03.t1": "browser"}),
        retries=1,
        screenshots="on",  # every attempt's, so the retried one's own is there to find
    )
    chosen = [cases["SHOP-01"], cases["SHOP-03"], failing]
    traces = in_thread(asyncio.run, run_on_demo(chosen, options)).traces
    by_case = {t.case_id: t for t in traces}
    run_dir = tmp_path / "retry"

    served, lost = by_case["SHOP-01"], by_case["SHOP-03"]
    wrong = by_case["SHOP-01-WRONG"]
    retried = ((served, "answered HTTP 503"), (lost, "connection to the browser was lost"))
    for trace, why in retried:
        assert trace.verdict == "passed", trace.verdict_reason
        assert trace.attempt == 2
        (first,) = trace.earlier_attempts
        assert first.verdict == "not_run" and first.kind == "infrastructure" and why in first.reason
        kept = json.loads((run_dir / "trials" / first.trace).resolve().read_text(encoding="utf-8"))
        assert kept["attempt"] == 1 and kept["not_run_kind"] == "infrastructure" and kept["trial_id"] == trace.trial_id
        assert (run_dir / "trials" / f"{trace.trial_id}.json").is_file()
    assert (run_dir / "screenshots" / "SHOP-03.t1.a2.png").is_file()  # the second attempt's own screenshot

    assert wrong.verdict == "failed" and wrong.attempt == 1 and not wrong.earlier_attempts
    kept = sorted(p.name for p in (run_dir / "attempts").iterdir())
    assert kept == ["SHOP-01.t1.a1.json", "SHOP-03.t1.a1.json"]
