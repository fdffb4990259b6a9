"""Shapes a documented rule forbids, each refused by validate with its line, and its sound neighbour accepted:
a matcher no value satisfies, a state.changed_only path the state diff never names, ids differing only in case."""

from __future__ import annotations

from pathlib import Path

import pytest

from webmcp_eval.matchers import contradiction
from webmcp_eval.suite.loader import parse_case
from webmcp_eval.suite.validate import SuiteCatalog, validate_suite

ROOT = Path(__file__).resolve().parent.parent
CATALOG = SuiteCatalog.load(ROOT / "cases" / "catalog.json")
SEL = (ROOT / "cases" / "SEL-01.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("ops", "refused"),
    [
        ({"$gt": 5, "$lt": 3}, True),
        ({"$gt": 3, "$lte": 3}, True),
        ({"$gte": 3, "$lte": 3}, False),
        ({"$type": "string", "$in": [1, 2]}, True),
        ({"$type": "string", "$in": ["a", 1]}, False),
        ({"$type": "string", "$gt": 1}, True),
        ({"$type": "integer", "$gt": 1}, False),
        ({"$absent": True, "$type": "string"}, True),
        ({"$absent": True, "$not": {"$type": "string"}}, False),
        ({"$in": [1, 2], "$gt": 5}, True),
        ({"$in": [{"$gt": 1}], "$type": "string"}, False),  # $in of matchers: known only when matched
    ],
)
def test_a_matcher_no_value_can_satisfy_is_refused_and_a_sound_one_is_not(ops: dict, refused: bool) -> None:
    assert bool(contradiction(ops)) is refused, contradiction(ops)


def problems_of(text: str, file: str = "SEL-01.yaml") -> list[str]:
    return [str(p) for p in validate_suite([parse_case(text, file)], CATALOG, whole_suite=False)]


@pytest.mark.parametrize(
    ("path", "ok"),
    [
        ("saved", True),
        ("events[id=evt-webmcp-intro]", True),
        ("events[id=evt-webmcp-intro].seatsLeft", True),
        ("events[0]", False),
        ("events[name=x]", False),
        ("a..b", False),
        (".saved", False),
        ("{eventId}", False),
    ],
)
def test_changed_only_paths_are_read_as_the_state_diff_names_a_change(path: str, ok: bool) -> None:
    assert "\n  state: {unchanged: true}\n" in SEL
    text = SEL.replace("\n  state: {unchanged: true}\n", f"\n  state:\n    changed_only: ['{path}']\n", 1)
    found = [p for p in problems_of(text) if "changed_only" in p]
    assert (found == []) is ok, found
    if not ok:
        assert found[0].startswith("SEL-01.yaml:") and "expect.state.changed_only[0]" in found[0]


def test_ids_that_differ_only_in_case_are_refused() -> None:
    upper = parse_case(SEL, "SEL-01.yaml")
    lower = parse_case(SEL.replace("id: SEL-01", "id: sel-01", 1), "sel-01.yaml")
    found = [str(p) for p in validate_suite([upper, lower], CATALOG, whole_suite=False)]
    assert any(p.startswith("sel-01.yaml:") and "differs from SEL-01" in p and "only in case" in p for p in found)
    assert validate_suite([upper], CATALOG, whole_suite=False) == []
