"""The public webmcp-evals files both ways: import takes schema.json as the catalog, export writes evals.json and the
tool list, and import -> export -> import keeps every case."""

from __future__ import annotations

import json
from pathlib import Path

from runner_support import cli

from runner.suite.folder import find_suite
from runner.suite.loader import load_cases

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


def test_export_names_the_cases_the_public_format_cannot_say(tmp_path: Path):
    out = cli("export", str(ROOT / "tests" / "static_site" / "cases"), "-o", str(tmp_path / "x"))
    assert out.returncode == 0, out.stderr
    assert "left out: SHOP-" in out.stdout  # the shop's own cases script clicks and state checks
    assert json.loads((tmp_path / "x" / "evals.json").read_text()) is not None
    assert cli("export", str(tmp_path / "nope"), "-o", str(tmp_path / "y")).returncode == 2
