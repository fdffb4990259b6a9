"""Which actual calls fill which expected calls of a tree of ordered/unordered groups.

One search serves both readers of the tree: the checks (on a trial's calls, with
argument matchers and captures) and ``validate`` (on the reference plan's calls,
by tool and step alone). Every expected call gets a distinct call (an optional
one may get none); an ordered group, and the top level unless ``order: set``,
keeps its children's calls in order, and under ``order: exact`` each group is
one block of adjacent calls. Of the assignments that do, the one that fills the
most required calls (then the most calls) wins.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from runner.suite.case import CallExpectations, ExpectedCall, OrderedGroup

# fits(expected, call, captures) -> the captures after taking that call, or None when it does not fit
Fits = Callable[[ExpectedCall, Any, dict[str, Any]], dict[str, Any] | None]
SEARCH_BUDGET = 200_000  # steps of the search: cases hold a handful of calls


def best_assignment(
    exp: CallExpectations, leaves: list[ExpectedCall], calls: Sequence[Any], fits: Fits
) -> tuple[dict[int, int], dict[str, Any]]:
    """The assignment (leaf number -> call position) that fills the most required leaves, order kept."""
    best: tuple[int, int] = (-1, -1)
    found: tuple[dict[int, int], dict[str, Any]] = ({}, {})
    required = [not e.optional for e in leaves]
    budget = [SEARCH_BUDGET]

    def score(taken: dict[int, int]) -> tuple[int, int]:
        return (sum(required[k] for k in taken), len(taken))

    def search(k: int, taken: dict[int, int], captures: dict[str, Any]) -> None:
        nonlocal best, found
        budget[0] -= 1
        if budget[0] < 0 or sum(required[k:]) + score(taken)[0] < best[0]:
            return
        if k == len(leaves):
            if order_kept(exp, taken) and score(taken) > best:
                best, found = score(taken), (dict(taken), captures)
            return
        for pos, call in enumerate(calls):
            if pos in taken.values():
                continue
            more = fits(leaves[k], call, captures)
            if more is not None:
                search(k + 1, {**taken, k: pos}, more)
        search(k + 1, taken, captures)

    search(0, {}, {})
    return found


def order_kept(exp: CallExpectations, taken: dict[int, int]) -> bool:
    """Every ordered group (and the top level unless order: set) has its children's calls in order.

    Under ``order: exact`` every group is also one block of adjacent calls, as the public
    webmcp-evals tool matches it: ``{unordered: [{ordered: [a, b]}, c]}`` takes ``c a b`` but not ``a c b``.
    """
    counter = iter(range(1_000_000))
    blocks = exp.order == "exact"

    def spans(nodes: list[Any], ordered: bool) -> tuple[bool, list[int]]:
        positions: list[int] = []
        last = -1
        for node in nodes:
            if isinstance(node, ExpectedCall):
                k = next(counter)
                mine = [taken[k]] if k in taken else []
                ok = True
            else:
                inner_ordered = isinstance(node, OrderedGroup)
                ok, mine = spans(node.ordered if inner_ordered else node.unordered, inner_ordered)
            if not ok:
                return False, []
            if blocks and not isinstance(node, ExpectedCall) and mine and max(mine) - min(mine) + 1 != len(mine):
                return False, []  # under order: exact a group is one block, nothing of another between
            if mine:
                if ordered and min(mine) < last:
                    return False, []
                last = max(mine)
                positions += mine
        return True, positions

    return spans(exp.expected, exp.order != "set")[0]
