"""The public webmcp-evals format: read, checked, converted, imported, and run on the static shop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from eval_support import cli
from test_checks import make_trace, tc

from webmcp_eval.judge.checks import check_calls
from webmcp_eval.matchers import MISSING
from webmcp_eval.suite.case import HistoryCall, HistoryModel, HistoryUser, UnorderedGroup
from webmcp_eval.suite.evals_json import json_lines, load_evals
from webmcp_eval.suite.loader import parse_case
from webmcp_eval.suite.matcher_examples import example

ROOT = Path(__file__).resolve().parent.parent
SHOP_EVALS = ROOT / "tests" / "static_site" / "evals.json"


def user(text: str) -> dict[str, str]:
    return {"role": "user", "type": "message", "content": text}


def write(tmp_path: Path, evals: Any, name: str = "evals.json") -> Path:
    path = tmp_path / name
    path.write_text(evals if isinstance(evals, str) else json.dumps(evals, indent=2), encoding="utf-8")
    return path


def problems_of(tmp_path: Path, evals: Any) -> list[str]:
    return [str(p).split(": ", 1)[1] for p in load_evals(write(tmp_path, evals))[1]]


# ---- conversion: one eval, one case -------------------------------------------------------------


def test_the_shop_evals_convert_with_every_shape(tmp_path):
    cases, problems, converted = load_evals(SHOP_EVALS)
    assert problems == [] and converted.notes == []
    by_name = {lc.case.title: lc.case for lc in cases}
    assert len(cases) == 6 and {c.behaviour for c in by_name.values()} == {"tool_call", "no_tool_call"}
    two = by_name["Two green teas"]
    assert two.expect.calls.order == "exact" and two.start_route == "/"
    optional, add = two.expect.calls.expected
    assert optional.optional and add.result == {"status": "ok"}
    assert two.steps[0].plan[0].call == "add_to_cart"  # the optional call is not in the reference plan
    assert two.steps[0].plan[0].args == {"product_id": "tea-green-01", "quantity": 2}
    group = by_name["An oolong and a black tea, in any order"].expect.calls.expected[0]
    assert isinstance(group, UnorderedGroup) and len(group.unordered) == 2
    form = by_name["Newsletter through the declarative form"].steps[0].plan[0]
    assert form.args == {"email": "ann@example.com", "topic": "offers"}  # a value its $pattern accepts
    step = by_name["Two more of the same (earlier turns as history)"].steps[0]
    assert [type(t) for t in step.history] == [HistoryUser, HistoryCall, HistoryModel]
    assert step.history[1].result == {"status": "ok"} and step.user == "Make that two more of the same."
    none = by_name["No tool for the weather"]
    assert none.expect.calls.max_calls == 0 and none.expect.calls.expected == [] and none.steps[0].plan == []


def test_converted_expectations_pass_their_plan_and_fail_a_wrong_argument_or_an_extra_call():
    cases = {lc.case.title: lc.case for lc in load_evals(SHOP_EVALS)[0]}
    calls = cases["Two green teas"].expect.calls

    def verdicts(*made):
        return {a.id: a.status for a in check_calls(calls, make_trace(*made))[0] if a.kind == "calls"}

    right = tc("add_to_cart", {"product_id": "tea-green-01", "quantity": 2}, result={"status": "ok"})
    assert set(verdicts(right).values()) == {"passed"}
    assert set(verdicts(tc("list_products"), right).values()) == {"passed"}  # the optional call, made
    wrong = tc("add_to_cart", {"product_id": "tea-green-01", "quantity": 3}, result={"status": "ok"})
    assert verdicts(wrong)["calls.expected[1]"] == "failed"
    assert verdicts(right, tc("list_products"))["calls.exact"] == "failed"  # a call beyond the expected ones
    weather = cases["No tool for the weather"].expect.calls
    assert {a.status for a in check_calls(weather, make_trace())[0] if a.kind == "calls"} == {"passed"}
    assert "failed" in {a.status for a in check_calls(weather, make_trace(tc("list_products")))[0]}


def test_one_call_instead_of_a_list_and_the_answer_written_as_a_functioncall(tmp_path):
    path = write(
        tmp_path,
        [
            {
                "messages": [
                    user("add one"),
                    {"role": "model", "type": "functioncall", "name": "add", "arguments": {"n": 1}},
                    {"role": "user", "type": "functioncall", "name": "add", "response": {"result": "ok"}},
                    user("again"),
                ],
                "expectedCall": {"functionName": "add", "arguments": {"n": {"$gt": 1, "$lt": 3}}},
            }
        ],
    )
    (lc,), problems, _ = load_evals(path)
    assert problems == []
    assert lc.case.steps[0].history[1].result == {"result": "ok"}
    assert lc.case.steps[0].plan[0].args == {"n": 2} and lc.case.id == "001-eval"


def test_a_value_for_every_matcher_it_can_know():
    assert example({"$pattern": "^Bob.*Smith$"}) == "Bob Smith"
    assert example({"$pattern": r"555.*123.*4567"}) == "555 123 4567"
    assert example({"$gte": 1, "$lte": 120}) == 1 and example({"$gt": 10}) == 11 and example({"$lt": 0}) == -1
    assert example({"$type": "string"}) == "x" and example({"$contains": "York"}) == "York"
    assert example({"a": [1, {"$type": "boolean"}]}) == {"a": [1, True]}
    assert example({"$pattern": r"^(0-49\.99|50-99\.99)$"}) == "0-49.99"
    assert example({"$any": True}) == "x"  # a stand-in, marked synthesized in the plan
    assert example({"$pattern": "^[a-f]{3}$"}) is MISSING


def test_a_value_played_for_a_type_alone_is_noted(tmp_path):
    ev = {
        "messages": [user("book")],
        "expectedCall": [{"functionName": "book", "arguments": {"date": {"$type": "string"}}}],
    }
    (lc,), problems, converted = load_evals(write(tmp_path, [ev]))
    assert problems == [] and lc.case.steps[0].plan[0].args == {"date": "x"}
    assert lc.case.steps[0].plan[0].synthesized == {"date": {"$type": "string"}}
    assert converted.notes == [
        '[0] 001-eval: [0].expectedCall[0].arguments.date: made up "x" for {"$type": "string"} (marked synthesized: '
        "the reference agent asks the tool's schema for a better one); give a real value if the site checks it"
    ]


def test_json_lines_name_every_value():
    text = '[\n  {"a": 1,\n   "b": [\n     {"c": "x"}\n   ]\n  }\n]\n'
    lines = json_lines(text)
    assert lines[(0, "a")] == 2 and lines[(0, "b")] == 3 and lines[(0, "b", 0, "c")] == 4


# ---- problems: file, line, JSON path; nothing unknown is ignored ----------------------------------


def test_an_unknown_operator_and_a_misspelled_key_are_errors_at_their_line(tmp_path):
    evals = [
        {
            "name": "x",
            "messages": [user("hi")],
            "expectedCall": [{"functionName": "a", "arguments": {"q": {"$regex": "a"}}}],
        },
        {"messages": [user("hi")], "expectedCall": [{"functionName": "a", "argument": {}}]},
        {"messages": [user("hi")]},
        {"messages": [{"role": "user", "type": "mesage", "content": "hi"}], "expectedCall": None},
        {"messages": [user("hi")], "expectedCall": [{"functionName": "a", "arguments": {"q": {"$type": "date"}}}]},
    ]
    path = write(tmp_path, evals)
    got = [str(p) for p in load_evals(path)[1]]
    lines = json_lines(path.read_text())
    assert got[0].startswith(f"{path}:{lines[(0, 'expectedCall', 0, 'arguments', 'q', '$regex')]}: ")
    assert "[0].expectedCall[0].arguments.q.$regex: unknown matcher $regex" in got[0]
    assert "[1].expectedCall[0].argument: unknown field" in got[1]
    assert "[2].expectedCall: required field is missing (null means: no tool call)" in got[2]
    assert "[3].messages[0]: a message is" in got[3]
    assert "[4].expectedCall[0].arguments.q.$type: $type takes one of" in got[4]
    assert len(got) == 5


def test_a_message_type_that_is_no_text_is_a_problem_not_a_crash(tmp_path):
    path = write(tmp_path, [{"messages": [{"role": "user", "type": ["message"], "content": "hi"}], "expectedCall": []}])
    got = [str(p) for p in load_evals(path)[1]]
    assert len(got) == 1 and "[0].messages[0]: a message is" in got[0]


def test_files_that_are_no_evals(tmp_path):
    assert problems_of(tmp_path, '{"name": "x"}') == [
        "an evals.json is a JSON array of evals ({name, messages, expectedCall})"
    ]
    assert problems_of(tmp_path, "[\n  {,\n]")[0].startswith("not valid JSON")
    assert str(load_evals(write(tmp_path, "[\n\n  {,\n]"))[1][0]).split(":")[1] == "3"


def test_a_key_given_twice_is_an_error_not_a_silent_loss(tmp_path):
    text = '[\n {"messages": [{"role": "user", "type": "message", "content": "hi"}],\n  "expectedCall": null,\n'
    text += '  "expectedCall": [{"functionName": "a"}]}\n]\n'
    assert [str(p).split(":", 1)[1] for p in load_evals(write(tmp_path, text))[1]] == [
        "4: [0].expectedCall: duplicate key (the first would be ignored)"
    ]


def test_an_argument_that_fits_no_schema_is_named_by_its_json_path(tmp_path):
    from webmcp_eval.suite.validate import SuiteCatalog

    catalog = SuiteCatalog({"routes": {"/": {"add": {"type": "object", "properties": {"n": {"type": "integer"}}}}}})
    path = write(
        tmp_path, [{"messages": [user("hi")], "expectedCall": [{"functionName": "add", "arguments": {"m": 1}}]}]
    )
    (problem,) = load_evals(path, catalog)[1]
    assert problem.field.startswith("[0].expectedCall[0].arguments") and "m" in problem.message


# ---- the command line ---------------------------------------------------------------------------


def test_validate_and_run_take_an_evals_json(tmp_path):
    ok = cli("validate", str(SHOP_EVALS))
    assert ok.returncode == 0 and "6 case(s) valid" in ok.stdout and "webmcp-evals format" in ok.stdout
    bad = write(
        tmp_path, [{"messages": [user("hi")], "expectedCall": [{"functionName": "a", "arguments": {"q": {"$foo": 1}}}]}]
    )
    out = cli("validate", str(bad))
    assert out.returncode == 2 and f"{bad}:" in out.stderr and "[0].expectedCall[0].arguments.q.$foo" in out.stderr
    assert "Traceback" not in out.stderr
    no_site = cli("run", str(SHOP_EVALS))
    assert no_site.returncode == 2 and "give --base-url URL" in no_site.stderr and "Traceback" not in no_site.stderr


def test_import_help():
    out = cli("import", "--help")
    assert out.returncode == 0 and "usage: webmcp-eval import" in out.stdout
    for word in ("-o DIR", "--base-url", "expectedCall", "reference plan"):
        assert word in out.stdout


def test_import_writes_a_suite_that_validates_and_says_where_it_is_stricter(tmp_path):
    out = cli("import", str(SHOP_EVALS), "-o", str(tmp_path / "suite"), "--base-url", "http://127.0.0.1:9/demo/")
    assert out.returncode == 0, out.stderr
    assert "6 case(s) and suite.yaml written" in out.stdout and "shares one browser context" in out.stdout
    suite = yaml.safe_load((tmp_path / "suite" / "suite.yaml").read_text())
    assert suite["site"] == {"base_url": "http://127.0.0.1:9/demo/"} and "tool_call" in suite["behaviours"]
    assert len(list((tmp_path / "suite").glob("0*.yaml"))) == 6
    again = cli("validate", str(tmp_path / "suite"))
    assert again.returncode == 0 and "6 case(s) valid" in again.stdout
    refused = cli("import", str(SHOP_EVALS), "-o", str(tmp_path / "suite"))
    assert refused.returncode == 2 and "not an empty folder" in refused.stderr


def test_import_of_a_broken_file_writes_nothing(tmp_path):
    bad = write(tmp_path, [{"messages": [user("hi")], "expectedCall": [{"functionNme": "a"}]}])
    out = cli("import", str(bad), "-o", str(tmp_path / "suite"))
    assert out.returncode == 2 and "[0].expectedCall[0].functionNme: unknown field" in out.stderr
    assert not (tmp_path / "suite").exists()


# ---- on the static shop, with the reference agent -------------------------------------------------


def _run(shop, tmp_path: Path, *targets: str, base_url: bool = True) -> tuple[int, dict[str, dict]]:
    extra = ["--base-url", shop.url] if base_url else []
    out = cli("run", *targets, *extra, "--out", str(tmp_path / "runs"), "--run-id", "e")
    traces = {}
    for f in (tmp_path / "runs" / "e" / "trials").glob("*.json"):
        data = json.loads(f.read_text())
        if isinstance(data, dict) and "case_id" in data:
            traces[data["case_id"]] = data
    assert traces, out.stdout + out.stderr
    return out.returncode, traces


@pytest.mark.browser
def test_the_shop_evals_json_runs_unchanged_and_every_case_passes(static_shop, tmp_path):
    code, traces = _run(static_shop, tmp_path, str(SHOP_EVALS))
    assert {t["case_id"]: t["verdict"] for t in traces.values()} == {
        lc.case.id: "passed" for lc in load_evals(SHOP_EVALS)[0]
    }
    assert code == 0


@pytest.mark.browser
def test_an_imported_case_with_a_wrong_argument_fails(tmp_path):
    """A plan that asks for three where the eval expects at most two: validate refuses the case before any
    browser starts (its own plan fails it), and the checks fail the call that asks for three."""
    from tests.test_case_fuzz import plan_trace
    from webmcp_eval.judge import checks

    assert (
        cli("import", str(SHOP_EVALS), "-o", str(tmp_path / "suite"), "--base-url", "http://127.0.0.1:9/").returncode
        == 0
    )
    case_file = tmp_path / "suite" / "002-Two-green-teas.yaml"
    data = yaml.safe_load(case_file.read_text())
    data["steps"][0]["plan"][0]["args"]["quantity"] = 3  # the agent now asks for three
    case_file.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
    out = cli("validate", str(tmp_path / "suite"))
    said = " ".join((out.stdout + out.stderr).split())
    assert out.returncode == 2 and "args.quantity: the reference plan's call steps[0].plan[0]" in said, said
    case = parse_case(case_file.read_text(), str(case_file)).case
    failed = {a.id: a.why for a in checks.evaluate(case, plan_trace(case)) if a.status == "failed"}
    assert set(failed) == {"calls.expected[1]", "calls.exact"}, failed
    assert "quantity" in failed["calls.expected[1]"]


def test_a_conversation_that_ends_with_a_tools_answer_goes_on_from_it(tmp_path):
    call = {"role": "model", "type": "functioncall", "name": "apply", "arguments": {"code": "X"}}
    answer = {"role": "user", "type": "functionresponse", "name": "apply", "response": {"error": "expired"}}
    said = {"role": "model", "type": "message", "content": "Done."}
    path = write(
        tmp_path,
        [
            {"messages": [user("apply X"), call, answer], "expectedCall": [{"functionName": "checkout"}]},
            {"messages": [user("apply X"), said], "expectedCall": None},
        ],
    )
    cases, problems, _ = load_evals(path)
    step = cases[0].case.steps[0]
    assert step.user == "" and len(step.history) == 2 and step.history[1].result == {"error": "expired"}
    assert [(p.field, p.message.split(" (")[0]) for p in problems] == [
        ("[1].messages", "an empty message only goes on from a history that ends with a tool's answer")
    ]


def test_an_eval_of_a_thousand_calls_is_checked_against_its_plan_in_one_pass(tmp_path: Path, monkeypatch):
    """Each expected call against the plan: plain values by one lookup, a matcher until the first planned call
    that may fill it (every call against every call was 16 M comparisons for 4,000)."""
    from webmcp_eval.suite import plan_contradictions
    from webmcp_eval.suite.evals_json import load_evals

    compared = []
    real = plan_contradictions._mismatch
    monkeypatch.setattr(plan_contradictions, "_mismatch", lambda exp, p: compared.append(1) or real(exp, p))
    calls = [{"functionName": "f", "arguments": {"a": i}} for i in range(1000)]
    calls += [{"functionName": "g", "arguments": {"q": {"$contains": "x"}}} for _ in range(100)]
    source = tmp_path / "big.json"
    source.write_text(json.dumps([{"messages": [{"role": "user", "type": "message", "content": "hi"}],
                                   "expectedCall": calls}]))  # fmt: skip
    loaded, problems, _ = load_evals(source)
    assert problems == [] and len(loaded[0].case.expect.calls.expected) == 1100
    assert len(compared) == 100  # none for the plain values; one per matcher: the first planned g fills it
