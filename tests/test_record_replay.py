"""Record and replay (docs/design.md) end to end: real browser, real proxy, real site — then no site at all."""

from __future__ import annotations

import contextlib
import http.server
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from eval_support import CASES, ROOT, cli, play

from webmcp_eval.play.evidence.fixture_store import FixtureStore
from webmcp_eval.play.run.settings import RunState
from webmcp_eval.proxies.fixture import load_fixture, save_fixture
from webmcp_eval.suite.loader import case_files
from webmcp_eval.trace import Trace

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def recorded(seed_run) -> tuple[Path, dict[str, str]]:
    """The whole suite recorded once (the session's seed run, tests/conftest.py): the fixture directory and each
    case's verdict. The tests below that change a fixture change their own copy."""
    traces = seed_run.traces
    assert all(t.network_mode == "record" for t in traces)
    _RECORDING_PROBLEMS.update({t.case_id: f"{t.verdict}: {t.verdict_reason}" for t in traces if t.verdict != "passed"})
    return seed_run.fixtures, {t.case_id: t.verdict for t in traces}


# Why a recorded trial did not pass, so a failure below says it instead of only "not_run".
_RECORDING_PROBLEMS: dict[str, str] = {}


def _copy(fixtures: Path, tmp_path: Path) -> Path:
    target = tmp_path / "fixtures"
    target.mkdir()
    for f in fixtures.glob("*.yaml"):
        (target / f.name).write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    return target


class CountingOrigin(http.server.ThreadingHTTPServer):
    hits = 0


