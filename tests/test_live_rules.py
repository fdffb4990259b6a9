"""Without a catalog file, rules are checked against the tools the site registers (suite/live_rules.py).

A case file run by itself, with a forbidden rule on an argument its tool does not take (``quantityy``
for ``quantity``), passed: the rule could never fire. Now the trial is not_run with the reason and the
run exits 3; ``validate --live URL`` finds the same before anything is played. The unchanged case beside
it still passes, so the check does not fire on sound rules.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_support import cli
from static_server import CASES

from webmcp_eval.suite.live_rules import rules_that_never_fire
from webmcp_eval.suite.loader import parse_case

SITE_YAML = CASES.parent / "site.yaml"
INERT = "      - {tool: add_to_cart, args: {quantityy: 3}, why: a misspelt argument}\n"


def _two_cases(folder: Path) -> list[str]:
    text = (CASES / "SHOP-01.yaml").read_text(encoding="utf-8")
    anchor = "    forbidden:\n"
    assert anchor in text
    inert = text.replace("id: SHOP-01", "id: SHOP-21").replace(anchor, anchor + INERT)
    (folder / "SHOP-01.yaml").write_text(text, encoding="utf-8")
    (folder / "SHOP-21.yaml").write_text(inert, encoding="utf-8")
    return [str(folder / "SHOP-01.yaml"), str(folder / "SHOP-21.yaml")]


@pytest.mark.browser
def test_a_rule_on_an_argument_the_live_tool_lacks_is_not_run_and_validate_live_says_so(tmp_path, static_shop):
    files = _two_cases(tmp_path)
    site = ("--base-url", static_shop.url, "--site-config", str(SITE_YAML))
    done = cli("run", *files, *site, "-j", "2", "--out", str(tmp_path))  # two workers overlap the shop's settle time
    assert done.returncode == 3, done.stdout + done.stderr
    assert "each trial checks the rules against the tools its pages register" in done.stderr
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    traces = {t["case_id"]: t for t in map(json.loads, map(Path.read_text, (run_dir / "trials").glob("*.json")))}
    assert traces["SHOP-01"]["verdict"] == "passed"
    inert = traces["SHOP-21"]
    assert (inert["verdict"], inert["not_run_kind"]) == ("not_run", "case")
    assert inert["verdict_reason"] == "can never fire: add_to_cart has no argument 'quantityy'"
    assert "quantity" in json.dumps(inert["live_tools"]["add_to_cart"])  # the schema it was checked against

    checked = cli("validate", *files, "--live", static_shop.url)
    assert checked.returncode == 2, checked.stdout + checked.stderr
    line = next(n for n, row in enumerate(Path(files[1]).read_text().splitlines(), 1) if "quantityy" in row)
    assert f"SHOP-21.yaml:{line}: expect.calls.forbidden[0].args.quantityy: add_to_cart has no argument" in (
        checked.stderr
    )
    assert "SHOP-01.yaml" not in checked.stderr.replace(files[1], "")
    assert f"tools checked against {static_shop.url} as it is now" in checked.stderr


def test_rules_are_judged_against_the_tools_the_trial_saw():
    text = (CASES / "SHOP-01.yaml").read_text(encoding="utf-8").replace("    forbidden:\n", "    forbidden:\n" + INERT)
    case = parse_case(text, "SHOP-21.yaml").case
    schema = {"type": "object", "properties": {"product_id": {}, "quantity": {}}}
    never, unseen = rules_that_never_fire(case, {"add_to_cart": [schema], "list_products": [{}]})
    assert never == ["add_to_cart has no argument 'quantityy'"]
    assert unseen == [
        "no route this trial visited registered share_cart (registered: add_to_cart, list_products): "
        "its rule was not tried"
    ]
    fixed = {"add_to_cart": [{**schema, "properties": {**schema["properties"], "quantityy": {}}}], "share_cart": [{}]}
    assert rules_that_never_fire(case, {**fixed, "list_products": [{}]}) == ([], [])
    open_schema = {"add_to_cart": [{"type": "object", "additionalProperties": True}], "list_products": [{}]}
    assert rules_that_never_fire(case, {**open_schema, "share_cart": [{}]})[0] == []
