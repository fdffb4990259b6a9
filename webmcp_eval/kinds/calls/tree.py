"""Which actual calls fill which expected calls of a tree of ordered/unordered groups.

One matcher serves both readers of the tree: the checks (on a trial's calls, with
argument matchers and captures) and ``validate`` (on the reference plan's calls,
by tool and step alone). Every expected call gets a distinct call (an optional
one may get none); an ordered group, and the top level unless ``order: set``,
keeps its children's calls in order, and under ``order: exact`` each group is
one block of adjacent calls.

The matching is polynomial, never a search with a step cap (a cap turned a long
but correct trace into "never calls ..."): an ordered group takes, child by
child, the earliest calls that fit after the previous child's last call (the
earliest-first rule of subsequence matching, which finds a full match whenever
there is one); an unordered group matches its single calls to calls by maximum
bipartite matching (augmenting paths), adding calls in trace order so the group
ends as early as it can and leaves the most room for what follows. Nested groups
inside one unordered group are placed one after another, in the order written
and in the reverse order, and the better of the two is kept. Of the
assignments tried, the one that keeps the order, then fills the most required
calls, then the most calls, wins.

A call's fit may depend on values captured by earlier expected calls
(``{$ref: name}``): single calls of an unordered group are matched in rounds,
those whose references are known first, and a call that captures a value
another uses keeps the call it got.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from webmcp_eval.kinds.calls.model import CallExpectations, ExpectedCall, OrderedGroup
from webmcp_eval.matchers import refs_in

# fits(expected, call, captures) -> the captures after taking that call, or None when it does not fit
Fits = Callable[[ExpectedCall, Any, dict[str, Any]], dict[str, Any] | None]


@dataclass
class _Match:
    """One way of filling some leaves: leaf number -> call position, and the captures it made."""

    taken: dict[int, int] = field(default_factory=dict)
    captures: dict[str, Any] = field(default_factory=dict)

    def end(self, start: int) -> int:
        """The first position after this match's calls (``start`` when it took none)."""
        return max(self.taken.values(), default=start - 1) + 1


class _Matcher:
    def __init__(self, exp: CallExpectations, leaves: list[ExpectedCall], calls: Sequence[Any], fits: Fits):
        self.exp, self.leaves, self.calls, self.fits = exp, leaves, calls, fits
        self.required = [not e.optional for e in leaves]
        self.numbers: dict[int, int] = {}  # id(leaf node) -> leaf number, in reading order

    def number(self, nodes: list[Any]) -> None:
        for node in nodes:
            if isinstance(node, ExpectedCall):
                self.numbers[id(node)] = len(self.numbers)
            else:
                self.number(_children(node))

    def score(self, m: _Match) -> tuple[int, int]:
        return (sum(self.required[k] for k in m.taken), len(m.taken))

    # -- the tree -----------------------------------------------------------------

    def ordered(self, nodes: list[Any], start: int, used: set[int], captures: dict[str, Any]) -> _Match:
        """Children in order: each from the first position after the previous child's last call."""
        out = _Match({}, captures)
        cursor = start
        for node in nodes:
            got = self.node(node, cursor, used | set(out.taken.values()), out.captures)
            out = _Match({**out.taken, **got.taken}, got.captures)
            cursor = got.end(cursor)
        return out

    def unordered(self, nodes: list[Any], start: int, used: set[int], captures: dict[str, Any]) -> _Match:
        """Children in any order: nested groups placed one after another, single calls by bipartite matching."""
        singles = [n for n in nodes if isinstance(n, ExpectedCall)]
        groups = [n for n in nodes if not isinstance(n, ExpectedCall)]
        tries = []
        for order in [groups, groups[::-1]] if len(groups) > 1 else [groups]:
            for singles_first in (False, True) if groups and singles else (False,):
                tries.append(self._unordered_once(order, singles, singles_first, start, used, captures))
        return max(tries, key=lambda m: (self.blocks(groups, m), self.score(m), -m.end(start)))

    def blocks(self, groups: list[Any], m: _Match) -> int:
        """Under order: exact, how many of these groups got one block of adjacent calls (else 0: not asked)."""
        if self.exp.order != "exact":
            return 0
        count = 0
        for group in groups:
            mine = [m.taken[k] for k in self.leaf_numbers(group) if k in m.taken]
            count += not mine or max(mine) - min(mine) + 1 == len(mine)
        return count

    def leaf_numbers(self, node: object) -> list[int]:
        if isinstance(node, ExpectedCall):
            return [self.numbers[id(node)]]
        return [k for child in _children(node) for k in self.leaf_numbers(child)]

    def _unordered_once(
        self,
        groups: list[Any],
        singles: list[ExpectedCall],
        singles_first: bool,
        start: int,
        used: set[int],
        captures: dict[str, Any],
    ) -> _Match:
        out = _Match({}, captures)
        steps: list[Any] = ["singles", *groups] if singles_first else [*groups, "singles"]
        for step in steps:
            taken = used | set(out.taken.values())
            if step == "singles":
                got = self.singles(singles, start, taken, out.captures)
            else:
                got = self.node(step, start, taken, out.captures)
            out = _Match({**out.taken, **got.taken}, got.captures)
        return out

    def node(self, node: Any, start: int, used: set[int], captures: dict[str, Any]) -> _Match:
        if isinstance(node, ExpectedCall):
            return self.singles([node], start, used, captures)
        if isinstance(node, OrderedGroup):
            return self.ordered(node.ordered, start, used, captures)
        return self.unordered(node.unordered, start, used, captures)

    # -- single calls: maximum bipartite matching ----------------------------------

    def singles(self, nodes: list[ExpectedCall], start: int, used: set[int], captures: dict[str, Any]) -> _Match:
        """Distinct calls at ``start`` or later for as many of these calls as can have one, ending early."""
        free = [pos for pos in range(start, len(self.calls)) if pos not in used]
        owner: dict[int, int] = {}  # call position -> index into nodes
        fixed: set[int] = set()  # positions whose leaf captured a value later rounds use
        captures = dict(captures)
        pending = list(range(len(nodes)))
        while pending:
            ready = [i for i in pending if set(_refs(nodes[i])) <= set(captures)] or pending
            pending = [i for i in pending if i not in ready]
            options = {i: [p for p in free if p not in fixed and self._fit(nodes[i], p, captures)] for i in ready}
            required = [i for i in ready if not nodes[i].optional]
            _grow_by_position(required, options, owner, free)
            for i in ready:
                if nodes[i].optional and i not in owner.values():
                    _augment(i, options, owner, set())
            for pos in sorted(owner):  # captures in trace order, as the calls made them
                i = owner[pos]
                if i in ready:
                    more = self.fits(nodes[i], self.calls[pos], captures)
                    if more is not None:
                        if set(more) - set(captures):
                            fixed.add(pos)
                        captures = more
        taken = {self.numbers[id(nodes[i])]: pos for pos, i in owner.items()}
        return _Match(taken, captures)

    def _fit(self, expected: ExpectedCall, pos: int, captures: dict[str, Any]) -> bool:
        return self.fits(expected, self.calls[pos], captures) is not None