@contextlib.contextmanager
def _origin_up(port: int) -> Iterator[CountingOrigin]:
    """A server on the recorded origin's port that answers every request with a 500 and counts them."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            self.server.hits += 1
            self.send_error(500)

        do_POST = do_GET  # noqa: N815

        def log_message(self, *args):
            pass

    origin = CountingOrigin(("127.0.0.1", port), Handler)
    threading.Thread(target=origin.serve_forever, daemon=True).start()
    try:
        yield origin
    finally:
        origin.shutdown()
        origin.server_close()


# The cases replayed unchanged: one of each behaviour, and each thing a replay serves that others do not: a goal
# case's conversation (AMB-01-G), a viewer in another time zone (SEL-02-LA), the site's change hook (STALE-02,
# CONF-05), its expire_session hook (RECOVERY-02), writes (ORD-02, REPEAT-03, CONF-04, a person's press), a
# case whose agent answers without a tool (NO-01), untrusted text (INJECT-01). Every case is recorded, and every
# fixture read, above.
UNCHANGED = (
    "SEL-02-LA", "ARG-01", "AMB-01-G", "STALE-02", "CONF-04", "CONF-05", "REPEAT-03", "NO-01", "ORD-02",
    "RECOVERY-02", "INJECT-01",
)  # fmt: skip


@pytest.fixture(scope="module")
def replayed(recorded, tmp_path_factory) -> tuple[dict[str, Trace], list[str], int]:
    """One replay run, offline, of the cases above and three changed copies of recorded fixtures: SEL-01's
    search answers two events where three were recorded, ARG-02's recording lacks its search, SEL-02's is
    older than the store's 30 days. The embedded site of the recording run is gone, so replay starts none and
    needs none; a server listens on the recorded origin's port meanwhile, so a request that went past the
    fixtures would be counted. The traces by case, the store's warnings and the origin's hits."""
    out = tmp_path_factory.mktemp("replayed")
    fixtures = _copy(recorded[0], out)
    edited = load_fixture(fixtures / "SEL-01.yaml")
    entry = next(e for e in edited.entries if e.key.startswith("GET /api/events?"))
    entry.response.body["events"] = entry.response.body["events"][:2]  # the deployment now answers differently
    save_fixture(edited, fixtures / "SEL-01.yaml")
    missing = load_fixture(fixtures / "ARG-02.yaml")
    missing.entries = [e for e in missing.entries if not e.key.startswith("GET /api/events?")]
    save_fixture(missing, fixtures / "ARG-02.yaml")
    old = load_fixture(fixtures / "SEL-02.yaml")
    old.recorded_at = "2020-01-01T00:00:00Z"
    save_fixture(old, fixtures / "SEL-02.yaml")
    store = FixtureStore(fixtures, "replay", max_age_days=30)
    port = urlsplit(edited.base_url).port
    assert port
    with _origin_up(port) as origin:
        ids = (*UNCHANGED, "SEL-01", "ARG-02", "SEL-02")
        traces = play(out, ids, network_mode="replay", state=RunState(fixtures=store), workers=4)
    return {t.case_id: t for t in traces}, store.warnings, origin.hits


def test_record_then_replay_gives_the_same_verdicts_with_no_site(recorded, replayed):
    _, verdicts = recorded
    assert set(verdicts.values()) == {"passed"} and len(verdicts) == len(case_files([CASES])), _RECORDING_PROBLEMS
    traces = [t for t in replayed[0].values() if t.case_id in (*UNCHANGED, "SEL-02")]  # SEL-02: only older
    assert len(traces) == len(UNCHANGED) + 1
    assert {t.case_id: t.verdict for t in traces} == {t.case_id: verdicts[t.case_id] for t in traces}
    assert all(t.network_mode == "replay" and t.network.requests > 0 for t in traces)
    assert all(not t.network.replay_misses for t in traces)


def test_replay_never_contacts_the_origin_even_when_it_is_up(replayed):
    traces, _, hits = replayed
    assert traces["NO-01"].verdict == "passed" and traces["ORD-02"].verdict == "passed"
    assert hits == 0  # not one request of the 14 trials, the one lacking an entry included


def test_an_edited_fixture_flips_the_verdict(replayed):
    trace = replayed[0]["SEL-01"]
    assert trace.verdict == "failed"
    failed = {a.id for a in trace.assertions if a.status == "failed"}
    assert "calls.expected[0]" in failed  # count 3 expected, 2 answered


def test_a_missing_entry_fails_loudly_and_names_the_request_and_the_fix(replayed):
    trace = replayed[0]["ARG-02"]
    assert trace.verdict == "failed"
    replay = next(a for a in trace.assertions if a.id == "network.replay")
    assert replay.status == "failed"
    assert "GET /api/events?query=WebMCP" in replay.why
    assert "webmcp-eval record ARG-02" in replay.why


def test_no_secret_in_any_fixture(recorded):
    fixtures, _ = recorded
    for path in fixtures.glob("*.yaml"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"wmcp_session=(?!REDACTED)", text), path
        for token in re.findall(r"csrfToken: (\S+)", text):
            assert token == "<redacted>", path
        assert "x-webmcp-eval-trial" not in text.lower()


def test_a_fixture_holds_its_age_revision_and_the_site_hooks(recorded):
    fixtures, _ = recorded
    fixture = load_fixture(fixtures / "CONF-01.yaml")
    assert fixture.recorded_at and fixture.site_revision and fixture.base_url
    assert [h.hook for h in fixture.hooks] == ["reset", "state", "state"]
    yaml.safe_load((fixtures / "CONF-01.yaml").read_text(encoding="utf-8"))  # readable text


def test_an_old_fixture_warns(replayed):
    _, warnings, _ = replayed
    assert len(warnings) == 1 and "webmcp-eval record SEL-02" in warnings[0]  # the fresh ones say nothing


def test_rerecording_shows_what_changed(recorded, tmp_path):
    fixtures = _copy(recorded[0], tmp_path)
    fixture = load_fixture(fixtures / "SEL-01.yaml")
    entry = next(e for e in fixture.entries if e.key.startswith("GET /api/events?"))
    entry.response.body["count"] = 99
    save_fixture(fixture, fixtures / "SEL-01.yaml")
    store = FixtureStore(fixtures, "record")
    play(tmp_path, ("SEL-01",), network_mode="record", state=RunState(fixtures=store))
    changed = "\n".join(store.diffs["SEL-01"])
    assert "~ changed: GET /api/events?city=taipei&level=beginner&price=free" in changed
    assert "99" in changed


def _replay_cli(out: Path) -> subprocess.CompletedProcess[str]:
    traces = sorted(str(p) for p in (ROOT / "traces" / "day26" / "trials").glob("*.json"))
    return cli("replay", *traces, "--out", str(out))


def test_the_day26_traces_replay_offline_twice_identically(tmp_path):
    first, second = _replay_cli(tmp_path / "a"), _replay_cli(tmp_path / "b")
    assert second.returncode == 0, second.stdout + second.stderr
    assert first.returncode == 0, first.stdout + first.stderr
    assert first.stdout.count("passed") == 2 and "same as recorded" in first.stdout
    for name in ("SEL-01.t1.replay.json", "SEL-02.t1.replay.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
