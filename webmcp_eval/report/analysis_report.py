"""The views of ``webmcp-eval analyze``: console lines, Markdown and a self-contained HTML page.

All three show the same figures from webmcp_eval/results/analysis.py: the failure
groups (assertion, message, how many failing trials, which cases, links to the
traces) and, per case, whether it failed in every run, some runs or newly; with
``--model``, each group's hypothesis, reasoning and the quoted trace fields.
Trace links are relative to the file written, so the page opens from disk.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from jinja2 import Environment

from webmcp_eval.report.sanitise import markdown as md
from webmcp_eval.report.sanitise import markdown_code as code
from webmcp_eval.results.analysis import Analysis, FailureGroup

PATTERN_WORDS = {"every": "in every run", "some": "in some runs", "new": "newly (only in the last run)"}
HYPOTHESIS_WORDS = {
    "agent_logic": "the agent's logic",
    "tool_or_site": "the tool or the site",
    "assertion_too_strict": "an assertion that is too strict",
}


def _link(path: Path, base: Path) -> str:
    return Path(os.path.relpath(path.resolve(), base.resolve())).as_posix()


def _headline(analysis: Analysis) -> str:
    return (
        f"{len(analysis.runs)} run(s), {analysis.trials} trial(s), {analysis.failed_trials} failed, "
        f"in {len(analysis.groups)} failure group(s)"
    )


def _explained(group: FailureGroup) -> str | None:
    e = group.explanation
    if not e:
        return None
    if e.get("error"):
        return f"no explanation: {e['error']}"
    return f"{HYPOTHESIS_WORDS[e['hypothesis']]}: {e['reasoning']}"


def _example(group: FailureGroup) -> str:
    """The group's message as its first trial gave it; the others differ at most in their numbers."""
    first = " ".join(group.trials[0].why.split())
    varies = any(" ".join(t.why.split()) != first for t in group.trials)
    return first + (" (numbers vary between trials)" if varies else "")


def console_lines(analysis: Analysis) -> list[str]:
    lines = [f"analyze: {_headline(analysis)} ({', '.join(analysis.runs)})"]
    for n, g in enumerate(analysis.groups, 1):
        lines.append(f"  {n}. {g.assertion} — {len(g.trials)} failing trial(s) in {', '.join(g.cases)}")
        lines.append(f"     {g.description}: {_example(g)}")
        explained = _explained(g)
        if explained:
            lines.append(f"     → {explained}")
            for q in (g.explanation or {}).get("quotes", []):
                mark = "" if q["verified"] else " (not in the trace as quoted)"
                lines.append(f"       {q['field']} = {q.get('value')!r}{mark}")
        lines += [f"     {t.trace_file}" for t in g.trials]  # as the run directory was given
    for pattern in ("every", "some", "new"):
        cases = analysis.cases_with(pattern)
        if cases:
            lines.append(f"  failing {PATTERN_WORDS[pattern]}: " + ", ".join(c.case_id for c in cases))
    if not analysis.groups:
        lines.append("  no trial failed")
    return lines


def markdown(analysis: Analysis, base: Path) -> str:
    runs = md(", ".join(analysis.runs))
    out = [f"## Why the runs failed: {_headline(analysis)}", "", f"Runs, oldest first: {runs}", ""]
    if analysis.cases:
        out += ["| case | failing | failed in | played in | failing trials |", "|---|---|---|---|---|"]
        for c in analysis.cases:
            out.append(
                f"| {md(c.case_id)} | {PATTERN_WORDS[c.pattern]} | {md(', '.join(c.failed_in))} | "
                f"{md(', '.join(c.played_in))} | {c.failed_trials} |"
            )
        out.append("")
    for n, g in enumerate(analysis.groups, 1):
        out += [
            f"### {n}. `{g.assertion}` — {len(g.trials)} failing trial(s)",
            "",
            f"{md(g.description)}: {md(_example(g))}",
            "",
        ]
        explained = _explained(g)
        if explained:
            out += [f"**{md(explained)}**", ""]
            for q in (g.explanation or {}).get("quotes", []):
                mark = "" if q["verified"] else " *(not in the trace as quoted)*"
                out.append(f"- {code(q['field'])} = {code(repr(q.get('value')))}{mark}")
            out.append("")
        out += [f"- [{md(t.run)} {md(t.trial_id)}]({_link(t.trace_file, base)})" for t in g.trials]
        out.append("")
    if not analysis.groups:
        out.append("No trial failed.")
    return "\n".join(out) + "\n"


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>webmcp-eval analyze</title>
<style>body{font:14px/1.5 system-ui,sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}code{background:#f4f4f4}
.h{font-weight:600}.unverified{color:#a00}section{border-top:1px solid #ddd;margin-top:1em}</style></head>
<body><h1>Why the runs failed</h1><p>{{ headline }}. Runs, oldest first: {{ runs|join(", ") }}.
Nothing here changes a verdict.</p>
{% if cases %}<table><tr><th>case</th><th>failing</th><th>failed in</th><th>played in</th><th>failing trials</th></tr>
{% for c in cases %}<tr><td>{{ c.case_id }}</td><td>{{ words[c.pattern] }}</td><td>{{ c.failed_in|join(", ") }}</td>
<td>{{ c.played_in|join(", ") }}</td><td>{{ c.failed_trials }}</td></tr>{% endfor %}</table>
{% else %}<p>No trial failed.</p>{% endif %}
{% for g in groups %}<section id="{{ g.key }}"><h2>{{ loop.index }}. <code>{{ g.assertion }}</code>:
{{ g.trials|length }} failing trial(s)</h2><p>{{ g.description }}: {{ g.message }}</p>
{% if g.explained %}<p class="h">{{ g.explained }}</p><ul>{% for q in g.quotes %}
<li><code>{{ q.field }}</code> = <code>{{ q.value }}</code>{% if not q.verified %}
<span class="unverified">(not in the trace as quoted)</span>{% endif %}</li>{% endfor %}</ul>{% endif %}
<ul>{% for t in g.links %}<li><a href="{{ t.href }}">{{ t.run }} {{ t.trial }}</a></li>{% endfor %}</ul></section>
{% endfor %}</body></html>
"""


def html(analysis: Analysis, base: Path) -> str:
    groups: list[dict[str, Any]] = [
        {
            "key": g.key,
            "assertion": g.assertion,
            "description": g.description,
            "message": _example(g),
            "trials": g.trials,
            "explained": _explained(g),
            "quotes": [{**q, "value": repr(q.get("value"))} for q in (g.explanation or {}).get("quotes", [])],
            "links": [{"href": _link(t.trace_file, base), "run": t.run, "trial": t.trial_id} for t in g.trials],
        }
        for g in analysis.groups
    ]
    template = Environment(autoescape=True).from_string(PAGE)
    return template.render(
        headline=_headline(analysis), runs=analysis.runs, cases=analysis.cases, words=PATTERN_WORDS, groups=groups
    )
