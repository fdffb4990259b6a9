"""Reports built from traces alone: console table, JSON summary, JUnit XML.

The case pass rate (every assertion passed: the gate) and the per-assertion
pass rate (the diagnosis) always stand side by side (seed 003).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from rich.console import Console
from rich.table import Table

from runner.stats import CaseScore, SuiteScore
from runner.trace import Trace, write_atomic

VERDICT_STYLE = {"passed": "green", "failed": "bold red", "not_run": "yellow"}


def summarise(traces: list[Trace]) -> dict[str, Any]:
    by_verdict: dict[str, int] = defaultdict(int)
    for t in traces:
        by_verdict[t.verdict] += 1
    ran = [t for t in traces if t.verdict != "not_run"]
    assertions = [a for t in ran for a in t.assertions if a.status != "not_run"]
    return {
        "trials": len(traces),
        "passed": by_verdict["passed"],
        "failed": by_verdict["failed"],
        "not_run": by_verdict["not_run"],
        "case_pass_rate": (by_verdict["passed"] / len(ran)) if ran else None,
        "assertion_pass_rate": (sum(a.status == "passed" for a in assertions) / len(assertions))
        if assertions
        else None,
        "assertions": {"passed": sum(a.status == "passed" for a in assertions), "total": len(assertions)},
        "tool_calls": sum(len(t.calls) for t in traces),
        "mutations": sum(t.mutation_total for t in traces),
        "duration_ms": round(sum(t.duration_ms for t in traces), 1),
    }


def suite_score(traces: list[Trace]) -> SuiteScore | None:
    """Per-case scores over the trials that ran (not_run is no evidence), then the suite's."""
    by_case: dict[str, list[Trace]] = defaultdict(list)
    for t in traces:
        if t.verdict != "not_run":
            by_case[t.case_id].append(t)
    if not by_case:
        return None
    rows = []
    for case_id, trials in by_case.items():
        score = CaseScore.from_trials(
            (t.verdict == "passed", t.assertions_passed, sum(a.status != "not_run" for a in t.assertions))
            for t in trials
        )
        rows.append((case_id, trials[0].behaviour, score))
    max_n = max(s.n for _, _, s in rows)
    ks = [k for k in (3, 5) if k <= max_n]  # pass@1 is the case pass rate itself
    return SuiteScore.from_cases(rows, ks=ks)


def score_line(score: SuiteScore | None) -> str:
    if score is None:
        return "no trial ran: no scores"
    cp, ap = score.case_pass, score.assertion_pass
    text = (
        f"case pass rate {_pct(cp.mean)} ± {cp.se * 100:.1f} (clustered by behaviour ± {cp.clustered_se * 100:.1f})"
        f" · per-assertion pass rate "
        + (f"{_pct(ap.mean)} ± {ap.se * 100:.1f}" if ap else "—")
        + f" · over {score.n_cases} case(s)"
    )
    for k, at in score.pass_at.items():
        hat = score.pass_hat[k]
        if at.mean is not None and hat.mean is not None:
            text += f" · pass@{k} {at.mean:.2f} pass^{k} {hat.mean:.2f}"
    return text


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def _tokens(t: Trace) -> int:
    return sum(t.tokens.values()) if t.tokens else 0


def _cost_cells(trials: list[Trace]) -> tuple[str, str]:
    """Tokens and money per trial, or a dash when no model spent any."""
    tokens = [_tokens(t) for t in trials]
    money = [t.cost_usd for t in trials if t.cost_usd is not None]
    tok = f"{sum(tokens) / len(trials):.0f}" if any(tokens) else "—"
    usd = f"${sum(money) / len(money):.4f}" if money else "—"
    return tok, usd


def _trial_table(traces: list[Trace]) -> Table:
    table = Table(title=f"webmcp-eval — {len(traces)} trial(s)", title_justify="left")
    for col in (
        "case",
        "behaviour",
        "evidence",
        "verdict",
        "assertions",
        "mutations",
        "tool calls",
        "time",
        "tokens",
        "cost",
    ):
        table.add_column(col, justify="right" if col not in ("case", "behaviour", "evidence", "verdict") else "left")
    for t in traces:
        counted = [a for a in t.assertions if a.status != "not_run"]
        not_counted = len(t.assertions) - len(counted)
        table.add_row(
            t.case_id,
            t.behaviour,
            t.evidence_kind,
            f"[{VERDICT_STYLE[t.verdict]}]{t.verdict}[/]",
            f"{t.assertions_passed}/{len(counted)}" + (f" (+{not_counted} not run)" if not_counted else ""),
            str(t.mutation_total) if t.network.available else "—",
            str(len(t.calls)),
            f"{t.duration_ms / 1000:.1f}s",
            *_cost_cells([t]),
        )
    return table


