"""Call matching (webmcp_eval/kinds/calls/tree.py) is polynomial and finds a full match whenever there is one.

The old matcher searched assignments with a step cap: a correct trace of 6 lookups, a save and 6 lookups
was judged failed, and ``order: set`` had no cap at all. These tests count the matcher's work (calls to
``fits``), never wall time, and compare its verdict with an exhaustive search on small trees.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from tests.test_checks import case, make_trace, tc
from webmcp_eval.judge.checks import check_calls
from webmcp_eval.kinds.calls.tree import best_assignment, order_kept
from webmcp_eval.suite.case import CallExpectations, ExpectedCall, expected_leaves
from webmcp_eval.suite.loader import parse_case
from webmcp_eval.suite.validate import validate_suite

LOOKUPS = [f"evt-{n}" for n in range(1, 7)]


def statuses(exp: CallExpectations, calls: list) -> dict[str, str]:
    return {a.id: a.status for a in check_calls(exp, make_trace(*calls))[0] if a.kind == "calls"}


def test_six_lookups_a_save_and_six_lookups_pass_in_the_checks_and_in_validate():
    group = "\n".join(f"          - {{tool: lookup, args: {{id: {e}}}}}" for e in LOOKUPS)
    expect = f"calls:\n  expected:\n    - tool: save\n    - unordered:\n{group}\n"
    exp = case(expect).expect.calls
    calls = [tc("lookup", {"id": e}) for e in LOOKUPS] + [tc("save")] + [tc("lookup", {"id": e}) for e in LOOKUPS]
    got = statuses(exp, calls)
    assert len(got) == 7 and set(got.values()) == {"passed"}, got
    plan = "".join(f"      - {{call: lookup, args: {{id: {e}}}}}\n" for e in [*LOOKUPS, "save", *LOOKUPS])
    plan = plan.replace("{call: lookup, args: {id: save}}", "{call: save}")
    text = (
        "id: m.1\nbehaviour: selection\ntitle: t\nstart_route: /events\nsteps:\n  - user: hi\n    plan:\n"
        + plan
        + "expect:\n"
        + "".join("  " + line + "\n" for line in expect.splitlines())
    )
    assert validate_suite([parse_case(text, "m.yaml")], None, whole_suite=False) == []
    # and the save must still come first: lookups only before it leave the group empty
    before_only = statuses(exp, calls[:7])
    assert before_only["calls.expected[0]"] == "passed"
    assert {before_only[f"calls.expected[1].unordered[{i}]"] for i in range(6)} == {"failed"}


class Counting:
    """fits by tool and an ``n`` argument, counting how often the matcher asks."""

    def __init__(self) -> None:
        self.asked = 0

    def __call__(self, expected: ExpectedCall, call: Any, captures: dict[str, Any]) -> dict[str, Any] | None:
        self.asked += 1
        return captures if (call.tool, call.args) == (expected.tool, expected.args) else None


def _fifty(order: str, grouped: bool) -> tuple[CallExpectations, list]:
    leaves = "\n".join(f"{'    ' if grouped else ''}    - {{tool: pick, args: {{n: {n}}}}}" for n in range(50))
    body = f"    - unordered:\n{leaves}" if grouped else leaves
    exp = case(f"calls:\n  order: {order}\n  expected:\n{body}\n").expect.calls
    return exp, [tc("pick", {"n": n}) for n in reversed(range(50))]


def test_fifty_calls_in_one_unordered_group_and_in_order_set_match_with_polynomial_work():
    for order, grouped in (("sequence", True), ("exact", True), ("set", False)):
        exp, calls = _fifty(order, grouped)
        got = statuses(exp, calls)
        assert list(got.values()).count("passed") == len(got) and len(got) >= 50, (order, got)
        fits = Counting()
        taken, _ = best_assignment(exp, [e for _, e in expected_leaves(exp.expected)], make_trace(*calls).calls, fits)
        assert len(taken) == 50
        assert fits.asked <= 4 * 50 * 50, (order, fits.asked)  # each (expected, call) pair asked a few times at most
        # one wrong argument: exactly that expected call fails
        wrong = [*calls[:10], tc("pick", {"n": 99}), *calls[11:]]
        failed = [k for k, v in statuses(exp, wrong).items() if v == "failed"]
        assert len(failed) == (2 if order == "exact" else 1), failed


# ---- against an exhaustive search, on small trees ---------------------------------------------


def _tree(rng: random.Random, depth: int = 0) -> list[dict[str, Any]]:
    nodes: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 3)):
        if depth < 2 and rng.random() < 0.35:
            nodes.append({rng.choice(["ordered", "unordered"]): _tree(rng, depth + 1)})
        else:
            nodes.append({"tool": rng.choice("abc")})
    return nodes


def _exhaustive(exp: CallExpectations, leaves: list[ExpectedCall], tools: list[str]) -> bool:
    """Is there an assignment that fills every leaf, keeps the order (and, under exact, uses every call)?"""
    positions = range(len(tools))
    for chosen in itertools.permutations(positions, len(leaves)):
        if all(tools[p] == leaf.tool for p, leaf in zip(chosen, leaves, strict=True)):
            taken = dict(enumerate(chosen))
            if order_kept(exp, taken) and (exp.order != "exact" or len(chosen) == len(tools)):
                return True
    return False


def test_the_matcher_agrees_with_an_exhaustive_search_on_small_trees():
    rng = random.Random(20)
    disagreements = []
    for _ in range(1500):
        order = rng.choice(["sequence", "set", "exact"])
        exp = CallExpectations.model_validate({"order": order, "expected": _tree(rng)})
        leaves = [e for _, e in expected_leaves(exp.expected)]
        if len(leaves) > 6:
            continue
        tools = [rng.choice("abc") for _ in range(rng.randint(len(leaves) - 1, len(leaves) + 1))]
        calls = make_trace(*map(tc, tools)).calls
        taken, _ = best_assignment(exp, leaves, calls, lambda e, c, caps: caps if c.tool == e.tool else None)
        full = len(taken) == len(leaves) and order_kept(exp, taken)
        full = full and (order != "exact" or len(taken) == len(tools))
        if full != _exhaustive(exp, leaves, tools):
            disagreements.append((order, exp.model_dump(exclude_defaults=True)["expected"], tools))
    assert disagreements == []
