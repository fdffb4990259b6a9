"""The run report's trend (webmcp_eval/report/trend.py): a runs folder of earlier runs, each written by the
project's own writers (plan, run.json, traces) and reported by `webmcp-eval report` as a person would, then the
report of the last run read back: its rows in order with their rates, the case grid, another suite kept apart,
a broken folder skipped with a note, --history and --no-history."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from eval_support import cli

from webmcp_eval.rundir.plan import make_plan, write_plan
from webmcp_eval.rundir.run_info import write_run_info
from webmcp_eval.trace import Assertion, Trace, write_trace


def _trace(run_id: str, case_id: str, verdict: str) -> Trace:
    status = "passed" if verdict == "passed" else "failed"
    return Trace(
        run_id=run_id,
        trial_id=f"{case_id}.t1",
        case_id=case_id,
        case_file=f"cases/{case_id}.yaml",
        behaviour="selection" if case_id.startswith("SEL") else "ordering",
        title=case_id,
        start_route="/",
        assertions=[Assertion(id="a", kind="calls", description="d", status=status, why="w")],
        verdict=verdict,
        verdict_reason="r",
        duration_ms=10.0,
    )


def _run(root: Path, run_id: str, at: str, verdicts: dict[str, str], revision: str = "") -> Path:
    """A run folder as `run` leaves it: its plan (planned at ``at``), run.json, a trace per case; then its
    summary.json, by `webmcp-eval report --json`, as `run` writes it at its end."""
    run_dir = root / run_id
    plan = make_plan(run_id, [(c, f"cases/{c}.yaml") for c in verdicts], 1, agent="reference", model=None,
                     evidence_kind="deterministic")  # fmt: skip
    write_plan(run_dir, {**plan, "created_at": at})
    site = {"name": "demo", "revision": revision} if revision else {}
    write_run_info(run_dir, {"run_id": run_id, "base_url": f"http://127.0.0.1:9/{run_id}", "site": site})
    for case_id, verdict in verdicts.items():
        write_trace(_trace(run_id, case_id, verdict), run_dir / "trials")
    done = cli("report", str(run_dir), "--json", str(run_dir / "summary.json"), "--no-history")
    assert done.returncode in (0, 1), done.stderr
    return run_dir


def _report(run_dir: Path, *flags: str) -> tuple[int, str]:
    """`webmcp-eval report RUN_DIR --html RUN_DIR/report.html`: its exit code and the page."""
    done = cli("report", str(run_dir), "--html", str(run_dir / "report.html"), *flags)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, (run_dir / "report.html").read_text(encoding="utf-8")


def _section(html: str) -> str:
    start = html.index('<section id="trend">')
    return html[start : html.index("</section>", start)]


def _rows(section: str) -> list[tuple[str, str]]:
    """(run id, case pass rate) of each row of the trend's table, top to bottom."""
    rows = re.findall(r'data-run="([^"]+)">.*?<td class="num rate">([^<]+)</td>', section, re.S)
    return [(run, rate) for run, rate in rows]


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    root = tmp_path / "traces"
    _run(root, "r1", "2026-12-01T10:00:00+00:00", {"SEL-01": "passed", "ORD-01": "failed"}, "aaa111")
    _run(root, "r2", "2026-12-02T10:00:00+00:00", {"SEL-01": "failed", "ORD-01": "failed"}, "bbb222")
    _run(root, "other", "2026-12-02T12:00:00+00:00", {"SEL-01": "passed"})  # another suite: one case
    _run(root, "r3", "2026-12-03T10:00:00+00:00", {"SEL-01": "passed", "ORD-01": "passed"}, "ccc333")
    return root


def test_the_trend_shows_the_runs_of_the_same_cases_oldest_first_with_their_rates(runs: Path) -> None:
    code, html = _report(runs / "r3")
    assert code == 0
    section = _section(html)
    assert _rows(section) == [("r1", "50.0%"), ("r2", "0.0%"), ("r3", "100.0%")]
    assert "2 earlier run(s)" in section and "(this run)" in section
    assert "demo @ aaa111" in section and "http://127.0.0.1:9/r2" in section
    assert "2026-12-01 10:00" in section and section.index("2026-12-01") < section.index("2026-12-03")
    grid = {case: re.findall(r'class="outcome (\w+)"', row) for case, row in
            re.findall(r'<div class="trend-case" data-case="([^"]+)">(.*?)</div>', section, re.S)}  # fmt: skip
    assert grid == {"ORD-01": ["failed", "failed", "passed"], "SEL-01": ["passed", "failed", "passed"]}
    assert 'data-run="other"' not in section  # another suite is never a row
    assert "not comparable: other: another case set (1 case(s); 0 not in this run, 1 of this run" in section
    assert html.count("<script") == 1 and '<a href="#trend">Trend</a>' in html  # our one pinned script, no more