def _case_table(traces: list[Trace], ks: list[int]) -> Table:
    """Several trials per case: one row per case, with both rates and pass@k / pass^k."""
    by_case: dict[tuple[str, str], list[Trace]] = defaultdict(list)
    for t in traces:
        by_case[(t.case_id, t.evidence_kind)].append(t)
    table = Table(title=f"webmcp-eval — {len(by_case)} case(s) × trials", title_justify="left")
    cols = ["case", "behaviour", "evidence", "passed", "not run", "case pass", "per-assertion"]
    cols += [f"pass@{k}" for k in ks] + [f"pass^{k}" for k in ks] + ["tool calls", "time", "tokens", "cost"]
    for col in cols:
        table.add_column(col, justify="left" if col in ("case", "behaviour", "evidence") else "right")
    for (case_id, kind), trials in by_case.items():
        ran = [t for t in trials if t.verdict != "not_run"]
        score = suite_score(ran)
        case = score.by_behaviour[trials[0].behaviour] if score else None
        passed = sum(t.verdict == "passed" for t in ran)
        cells = [
            case_id,
            trials[0].behaviour,
            kind,
            f"{passed}/{len(ran)}",
            str(len(trials) - len(ran)),
            _pct(case.case_pass.mean) if case else "—",
            _pct(case.assertion_pass.mean) if case and case.assertion_pass else "—",
        ]
        for table_of in ("pass_at", "pass_hat"):
            for k in ks:
                summary = getattr(score, table_of)[k] if score else None
                cells.append(f"{summary.mean:.2f}" if summary and summary.mean is not None else "—")
        n = len(trials)
        cells += [
            f"{sum(len(t.calls) for t in trials) / n:.1f}",
            f"{sum(t.duration_ms for t in trials) / n / 1000:.1f}s",
            *_cost_cells(trials),
        ]
        table.add_row(*cells)
    return table


def print_console(traces: list[Trace], out_dir: Path, console: Console | None = None) -> None:
    console = console or Console()
    repeated = len({(t.case_id, t.evidence_kind) for t in traces}) < len(traces)
    score = suite_score(traces)
    ks = sorted(score.pass_at) if score else []
    console.print(_case_table(traces, ks) if repeated else _trial_table(traces))
    _print_problems(traces, console)
    s = summarise(traces)
    console.print(
        f"[bold]{s['passed']} passed[/], [bold red]{s['failed']} failed[/], [yellow]{s['not_run']} not_run[/] · "
        f"case pass rate {_pct(s['case_pass_rate'])} · per-assertion pass rate {_pct(s['assertion_pass_rate'])} "
        f"({s['assertions']['passed']}/{s['assertions']['total']}) · {s['tool_calls']} tool calls · "
        f"{s['duration_ms'] / 1000:.1f}s of trials"
    )
    console.print(score_line(score), highlight=False)
    if score and len(score.by_behaviour) > 1:
        parts = [f"{b} {_pct(v.case_pass.mean)}" for b, v in sorted(score.by_behaviour.items())]
        console.print("by behaviour (case pass rate): " + " · ".join(parts), highlight=False)
    console.print(f"traces and reports: {out_dir}")


def _print_problems(traces: list[Trace], console: Console) -> None:
    bad = [t for t in traces if t.verdict != "passed"]
    if not bad:
        return
    console.print("[bold]Why[/]")
    for t in bad:
        console.print(f"  [{VERDICT_STYLE[t.verdict]}]{t.trial_id} {t.verdict}[/] ({t.case_file})")
        # A trial that could not run has only partial evidence: show why, not its half-made assertions.
        shown = [a for a in t.assertions if a.status == "failed"] if t.verdict == "failed" else []
        for a in shown:
            console.print(f"    ✗ {a.description}: {a.why}", markup=False, highlight=False)
        if t.verdict == "not_run":
            console.print(f"    – {t.verdict_reason}", markup=False, highlight=False)


def write_json(traces: list[Trace], path: Path, extra: dict[str, Any] | None = None) -> None:
    data = {
        "summary": summarise(traces),
        **(extra or {}),
        "trials": [
            {
                "trial_id": t.trial_id,
                "case_id": t.case_id,
                "behaviour": t.behaviour,
                "evidence_kind": t.evidence_kind,
                "agent": t.agent,
                "verdict": t.verdict,
                "reason": t.verdict_reason,
                "assertions_passed": t.assertions_passed,
                "assertions_total": len(t.assertions),
                "tool_calls": len(t.calls),
                "mutations": t.mutation_total,
                "duration_ms": t.duration_ms,
                "tokens": dict(t.tokens),
                "cost_usd": t.cost_usd,
                "trace": f"trials/{t.trial_id}.json",
            }
            for t in traces
        ],
    }
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def write_junit(traces: list[Trace], path: Path) -> None:
    """JUnit XML: one testcase per trial; failed → <failure>, not_run → <skipped>."""
    s = summarise(traces)
    suite = ET.Element(
        "testsuite",
        name="webmcp-eval",
        tests=str(len(traces)),
        failures=str(s["failed"]),
        skipped=str(s["not_run"]),
        errors="0",
        time=f"{s['duration_ms'] / 1000:.3f}",
    )
    for t in traces:
        tc = ET.SubElement(
            suite,
            "testcase",
            classname=f"webmcp-eval.{t.behaviour}",
            name=t.trial_id,
            file=t.case_file,
            time=f"{t.duration_ms / 1000:.3f}",
        )
        if t.verdict == "failed":
            failed = [a for a in t.assertions if a.status == "failed"]
            node = ET.SubElement(tc, "failure", message=t.verdict_reason[:500])
            node.text = "\n".join(f"{a.id}: {a.description}: {a.why}" for a in failed)
        elif t.verdict == "not_run":
            ET.SubElement(tc, "skipped", message=t.verdict_reason[:500])
    ET.indent(suite)
    write_atomic(path, ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n")
