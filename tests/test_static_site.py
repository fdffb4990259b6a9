"""The runner on a site built unlike the demo: static files under /demo/, no server state.

The tea shop (webmcp_eval/examples/shop/) keeps its cart in localStorage, registers
its tools late (after a fetch, after a timer), has a declarative form tool and
loads a web font from another host. Its own cases must pass with the reference
agent; variants of them, each with one wrong thing, must fail on exactly that.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from eval_support import in_thread, run_on_demo
from static_server import CASES, StaticSite

from webmcp_eval.agents.reference import ReferenceAgent
from webmcp_eval.play.run.settings import RunSettings
from webmcp_eval.suite.case import Case
from webmcp_eval.suite.loader import LoadedCase, load_cases
from webmcp_eval.suite.site import SiteConfig, resolve_route
from webmcp_eval.trace import Trace

pytestmark = pytest.mark.browser


def shop_cases() -> dict[str, LoadedCase]:
    loaded, problems = load_cases([CASES])
    assert not problems, problems
    return {lc.case.id: lc for lc in loaded}


def variant(case_id: str, new_id: str, change: Callable[[dict[str, Any]], None]) -> LoadedCase:
    """A shop case with one thing changed (the change edits the case as YAML data)."""
    original = shop_cases()[case_id]
    data = original.case.model_dump(mode="json", exclude_defaults=True)
    data["id"] = new_id
    change(data)
    return LoadedCase(Case.model_validate(data), original.file, original.lines)


def play_shop(tmp_path: Path, shop: StaticSite, cases: list[LoadedCase], **kw: Any) -> dict[str, Trace]:
    config = kw.pop("site_config", None) or shop.config()
    kw.setdefault("agent_factory", ReferenceAgent)
    options = RunSettings(out_root=tmp_path, run_id="shop", base_url=shop.url, site_config=config, **kw)
    traces = in_thread(asyncio.run, run_on_demo(cases, options)).traces
    return {t.case_id: t for t in traces}


def statuses(trace: Trace) -> dict[str, str]:
    return {a.id: a.status for a in trace.assertions}


def failed(trace: Trace) -> set[str]:
    return {a.id for a in trace.assertions if a.status == "failed"}


def why(trace: Trace, assertion_id: str) -> str:
    return next(a.why for a in trace.assertions if a.id == assertion_id)


def _wrong_quantity(data: dict[str, Any]) -> None:
    data["steps"][0]["plan"][1]["args"]["quantity"] = 3
    data["expect"]["answer"]["contains"].append("oolong")


def _shares_the_cart(data: dict[str, Any]) -> None:
    data["steps"][0]["plan"].append({"call": "share_cart"})
    data["expect"]["network"]["writes"]["POST //127.0.0.1:*/share"] = 1  # another host's write, by its key


def _outside_the_catalog(data: dict[str, Any]) -> None:
    data["steps"][0]["plan"].append({"call": "empty_cart"})  # a tool of the cart page, not of the shop
    data["expect"]["calls"]["max_calls"] = 2
    data["expect"]["state"] = {"unchanged": True}


def _no_outbound(data: dict[str, Any]) -> None:
    data["expect"]["network"] = {"outbound": 0}


def _a_topic_the_form_cannot_hold(data: dict[str, Any]) -> None:
    data["steps"][0]["plan"][0]["args"]["topic"] = "weekly"  # not an option of the form's select


def _left_stale(data: dict[str, Any]) -> None:
    data["start_route"] = "/?break=stale"  # the shop's deliberate bug: the form outlives its route


@pytest.fixture(scope="module")
def shop_run(tmp_path_factory: pytest.TempPathFactory, static_shop: StaticSite) -> dict[str, Trace]:
    """The shop's own cases and variants that must fail, in one run through the proxy."""
    cases = [
        *shop_cases().values(),
        variant("SHOP-01", "SHOP-11", _wrong_quantity),
        variant("SHOP-01", "SHOP-12", _shares_the_cart),
        variant("SHOP-01", "SHOP-13", _outside_the_catalog),
        variant("SHOP-02", "SHOP-14", _no_outbound),
        variant("SHOP-02", "SHOP-15", _a_topic_the_form_cannot_hold),
        variant("SHOP-04", "SHOP-16", _left_stale),
    ]
    # A worker per trial: a shop trial mostly waits (the site's 1 s settle_ms), and all ten overlap; no test here
    # looks at a screenshot, and six of these trials fail on purpose, so none is taken.
    return play_shop(tmp_path_factory.mktemp("shop"), static_shop, cases, workers=len(cases), screenshots="off")


