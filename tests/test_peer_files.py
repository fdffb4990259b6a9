"""The public webmcp-evals files both ways: import takes schema.json as the catalog, export writes evals.json and the
tool list, and import -> export -> import keeps every case."""

from __future__ import annotations

import json
from pathlib import Path

from eval_support import cli

from webmcp_eval.suite.case import Case
from webmcp_eval.suite.folder import find_suite
from webmcp_eval.suite.loader import load_cases
from webmcp_eval.suite.peer_files import BEYOND_CALLS, export_cases

ROOT = Path(__file__).resolve().parent.parent
SHOP_EVALS = ROOT / "tests" / "static_site" / "evals.json"
SHOP_TOOLS = {
    "tools": [
        {
            "name": "list_products",
            "description": "List the teas on sale, with their ids and prices.",
            "inputSchema": {"type": "object", "properties": {}},
        },
        {
            "name": "add_to_cart",
            "description": "Put a tea into the cart.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "product_id": {"type": "string", "description": "a tea id from list_products"},
                    "quantity": {"type": "integer", "minimum": 1},
                },
                "required": ["product_id"],
            },
        },
        {
            "name": "subscribe_newsletter",
            "description": "Subscribe an email address to the newsletter.",
            "inputSchema": {
                "type": "object",
                "properties": {"email": {"type": "string"}, "topic": {"type": "string", "enum": ["news", "offers"]}},
            },
        },
    ]
}


def _cases(folder: Path) -> dict[str, dict]:
    loaded, problems = load_cases(find_suite([folder]).case_files([folder]))
    assert problems == []
    out = {}
    for lc in loaded:
        data = lc.case.model_dump(mode="json", exclude_defaults=True)
        data.pop("notes", None)
        out[data.pop("id")] = data
    return out


def test_import_takes_schema_json_as_the_catalog_and_validate_then_checks_calls(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "evals.json").write_text(SHOP_EVALS.read_text())
    (src / "schema.json").write_text(json.dumps(SHOP_TOOLS))
    out = tmp_path / "suite"
    imported = cli("import", str(src / "evals.json"), "-o", str(out))
    assert imported.returncode == 0, imported.stderr
    assert "3 tool(s) as the suite's catalog" in imported.stdout
    catalog = json.loads((out / "catalog.json").read_text())
    assert set(catalog["routes"]["/"]) == {"list_products", "add_to_cart", "subscribe_newsletter"}
    valid = cli("validate", str(out))
    assert valid.returncode == 0 and "catalog.json" in valid.stdout + valid.stderr, valid.stdout + valid.stderr

    # a tool list without a tool the evals call: import refuses, writes nothing
    (src / "schema.json").write_text(json.dumps({"tools": SHOP_TOOLS["tools"][:1]}))
    refused = cli("import", str(src / "evals.json"), "-o", str(tmp_path / "again"))
    assert refused.returncode == 2 and "add_to_cart" in refused.stderr
    assert not (tmp_path / "again").exists() or not any((tmp_path / "again").iterdir())
    (src / "schema.json").write_text('{"tools": [{"description": "x"}]}')
    broken = cli("import", str(src / "evals.json"), "-o", str(tmp_path / "third"))
    assert broken.returncode == 2 and "tools[0].name" in broken.stderr and "Traceback" not in broken.stderr


def test_round_trip_import_export_import_keeps_every_case(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "evals.json").write_text(SHOP_EVALS.read_text())
    (src / "schema.json").write_text(json.dumps(SHOP_TOOLS))
    first, second, exported = tmp_path / "first", tmp_path / "second", tmp_path / "exported"
    assert cli("import", str(src / "evals.json"), "-o", str(first)).returncode == 0
    out = cli("export", str(first), "-o", str(exported))
    assert out.returncode == 0, out.stderr
    assert "6 eval(s) written" in out.stdout and "left out" not in out.stdout
    tools = json.loads((exported / "schema.json").read_text())["tools"]
    assert {t["name"]: t["description"] for t in tools}["add_to_cart"] == "Put a tea into the cart."
    assert cli("import", str(exported / "evals.json"), "-o", str(second)).returncode == 0
    assert _cases(first) == _cases(second) and len(_cases(first)) == 6
    assert (
        json.loads((exported / "evals.json").read_text())
        == json.loads((tmp_path / "exported2" / "evals.json").read_text())
        if cli("export", str(second), "-o", str(tmp_path / "exported2")).returncode == 0
        else False
    )