def test_an_earlier_run_is_only_one_planned_before_and_the_last_ten_at_most(runs: Path) -> None:
    """The report of r2 sees r1 only (r3 came after); of eleven earlier runs the last ten show."""
    code, html = _report(runs / "r2")
    assert code == 1 and _rows(_section(html)) == [("r1", "50.0%"), ("r2", "0.0%")]
    for i in range(10):
        _run(runs, f"s{i}", f"2026-12-02T11:0{i}:00+00:00", {"SEL-01": "passed", "ORD-01": "passed"})
    rows = [run for run, _ in _rows(_section(_report(runs / "r3")[1]))]
    assert rows == [*(f"s{i}" for i in range(10)), "r3"]  # r1 and r2, the oldest, left out


def test_a_single_run_says_there_is_no_earlier_run(tmp_path: Path) -> None:
    run = _run(tmp_path, "only", "2026-12-01T10:00:00+00:00", {"SEL-01": "passed"})
    section = _section(_report(run)[1])
    assert "No earlier run of these cases" in section and "<table" not in section


def test_a_broken_or_unreported_run_folder_is_skipped_with_a_note(runs: Path) -> None:
    (runs / "broken").mkdir()
    (runs / "broken" / "plan.json").write_text("{not json", encoding="utf-8")
    unreported = _run(runs, "r0", "2026-11-30T10:00:00+00:00", {"SEL-01": "passed", "ORD-01": "passed"})
    (unreported / "summary.json").unlink()
    (runs / "drafts").mkdir()  # a folder that holds no run: not a word
    (runs / "stray.txt").write_text("x", encoding="utf-8")
    code, html = _report(runs / "r3")
    section = _section(html)
    assert code == 0 and [run for run, _ in _rows(section)] == ["r1", "r2", "r3"]
    assert "skipped: broken: " in section and "plan.json" in section
    assert "skipped: r0: summary.json: no such file" in section
    assert f"webmcp-eval report {unreported} --json {unreported / 'summary.json'}" in section
    assert "drafts" not in section


def test_history_points_at_another_folder_and_no_history_leaves_the_section_out(runs: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    _run(elsewhere, "e1", "2026-11-01T10:00:00+00:00", {"SEL-01": "failed", "ORD-01": "passed"})
    assert _rows(_section(_report(runs / "r3", "--history", str(elsewhere))[1])) == [("e1", "50.0%"), ("r3", "100.0%")]
    html = _report(runs / "r3", "--no-history")[1]
    assert 'id="trend"' not in html and "#trend" not in html
    merged = tmp_path / "merged"
    cli("report", str(runs / "r1"), str(runs / "r3"), "--out", str(merged))
    assert 'id="trend"' not in (merged / "report.html").read_text(encoding="utf-8")  # no one run's folder


def test_history_mistakes_are_one_line_and_exit_2(runs: Path, tmp_path: Path) -> None:
    done = cli("report", str(runs / "r3"), "--history", str(tmp_path / "nope"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--history" in done.stderr, done.stderr
    assert "not a folder" in done.stderr
    both = cli("report", str(runs / "r3"), "--history", str(runs), "--no-history")
    assert both.returncode == 2 and both.stderr.count("\n") == 1 and "not allowed with" in both.stderr
    run = cli("run", "SEL-01", "--history", str(tmp_path / "nope"), "--out", str(tmp_path / "o"))
    assert run.returncode == 2 and "--history" in run.stderr and "not a folder" in run.stderr, run.stderr


@pytest.mark.parametrize("command", ["report", "run"])
def test_help_names_history_and_no_history(command: str) -> None:
    out = cli(command, "--help").stdout
    assert "--history DIR" in out and "--no-history" in out and "trend" in out