def test_the_shops_own_cases_pass_on_a_static_site_under_a_sub_path(shop_run, static_shop):
    for case_id in ("SHOP-01", "SHOP-02", "SHOP-03", "SHOP-04"):
        trace = shop_run[case_id]
        assert trace.verdict == "passed", f"{case_id}: {trace.verdict_reason}"
        assert trace.webmcp_path == "native"
    # the base URL's path was kept: the pages came from /demo/, never from the server root
    pages = {path for method, path in static_shop.site_seen if method == "GET"}
    assert {"/demo/", "/demo/cart.html", "/demo/products.json"} <= pages
    assert "/" not in pages
    assert shop_run["SHOP-03"].steps[-1].route_before == "/demo/cart.html"


def test_late_tools_are_waited_for_with_the_sites_quiet_window(shop_run):
    # list_products and add_to_cart come after a fetch, share_cart after a 400 ms timer
    catalog = shop_run["SHOP-01"].steps[0].catalog
    assert {"list_products", "add_to_cart", "share_cart", "subscribe_newsletter"} <= set(catalog)


def test_a_web_font_from_another_host_loads_is_recorded_and_asserts_nothing(shop_run, static_shop):
    trace = shop_run["SHOP-01"]
    fonts = {(r.url or "").rsplit("/", 1)[-1]: r for r in trace.network.outbound}
    assert fonts["fonts.css"].status == 200 and not fonts["fonts.css"].blocked
    # the font file itself is a CORS request: the runner's trial header must not cost it a refused preflight
    assert fonts["leaf-sans.woff2"].status == 200
    assert ("GET", "/leaf-sans.woff2") in static_shop.cdn_seen
    assert "network.outbound" not in statuses(trace)  # nobody asked: recorded, not asserted


def test_state_kept_in_the_page_is_read_by_the_sites_state_js(shop_run):
    trace = shop_run["SHOP-01"]
    assert trace.state.available and trace.state.source == "page"
    assert trace.state.before == {"cart": {"items": []}, "subscriptions": []}
    assert trace.state.after["cart"]["items"] == [{"id": "tea-green-01", "quantity": 2}]
    assert [d.path for d in trace.state.diff] == ["cart.items[id=tea-green-01]"]


def test_a_wrong_argument_fails_the_call_the_state_the_ui_and_the_answer(shop_run):
    trace = shop_run["SHOP-11"]
    assert trace.verdict == "failed"
    assert failed(trace) == {
        "calls.expected[1]",
        "ui[0]",
        "state.after[cart.items[id=tea-green-01].quantity]",
        "answer.contains[1]",
    }
    assert "quantity" in why(trace, "calls.expected[1]")


def test_a_write_to_another_host_counts_as_a_mutation(shop_run, static_shop):
    trace = shop_run["SHOP-12"]
    st = statuses(trace)
    assert st["network.writes[total]"] == "failed"
    assert f"POST //127.0.0.1:{static_shop.cdn_port}/share" in why(trace, "network.writes[total]")
    assert st["network.writes[POST //127.0.0.1:*/share]"] == "passed"
    assert st["calls.forbidden[0]"] == "failed"  # share_cart was forbidden too
    assert failed(trace) == {"network.writes[total]", "calls.forbidden[0]", "calls.max"}


def test_a_tool_of_another_page_is_refused_and_fails_the_catalog_check(shop_run):
    trace = shop_run["SHOP-13"]
    assert failed(trace) == {"calls.catalog", "calls.max", "state.unchanged"}
    assert "empty_cart" in why(trace, "calls.catalog")
    assert "cart" in why(trace, "state.unchanged")


def test_a_case_that_asks_for_no_outbound_requests_fails_on_the_font(shop_run):
    trace = shop_run["SHOP-14"]
    assert failed(trace) == {"network.outbound"}
    assert "fonts.css" in why(trace, "network.outbound")


def test_a_declarative_form_tool_is_logged_like_an_imperative_one(shop_run):
    trace = shop_run["SHOP-02"]
    (registered,) = [r for r in trace.registrations if r.name == "subscribe_newsletter"][:1]
    assert registered.type == "register" and registered.declarative and registered.route == "/demo/"
    (call,) = trace.calls
    assert (call.instance, call.document) == (registered.instance, registered.document)
    assert call.result == {"status": "ok", "data": {"subscribed": "ann@example.com", "topic": "offers"}}
    # the page replaces the form once it is done: the tool is withdrawn, and the shim says so
    withdrawn = [r for r in trace.registrations if r.type == "unregister" and r.declarative]
    assert [r.instance for r in withdrawn] == [registered.instance]
    assert "subscribe_newsletter" in trace.steps[0].catalog
    assert "subscribe_newsletter" not in trace.steps[0].catalog_after
    assert statuses(trace)["calls.witness"] == "passed" and not trace.witness.disagreements
    assert not trace.warnings