def test_export_refuses_a_weaker_suite_unless_lossy_and_names_what_is_lost(tmp_path: Path):
    shop = ROOT / "tests" / "static_site" / "cases"
    out = cli("export", str(shop), "-o", str(tmp_path / "x"))
    assert out.returncode == 2 and "would be left out: SHOP-" in out.stderr, out.stdout + out.stderr
    assert not (tmp_path / "x").exists()  # nothing written
    out = cli("export", str(shop), "-o", str(tmp_path / "x"), "--lossy")
    assert out.returncode == 0 and "left out: SHOP-" in out.stdout, out.stdout + out.stderr
    assert json.loads((tmp_path / "x" / "evals.json").read_text()) is not None
    assert cli("export", str(tmp_path / "nope"), "-o", str(tmp_path / "y")).returncode == 2


def test_export_of_the_seed_cases_names_the_expectations_it_would_drop(tmp_path: Path):
    folder = tmp_path / "seed"
    folder.mkdir()
    for name in ("NO-01.yaml", "RECOVERY-05.yaml", "catalog.json"):
        (folder / name).write_text((ROOT / "cases" / name).read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "suite.yaml").write_text("min_cases_per_behaviour: 0\n", encoding="utf-8")
    out = cli("export", str(folder), "-o", str(tmp_path / "out"))
    said = " ".join((out.stdout + out.stderr).split())
    assert out.returncode == 2, said
    assert "would be dropped: NO-01: expect.network" in said and "start_route /events" in said, said
    assert "RECOVERY-05" in said and not (tmp_path / "out").exists()


def _never_silently_weaker(original: Case, again: Case | None, lost: list[str]) -> list[str]:
    """What the exported eval lost of ``original`` without a line in ``lost`` (the export's own list)."""
    said = " ".join(lost)
    if again is None:
        return [] if said else ["left out without a word"]
    quiet = [f"expect.{name}" for name in BEYOND_CALLS if name in original.expect.model_fields_set]
    quiet = [q for q in quiet if q not in said]
    if original.start_route.strip("/") and "start_route" not in said:
        quiet.append("start_route")
    quiet += [name for name in ("setup", "breaks") if getattr(original, name) and name not in said]
    mine, theirs = original.expect.calls, again.expect.calls
    if mine.forbidden and "forbidden" not in said:
        quiet.append("forbidden")
    dump = [n.model_dump(exclude_defaults=True) for n in mine.expected]
    if dump != [n.model_dump(exclude_defaults=True) for n in theirs.expected] and "expect.calls" not in said:
        quiet.append("expect.calls.expected")
    return quiet


def test_every_seed_case_and_peer_file_round_trips_or_says_what_it_loses(tmp_path: Path):
    """export --lossy of every seed case, then import: whatever the eval lost is on export's own list."""
    from webmcp_eval.suite.evals_json import convert

    loaded, problems = load_cases(find_suite([ROOT / "cases"]).case_files([ROOT / "cases"]))
    assert problems == [] and len(loaded) >= 31
    quiet = {}
    for lc in loaded:
        exported = export_cases([lc.case])
        lost = exported.left_out + exported.dropped
        again = None
        if exported.evals:
            (tmp_path / "evals.json").write_text(json.dumps(exported.evals), encoding="utf-8")
            [again] = [c.case for c in convert(tmp_path / "evals.json").cases]
        if _never_silently_weaker(lc.case, again, lost):
            quiet[lc.case.id] = _never_silently_weaker(lc.case, again, lost)
    assert quiet == {}
    # the peer files: import, export, import gives the same cases, and export drops nothing of them
    for peer in (SHOP_EVALS, ROOT / "tests" / "static_site" / "bistro-evals.json"):
        first, exported_dir, second = (tmp_path / peer.stem / n for n in ("first", "exported", "second"))
        assert cli("import", str(peer), "-o", str(first)).returncode == 0
        out = cli("export", str(first), "-o", str(exported_dir))
        assert out.returncode == 0 and "dropped" not in out.stdout and "left out" not in out.stdout, out.stdout
        assert not (exported_dir / "schema.json").exists()  # no catalog: no empty tool list taken as one later
        assert cli("import", str(exported_dir / "evals.json"), "-o", str(second)).returncode == 0
        assert _cases(first) == _cases(second)


