"""The audit's static rules where there is no live page: validate on a suite's catalog (with the descriptions of an
imported schema.json), init on what it read; suite.yaml's audit settings checked by validate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_support import cli

from webmcp_eval.audit.catalog_lint import lint_catalog, lint_listing
from webmcp_eval.play.page.surface.discover import RouteTools
from webmcp_eval.play.page.surface.model import Frame, Refused, Tool

CASE = """id: look-01
behaviour: tool_call
title: look up an item
start_route: /
steps:
  - user: look up item 1
    plan: [{call: lookup_item, args: {id: "1"}}]
expect:
  calls: {expected: [{tool: lookup_item}]}
"""
GOOD = {"type": "object", "properties": {"id": {"type": "string", "description": "the id"}}, "required": ["id"]}
BAD = {
    "type": "object",
    "properties": {"id": {"type": "string", "default": None}, "password": {"type": "string", "description": "x"}},
    "required": ["id"],
}


def _suite(tmp_path: Path, schema: dict, audit: str = "") -> Path:
    (tmp_path / "suite.yaml").write_text(
        "behaviours: {tool_call: calls a tool}\nmin_cases_per_behaviour: 1\n" + audit, encoding="utf-8"
    )
    (tmp_path / "look-01.yaml").write_text(CASE, encoding="utf-8")
    (tmp_path / "catalog.json").write_text(json.dumps({"routes": {"/": {"lookup_item": schema}}}), encoding="utf-8")
    return tmp_path


def test_validate_lists_the_static_findings_on_the_catalog(tmp_path: Path):
    (tmp_path / "bad").mkdir()
    bad = cli("validate", str(_suite(tmp_path / "bad", BAD)))
    assert bad.returncode == 0, bad.stderr  # the cases are sound; the findings are the site's
    assert "audit warning: / lookup_item /inputSchema/properties/id/default: schema-null" in bad.stderr
    assert "audit warning: / lookup_item /inputSchema/properties/password: param-sensitive" in bad.stderr
    assert "audit warning: / lookup_item /inputSchema/properties/id: param-description-missing" in bad.stderr
    (tmp_path / "good").mkdir()
    good = cli("validate", str(_suite(tmp_path / "good", GOOD)))
    assert good.returncode == 0 and "audit " not in good.stderr, good.stderr
    assert "coverage: 1 of 1 catalog tool(s) called or asserted by the cases" in good.stderr
    catalog = {"routes": {"/": {"lookup_item": GOOD, "other_tool": GOOD}}}
    (tmp_path / "good" / "catalog.json").write_text(json.dumps(catalog))
    partial = cli("validate", str(tmp_path / "good"))
    assert "coverage: 1 of 2 catalog tool(s) called or asserted by the cases; no case touches other_tool" in (
        partial.stderr
    )


def test_validate_checks_the_audit_settings_of_suite_yaml(tmp_path: Path):
    folder = _suite(tmp_path, GOOD, "audit:\n  rules:\n    schema-nul: off\n")
    out = cli("validate", str(folder))
    assert out.returncode == 2 and "suite.yaml:5: audit.rules.schema-nul: unknown rule" in out.stderr, out.stderr
    (folder / "suite.yaml").write_text(
        "behaviours: {tool_call: calls a tool}\nmin_cases_per_behaviour: 1\n"
        "audit:\n  rules:\n    param-description-missing: off\n"
    )
    (folder / "catalog.json").write_text(json.dumps({"routes": {"/": {"lookup_item": BAD}}}))
    quiet = cli("validate", str(folder))
    assert quiet.returncode == 0 and "param-description-missing" not in quiet.stderr
    assert "schema-null" in quiet.stderr


def test_catalog_rules_need_descriptions_only_when_there_are_some():
    catalog = {"routes": {"/": {"a_tool": GOOD, "b_tool": GOOD}}}
    assert lint_catalog(catalog) == []  # a catalog has no descriptions: those rules are not judged
    described = [{"name": "a_tool", "description": "Does it."}, {"name": "b_tool", "description": ""}]
    rules = {(f.rule, f.tool) for f in lint_catalog(catalog, described)}
    assert rules == {("description-length", "a_tool"), ("description-missing", "b_tool")}


def test_init_reading_is_linted_frame_by_frame():
    top = Tool("find", "Finds one item of the catalog by its id.", {**BAD, "required": ["ghost"]}, {}, "imperative")
    framed = Tool("find", "Finds one item of the catalog by its id.", GOOD, {}, "imperative")
    route = RouteTools(
        "/",
        "http://site.test/",
        "native",
        frames=[
            Frame("http://site.test/", "http://site.test", True, True, None, [top]),
            Frame(
                "http://cdn.test/w",
                "http://cdn.test",
                False,
                False,
                None,
                [],
                [Refused("chat", "NotAllowedError", "imperative")],
            ),
        ],
    )
    rules = {f.rule for f in lint_listing([route])}
    assert {
        "schema-required-unknown",
        "param-description-missing",
        "frame-cross-origin-without-allow",
    } <= rules
    assert "registration-refused" not in rules  # one cause, one finding: the frame's, with the browser's error
    clean = RouteTools(
        "/",
        "http://site.test/",
        "native",
        frames=[Frame("http://site.test/", "http://site.test", True, True, None, [framed])],
    )
    assert lint_listing([clean]) == []


@pytest.mark.browser  # plays a real run
def test_run_reports_which_catalog_tools_its_cases_touch(tmp_path: Path):
    from webmcp_eval.audit.coverage import case_coverage
    from webmcp_eval.suite.loader import parse_case

    root = Path(__file__).resolve().parent.parent
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "suite.yaml").write_text(
        "site: demo\ncatalog: catalog.json\nmin_cases_per_behaviour: 1\nbehaviours:\n  no_tool: stops\n",
        encoding="utf-8",
    )
    text = (root / "cases" / "NO-01.yaml").read_text(encoding="utf-8")
    (suite / "NO-01.yaml").write_text(text, encoding="utf-8")
    (suite / "catalog.json").write_text((root / "cases" / "catalog.json").read_text(encoding="utf-8"))
    catalog = json.loads((root / "cases" / "catalog.json").read_text(encoding="utf-8"))
    names = sorted({n for tools in catalog["routes"].values() for n in tools})
    touched = case_coverage([parse_case(text, "NO-01.yaml").case]).tools
    left = [n for n in names if n not in touched]
    played = cli("run", "--suite", str(suite), "--out", str(tmp_path / "runs"), "--run-id", "r")
    assert played.returncode in (0, 1), played.stdout + played.stderr
    expected = f"suite health: coverage: {len(names) - len(left)} of {len(names)} catalog tool(s)"
    assert expected in played.stdout and f"no case touches {', '.join(left)}" in " ".join(played.stdout.split())
