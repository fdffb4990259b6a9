"""The console report, ``summary.json`` and JUnit XML, rendered from :class:`webmcp_eval.results.Results`.

Nothing is computed here: every figure comes from the results layer. The case
pass rate (every assertion passed: the gate) and the per-assertion pass rate
(the diagnosis) always stand side by side (docs/statistics.md), per series: deterministic
and agent evidence are never pooled.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from webmcp_eval import as_user_knows
from webmcp_eval.report.sanitise import SafeConsole, xml
from webmcp_eval.results.run_results import (
    CONTROL,
    CaseResult,
    NoAgentPass,
    Results,
    SeriesResult,
    TrialFigures,
    as_results,
    money,
    num,
    pct,
    pts,
    seconds,
    series_label,
)
from webmcp_eval.results.stats import RateSummary, SuiteScore
from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.rundir.reading import trace_dir
from webmcp_eval.trace import Trace, write_atomic

VERDICT_STYLE = {"passed": "green", "failed": "bold red", "not_run": "yellow"}


# --------------------------------------------------------------------------- console


def score_line(score: SuiteScore | None) -> str:
    if score is None:
        return "no trial ran: no scores"
    cp, ap = score.case_pass, score.assertion_pass
    text = (
        f"case pass rate {pct(cp.mean)} ± {pts(cp.se)} (clustered by behaviour ± {pts(cp.clustered_se)})"
        f" · per-assertion pass rate "
        + (f"{pct(ap.mean)} ± {pts(ap.se)}" if ap else "—")
        + f" · over {score.n_cases} case(s)"
    )
    for k, at in score.pass_at.items():
        hat = score.pass_hat[k]
        if at.mean is not None and hat.mean is not None:
            text += f" · pass@{k} {at.mean:.2f} pass^{k} {hat.mean:.2f}"
    return text


def counts_text(s: SeriesResult | Results) -> str:
    c = s.counts
    text = f"{c.passed} passed, {c.failed} failed, {c.not_run} not_run"
    return text + (f", {c.missing} missing" if c.missing else "") + (f", {c.retried} retried" if c.retried else "")


def series_lines(s: SeriesResult) -> list[str]:
    """One series: counts, assertions and cost; then both rates with their errors and pass@k; then by behaviour."""
    lines = [
        f"{s.label}: {counts_text(s)} · {s.assertions_passed}/{s.assertions_counted} assertions passed"
        f" · {s.cost.tool_calls} tool calls · {seconds(s.cost.wall_ms)} of trials",
        "  " + score_line(s.score),
    ]
    if s.score and len(s.score.by_behaviour) > 1:
        parts = [f"{b} {pct(v.case_pass.mean)}" for b, v in sorted(s.score.by_behaviour.items())]
        lines.append("  by behaviour (case pass rate): " + " · ".join(parts))
    if s.by_purpose:
        parts = [f"{p} {pct(rate)} ({n} case(s))" for p, (n, rate) in s.by_purpose.items()]
        lines.append("  by purpose (case pass rate): " + " · ".join(parts))
    return lines


def _cost_cells(cost: Any) -> tuple[str, str]:
    return num(cost.tokens_per_trial, 0), money(cost.cost_per_trial)


def _assertion_cell(f: TrialFigures) -> str:
    extra = f" (+{f.assertions_not_run} not run)" if f.assertions_not_run else ""
    return f"{f.assertions_passed}/{f.assertions_counted}{extra}"


def _trial_table(results: Results) -> Table:
    table = Table(title=f"webmcp-eval — {len(results.trials)} trial(s)", title_justify="left")
    cols = ("case", "behaviour", "evidence", "verdict", "assertions", "writes", "tool calls", "time")
    for col in (*cols, "tokens", "cost"):
        table.add_column(col, justify="left" if col in cols[:4] else "right")
    for f in results.trials:
        t = f.trace
        table.add_row(
            escape(t.case_id),
            escape(t.behaviour),
            escape(series_label(f.series)),
            f"[{VERDICT_STYLE[t.verdict]}]{t.verdict}[/]",
            _assertion_cell(f),
            num(f.writes),
            str(f.tool_calls),
            seconds(t.duration_ms),
            num(f.tokens, 0),
            money(t.cost_usd),
        )
    return table


def _case_cells(s: SeriesResult, c: CaseResult, ks: list[int]) -> list[str]:
    cells = [
        escape(c.case_id),
        escape(c.behaviour),
        escape(s.label),
        f"{c.counts.passed}/{c.counts.ran}",
        str(c.counts.not_run) + (f" (+{c.counts.missing} missing)" if c.counts.missing else ""),
        pct(c.case_pass_rate),
        pct(c.assertion_pass_rate),
    ]
    for table in (c.pass_at, c.pass_hat):
        cells += ["—" if table[k] is None else f"{table[k]:.2f}" for k in ks]
    cost = c.cost
    return [*cells, num(cost.tool_calls_per_trial), seconds(cost.wall_ms_per_trial), *_cost_cells(cost)]


def _case_table(results: Results) -> Table:
    """Several trials per case: one row per case and series, with both rates and pass@k / pass^k."""
    ks = sorted({k for s in results.series for k in s.ks})
    rows = sum(len(s.cases) for s in results.series)
    table = Table(title=f"webmcp-eval — {rows} case(s) × trials", title_justify="left")
    cols = ["case", "behaviour", "evidence", "passed", "not run", "case pass", "per-assertion"]
    cols += [f"pass@{k}" for k in ks] + [f"pass^{k}" for k in ks] + ["tool calls", "time", "tokens", "cost"]
    for col in cols:
        table.add_column(col, justify="left" if col in ("case", "behaviour", "evidence") else "right")
    for s in results.series:
        for c in s.cases:
            table.add_row(*_case_cells(s, c, ks))
    return table


def print_console(
    results: Results | Sequence[Trace], out_dir: Path | None = None, console: Console | None = None
) -> None:
    results = as_results(results)
    console = console or SafeConsole()
    console.print(_case_table(results) if results.repeated else _trial_table(results))
    _print_problems(results, console)
    _print_warnings(results, console)
    _print_retried_and_flaky(results, console)
    console.print(
        f"[bold]{results.counts.passed} passed[/], [bold red]{results.counts.failed} failed[/], "
        f"[yellow]{results.counts.not_run} not_run[/]"
        + (f", [yellow]{results.counts.missing} missing[/]" if results.counts.missing else "")
        + (f", [yellow]{results.counts.retried} retried[/]" if results.counts.retried else "")
        + f" · {len(results.trials)} trial(s) in {len(results.series)} series"
    )
    style = "default" if results.completeness.state == "complete" else "yellow"
    console.print(results.completeness.text(), markup=False, highlight=False, style=style)
    for s in results.series:
        for line in series_lines(s):
            console.print(line, markup=False, highlight=False)
    if out_dir is not None:
        console.print(f"traces and reports: {out_dir}", markup=False, highlight=False)


def _print_problems(results: Results, console: Console) -> None:
    bad = results.problems
    if any(f.trace.evidence_kind != CONTROL for f in results.trials):  # the null agent beside an agent: its
        bad = [f for f in bad if f.trace.evidence_kind != CONTROL]  # failures are expected, its passes listed
    if not bad:
        return
    console.print("[bold]Why[/]")
    for f in bad:
        t = f.trace
        file = escape(as_user_knows(t.case_file))
        console.print(f"  [{VERDICT_STYLE[t.verdict]}]{escape(t.trial_id)} {t.verdict}[/] ({file})")
        # A trial that could not run has only partial evidence: show why, not its half-made assertions.
        if t.verdict == "failed":
            for a in t.assertions:
                if a.status == "failed":
                    by = "" if a.grader == "code" else f" [{a.grader} grader]"  # another kind of evidence
                    console.print(f"    ✗ {a.description}: {a.why}{by}", markup=False, highlight=False)
        else:
            console.print(f"    – {t.verdict_reason}", markup=False, highlight=False)


def _print_warnings(results: Results, console: Console) -> None:
    """What is worth a look though no assertion asked (a shim/DevTools disagreement)."""
    warned = [f.trace for f in results.trials if f.trace.warnings]
    if not warned:
        return
    console.print("[bold yellow]Warnings[/]")
    for t in warned:
        for warning in t.warnings:
            console.print(f"  ⚠ {t.trial_id}: {warning}", markup=False, highlight=False)


def _print_retried_and_flaky(results: Results, console: Console) -> None:
    """Trials played again after an infrastructure failure, and cases the reference agent passed only sometimes."""
    if results.retried:
        console.print("[bold yellow]Retried[/] (an infrastructure failure; the last attempt is the verdict)")
        for f in results.retried:
            line = f"  ↻ {f.trace.trial_id} {f.trace.verdict} after {f.retry_text()}"
            console.print(line, markup=False, highlight=False)
    if results.flaky:
        console.print("[bold yellow]Flaky[/] (the same plan passed and failed: the site behaved differently)")
        for c in results.flaky:
            console.print(f"  ≈ {c.flaky_text()}", markup=False, highlight=False)
    if results.passes_with_no_agent:
        console.print("[bold yellow]Passes with no agent[/] (a case a do-nothing agent passes measures no agent)")
        for n in results.passes_with_no_agent:
            console.print(f"  ∅ {n.text()}", markup=False, highlight=False)


# --------------------------------------------------------------------------- summary.json


def _rate(r: RateSummary | None) -> dict[str, Any] | None:
    if r is None:
        return None
    return {
        "mean": r.mean,
        "se": r.se,
        "clustered_se": r.clustered_se,
        "n_cases": r.n_cases,
        "n_clusters": r.n_clusters,
    }


def _case_json(c: CaseResult) -> dict[str, Any]:
    return {
        "case_id": c.case_id,
        "behaviour": c.behaviour,
        "purpose": c.purpose or None,
        **c.counts.as_dict(),
        "case_pass_rate": c.case_pass_rate,
        "assertion_pass_rate": c.assertion_pass_rate,
        "assertions": {"passed": c.assertions_passed, "counted": c.assertions_counted},
        "pass_at": {str(k): v for k, v in c.pass_at.items() if v is not None},
        "pass_hat": {str(k): v for k, v in c.pass_hat.items() if v is not None},
        "cost": c.cost.as_dict(),
        "missing": list(c.missing),
        "flaky": c.flaky,
        "trials": [{"trial_id": f.trace.trial_id, "run_id": f.trace.run_id, "verdict": f.verdict} for f in c.trials],
    }


def series_json(s: SeriesResult) -> dict[str, Any]:
    score = s.score
    return {
        "key": list(s.key),
        "label": s.label,
        "evidence_kind": s.kind,
        **s.counts.as_dict(),
        "case_pass_rate": _rate(score.case_pass) if score else None,
        "assertion_pass_rate": _rate(score.assertion_pass) if score else None,
        "assertions": {"passed": s.assertions_passed, "counted": s.assertions_counted},
        "pass_at": {str(k): {"mean": v.mean, "se": v.se, "n_cases": v.n_cases} for k, v in score.pass_at.items()}
        if score
        else {},
        "pass_hat": {str(k): {"mean": v.mean, "se": v.se, "n_cases": v.n_cases} for k, v in score.pass_hat.items()}
        if score
        else {},
        "by_behaviour": {
            b: {"case_pass_rate": v.case_pass.mean, "n_cases": v.case_pass.n} for b, v in score.by_behaviour.items()
        }
        if score
        else {},
        "by_purpose": {p: {"case_pass_rate": rate, "n_cases": n} for p, (n, rate) in s.by_purpose.items()},
        "cost": s.cost.as_dict(),
        "cases": [_case_json(c) for c in s.cases],
    }


TraceDirs = Path | Mapping[str, Path] | None


def _trace_link(t: Trace, report_dir: Path | None, trace_dirs: TraceDirs, name: str | None = None) -> str:
    """A file beside the trace (its own by default) relative to the report's directory.

    A merged report points into each shard's directory; ``name`` is relative to the trace's
    directory, as the trace itself writes it (an earlier attempt: ``../attempts/…``).
    """
    name = name or f"{t.trial_id}.json"
    if report_dir is None:
        return os.path.normpath(f"{RunDir.TRIALS}/{name}").replace(os.sep, "/")
    path = trace_dir(t, report_dir, trace_dirs) / name
    return os.path.relpath(os.path.normpath(path.absolute()), report_dir.absolute()).replace(os.sep, "/")


def _trial_json(f: TrialFigures, report_dir: Path | None = None, trace_dirs: TraceDirs = None) -> dict[str, Any]:
    t = f.trace
    return {
        "trial_id": t.trial_id,
        "run_id": t.run_id,
        "case_id": t.case_id,
        "behaviour": t.behaviour,
        "series": series_label(f.series),
        "evidence_kind": t.evidence_kind,
        "agent": t.agent,
        "model": t.model,
        "verdict": t.verdict,
        "reason": t.verdict_reason,
        "not_run_kind": t.not_run_kind,
        "attempt": t.attempt,
        "earlier_attempts": [
            {**a.model_dump(), "trace": _trace_link(t, report_dir, trace_dirs, a.trace)} for a in t.earlier_attempts
        ],
        "assertions_passed": f.assertions_passed,
        "assertions_counted": f.assertions_counted,
        "assertions_not_run": f.assertions_not_run,
        "tool_calls": f.tool_calls,
        "writes": f.writes,
        "duration_ms": t.duration_ms,
        "tokens": f.tokens,
        "cost_usd": t.cost_usd,
        "trace": _trace_link(t, report_dir, trace_dirs),
    }


def summary_json(
    results: Results, extra: dict[str, Any] | None = None, report_dir: Path | None = None, trace_dirs: TraceDirs = None
) -> dict[str, Any]:
    """The JSON summary: counts over everything; every rate only per series; trace paths from report_dir."""
    return {
        "summary": {**results.counts.as_dict(), "completeness": results.completeness.state},
        **(extra or {}),
        "completeness": results.completeness.as_dict(),
        "series": [series_json(s) for s in results.series],
        "retried": [f.trace.trial_id for f in results.retried],
        "flaky": [c.case_id for c in results.flaky],
        "passes_with_no_agent": [
            {"case": n.case_id, "seen": n.seen, "explained": bool(n.reason), "reason": n.reason}
            for n in results.passes_with_no_agent
        ],
        "trials": [_trial_json(f, report_dir, trace_dirs) for f in results.trials],
    }


def write_json(
    results: Results | Sequence[Trace], path: Path, extra: dict[str, Any] | None = None, trace_dirs: TraceDirs = None
) -> None:
    data = summary_json(as_results(results), extra, path.parent, trace_dirs)
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------- JUnit


def _suite(parent: ET.Element, s: SeriesResult, no_agent: dict[str, NoAgentPass] | None = None) -> None:
    suite = ET.SubElement(
        parent,
        "testsuite",
        name=f"webmcp-eval.{s.label}",
        tests=str(s.counts.trials + s.counts.missing),
        failures=str(s.counts.failed),
        skipped=str(s.counts.not_run + s.counts.missing),
        errors="0",
        time=f"{s.cost.wall_ms / 1000:.3f}",
    )
    for c in s.cases:
        for f in c.trials:
            t = f.trace
            tc = ET.SubElement(
                suite,
                "testcase",
                classname=f"webmcp-eval.{t.behaviour}",
                name=t.trial_id,
                file=c.case_file,  # the case's file as the user knows it (run_results.py)
                time=f"{t.duration_ms / 1000:.3f}",
            )
            _junit_properties(tc, f, c, (no_agent or {}).get(c.case_id))
            # the trial's verdict on this series' evidence: a model grader's fail is not a code check's
            if f.verdict == "failed":
                failed = [a for a in f.assertions if a.status == "failed"]
                node = ET.SubElement(tc, "failure", message=f.reason[:500])
                node.text = "\n".join(f"{a.id}: {a.description}: {a.why}" for a in failed)
            elif f.verdict == "not_run":
                ET.SubElement(tc, "skipped", message=f.reason[:500])
            if f.retried:  # after the outcome, as the JUnit schema orders a testcase's children
                ET.SubElement(tc, "system-out").text = f"retried: {f.retry_text()}"
        for trial_id in c.missing:
            tc = ET.SubElement(suite, "testcase", classname=f"webmcp-eval.{c.behaviour or 'unknown'}", name=trial_id)
            tc.set("file", c.case_file)
            ET.SubElement(tc, "skipped", message="planned, but no trace: the run is incomplete")


def _junit_properties(tc: ET.Element, f: TrialFigures, case: CaseResult, no_agent: NoAgentPass | None = None) -> None:
    """A retried trial says how many attempts it took and why; a flaky case's trials say so; a case
    that says its purpose (capability or regression) gives it, so CI views can group by it."""
    props: list[tuple[str, str]] = []
    if case.purpose:
        props.append(("purpose", case.purpose))
    if f.retried:
        props.append(("attempts", str(f.attempts)))
    if case.flaky:
        props.append(("flaky", case.flaky_text()))
    if no_agent is not None:
        props.append(("passes_with_no_agent", no_agent.text()))
    if props:
        node = ET.SubElement(tc, "properties")
        for name, value in props:
            ET.SubElement(node, "property", name=name, value=value)


def _xml_safe(root: ET.Element) -> None:
    """Every attribute and text of the document as XML 1.0 can hold it (a page error's control characters)."""
    for node in root.iter():
        node.attrib = {k: xml(v) for k, v in node.attrib.items()}
        if node.text:
            node.text = xml(node.text)


def write_junit(results: Results | Sequence[Trace], path: Path) -> None:
    """JUnit XML: one testsuite per series, one testcase per trial; failed → <failure>, not_run → <skipped>."""
    results = as_results(results)
    c = results.counts
    root = ET.Element(
        "testsuites",
        name="webmcp-eval",
        tests=str(c.trials + c.missing),
        failures=str(c.failed),
        skipped=str(c.not_run + c.missing),
        errors="0",
        time=f"{sum(f.trace.duration_ms for f in results.trials) / 1000:.3f}",
    )
    no_agent = {n.case_id: n for n in results.passes_with_no_agent}
    for s in results.series:
        _suite(root, s, no_agent)
    _xml_safe(root)
    ET.indent(root)
    write_atomic(path, ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n")