def test_export_refuses_an_unusable_catalog_and_an_output_that_is_a_file(tmp_path: Path):
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "NO-01.yaml").write_text((ROOT / "cases" / "NO-01.yaml").read_text(encoding="utf-8"))
    (suite / "suite.yaml").write_text("min_cases_per_behaviour: 0\n")
    (suite / "catalog.json").write_text('"x"')
    out = cli("export", str(suite), "-o", str(tmp_path / "out"), "--lossy")
    assert out.returncode == 2 and "not a catalog" in out.stderr and "internal error" not in out.stderr
    (suite / "catalog.json").write_text((ROOT / "cases" / "catalog.json").read_text(encoding="utf-8"))
    (tmp_path / "file").write_text("x")
    for command in (["export", str(suite)], ["import", str(SHOP_EVALS)]):
        for target in ("file", "file/sub"):
            out = cli(*command, "-o", str(tmp_path / target))
            assert out.returncode == 2 and "is a file, not a folder" in out.stderr, out.stderr
    out = cli("export", str(suite), "-o", str(tmp_path / "out"), "--lossy")
    assert out.returncode == 0, out.stderr
    tools = {t["name"] for t in json.loads((tmp_path / "out" / "schema.json").read_text())["tools"]}
    assert "search_events" in tools  # the catalog's tools, never an empty list


def test_import_of_a_type_list_or_an_infinite_bound_is_a_line_not_an_internal_error(tmp_path: Path):
    for name, matcher in (("type", '{"$type": ["string"]}'), ("nan", '{"$gte": NaN}'), ("inf", '{"$lt": Infinity}')):
        source = tmp_path / f"{name}.json"
        source.write_text(
            '[{"messages": [{"role": "user", "type": "message", "content": "hi"}], '
            f'"expectedCall": [{{"functionName": "t", "arguments": {{"n": {matcher}}}}}]}}]'
        )
        out = cli("import", str(source), "-o", str(tmp_path / f"out-{name}"))
        assert out.returncode == 2 and "internal error" not in out.stderr, out.stderr
        assert f"{source}:1:" in out.stderr, out.stderr


def test_export_help_names_lossy():
    said = " ".join(cli("export", "--help").stdout.split())
    assert "--lossy" in said and "refused with what would be lost" in said


def test_export_leaves_an_absent_argument_out_names_clock_and_language_and_refuses_a_suite_validate_refuses(
    tmp_path: Path,
):
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "suite.yaml").write_text("min_cases_per_behaviour: 0\ntimezone_id: Asia/Taipei\n")
    (suite / "A-01.yaml").write_text(
        "id: A-01\nbehaviour: selection\ntitle: no city\nstart_route: /\nlocale: zh-TW\nsteps:\n"
        "  - user: events, anywhere\n    plan: [{call: search_events, args: {q: jazz}}]\n"
        "expect:\n  calls:\n    expected: [{tool: search_events, args: {q: jazz, city: {$absent: true}}}]\n"
    )
    out = cli("export", str(suite), "-o", str(tmp_path / "out"), "--lossy")
    said = " ".join(out.stdout.split())
    assert out.returncode == 0, out.stdout + out.stderr
    (evaluation,) = json.loads((tmp_path / "out" / "evals.json").read_text())
    # an empty object would ask the public tool for an empty object: a correct agent would fail
    assert evaluation["expectedCall"] == [{"functionName": "search_events", "arguments": {"q": "jazz"}}]
    assert "args.city.$absent" in said or "args.city: left out" in said, said
    assert "locale zh-TW" in said and "suite.yaml: timezone_id Asia/Taipei" in said, said
    # a case whose plan contradicts its expectation: validate refuses it, so export does too
    (suite / "A-01.yaml").write_text(
        (suite / "A-01.yaml").read_text().replace("args: {q: jazz}}]", "args: {q: jazz, city: Taipei}}]")
    )
    out = cli("export", str(suite), "-o", str(tmp_path / "out2"), "--lossy")
    assert out.returncode == 2 and "nothing written: fix the cases" in out.stderr, out.stdout + out.stderr
    assert not (tmp_path / "out2").exists()


def test_an_any_matcher_imports_with_a_made_up_value_and_a_note(tmp_path: Path):
    source = tmp_path / "any.json"
    source.write_text(
        '[{"messages": [{"role": "user", "type": "message", "content": "hi"}], '
        '"expectedCall": [{"functionName": "t", "arguments": {"n": {"$any": true}}}]}]'
    )
    out = cli("import", str(source), "-o", str(tmp_path / "out"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert 'made up "x" for {"$any": true}' in " ".join(out.stdout.split()), out.stdout
    (case,) = _cases(tmp_path / "out").values()
    assert case["steps"][0]["plan"] == [{"call": "t", "args": {"n": "x"}, "synthesized": {"n": {"$any": True}}}]
