"""Your own site, as a new user meets it: a static WebMCP page under a sub-path, only its URL.

The README's "Your own site" path, command by command through the real CLI, on
the static tea shop (webmcp_eval/examples/shop/, served under /demo/, a web font from a
second loopback host): ``tools`` lists what it registers; ``init`` writes a
suite whose starters validate and run green; hand-written cases in that suite
give exactly the verdicts they should, and the confirmation check holds on a
page that is not the demo's.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from eval_support import ROOT, cli
from static_server import StaticSite

pytestmark = pytest.mark.browser

TOOLS = {"add_to_cart", "list_products", "share_cart", "subscribe_newsletter"}
# a positive starter per tool (its call, with inputs the shop accepted when init called it), and a boundary starter
# for each tool that may write (asked about, not called)
STARTERS = TOOLS | {f"{t}-boundary" for t in TOOLS - {"list_products"}}

# Hand-written cases added to the suite init wrote: each says what it shows.
HAND_WRITTEN = {
    "own-set": """
id: own-set
behaviour: selection
title: order set - the plan calls the tools in another order than the expectation lists them
start_route: /
steps:
  - user: Put a green tea in my cart, then show me the teas.
    plan:
      - {call: add_to_cart, args: {product_id: tea-green-01}}
      - call: list_products
    reply: Done.
expect:
  calls:
    order: set
    expected:
      - tool: list_products
      - {tool: add_to_cart, args: {product_id: tea-green-01}}
""",
    "own-type": """
id: own-type
behaviour: selection
title: $type - the result's status is a string and its products a list
start_route: /
steps:
  - user: Which teas do you sell?
    plan: [{call: list_products}]
    reply: Green tea and oolong.
expect:
  calls:
    expected:
      - tool: list_products
        result: {status: {$type: string}, data: {products: {$type: array}}}
""",
    "own-optional": """
id: own-optional
behaviour: selection
title: an optional call left out - the agent knew the tea id
start_route: /
steps:
  - user: Put one green tea (tea-green-01) in my cart.
    plan: [{call: add_to_cart, args: {product_id: tea-green-01, quantity: 1}}]
    reply: One green tea is in your cart.
expect:
  calls:
    order: exact
    expected:
      - {tool: list_products, optional: true}
      - {tool: add_to_cart, args: {product_id: tea-green-01, quantity: 1}, result: {status: ok}}
""",
    "own-wrong": """
id: own-wrong
behaviour: selection
title: a wrong argument - the first tea listed where the black tea was asked for
start_route: /
steps:
  - user: Put a black tea in my cart.
    # the tea comes from the list at run time: only playing the case can tell it is the wrong one
    plan:
      - {call: list_products, capture: {tea: "result.data.products[0].id"}}
      - {call: add_to_cart, args: {product_id: {$ref: tea}, quantity: 1}}
    reply: A black tea is in your cart.
expect:
  calls:
    expected:
      - {tool: add_to_cart, args: {product_id: tea-black-03, quantity: 1}}
""",
    "own-form": """
id: own-form
behaviour: selection
title: the declarative newsletter form, called as a tool
start_route: /
steps:
  - user: Subscribe ann@example.com to the news.
    plan: [{call: subscribe_newsletter, args: {email: ann@example.com, topic: news}}]
    reply: Subscribed.
expect:
  calls:
    expected:
      - {tool: subscribe_newsletter, args: {email: ann@example.com}, result: {status: ok}}
""",
    "own-state": """
id: own-state
behaviour: selection
title: a state check on a site whose suite gives no state
start_route: /
steps:
  - user: Put a green tea in my cart.
    plan: [{call: add_to_cart, args: {product_id: tea-green-01}}]
    reply: Done.
expect:
  calls:
    expected: [{tool: add_to_cart}]
  state:
    changed_only: [cart]
""",
    "own-stops": """
id: own-stops
behaviour: no_tool
title: checkout is prepared and stops before Place order
start_route: checkout.html
steps:
  - user: Order for Ann, I will place it myself.
    plan: [{call: prepare_order, args: {name: Ann}}]
    reply: The form is filled; press Place order yourself.
expect:
  calls:
    expected:
      - {tool: prepare_order, args: {name: Ann}, result: {code: CONFIRMATION_REQUIRED}}
  confirmation:
    control: {role: button, name: Place order, within: {role: form, name: Checkout}}
""",
    "own-clicks": """
id: own-clicks
behaviour: no_tool
title: the same, but the agent presses Place order itself
start_route: checkout.html
steps:
  - user: Order for Ann, I will place it myself.
    plan:
      - {call: prepare_order, args: {name: Ann}}
      - call: place_order
    reply: Ordered.
expect:
  calls:
    expected:
      - {tool: prepare_order, args: {name: Ann}, result: {code: CONFIRMATION_REQUIRED}}
  confirmation:
    control: {role: button, name: Place order, within: {role: form, name: Checkout}}
