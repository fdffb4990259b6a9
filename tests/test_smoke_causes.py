"""Smoke verdicts by cause, Chrome's own form issues, and where each tool was registered.

Pure judgements first (no browser), each with a case where the rule must fire and one where it must stay quiet;
then the audit end to end, a real Chromium and proxy on the small tea shop of tests/smoke_cause_site/, whose tools
are each made for one cause: a tool without inputSchema, a form that navigates (its answer is the next page's
JSON-LD), the browser's own form validation, a call that loses its page, an imperative validation list, an isError
answer, a success: false answer, a form an imperative tool stands for, "review" as a verb, and a form as Chrome
checks it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from eval_support import cli, in_thread
from smoke_cause_server import SITE, smoke_cause_site

from webmcp_eval.audit.audit_report import AuditReport, PageAudit
from webmcp_eval.audit.catalog_lint import lint_catalog
from webmcp_eval.audit.config import AuditConfig
from webmcp_eval.audit.engine import AuditOptions, audit
from webmcp_eval.audit.forms import form_findings, read_forms
from webmcp_eval.audit.inputs import SmokeInput
from webmcp_eval.audit.model import Finding, FormField, Frame, PageSurface, Source, Tool
from webmcp_eval.audit.pages import lost_page, not_run_if_lost
from webmcp_eval.audit.rules import lint
from webmcp_eval.audit.sarif import sarif_report
from webmcp_eval.audit.smoke import CallOutcome, judge
from webmcp_eval.audit.writers import json_report, text_report
from webmcp_eval.play.page.surface.log import RegisterEvent, parse_event
from webmcp_eval.play.page.surface.model import FormControl as Control
from webmcp_eval.play.page.surface.model import PageForm
from webmcp_eval.play.page.surface.reader import parse_forms, tool_from

SARIF_SCHEMA = Path(__file__).resolve().parent / "sarif" / "sarif-schema-2.1.0.json"
FRAME = Frame("http://t.test/", "http://t.test")
DESCRIBED = "Lists the teas the shop sells today, with prices."


def _rules(*tools: Tool) -> set[tuple[str, str | None]]:
    surface = PageSurface("http://t.test/", [Frame("http://t.test/", "http://t.test", tools=list(tools))])
    return {(f.rule, f.tool) for f in lint(surface, AuditConfig())}


def _call(valid: bool, label: str = "required only", **kw: Any) -> CallOutcome:
    return CallOutcome(SmokeInput(label, {}, valid), **kw)


def _judged(tool: Tool, *outcomes: CallOutcome) -> list[str]:
    return [f.rule for f in judge(tool, FRAME, "http://t.test/", list(outcomes), AuditConfig())]


# ---- pure judgements ------------------------------------------------------------------------------------------


def test_a_tool_without_input_schema_takes_no_parameters_and_a_wrong_schema_is_still_found():
    assert _rules(Tool("list_teas", DESCRIBED, None)) == set()  # WebMCP allows it: neither null nor not-object
    assert ("schema-null", "t") in _rules(Tool("t", DESCRIBED, {"type": "object", "default": None}))
    assert ("schema-not-object", "t") in _rules(Tool("t", DESCRIBED, ["not", "an", "object"]))
    assert ("schema-not-object", "t") in _rules(Tool("t", DESCRIBED, {"properties": {}}))


def test_is_error_to_valid_input_is_an_error_on_valid_and_to_invalid_input_a_refusal():
    tool = Tool("search_flights", DESCRIBED, {"type": "object"})
    failed = {"isError": True, "content": [{"type": "text", "text": "Timed out waiting for UI to update"}]}
    assert _judged(tool, _call(True, result=failed)) == ["smoke-error-on-valid"]
    assert _judged(tool, _call(True, result={"flights": []})) == []
    assert _judged(tool, _call(False, "missing required city", result=failed)) == []  # refused: right


def test_success_or_ok_false_is_a_refusal_and_true_an_answer():
    tool = Tool("check_stock", DESCRIBED, {"type": "object"})
    for flag in ("success", "ok"):
        refused = _call(False, "missing required tea", result={flag: False, "reason": "Which tea?"})
        assert refused.refusal == "isError or an error field" and _judged(tool, refused) == []
        accepted = _call(False, "missing required tea", result={flag: True, "grams": 120})
        assert _judged(tool, accepted) == ["smoke-accepts-invalid"]


def test_an_imperative_validation_list_is_a_refusal_and_a_list_of_strings_is_an_answer():
    tool = Tool("order_tea", DESCRIBED, {"type": "object"})
    listed = [{"field": "grams", "value": 49, "message": "Between 50 and 500"}]
    refused = _call(False, "grams below its minimum", result=listed)
    assert refused.refusal == "a validation answer" and _judged(tool, refused) == []
    names = _call(False, "grams below its minimum", result=["sencha", "oolong"])
    assert names.refusal is None and _judged(tool, names) == ["smoke-accepts-invalid"]
    unfielded = _call(False, "grams below its minimum", result=[{"message": "ok, 49 g of sencha"}])
    assert unfielded.refusal is None  # a tool's list of messages is data unless each names its field


def test_the_browsers_own_form_validation_is_not_the_tools_error():
    form = Tool("ship", DESCRIBED, {"type": "object"}, kind="declarative", schema_derived=True)
    said = "WebMCP.call_tool: UnknownError: Form validation failed: city: Please fill out this field.."
    valid = _call(True, error=said, declarative=True)
    assert valid.browser_refused and _judged(form, valid) == []
    assert valid.verdict == "refused (the browser's form validation)"
    imperative = Tool("ship", DESCRIBED, {"type": "object"})
    assert _judged(imperative, _call(True, error="TypeError: city is undefined")) == ["smoke-error-on-valid"]
    invalid = _call(False, "missing required city", error=said, declarative=True)
    assert invalid.refusal == "the browser's form validation" and _judged(form, invalid) == []


def test_a_navigating_form_answers_with_the_next_page_and_a_form_cannot_refuse_what_the_browser_decides():
    form = Tool("find_tea", DESCRIBED, {"type": "object"}, {"autosubmit": True}, "declarative", schema_derived=True)
    form.fields = [FormField("name", "select-one", filled=True)]
    page = [{"@type": "Message", "text": "sencha grows in Shizuoka."}]
    assert _judged(form, _call(True, result=page, declarative=True, navigated_to="http://t.test/r.html")) == []
    assert _judged(form, _call(True, result=None, declarative=True, navigated_to="http://t.test/r.html")) == []
    assert _judged(form, _call(True, result=None, declarative=True)) == ["smoke-unserializable"]  # nothing at all
    kept = _call(False, "missing required name", result=page, declarative=True)  # the selected option is sent
    typed = _call(False, "name of the wrong type", result=page, declarative=True)  # written into the field as text
    assert _judged(form, kept, typed) == []
    form.fields = [FormField("name", "text")]  # empty: leaving it out is the form's to refuse
    assert _judged(form, kept) == ["smoke-accepts-invalid"]


def test_a_call_that_lost_its_page_twice_is_not_run_never_the_tools_error():
    lost = _call(True, error="WebMCP.call_tool: Execution context was destroyed, most likely because of a navigation.")
    assert lost_page(lost)
    not_run_if_lost(lost)
    assert lost.error is None and "lost to a navigation twice" in (lost.not_run or "")
    tool = Tool("reload_prices", DESCRIBED, None, {"readOnlyHint": True})
    assert _judged(tool, lost) == []
    d = lost.as_dict()
    assert d["refused"] is None and d["not_run"] and lost.verdict.startswith("not run: ")
    thrown = _call(True, error="Error: backend down")
    assert not lost_page(thrown)
    not_run_if_lost(thrown)
    assert thrown.not_run is None and _judged(tool, thrown) == ["smoke-error-on-valid"]


def test_review_as_a_verb_is_not_text_others_wrote():
    cart = Tool("open_cart", "Opens the shopping cart to review items and proceed to checkout.", None)
    reviews = Tool("product_reviews", "Lists the reviews customers wrote about a tea.", None)
    latest = Tool("latest", "Shows the latest review of the tea of the day.", None)
    found = _rules(cart, reviews, latest)
    assert ("untrusted-content-unmarked", "open_cart") not in found
    assert ("untrusted-content-unmarked", "product_reviews") in found and (
        "untrusted-content-unmarked",
        "latest",
    ) in found


def test_a_form_its_imperative_tool_stands_for_needs_no_toolname():
    fields = [Control("tea", "", "text", labelled=True), Control("grams", "", "number", labelled=True)]
    form = PageForm("http://t.test/", None, "Orders tea.", True, "order", fields)
    tool = Tool("order_tea", DESCRIBED, {"type": "object", "properties": {"tea": {}, "grams": {}}})
    other = Tool("list_teas", DESCRIBED, {"type": "object", "properties": {"tea": {}}})

    def rules(tools: list[Tool]) -> set[str]:
        return {f.rule for f in form_findings("http://t.test/", [form], AuditConfig(), tools)}

    assert rules([tool]) == set()
    assert rules([other]) == {"form-toolname-missing"}  # takes only some of its fields: not its tool
    declarative = Tool("order_tea", DESCRIBED, tool.input_schema, kind="declarative")
    assert rules([declarative]) == {"form-toolname-missing"}
    plain = PageForm("http://t.test/", None, None, False, "order", fields)  # no WebMCP attribute: a plain form
    assert {f.rule for f in form_findings("http://t.test/", [plain], AuditConfig(), [tool])} == {"form-not-tool"}


def test_the_form_lint_reads_what_chrome_reads():
    aria = Control("people", "", "number", required=True, labelled=False)  # aria-label only: not a <label>
    date = Control("day", "", "date")  # Chrome writes its description
    optional = Control("", "coupon", "text")
    tied = Control("note", "note", "text", labelled=True)

    def rules(form: PageForm) -> list[tuple[str, str]]:
        return sorted((f.rule, f.pointer) for f in form_findings("http://t.test/", [form], AuditConfig()))

    by_dom = PageForm("http://t.test/", "book", "Books a tasting.", controls=[aria, date, optional, tied])
    assert rules(by_dom) == [
        ("form-param-undescribed", "/inputSchema/properties/people"),
        ("form-param-unnamed", "/inputSchema/properties"),
    ]
    # where Chrome's issues were read they decide, whatever the DOM reading says
    issued = [
        Control("people", "", "number", labelled=True, issues=["FormModelContextParameterMissingTitleAndDescription"]),
        Control("", "x", "text", required=True, issues=["FormModelContextRequiredParameterMissingName"]),
        Control("quiet", "", "text"),
    ]
    chrome = PageForm("http://t.test/", "book", "Books a tasting.", controls=issued, chrome=True)
    assert rules(chrome) == [
        ("form-param-undescribed", "/inputSchema/properties/people"),
        ("form-required-unnamed", "/inputSchema/required"),
    ]


def test_the_catalog_records_a_forms_kind_and_validate_skips_its_browser_built_schema():
    select = {
        "type": "object",
        "properties": {"size": {"type": "string", "enum": ["S"], "anyOf": [{"const": "S"}], "description": "s"}},
    }
    catalog: dict[str, Any] = {"routes": {"/": {"pick": select}}}
    assert [f.rule for f in lint_catalog(catalog)] == ["schema-unsupported-keyword"]  # not known to be a form
    catalog["kinds"] = {"/": {"pick": {"kind": "declarative", "schema_derived": True}}}
    assert lint_catalog(catalog) == []
    catalog["kinds"] = {"/": {"pick": {"kind": "imperative", "schema_derived": False}}}  # the author's anyOf
    assert [f.rule for f in lint_catalog(catalog)] == ["schema-unsupported-keyword"]


def test_init_writes_each_tools_kind_into_the_catalog_and_validate_reads_it():
    from webmcp_eval.play.page.surface.discover import RouteTools
    from webmcp_eval.suite.init import plan_suite

    select = {"type": "object", "properties": {"size": {"type": "string", "anyOf": [{"const": "S"}], "enum": ["S"]}}}
    form = Tool("pick_size", DESCRIBED, select, {"autosubmit": True}, "declarative", schema_derived=True)
    listed = Tool("list_teas", DESCRIBED, None, {"readOnlyHint": True})
    route = RouteTools("/", "http://t.test/", "native", [Frame("http://t.test/", "", tools=[form, listed])])
    _, catalog, _ = plan_suite("http://t.test/", [route], 100)
    assert catalog["kinds"] == {
        "/": {
            "pick_size": {"kind": "declarative", "schema_derived": True},
            "list_teas": {"kind": "imperative", "schema_derived": False},
        }
    }
    assert [f.rule for f in lint_catalog(catalog)] == []  # the form's anyOf is the browser's


def test_a_tools_registration_source_from_the_shim_or_its_form():
    at = {"url": "http://t.test/tools.js", "line": 5, "column": 4}
    registered = parse_event({"type": "register", "name": "t", "source": at})
    assert isinstance(registered, RegisterEvent)
    source = tool_from({"name": "t"}, registered, None).source
    assert source == Source("http://t.test/tools.js", 5, 4) and str(source) == "http://t.test/tools.js:5:4"
    declared = parse_event({"type": "register", "name": "f", "declarative": True})
    assert isinstance(declared, RegisterEvent)
    form = tool_from({"name": "f"}, declared, PageForm("http://t.test/", "f", None, selector="form#find"))
    assert form.source == Source(selector="form#find") and str(form.source) == "form#find"
    assert tool_from({"name": "t"}, None, None).source is None  # the shim never saw it registered


def _report_with_sources() -> AuditReport:
    scripted = Tool("a", "", None, source=Source("http://t.test/js/tools.js", 12, 7))
    elsewhere = Tool("b", "", None, source=Source("http://cdn.test/lib.js", 3, 1))
    form = Tool("c", "", None, kind="declarative", source=Source(selector="form#c"))
    frame = Frame("http://t.test/shop/", "http://t.test", tools=[scripted, elsewhere, form])
    surface = PageSurface("http://t.test/shop/", [frame])
    findings = [
        Finding(r, "error", "m", surface.url, surface.url, n) for r, n in (("x1", "a"), ("x2", "b"), ("x3", "c"))
    ]
    findings.append(Finding("no-tools", "error", "m", surface.url))
    return AuditReport("http://t.test/shop/", pages=[PageAudit(surface, findings)])


def _sarif_valid(sarif: dict[str, Any]) -> None:
    """Valid SARIF 2.1.0, and a physical location only ever a file of the repository: never a URL, never a base."""
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))).validate(sarif)
    run = sarif["runs"][0]
    assert "originalUriBaseIds" not in run
    for r in run["results"]:
        for loc in r["locations"]:
            assert loc["logicalLocations"], r  # every result is named, whatever its file
            artifact = loc.get("physicalLocation", {}).get("artifactLocation", {"uri": "x"})
            assert set(artifact) == {"uri"} and "://" not in artifact["uri"], artifact


def test_sarif_without_a_site_root_names_the_tool_or_page_and_never_a_url_as_a_file(
    monkeypatch: pytest.MonkeyPatch,
):
    """No --site-root: code scanning knows no file of the site, so each finding is a logical location only (the
    tool as a function, a form's tool as an element with its selector, a page-wide finding as its page); the page
    and the registration source stay in the result's properties."""
    from webmcp_eval.audit import sarif as sarif_writer
    from webmcp_eval.audit.rulebook import RULES

    report = _report_with_sources()
    monkeypatch.setattr(sarif_writer, "RULES", {**RULES, **{r: RULES["no-tools"] for r in ("x1", "x2", "x3")}})
    sarif = sarif_report(report)
    _sarif_valid(sarif)
    results = {r["properties"].get("tool"): r for r in sarif["runs"][0]["results"]}
    where = {tool: r["locations"][0] for tool, r in results.items()}
    assert all("physicalLocation" not in loc for loc in where.values())
    assert where["a"]["logicalLocations"] == [{"name": "a", "kind": "function"}]
    assert where["b"]["logicalLocations"] == [{"name": "b", "kind": "function"}]
    assert where["c"]["logicalLocations"] == [{"name": "c", "kind": "element", "fullyQualifiedName": "form#c"}]
    assert where[None]["logicalLocations"] == [{"name": "http://t.test/shop/", "kind": "resource"}]
    assert results["a"]["properties"]["registered_at"] == "http://t.test/js/tools.js:12:7"
    assert results["a"]["properties"]["page"] == "http://t.test/shop/"
    with pytest.raises(AssertionError):  # the check does check: a URL named as a file
        url = {"physicalLocation": {"artifactLocation": {"uri": "http://t.test/js/tools.js"}}, **where["a"]}
        _sarif_valid({**sarif, "runs": [{**sarif["runs"][0], "results": [{**results["a"], "locations": [url]}]}]})
    data = json_report(report)
    assert data["pages"][0]["frames"][0]["sources"]["a"] == {
        "url": "http://t.test/js/tools.js",
        "line": 12,
        "column": 7,
    }
    assert {f["tool"]: f["source"] for f in data["pages"][0]["findings"]}["c"] == {"selector": "form#c"}
    assert "registered at http://t.test/js/tools.js:12:7" in text_report(report)


def test_sarif_with_a_site_root_names_the_repositorys_files_else_the_tool_alone(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    """--site-root: the folder of the repository the site is served from. A script of the site that is a file
    there is named by its path in the repository (from the checkout, the working folder), at its line and column,
    as code scanning annotates a pull request; one that is not there is the tool alone, never a URL."""
    from webmcp_eval.audit import sarif as sarif_writer
    from webmcp_eval.audit.rulebook import RULES

    monkeypatch.setattr(sarif_writer, "RULES", {**RULES, **{r: RULES["no-tools"] for r in ("x1", "x2", "x3")}})
    monkeypatch.chdir(tmp_path)
    (tmp_path / "web" / "js").mkdir(parents=True)
    report = _report_with_sources()

    def where(site_root: Path) -> dict[Any, Any]:
        sarif = sarif_report(report, site_root=site_root)
        _sarif_valid(sarif)
        return {r["properties"].get("tool"): r["locations"][0] for r in sarif["runs"][0]["results"]}

    missing = where(Path("web"))  # neither the script nor the page is in the repository: by name alone
    assert all("physicalLocation" not in loc for loc in missing.values())
    assert missing["a"]["logicalLocations"] == [{"name": "a", "kind": "function"}]
    (tmp_path / "web" / "js" / "tools.js").write_text("// tools\n", encoding="utf-8")
    (tmp_path / "web" / "shop").mkdir()
    (tmp_path / "web" / "shop" / "index.html").write_text("<!doctype html>", encoding="utf-8")
    found = where(tmp_path / "web")  # an absolute folder: still the path from the checkout
    assert found["a"]["physicalLocation"] == {
        "artifactLocation": {"uri": "web/js/tools.js"},
        "region": {"startLine": 12, "startColumn": 7},
    }
    assert found["a"]["logicalLocations"] == [{"name": "a", "kind": "function"}]
    assert "physicalLocation" not in found["b"]  # another origin's script


def test_sarif_places_a_declarative_form_at_its_page_file_and_by_its_selector(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    """A form's tool has no script: with --site-root it is at its page's file (no line: the form is named by its
    selector); the tool is an element whose fully qualified name is the form's selector, with or without a file."""
    from webmcp_eval.audit import sarif as sarif_writer
    from webmcp_eval.audit.rulebook import RULES

    monkeypatch.setattr(sarif_writer, "RULES", {**RULES, **{r: RULES["no-tools"] for r in ("x1", "x2", "x3")}})
    monkeypatch.chdir(tmp_path)
    (tmp_path / "web" / "shop").mkdir(parents=True)
    (tmp_path / "web" / "shop" / "index.html").write_text("<!doctype html>", encoding="utf-8")
    sarif = sarif_report(_report_with_sources(), site_root=Path("web"))
    _sarif_valid(sarif)
    where = {r["properties"].get("tool"): r["locations"][0] for r in sarif["runs"][0]["results"]}
    assert where["c"] == {
        "logicalLocations": [{"name": "c", "kind": "element", "fullyQualifiedName": "form#c"}],
        "physicalLocation": {"artifactLocation": {"uri": "web/shop/index.html"}},
    }
    assert where[None]["physicalLocation"] == {"artifactLocation": {"uri": "web/shop/index.html"}}


def test_a_site_root_that_is_not_a_folder_is_one_line_and_exit_2(tmp_path: Path):
    done = cli("audit", "http://127.0.0.1:9/", "--site-root", str(tmp_path / "nope"), cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "--site-root" in done.stderr and "not a folder" in done.stderr
    assert "--site-root DIR" in cli("audit", "--help").stdout


# ---- end to end: a real Chromium and proxy on the tea shop -----------------------------------------------------

pytestmark_browser = pytest.mark.browser


@pytest.fixture(scope="module")
def shop() -> Iterator[str]:
    with smoke_cause_site() as url:
        yield url


def _audit(**kw: Any) -> AuditReport:
    return in_thread(asyncio.run, audit(AuditOptions(**kw)))  # type: ignore[arg-type]


def _found(report: AuditReport) -> set[tuple[str, str | None]]:
    return {(f.rule, f.tool) for f in report.all_findings()}


def _calls(report: AuditReport) -> dict[str, list[CallOutcome]]:
    return {key.rsplit(" ", 1)[-1]: calls for key, calls in report.pages[0].calls.items()}


@pytestmark_browser
def test_the_shop_judged_by_cause_and_each_tool_placed_where_it_was_registered(shop: str, tmp_path: Path):
    report = _audit(url=shop + "index.html", watch_ms=300, smoke=True)
    found = _found(report)
    assert ("smoke-error-on-valid", "search_flights") in found  # isError to every valid call
    (error,) = [f for f in report.all_findings() if f.rule == "smoke-error-on-valid"]
    assert "answered isError" in error.message and "Timed out waiting for UI to update" in error.message
    assert not {r for r, t in found if t == "list_teas"}  # no inputSchema: no schema-null, no not-object
    assert ("smoke-accepts-invalid", "order_tea") not in found  # its [{field, value, message}] lists refuse
    assert all(o.refusal == "a validation answer" for o in _calls(report)["order_tea"] if not o.input.valid)
    assert ("untrusted-content-unmarked", "open_cart") not in found  # "to review items"
    assert ("smoke-accepts-invalid", "check_stock") not in found  # {success: false, reason}: refused
    assert all(o.refusal == "isError or an error field" for o in _calls(report)["check_stock"] if not o.input.valid)
    toolname = [f for f in report.all_findings() if f.rule == "form-toolname-missing"]
    assert [f.message.split(" has ")[0] for f in toolname] == ["form #letter"]  # not #order: order_tea is its tool

    lines = (SITE / "tools.js").read_text(encoding="utf-8").splitlines()
    line = next(i for i, text in enumerate(lines) if 'name: "list_teas"' in text)  # its registerTool is above
    tools = {t.name: t for _, t in report.pages[0].surface.tools()}
    assert tools["list_teas"].source == Source(shop + "tools.js", line, 4)
    (refused,) = report.pages[0].surface.frames[0].refused
    bad_line = next(i for i, text in enumerate(lines) if '"bad name!"' in text) + 1
    assert refused.name == "bad name!" and refused.source == Source(shop + "tools.js", bad_line, 6)

    out = tmp_path / "audit.sarif"
    run = cli("audit", shop + "index.html", "--watch-ms", "300", "--smoke", "--sarif", str(out), "--json",
              str(tmp_path / "audit.json"))  # fmt: skip
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert f"registered at {shop}tools.js:" in run.stdout
    sarif = json.loads(out.read_text(encoding="utf-8"))
    _sarif_valid(sarif)
    (flights,) = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "smoke-error-on-valid"]
    flights_line = next(i for i, text in enumerate(lines) if 'name: "search_flights"' in text)
    assert "physicalLocation" not in flights["locations"][0]  # no --site-root: the tool by name, never a URL
    assert flights["locations"][0]["logicalLocations"] == [{"name": "search_flights", "kind": "function"}]
    assert flights["properties"]["registered_at"] == f"{shop}tools.js:{flights_line}:4"


@pytestmark_browser
def test_forms_that_navigate_or_that_the_browser_refuses(shop: str):
    report = _audit(url=shop + "navigate.html", watch_ms=300, smoke=True, all_tools=True)
    assert _found(report) == set(), [f.message for f in report.all_findings()]
    calls = _calls(report)
    answered = [o for o in calls["find_tea"] if o.input.valid]
    assert answered and all(o.navigated_to and "/result.html?name=" in o.navigated_to for o in answered)
    sencha = next(o for o in answered if o.input.args.get("name") == "sencha")
    assert sencha.result == [
        {"@context": "https://schema.org", "@type": "Message", "text": "sencha grows in Shizuoka."}
    ]
    # valid under the schema the browser derives, refused by its own validation (a space in the name): no finding
    # "New York" is valid under the schema the browser derives (it drops pattern) and refused by the browser's own
    # validation: no finding; the next source's value is judged in its place, its label saying what was refused
    (valid,) = [o for o in calls["shipping_cost"] if o.input.valid]
    assert '"New York"} was refused' in valid.input.label and valid.result == {"city": "Sencha", "cost": 4.5}
    missing = next(o for o in calls["shipping_cost"] if o.input.args == {})
    assert missing.browser_refused and "Form validation failed" in (missing.error or "")
    tools = {t.name: t for _, t in report.pages[0].surface.tools()}
    assert tools["find_tea"].source == Source(selector="form#find")


@pytestmark_browser
def test_a_call_that_loses_its_page_is_tried_once_more_then_not_run(shop: str):
    report = _audit(url=shop + "lost.html", watch_ms=300, smoke=True)
    assert not [f for f in report.all_findings() if f.severity in ("error", "warning")]
    calls = _calls(report)
    (always,) = calls["always_leaves"]
    assert always.not_run and "Execution context was destroyed" in always.not_run and always.retried
    (once,) = calls["leaves_once"]
    assert once.result == {"prices": {"sencha": 12}} and once.not_run is None
    assert once.retried and "Execution context was destroyed" in once.retried


@pytestmark_browser
def test_the_form_lint_is_what_chrome_raises(shop: str):
    report = _audit(url=shop + "forms.html", watch_ms=300)
    found = sorted((f.rule, f.pointer) for f in report.all_findings() if f.rule.startswith("form-"))
    assert found == [
        ("form-param-undescribed", "/inputSchema/properties/people"),  # aria-label
        ("form-param-undescribed", "/inputSchema/properties/phone"),  # title and placeholder
        ("form-param-undescribed", "/inputSchema/properties/who"),  # aria-labelledby
        ("form-param-unnamed", "/inputSchema/properties"),  # the coupon field
        ("form-required-unnamed", "/inputSchema/required"),  # the checkbox
    ]  # the date field, the <label for> and the <label> around are described

    async def both() -> tuple[list[PageForm], list[PageForm]]:  # Chrome's issues, and the DOM read alone
        from playwright.async_api import async_playwright

        from webmcp_eval.play.browser.browser import launch
        from webmcp_eval.play.page.surface.reader import FORMS_JS

        async with async_playwright() as p:
            browser, _ = await launch(p.chromium)
            try:
                page = await browser.new_page()
                await page.goto(shop + "forms.html")
                chrome = await read_forms(page)
                return chrome, parse_forms(page.url, await page.main_frame.evaluate(FORMS_JS))
            finally:
                await browser.close()

    chrome, dom = in_thread(asyncio.run, both())
    assert chrome[0].chrome and not dom[0].chrome
    issues = {c.name or c.id: c.issues for c in chrome[0].controls if c.issues}
    undescribed = ["FormModelContextParameterMissingTitleAndDescription"]
    assert issues == {
        "people": undescribed,
        "who": undescribed,
        "phone": undescribed,
        "coupon": ["FormModelContextParameterMissingName"],
        "agree": ["FormModelContextRequiredParameterMissingName"],
    }

    def rules(forms: list[PageForm]) -> list[tuple[str, str]]:
        return sorted((f.rule, f.pointer) for f in form_findings(shop, forms, AuditConfig()))

    assert rules(chrome) == rules(dom) == found
