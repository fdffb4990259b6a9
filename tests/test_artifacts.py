"""What a trial keeps beside its trace (webmcp_eval/play/browser/artifacts.py): screenshots and Playwright's trace.zip.

A screenshot is taken with the page's evidence (``on``) or at teardown once the
verdict is known (``only-on-failure``); the trace.zip rule is decided at
teardown from the verdict; the page's side of tracing is a fake that writes the
zip Playwright would (a session cookie in its network log), so the kept zip is
really redacted.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from tests.fake_page import FakePage, run
from webmcp_eval.play.browser.artifacts import Artifacts, artifact_name

SECRET = "wmcp-session-0123456789abcdef"


class FakeTracing:
    """TrialPage.stop_tracing: writes the zip where asked (``broken``: one Playwright left unreadable)."""

    def __init__(self, *, stops: bool = True, broken: bool = False) -> None:
        self.stops, self.broken = stops, broken
        self.stopped_with: list[str | None] = []

    async def stop_tracing(self, path: str | None) -> bool:
        self.stopped_with.append(path)
        if path and self.broken:
            Path(path).write_bytes(b"not a zip")
        elif path:
            record = {"snapshot": {"request": {"cookies": [{"name": "wmcp_session", "value": SECRET}]}}}
            with zipfile.ZipFile(path, "w") as z:
                z.writestr("trace.network", json.dumps(record) + "\n")
        return self.stops


def test_a_retried_attempt_names_its_own_files() -> None:
    assert artifact_name("SEL-01.t1", 1) == "SEL-01.t1"
    assert artifact_name("SEL-01.t1", 2) == "SEL-01.t1.a2"


@pytest.mark.parametrize(
    ("mode", "verdict"), [("retain-on-failure", "failed"), ("retain-on-failure", "not_run"), ("on", "passed")]
)
def test_the_trace_zip_is_kept_redacted_when_the_mode_and_verdict_say_so(tmp_path, mode, verdict) -> None:
    tracing = FakeTracing()
    kept = run(Artifacts(tmp_path, "CONF-01.t1", playwright_trace=mode).finish_tracing(tracing, verdict))
    zip_path = tmp_path / "playwright" / "CONF-01.t1.zip"
    assert kept == "../playwright/CONF-01.t1.zip" and tracing.stopped_with == [str(zip_path)]
    with zipfile.ZipFile(zip_path) as z:
        network = z.read("trace.network").decode()
    assert "wmcp_session" in network and SECRET not in network


def test_retain_on_failure_drops_the_trace_zip_of_a_passing_trial(tmp_path) -> None:
    tracing = FakeTracing()
    artifacts = Artifacts(tmp_path, "CONF-01.t1", playwright_trace="retain-on-failure")
    kept = run(artifacts.finish_tracing(tracing, "passed"))
    assert kept is None and tracing.stopped_with == [None]  # tracing stopped, nothing saved
    assert not (tmp_path / "playwright").exists()


def test_without_trace_tracing_is_never_touched(tmp_path) -> None:
    tracing = FakeTracing()
    assert run(Artifacts(tmp_path, "X.t1").finish_tracing(tracing, "failed")) is None
    assert tracing.stopped_with == []


def test_a_zip_that_cannot_be_redacted_is_not_kept(tmp_path) -> None:
    kept = run(Artifacts(tmp_path, "X.t1", playwright_trace="on").finish_tracing(FakeTracing(broken=True), "failed"))
    assert kept is None and not (tmp_path / "playwright" / "X.t1.zip").exists()


def test_a_trace_the_page_could_not_save_is_not_named_in_the_trace(tmp_path) -> None:
    kept = run(Artifacts(tmp_path, "X.t1", playwright_trace="on").finish_tracing(FakeTracing(stops=False), "failed"))
    assert kept is None


def test_a_screenshot_is_taken_and_named_relative_to_the_trace(tmp_path) -> None:
    shot = run(Artifacts(tmp_path, "SEL-01.t1.a2").screenshot(FakePage()))
    assert shot == "../screenshots/SEL-01.t1.a2.png"
    assert (tmp_path / "trials" / shot).resolve().is_file()


def test_no_screenshot_when_the_page_is_gone(tmp_path) -> None:
    gone = FakePage()
    gone.screenshot_fails = True
    assert run(Artifacts(tmp_path, "X.t1").screenshot(gone)) is None
    failing = Artifacts(tmp_path, "X.t1", screenshots="only-on-failure")
    assert run(failing.finish_screenshot(gone, "failed")) is None
    assert not (tmp_path / "screenshots" / "X.t1.png").exists()


VERDICTS = ("passed", "failed", "not_run", None)  # None: the trial ended before a verdict (never in a trace)


@pytest.mark.parametrize("verdict", VERDICTS)
@pytest.mark.parametrize(
    ("mode", "with_evidence", "at_teardown"),
    [
        ("on", True, set()),  # today's: with the ARIA snapshot, whatever the verdict
        ("off", False, set()),
        ("only-on-failure", False, {"failed", "not_run", None}),
    ],
)
def test_the_screenshot_mode_says_when_a_screenshot_is_taken(
    tmp_path, mode, with_evidence, at_teardown, verdict
) -> None:
    shot = "../screenshots/X.t1.png"
    page = FakePage()
    artifacts = Artifacts(tmp_path, "X.t1", screenshots=mode)
    assert run(artifacts.screenshot(page)) == (shot if with_evidence else None)
    (tmp_path / "screenshots" / "X.t1.png").unlink(missing_ok=True)
    assert run(artifacts.finish_screenshot(page, verdict)) == (shot if verdict in at_teardown else None)
    assert (tmp_path / "screenshots" / "X.t1.png").is_file() == (verdict in at_teardown)
