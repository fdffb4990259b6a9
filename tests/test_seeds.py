"""Seed data in which every argument of a case's search is observable.

If every event that matches the other filters also matched this one, a site
that ignored it would give the same answer and the case could not tell: the
seed data must make each filter change the result (issue: outcome validity).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from eval_support import suite_cases

from webmcp_eval.site_under_test.db import Store
from webmcp_eval.suite.case import UserStep

SEARCHES = [
    (lc.case.id, planned.args)
    for lc in suite_cases()
    for step in lc.case.steps
    if isinstance(step, UserStep)
    for planned in step.plan
    if planned.call == "search_events" and planned.args
]


def _ids(store: Store, args: dict) -> list[str]:
    filters = {k: v for k, v in args.items() if k != "query"}
    return [e["id"] for e in store.world("seeds").search(args.get("query"), filters)]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return Store(Path(tmp_path_factory.mktemp("seeds")))


def test_the_suite_has_searches_with_several_filters():
    assert any(len(args) >= 3 for _, args in SEARCHES), SEARCHES


@pytest.mark.parametrize(("case_id", "args"), SEARCHES, ids=[f"{c}-{'-'.join(a)}" for c, a in SEARCHES])
def test_every_argument_of_a_case_search_changes_its_result(store: Store, case_id: str, args: dict):
    full = _ids(store, args)
    for name in args:
        relaxed = _ids(store, {k: v for k, v in args.items() if k != name})
        assert relaxed != full, f"{case_id}: ignoring {name}={args[name]!r} gives the same answer {full}"