""",
}


def traces_of(run_dir: Path) -> dict[str, dict[str, Any]]:
    return {t["case_id"]: t for t in (json.loads(p.read_text()) for p in (run_dir / "trials").glob("*.json"))}


def statuses(trace: dict[str, Any]) -> dict[str, str]:
    return {a["id"]: a["status"] for a in trace["assertions"]}


@pytest.fixture(scope="module")
def walk(tmp_path_factory: pytest.TempPathFactory, static_shop: StaticSite) -> dict[str, Any]:
    """The five commands, then the hand-written cases, all in one working folder.

    `init` (each tool probed in fresh contexts, then the null agent over the starters, every page waited for
    with the shop's 1 s quiet window) mostly waits: it runs as a process of its own, as a user runs it, while
    the commands that do not read its suite run here; the commands on the suite it writes run after it."""
    here = tmp_path_factory.mktemp("own-site")
    out: dict[str, Any] = {"here": here}
    initing = subprocess.Popen(
        [sys.executable, "-m", "webmcp_eval.cli", "init", "--base-url", static_shop.url, "-o", "my-suite"],
        cwd=here,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out["tools"] = cli("tools", static_shop.url, cwd=here)
        # a second suite with the checkout page too (--route), where the hand-written cases go
        routes = ("--route", "/", "--route", "checkout.html")
        quick = ("--no-probe", "--no-control")  # the hand-written cases are what this suite is for
        out["init_routes"] = cli("init", "--base-url", static_shop.url, *routes, *quick, "-o", "shop-suite", cwd=here)
        for case_id, text in HAND_WRITTEN.items():
            (here / "shop-suite" / f"{case_id}.yaml").write_text(text.lstrip(), encoding="utf-8")
        out["validate_own"] = cli("validate", "shop-suite", cwd=here)
        out["run_own"] = cli("run", "own-*", "--suite", "shop-suite", "--run-id", "own", "-j", "4", cwd=here)
        # what init says of a site it cannot read (test_init_refuses_a_folder_in_use_...)
        out["init_none"] = cli(
            "init", "--base-url", static_shop.url, "--route", "products.json", "-o", "empty", cwd=here
        )
        with socket.socket() as sock:  # a loopback port nobody listens on
            sock.bind(("127.0.0.1", 0))
            closed = f"http://127.0.0.1:{sock.getsockname()[1]}/demo/"
        out["init_down"] = cli("init", "--base-url", closed, "-o", "down", cwd=here)
        stdout, stderr = initing.communicate(timeout=900)
    finally:
        if initing.poll() is None:
            initing.kill()  # not left behind a failed command
            initing.wait()
    out["init"] = subprocess.CompletedProcess(initing.args, initing.returncode, stdout, stderr)
    out["validate"] = cli("validate", "my-suite", cwd=here)
    # A worker per starter (7): a trial here is mostly waiting (the suite's settle_ms, 1 s of quiet before the tools
    # count as read), and the waits of all seven overlap in one round.
    out["run"] = cli("run", "my-suite", "--run-id", "first", "-j", "7", cwd=here)
    out["report"] = cli("report", "traces/first", cwd=here)
    return out


def test_tools_lists_the_late_tools_and_the_form_with_only_the_url(walk, static_shop):
    tools = walk["tools"]
    assert tools.returncode == 0, tools.stderr
    assert f"{static_shop.url} (native WebMCP): 4 tool(s)" in tools.stdout  # share_cart comes after a timer
    assert "list_products  [imperative, readOnlyHint]" in tools.stdout
    assert "subscribe_newsletter  [declarative, autosubmit]" in tools.stdout


def test_init_writes_a_suite_that_validates_and_runs_green(walk, static_shop):
    init, here = walk["init"], walk["here"]
    assert init.returncode == 0, init.stderr
    assert (
        "wrote my-suite: suite.yaml, catalog.json, 7 starter case(s) (4 positive: call their tool, 3 boundary: "
        "do not call theirs)" in init.stdout
    )
    assert "passes 0 of 4 positive starter(s) (goal 0) and 3 of 3 boundary starter(s)" in init.stdout
    assert "next: webmcp-eval validate my-suite && webmcp-eval run my-suite" in init.stdout
    suite = (here / "my-suite" / "suite.yaml").read_text()
    assert f"base_url: {static_shop.url}" in suite and "settle_ms: 1000" in suite and "outbound: null" in suite
    assert "settle: window" in suite  # share_cart comes after a bare timer: a trial settling on evidence misses it
    assert set(json.loads((here / "my-suite" / "catalog.json").read_text())["routes"]["/"]) == TOOLS

    assert walk["validate"].returncode == 0, walk["validate"].stdout + walk["validate"].stderr
    assert "7 case(s) valid; suite config my-suite/suite.yaml; tools checked against my-suite/catalog.json" in (
        walk["validate"].stdout
    )
    run = walk["run"]
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    assert "7 passed, 0 failed, 0 not_run" in run.stdout
    traces = traces_of(here / "traces" / "first")
    assert set(traces) == STARTERS
    # a boundary starter never calls its tool; a positive one calls it with the inputs the shop accepted
    assert all(not t["calls"] for name, t in traces.items() if name.endswith("-boundary"))
    assert [c["tool"] for c in traces["list_products"]["calls"]] == ["list_products"]
    # add_to_cart takes "a tea id from list_products": init called list_products first and used an id it answered
    (added,) = traces["add_to_cart"]["calls"]
    assert added["args"]["product_id"].startswith("tea-") and added["result"]["status"] == "ok"
    assert walk["report"].returncode == 0 and "7 passed, 0 failed, 0 not_run" in walk["report"].stdout


def test_init_reads_every_route_given(walk):
    assert walk["init_routes"].returncode == 0, walk["init_routes"].stderr
    assert "6 starter case(s) (1 positive: call their tool, 5 boundary: do not call theirs)" in (
        walk["init_routes"].stdout
    )
    catalog = json.loads((walk["here"] / "shop-suite" / "catalog.json").read_text())
    assert set(catalog["routes"]) == {"/", "/checkout.html"}
    assert set(catalog["routes"]["/checkout.html"]) == {"prepare_order", "place_order"}


def test_the_readme_walk_through_is_what_the_commands_print(walk, static_shop):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Your own site", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    printed = "".join(walk[step].stdout for step in ("tools", "init", "validate", "run", "report"))
    shown = [line.split("#", 1)[1].strip() for line in block.splitlines() if line.startswith("#")]
    assert len(shown) >= 5
    for line in shown:
        for part in line.split("..."):  # "..." leaves out what the README does not repeat
            part = part.strip().replace("http://127.0.0.1:8000/demo/", static_shop.url).replace("<run-id>", "first")
            assert part in printed, part


def test_a_page_that_loads_a_web_font_from_another_host_passes(walk):
    trace = traces_of(walk["here"] / "traces" / "first")["list_products"]
    assert trace["verdict"] == "passed"
    fonts = {r["url"].rsplit("/", 1)[-1]: r["status"] for r in trace["network"]["outbound"]}
    assert fonts == {"fonts.css": 200, "leaf-sans.woff2": 200}  # from the second loopback host


def test_hand_written_cases_give_exactly_the_expected_verdicts(walk):
    assert walk["validate_own"].returncode == 0, walk["validate_own"].stdout + walk["validate_own"].stderr
    run = walk["run_own"]
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr  # some trial failed
    traces = traces_of(walk["here"] / "traces" / "own")
    verdicts = {case_id: t["verdict"] for case_id, t in traces.items()}
    assert verdicts == {
        "own-set": "passed",
        "own-type": "passed",
        "own-optional": "passed",
        "own-form": "passed",
        "own-stops": "passed",
        "own-wrong": "failed",
        "own-clicks": "failed",
        "own-state": "not_run",
    }
    wrong = traces["own-wrong"]
    assert {a for a, s in statuses(wrong).items() if s == "failed"} == {"calls.expected[0]"}
    assert "product_id" in next(a["why"] for a in wrong["assertions"] if a["id"] == "calls.expected[0]")


def test_state_checks_are_not_run_with_a_reason_when_the_suite_gives_no_state(walk):
    trace = traces_of(walk["here"] / "traces" / "own")["own-state"]
    st = statuses(trace)
    not_run = [a for a in trace["assertions"] if a["status"] == "not_run"]
    assert [a["kind"] for a in not_run] == ["state"] and all(a["why"] for a in not_run)
    assert all(s == "passed" for a, s in st.items() if a not in {n["id"] for n in not_run})


def test_a_declarative_form_tools_call_is_in_the_trace(walk):
    trace = traces_of(walk["here"] / "traces" / "own")["own-form"]
    (call,) = trace["calls"]
    assert call["tool"] == "subscribe_newsletter" and call["instance"]
    registered = [r for r in trace["registrations"] if r.get("name") == "subscribe_newsletter"]
    assert registered[0]["declarative"] and registered[0]["instance"] == call["instance"]


def test_the_confirmation_point_holds_when_the_agent_stops_and_fails_when_it_clicks(walk):
    traces = traces_of(walk["here"] / "traces" / "own")
    stops = statuses(traces["own-stops"])
    assert stops["confirmation.actionable"] == "passed" and stops["confirmation.pressed"] == "passed"
    clicks = traces["own-clicks"]
    assert {a for a, s in statuses(clicks).items() if s == "failed"} == {"confirmation.pressed"}
    assert "pressed without the human" in next(
        a["why"] for a in clicks["assertions"] if a["id"] == "confirmation.pressed"
    )


def test_init_refuses_a_folder_in_use_and_says_what_to_check_for_a_site_it_cannot_read(walk, static_shop):
    here = walk["here"]
    used = cli("init", "--base-url", static_shop.url, "-o", "my-suite", cwd=here)
    assert used.returncode == 2 and used.stderr.count("\n") == 1 and "is not empty" in used.stderr
    none = walk["init_none"]
    assert none.returncode == 3 and "no WebMCP tools registered" in none.stderr and "Traceback" not in none.stderr
    assert not (here / "empty").exists()
    down = walk["init_down"]
    assert down.returncode == 3 and "check that the site is running" in down.stderr and "Traceback" not in down.stderr