def test_a_call_the_page_never_got_is_a_witness_warning_and_where_asked_a_failure(shop_run):
    trace = shop_run["SHOP-15"]
    # the browser refuses a value the form cannot hold before the page hears of the call
    assert "calls.witness" in failed(trace)
    assert "DevTools saw 1× subscribe_newsletter" in why(trace, "calls.witness")
    assert any("shim and DevTools disagree" in w for w in trace.warnings)
    assert trace.calls[0].error and "weekly" in trace.calls[0].error


def test_a_form_tool_left_behind_by_a_client_side_route_is_stale(shop_run):
    assert statuses(shop_run["SHOP-04"])["calls.stale"] == "passed"
    trace = shop_run["SHOP-16"]
    assert failed(trace) == {"calls.stale"}
    assert "subscribe_newsletter (registered on /demo/) is still registered" in why(trace, "calls.stale")


def test_warnings_reach_the_console_and_the_html_report(shop_run, tmp_path):
    from rich.console import Console

    from webmcp_eval.report.html import write_html
    from webmcp_eval.report.writers import print_console

    traces = [shop_run["SHOP-02"], shop_run["SHOP-15"]]
    console = Console(record=True, width=200)
    print_console(traces, tmp_path, console)
    text = console.export_text()
    assert "Warnings" in text and "SHOP-15.t1: shim and DevTools disagree" in text
    assert "SHOP-02.t1: shim" not in text
    html = write_html(traces, tmp_path / "report.html").read_text(encoding="utf-8")
    assert "⚠ 2 warning(s)" in html and "DevTools saw 1× subscribe_newsletter" in html
    assert "requests to other hosts" in html and "fonts.css" in html


def test_without_the_proxy_only_the_network_assertions_are_not_run(tmp_path, static_shop):
    cases = shop_cases()
    traces = play_shop(tmp_path, static_shop, [cases["SHOP-01"], cases["SHOP-02"]], proxy=False, workers=2)
    assert traces["SHOP-02"].verdict == "passed"  # it asks nothing about the network
    one = traces["SHOP-01"]
    not_run = {a.id for a in one.assertions if a.status == "not_run"}
    assert not_run == {"network.writes[total]"} and one.verdict == "not_run"
    assert all(a.status == "passed" for a in one.assertions if a.kind != "network")


def test_a_site_that_blocks_other_hosts_and_asks_for_none_fails_every_case_on_the_font(tmp_path, static_shop):
    config = static_shop.config(block_other_hosts=True, outbound=0)
    before = len(static_shop.cdn_seen)
    one_asked = variant("SHOP-02", "SHOP-17", lambda data: data["expect"].update(network={"outbound": 1}))
    cases = [shop_cases()["SHOP-02"], one_asked]
    traces = play_shop(tmp_path, static_shop, cases, site_config=config, workers=2, screenshots="off")
    trace = traces["SHOP-02"]
    assert failed(trace) == {"network.outbound"}  # the page still works without its font
    assert "(blocked)" in why(trace, "network.outbound")
    assert "site config" in next(a.description for a in trace.assertions if a.id == "network.outbound")
    assert len(static_shop.cdn_seen) == before  # blocked: the other host was never contacted
    # a case that says otherwise wins: the stylesheet, blocked, so no font file after it
    assert traces["SHOP-17"].verdict == "passed", traces["SHOP-17"].verdict_reason