def _refs(expected: ExpectedCall) -> list[str]:
    return refs_in(expected.args) + refs_in(expected.result)


def _children(node: Any) -> list[Any]:
    return node.ordered if isinstance(node, OrderedGroup) else node.unordered


def _augment(i: int, options: dict[int, list[int]], owner: dict[int, int], seen: set[int]) -> bool:
    """Kuhn's augmenting path from expected call ``i``: earlier positions first."""
    for pos in options.get(i, []):
        if pos in seen:
            continue
        seen.add(pos)
        if pos not in owner or _augment(owner[pos], options, owner, seen):
            owner[pos] = i
            return True
    return False


def _grow_by_position(wanted: list[int], options: dict[int, list[int]], owner: dict[int, int], free: list[int]) -> None:
    """A maximum matching of ``wanted``, built by offering positions in trace order.

    Each position looks for an augmenting path to a call still without one; the
    calls and positions already matched stay matched, so every prefix of the
    trace is matched as fully as it can be and the matching ends as early as any.
    """
    fits_at: dict[int, list[int]] = {}
    for i in wanted:
        for pos in options[i]:
            fits_at.setdefault(pos, []).append(i)
    position_of = {i: pos for pos, i in owner.items()}
    open_ = sum(i not in position_of for i in wanted)
    for pos in free:
        if not open_:
            return
        if pos not in owner and pos in fits_at and _offer(pos, fits_at, owner, position_of, set()):
            open_ -= 1


def _offer(
    pos: int, fits_at: dict[int, list[int]], owner: dict[int, int], position_of: dict[int, int], seen: set[int]
) -> bool:
    """Give ``pos`` to a call that fits it: a free one, or one whose own position another call can take."""
    for i in fits_at.get(pos, []):
        if i in seen:
            continue
        seen.add(i)
        old = position_of.get(i)
        if old is None or _offer(old, fits_at, owner, position_of, seen):
            owner[pos], position_of[i] = i, pos
            return True
    return False


def best_assignment(
    exp: CallExpectations, leaves: list[ExpectedCall], calls: Sequence[Any], fits: Fits
) -> tuple[dict[int, int], dict[str, Any]]:
    """The assignment (leaf number -> call position) that fills the most required leaves, order kept."""
    matcher = _Matcher(exp, leaves, calls, fits)
    matcher.number(exp.expected)
    top = matcher.unordered if exp.order == "set" else matcher.ordered
    found = top(exp.expected, 0, set(), {})
    return found.taken, found.captures


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
