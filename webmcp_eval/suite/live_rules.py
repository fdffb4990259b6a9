"""Rules checked against the tools a trial saw registered, when no catalog file was given.

A case run by itself against a site has no ``catalog.json`` for ``validate`` to
check argument names against, so a forbidden rule on ``cityy`` (for ``city``)
could never fire and the trial passed. The trial records the input schema of
every tool the pages it visited registered (``Trace.live_tools``); a rule that
names an argument its tool does not take there can never fire, and the trial
is ``not_run`` with that reason, never ``passed``.

A tool that no visited route registered is not judged here: the agent may have
failed to reach its page (an expected call then fails, as it should), and a
forbidden tool of another page is a rule the trial could not exercise (the
trace says so in a warning).
"""

from __future__ import annotations

from typing import Any

from webmcp_eval.suite.case import Case, expected_leaves
from webmcp_eval.suite.validate import SuiteCatalog


def live_catalog(live_tools: dict[str, list[Any]]) -> SuiteCatalog:
    """The tools seen during a trial as a catalog: one pseudo-route per distinct schema of a tool."""
    routes: dict[str, dict[str, Any]] = {}
    for tool, schemas in live_tools.items():
        for n, schema in enumerate(schemas):
            routes.setdefault(f"#{n}", {})[tool] = schema if isinstance(schema, dict) else {"type": "object"}
    return SuiteCatalog({"routes": routes}, "the tools the trial saw")


def rules_that_never_fire(case: Case, live_tools: dict[str, list[Any]]) -> tuple[list[str], list[str]]:
    """(reasons a rule can never fire, warnings about tools no visited route registered)."""
    catalog = live_catalog(live_tools)
    calls = case.expect.calls
    rules = [e for _, e in expected_leaves(calls.expected)] + list(calls.forbidden)
    never: list[str] = []
    unseen: list[str] = []
    for rule in rules:
        if rule.tool not in live_tools:
            seen = ", ".join(sorted(live_tools)) or "none"
            line = f"no route this trial visited registered {rule.tool} (registered: {seen}): its rule was not tried"
            if line not in unseen:
                unseen.append(line)
            continue
        names = catalog.argument_names(rule.tool)
        for arg in rule.args:
            reason = f"{rule.tool} has no argument {arg!r}"
            if names is not None and arg not in names and reason not in never:
                never.append(reason)
    return never, unseen
