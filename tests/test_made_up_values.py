"""Plan values the importer makes up are marked, improved from the live schema, and never a wrong failed.

A restaurant demo's evals expect ``date: {$type: string}``; the importer played ``date: x`` and the
site refused it (``Invalid value "x" for parameter date``): the trial was failed, though neither the
agent nor the site was at fault. The fixture (webmcp_eval/examples/shop/site/bistro/) has two tools
that refuse a date that is not a date: ``book_table`` says ``format: date`` in its schema, so the
reference agent plays a real date and the trial passes; ``hold_table`` does not, so the made-up
value is refused and the trial is not_run with the reason.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_support import cli
from static_server import SOURCE, StaticSite

from webmcp_eval.suite.synthesize import from_schema, made_up_value_refused
from webmcp_eval.trace import ToolCall, Trace

EVALS = SOURCE / "bistro-evals.json"


def test_a_value_is_taken_from_the_schema_when_it_offers_one():
    string = {"$type": "string"}
    assert from_schema(string, {"type": "string", "format": "date"}) == ("2027-01-15", "the schema's format date")
    assert from_schema(string, {"type": "string", "enum": ["lunch", "dinner"]}) == ("lunch", "the schema's enum")
    assert from_schema(string, {"type": "string", "examples": ["2027-02-01"]})[0] == "2027-02-01"
    assert from_schema({"$type": "integer"}, {"type": "integer", "minimum": 2}) == (2, "the schema's minimum")
    assert from_schema({"$type": "integer"}, {"type": "string", "format": "date"})[1] == ""  # the matcher decides
    assert from_schema(string, {"type": "string"})[1] == ""  # nothing offered: the stand-in stays


def test_only_a_refused_made_up_value_makes_the_trial_not_run():
    def trace(**call: object) -> Trace:
        made = ToolCall(index=0, step=0, tool="hold_table", args={"date": "x"}, **call)  # type: ignore[arg-type]
        return Trace(run_id="r", trial_id="B.t1", case_id="B", behaviour="tool_call", start_route="/", calls=[made])

    refused = trace(synthesized={"date": "made up from {$type: string}"}, error="Invalid value")
    reason, kind = made_up_value_refused(refused)  # type: ignore[misc]
    assert kind == "case" and reason.startswith(
        "the value for date was made up from {$type: string}: give the plan a real one (call #0 hold_table"
    )
    assert made_up_value_refused(trace(synthesized={"date": "made up"})) is None  # accepted: judged as usual
    assert made_up_value_refused(trace(error="Invalid value")) is None  # a real value refused: the site's answer


@pytest.mark.browser
def test_the_bistro_evals_imported_and_run_mark_made_up_values_and_never_fail(tmp_path, static_shop: StaticSite):
    suite = tmp_path / "bistro"
    imported = cli("import", str(EVALS), "-o", str(suite))
    assert imported.returncode == 0, imported.stderr
    assert "made up 2 plan value(s), marked synthesized in the cases: [0] 001-book-a-table-for-four" in imported.stdout
    texts = [p.read_text(encoding="utf-8") for p in sorted(suite.glob("0*.yaml"))]
    assert all("synthesized:\n      date:\n        $type: string" in t for t in texts), texts

    done = cli(
        "run", str(suite), "--base-url", static_shop.url.replace("/demo/", "/bistro/"), "--out", str(tmp_path / "runs")
    )
    assert done.returncode == 3, done.stdout + done.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    traces = {t["case_id"]: t for t in map(json.loads, map(Path.read_text, (run_dir / "trials").glob("*.json")))}
    book, hold = traces["001-book-a-table-for-four"], traces["002-hold-a-table"]
    assert book["verdict"] == "passed", book["verdict_reason"]
    assert book["calls"][0]["args"] == {"date": "2027-01-15", "guests": 4}
    assert book["calls"][0]["synthesized"] == {"date": "made up from {$type: string}, the schema's format date"}
    assert (hold["verdict"], hold["not_run_kind"]) == ("not_run", "case")
    assert hold["verdict_reason"].startswith(
        "the value for date was made up from {$type: string}: give the plan a real one (call #0 hold_table: "
    )
    assert hold["calls"][0]["args"] == {"date": "x"} and hold["calls"][0]["error"]  # the page threw on "x"