@pytest.mark.parametrize(
    ("base", "route", "url"),
    [
        ("http://h:1/demo/", "/", "http://h:1/demo/"),
        ("http://h:1/demo/", "./", "http://h:1/demo/"),
        ("http://h:1/demo", "", "http://h:1/demo"),  # the base as written
        ("http://h:1/demo", "cart.html", "http://h:1/demo/cart.html"),
        ("http://h:1/x/index.html", "/", "http://h:1/x/index.html"),  # a file, never index.html/
        ("http://h:1/x/index.html", "cart.html", "http://h:1/x/cart.html"),
        ("http://h:1/x/index.html?toolautosubmit", "/", "http://h:1/x/index.html?toolautosubmit"),
        ("http://h:1/x/index.html?toolautosubmit", "#/hotel/a", "http://h:1/x/index.html?toolautosubmit#/hotel/a"),
        ("http://h:1/app/", "/#/hotel/a", "http://h:1/app/#/hotel/a"),
        ("http://h:1/app/#/old", "#/hotel/a", "http://h:1/app/#/hotel/a"),
        ("http://h:1/app/", "?q=1", "http://h:1/app/?q=1"),
        ("file:///srv/site/index.html", "/", "file:///srv/site/index.html"),
        ("file:///srv/site/index.html", "cart.html", "file:///srv/site/cart.html"),
        ("http://h:1/demo/", "/cart.html", "http://h:1/demo/cart.html"),
        ("http://h:1/demo/", "cart.html?x=1", "http://h:1/demo/cart.html?x=1"),
        ("http://h:1/demo/", "./a/b", "http://h:1/demo/a/b"),
        ("http://h:1", "/events", "http://h:1/events"),
        ("http://h:1/", "events/x", "http://h:1/events/x"),
    ],
)
def test_routes_resolve_under_the_base_path(base, route, url):
    assert resolve_route(base, route) == url
    assert SiteConfig(base_url=base).url_for(route) == url


def test_a_case_route_is_never_a_full_url():
    from pydantic import ValidationError

    data = {"id": "X-01", "behaviour": "selection", "title": "t", "steps": [{"user": "hi"}]}
    for bad in ("http://evil.example/", "//evil.example/x"):
        with pytest.raises(ValidationError, match="full URL"):
            Case.model_validate({**data, "start_route": bad})
    for good in ("/", "./", "cart.html", "/events?q=a:b"):
        Case.model_validate({**data, "start_route": good})


def test_a_third_party_site_config_asks_no_version_and_the_demo_keeps_it():
    from webmcp_eval.suite.site import demo_site_config

    assert SiteConfig().version_path is None
    assert demo_site_config("http://127.0.0.1:1").version_path == "/api/version"


def test_state_is_given_one_way_only():
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="not both"):
        SiteConfig.model_validate({"hooks": {"state": "/s", "state_js": "1"}})


def test_tools_lists_what_each_route_registers(static_shop):
    import json

    from eval_support import cli

    cmd = ["tools", static_shop.url, "--route", "/", "--route", "cart.html"]
    out = cli(*cmd, "--json", "--settle-ms", "1000")
    assert out.returncode == 0, out.stderr
    shop, cart = json.loads(out.stdout)["routes"]
    assert (shop["url"], shop["path"], cart["url"]) == (static_shop.url, "native", static_shop.url + "cart.html")
    tools = {t["name"]: t for t in shop["tools"]}
    assert set(tools) == {"list_products", "add_to_cart", "share_cart", "subscribe_newsletter"}  # the late ones too
    assert tools["list_products"]["annotations"] == {"readOnlyHint": True}
    assert tools["add_to_cart"]["kind"] == "imperative"
    assert tools["add_to_cart"]["input_schema"]["required"] == ["product_id"]
    form = tools["subscribe_newsletter"]
    assert form["kind"] == "declarative" and form["annotations"] == {"autosubmit": True}
    assert form["input_schema"]["properties"]["topic"]["enum"] == ["news", "offers"]  # built by the browser
    assert [t["name"] for t in cart["tools"]] == ["view_cart"]

    text = cli(*cmd[:2], "--route", "missing.html")
    assert text.returncode == 3 and "missing.html: could not open the page: HTTP 404" in text.stdout


# The state after is read side by side with the page's observation: a state that cannot be read then
# stops the trial as not_run with the site's reason, never a verdict on half the evidence.
_STATE_GONE_AFTER_FIRST_READ = """(() => {
  const reads = Number(sessionStorage.getItem("__state_reads") || 0) + 1;
  sessionStorage.setItem("__state_reads", String(reads));
  if (reads > 1) throw new Error("the cart store is gone");
  return {cart: {items: []}};
})()"""


def test_a_state_after_that_cannot_be_read_is_not_run(tmp_path, static_shop):
    config = static_shop.config()
    hooks = config.hooks.model_copy(update={"state_js": _STATE_GONE_AFTER_FIRST_READ})
    config = config.model_copy(update={"hooks": hooks})
    trace = play_shop(tmp_path, static_shop, [shop_cases()["SHOP-01"]], site_config=config)["SHOP-01"]
    assert trace.verdict == "not_run", trace.verdict_reason
    assert trace.not_run_kind == "setup"
    assert "the site's state_js could not be read" in trace.verdict_reason
    assert "the cart store is gone" in trace.verdict_reason
    assert trace.calls  # the steps were played; the state after is what failed
