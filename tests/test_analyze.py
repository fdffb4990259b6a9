"""`webmcp-eval analyze`: failing trials grouped across runs, and a model's hypothesis per group.

The grouping is pinned on a mixed fixture of three runs (traces written here:
repeated failures with different numbers, a new failure, a fixed one, a
not_run trial, an advisory grader failure). The model part runs against the
scripted model server: quotes are checked against the trace, a recording
replays offline, a cassette miss leaves the group unexplained, and no trace
changes. One end-to-end test plays seed cases twice against the demo site, the
second time with a site bug switched on, and analyze names the failing group.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from eval_support import cli, in_thread, play

from tests.fake_llm import FAKE_KEY, FakeLLM, Say, closed_port_url
from tests.fake_llm import Conversation as Heard
from webmcp_eval.judge.analyst import explain_all, make_analyst
from webmcp_eval.llm.config import ModelConfig
from webmcp_eval.play.run.settings import RunState, TrialHooks
from webmcp_eval.report.analysis_report import console_lines, markdown
from webmcp_eval.results.analysis import analyse
from webmcp_eval.trace import Assertion, ToolCall, Trace, write_trace

KEY_ENV = "WEBMCP_EVAL_TEST_MODEL_KEY"


def _trace(run: str, case: str, verdict: str, failing: list[tuple[str, str]] = (), advisory: bool = False) -> Trace:
    assertions = [Assertion(id="calls.catalog", kind="catalog", description="only active tools", status="passed")]
    assertions += [
        Assertion(id=i, kind=i.split(".")[0], description=f"check {i}", status="failed", why=w) for i, w in failing
    ]
    if advisory:
        assertions.append(
            Assertion(
                id="answer.rubric.x", kind="rubric", description="x", status="failed", grader="model", gates=False
            )
        )
    return Trace(
        run_id=run,
        trial_id=f"{case}.t1",
        case_id=case,
        behaviour="selection",
        start_route="/events",
        verdict=verdict,  # type: ignore[arg-type]
        not_run_kind="infrastructure" if verdict == "not_run" else None,
        calls=[ToolCall(index=0, step=0, tool="search_events", args={"city": "taipei"}, result={"count": 5})],
        ai_result="找到 5 個活動。",
        assertions=assertions,
    )


MISSING_CALL = ("calls.expected[0]", "search_events answered count 5, expected 3")
MIXED = {
    "run-a": [
        _trace("run-a", "SEL-01", "failed", [MISSING_CALL]),
        _trace("run-a", "ORD-02", "passed"),
        _trace("run-a", "NO-01", "failed", [("network.writes[total]", "1 seen: POST /api/saved")]),
        _trace("run-a", "CONF-01", "not_run"),
    ],
    "run-b": [
        _trace("run-b", "SEL-01", "failed", [("calls.expected[0]", "search_events answered count 4, expected 3")]),
        _trace("run-b", "ORD-02", "passed"),
        _trace("run-b", "NO-01", "passed"),
        _trace("run-b", "CONF-01", "passed"),
    ],
    "run-c": [
        _trace("run-c", "SEL-01", "failed", [MISSING_CALL]),
        _trace("run-c", "ORD-02", "failed", [("state.after[saved]", "saved has 2 items")], advisory=True),
        _trace("run-c", "NO-01", "passed"),
        _trace("run-c", "CONF-01", "passed", advisory=True),
    ],
}


@pytest.fixture
def runs(tmp_path) -> list[Path]:
    dirs = []
    for name, traces in MIXED.items():
        for t in traces:
            write_trace(t, tmp_path / name / "trials")
        dirs.append(tmp_path / name)
    return dirs


def _analysis(runs: list[Path]):
    from webmcp_eval.rundir.reading import read_traces

    return analyse([(d.name, d, read_traces(d)) for d in runs])


def test_the_grouping_is_pinned_on_a_mixed_fixture(runs):
    a = _analysis(runs)
    assert (a.runs, a.trials, a.failed_trials) == (["run-a", "run-b", "run-c"], 12, 5)
    assert [(g.assertion, g.message, len(g.trials), g.cases, g.runs) for g in a.groups] == [
        ("calls.expected[0]", "search_events answered count N, expected N", 3, ["SEL-01"], ["run-a", "run-b", "run-c"]),
        ("network.writes[total]", "N seen: POST /api/saved", 1, ["NO-01"], ["run-a"]),
        ("state.after[saved]", "saved has N items", 1, ["ORD-02"], ["run-c"]),  # the advisory grader's is no reason
    ]
    assert [(c.case_id, c.pattern, c.failed_in, c.played_in) for c in a.cases] == [
        ("NO-01", "some", ("run-a",), ("run-a", "run-b", "run-c")),
        ("ORD-02", "new", ("run-c",), ("run-a", "run-b", "run-c")),
        ("SEL-01", "every", ("run-a", "run-b", "run-c"), ("run-a", "run-b", "run-c")),
    ]  # CONF-01 never failed (not_run once): not listed
    first = a.groups[0].trials[0]
    assert first.trace_file == runs[0] / "trials" / "SEL-01.t1.json" and first.trace_file.is_file()
    assert first.why == "search_events answered count 5, expected 3"  # each trial keeps its own message


def test_a_single_run_fails_in_every_run(runs):
    a = _analysis(runs[:1])
    assert {c.case_id: c.pattern for c in a.cases} == {"NO-01": "every", "SEL-01": "every"}


def test_the_views_show_groups_patterns_and_links(runs, tmp_path):
    a = _analysis(runs)
    md = markdown(a, tmp_path)
    assert "## Why the runs failed: 3 run(s), 12 trial(s), 5 failed, in 3 failure group(s)" in md
    assert "| ORD-02 | newly (only in the last run) | run-c | run-a, run-b, run-c | 1 |" in md
    assert "### 1. `calls.expected[0]` — 3 failing trial(s)" in md
    assert "- [run-b SEL-01.t1](run-b/trials/SEL-01.t1.json)" in md
    lines = console_lines(a)
    assert lines[0] == "analyze: 3 run(s), 12 trial(s), 5 failed, in 3 failure group(s) (run-a, run-b, run-c)"
    assert "  failing in every run: SEL-01" in lines and "  failing newly (only in the last run): ORD-02" in lines


def test_the_command_writes_html_and_markdown_and_refuses_what_is_not_a_run(runs, tmp_path):
    out = cli("analyze", *map(str, runs), "--markdown", str(tmp_path / "md" / "analysis.md"))
    assert out.returncode == 0, out.stderr
    assert "calls.expected[0] — 3 failing trial(s) in SEL-01" in out.stdout
    page = (runs[-1] / "analysis.html").read_text(encoding="utf-8")
    assert 'href="../run-a/trials/SEL-01.t1.json"' in page and "newly (only in the last run)" in page
    assert "](../run-a/trials/SEL-01.t1.json)" in (tmp_path / "md" / "analysis.md").read_text(encoding="utf-8")
    bad = cli("analyze", str(tmp_path / "nope"))
    assert (
        bad.returncode == 2 and bad.stderr.strip() == f"{tmp_path / 'nope'}: not a run directory"  # as report says it
    )
    assert cli("analyze", "--help").returncode == 0
    for flag in ("--html", "--markdown"):  # a folder given for a file: one line, exit 2, nothing written
        folder = cli("analyze", *map(str, runs), flag, str(tmp_path))
        assert folder.returncode == 2 and folder.stderr.strip() == (
            f"webmcp-eval analyze: {flag} {tmp_path}: is a directory; give a file path"
        ), folder.stderr
    trace = runs[0] / "trials" / "SEL-01.t1.json"
    before = trace.read_bytes()
    over = cli("analyze", *map(str, runs), "--html", str(trace))  # a trace it reads is never replaced
    assert over.returncode == 2 and "a file of the run" in over.stderr and trace.read_bytes() == before


# ---- with a model ------------------------------------------------------------------------------------


def scripted_analyst(conv: Heard) -> Say:
    """Names a hypothesis and quotes one real field and one that is not in the evidence."""
    evidence = json.loads(conv.first_user.split("\n\n", 1)[1])
    check = evidence["check"]["id"]
    hypothesis = "tool_or_site" if check.startswith("calls") else "agent_logic"
    quotes = [
        {"field": "trials[0].calls[0].result.count", "value": evidence["trials"][0]["calls"][0]["result"]["count"]},
        {"field": "trials[0].calls[0].args.city", "value": "kaohsiung"},  # wrong: the trace says taipei
    ]
    return Say(json.dumps({"hypothesis": hypothesis, "reasoning": f"{check}: the evidence says so.", "quotes": quotes}))


@pytest.fixture(scope="module")
def llm():
    with FakeLLM({"analyst": scripted_analyst}) as server:
        yield server


def _explain(runs: list[Path], base: str, mode: str, cassettes: Path):
    a = _analysis(runs)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(KEY_ENV, FAKE_KEY)
        analyst = make_analyst(ModelConfig("openai", "analyst", base, KEY_ENV, mode, cassettes))
    in_thread(asyncio.run, explain_all(analyst, a.groups))
    return a


def test_a_model_names_a_hypothesis_per_group_and_its_quotes_are_checked(runs, llm, tmp_path):
    before = {p: p.read_bytes() for d in runs for p in (d / "trials").iterdir()}
    a = _explain(runs, llm.openai_base, "record", tmp_path / "cassettes")
    e = a.groups[0].explanation
    assert e["hypothesis"] == "tool_or_site" and e["reasoning"].startswith("calls.expected[0]")
    assert [(q["field"], q["value"], q["verified"]) for q in e["quotes"]] == [
        ("trials[0].calls[0].result.count", 5, True),
        ("trials[0].calls[0].args.city", "kaohsiung", False),
    ]
    assert a.groups[2].explanation["hypothesis"] == "agent_logic"
    md = markdown(a, tmp_path)
    assert "**the tool or the site: calls.expected[0]: the evidence says so.**" in md
    assert "- `trials[0].calls[0].args.city` = `'kaohsiung'` *(not in the trace as quoted)*" in md
    assert {p: p.read_bytes() for p in before} == before  # no trace, and so no verdict, changed
    count = llm.count("analyst")
    replayed = _explain(runs, closed_port_url() + "/v1", "replay", tmp_path / "cassettes")
    assert llm.count("analyst") == count  # offline
    assert [g.explanation["quotes"] for g in replayed.groups] == [g.explanation["quotes"] for g in a.groups]
    missed = _explain(runs, closed_port_url() + "/v1", "replay", tmp_path / "elsewhere")
    assert all("no model cassette" in g.explanation["error"] for g in missed.groups)
    assert "no explanation: the analyst could not answer" in console_lines(missed)[3]


# ---- end to end: two runs of seed cases, the second with a site bug ----------------------------------


@pytest.mark.browser
def test_analyze_of_two_seed_runs_names_the_planted_failure(tmp_path):
    ids = ("SEL-01", "SEL-02", "ORD-02", "NO-01")
    clean = play(tmp_path, ids, run_id="before", workers=2)
    seam = TrialHooks(breaks=("search_relaxes_filters",))
    broken = play(tmp_path, ids, run_id="after", workers=2, state=RunState(trial_hooks=seam))
    assert all(t.verdict == "passed" for t in clean)
    assert any(t.verdict == "failed" for t in broken)
    out = cli("analyze", str(tmp_path / "before"), str(tmp_path / "after"), "--markdown", str(tmp_path / "a.md"))
    assert out.returncode == 0, out.stderr
    md = (tmp_path / "a.md").read_text(encoding="utf-8")
    # the site bug shows as SEL-01's search answering more than the three events: its result check fails
    assert re.search(r"### \d\. `calls\.expected\[0\]` — 1 failing trial\(s\)\n\ncalls search_events", md), md
    assert "newly" in out.stdout and "calls.expected[0] — 1 failing trial(s) in SEL-01" in out.stdout
    assert "| SEL-01 | newly (only in the last run) | after | before, after | 1 |" in md
    assert "](after/trials/SEL-01.t1.json)" in md
