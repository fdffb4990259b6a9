"""The pytest plugin, run as a team runs it: example test files in a pytest subprocess against a real site.

Each subprocess launches its own Chromium, so each example file makes several
checks per page load, and example files that take the same options share one
session (a module-scoped fixture), each judged by its own test from the
session's JUnit XML. The static shop (webmcp_eval/examples/shop/) is the site; a page
of frames is written beside its pages.

A session that plays pages is a real process: pytest-playwright's sync Playwright is already running in
this one, and a second beside it in the same thread is refused. A session that stops at its options
(--help, a usage error) starts no browser and shows the same in-process, so it runs in-process (no
interpreter start, ~1.4 s each).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from xml.etree import ElementTree

import pytest
import yaml
from eval_support import cli
from static_server import CASES, SOURCE, StaticSite, static_site

ROOT = Path(__file__).resolve().parent.parent
pytest_plugins = ["pytester"]

# A conftest that picks the Chromium with WebMCP itself, as a team's own conftest may (the example sessions
# below take --webmcp-chromium instead, which does the same with no conftest code).
CONFTEST = """
import pytest
from webmcp_eval.play.browser.browser import find_chromium, launch_args

@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args, browser_name):
    if browser_name != "chromium":
        return browser_type_launch_args
    chromium = find_chromium(headless=browser_type_launch_args.get("headless", True)).path
    return {**browser_type_launch_args, "executable_path": chromium, "args": launch_args()}
"""

FRAMES_PAGE = """<!doctype html>
<title>Frames</title>
<script>
  document.modelContext.registerTool({
    name: "host_info",
    description: "What hosts the shop.",
    inputSchema: {type: "object", properties: {}},
    annotations: {readOnlyHint: true},
    execute: async () => ({status: "ok", data: {host: "frames"}}),
  });
</script>
<iframe name="shop" src="index.html" width="600" height="400"></iframe>
"""


def _outcomes(result: pytest.RunResult) -> dict[str, int]:
    return {k: v for k, v in result.parseoutcomes().items() if k in ("passed", "failed", "skipped", "deselected")}


def _session(folder: Path, *args: str | Path) -> pytest.RunResult:
    """A pytest session in a process of its own in ``folder``, as pytester's ``runpytest_subprocess`` starts
    one (no outer PYTEST_ADDOPTS, the folder as HOME and on the path, no colours), for a session several tests
    read: each session starts an interpreter and a Chromium, so tests that need the same options share one and
    each judges its own file of it (``_file_outcomes``)."""
    return _ended(_started(folder, *args))


def _started(folder: Path, *args: str | Path) -> subprocess.Popen[str]:
    """``_session``'s process, started and not waited for (``_ended`` waits): for a test that does other work
    while it plays."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "TOX_ENV_DIR")}
    env.update(HOME=str(folder), USERPROFILE=str(folder), PY_COLORS="0")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder), env.get("PYTHONPATH", "")]))
    basetemp = tempfile.mkdtemp(dir=folder, prefix=".basetemp-")  # a session's own, also in a folder used again
    argv = [sys.executable, "-m", "pytest", f"--basetemp={basetemp}", "-p", "no:cacheprovider", *args]
    pipe = subprocess.PIPE
    return subprocess.Popen([str(a) for a in argv], cwd=folder, stdout=pipe, stderr=pipe, text=True, env=env)


def _ended(process: subprocess.Popen[str]) -> pytest.RunResult:
    started = time.monotonic()
    out, err = process.communicate(timeout=900)
    return pytest.RunResult(process.returncode, out.splitlines(), err.splitlines(), time.monotonic() - started)


def _file_outcomes(junit: Path, module: str) -> dict[str, int]:
    """How the tests of one module of a shared session ended, from its JUnit XML (``module``: its dotted name)."""
    counts: dict[str, int] = {}
    for case in ElementTree.parse(junit).iter("testcase"):
        if case.get("classname") == module:
            ended = next((c.tag for c in case if c.tag in ("failure", "error", "skipped")), "passed")
            outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}.get(ended, ended)
            counts[outcome] = counts.get(outcome, 0) + 1
    return counts


def _section(out: str, test: str) -> str:
    """A failing test's own part of pytest's report: from its header to the next header."""
    start = out.index(f"_ {test}")
    ends = [i for i in (out.find("\n____", start + 1), out.find("\n====", start + 1)) if i != -1]
    return out[start : min(ends, default=len(out))]


def test_a_calls_row_in_the_report_is_a_json_value_cut_to_size() -> None:
    from webmcp_eval.pytest_plugin.reporting import LIST_ITEMS, STRING_CHARS, call_row
    from webmcp_eval.trace import ToolCall

    result = {"status": "ok", "data": {"items": list(range(LIST_ITEMS + 3)), "text": "x" * (STRING_CHARS + 10)}}
    row = call_row(ToolCall(index=0, step=0, tool="t", args={"q": 1}, result=result))
    assert row["result"]["status"] == "ok"  # the value itself, not a JSON string of it
    assert row["result"]["data"]["items"] == [*range(LIST_ITEMS), "… 3 more"]
    assert row["result"]["data"]["text"] == "x" * (STRING_CHARS - 1) + "…"
    small = {"status": "ok", "data": [1, "two"]}
    assert call_row(ToolCall(index=0, step=0, tool="t", args={}, result=small))["result"] == small


# ---- the plugin's options, and nothing changed for tests that do not use it -------------------------


def test_help_lists_the_plugins_options_under_their_own_group(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess("--help")
    assert result.ret == 0
    text = result.stdout.str()
    group = text.index("webmcp-eval (WebMCP tools in your tests, case suites as test items):")
    options = (
        "--webmcp-chromium",
        "--webmcp-proxy",
        "--webmcp-allow-host=HOST",
        "--webmcp-update-contracts",
        "--webmcp-suite=DIR",
    )
    more = ("--webmcp-suite-base-url=URL", "--webmcp-trials=K", "--webmcp-expect-timeout=MS", "--webmcp-out=DIR")
    for option in (*options, *more):
        assert option in text[group:], option
    assert "--base-url" in text  # pytest-playwright's: your tests' site, never the suite's
    ini = text[text.index("[pytest] configuration options") :]
    for name in (
        "webmcp_chromium (bool)",
        "webmcp_proxy (bool)",
        "webmcp_allow_host (linelist)",
        "webmcp_suite (string)",
    ):
        assert name in ini, name
    for name in ("webmcp_suite_base_url", "webmcp_trials", "webmcp_out", "webmcp_expect_timeout"):
        assert f"{name} (string)" in ini, name


LAUNCH_ARGS_TEST = """
def test_launch_args(browser_type_launch_args, browser_name, pytestconfig):
    webmcp = bool(pytestconfig.getoption("--webmcp-chromium") or pytestconfig.getini("webmcp_chromium"))
    webmcp = webmcp and browser_name == "chromium"
    assert ("--enable-features=WebMCP" in " ".join(browser_type_launch_args.get("args", []))) == webmcp
    assert ("executable_path" in browser_type_launch_args) == webmcp
    assert browser_type_launch_args["slow_mo"] == 5  # pytest-playwright's own, kept
"""


@pytest.mark.parametrize(
    "options",
    [(), ("--webmcp-chromium",), ("-o", "webmcp_chromium=true"), ("--webmcp-chromium", "--browser", "firefox")],
)
def test_webmcp_chromium_gives_pytest_playwright_the_webmcp_browser_without_conftest_code(
    pytester: pytest.Pytester, options: tuple[str, ...]
) -> None:
    """pytest-playwright's launch arguments (no browser is launched; a process of its own, as pytest-playwright
    runs one scope of its assertions per process): with the option or its ini value, the
    WebMCP Chromium and its flags beside what the command line gave; without it, or for Firefox, untouched.
    (The example sessions below play real pages on it with no conftest.)"""
    pytester.makepyfile(test_launch=LAUNCH_ARGS_TEST)
    result = pytester.runpytest_subprocess("test_launch.py", "--slowmo", "5", "-p", "no:cacheprovider", *options)
    assert result.ret == 0 and result.parseoutcomes().get("passed") == 1, result.stdout.str()


def test_webmcp_chromium_without_a_chromium_says_what_to_install(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_launch=LAUNCH_ARGS_TEST)
    monkeypatch.setenv("WEBMCP_EVAL_CHROMIUM", str(pytester.path / "no-chromium"))
    result = pytester.runpytest_subprocess("test_launch.py", "--webmcp-chromium", "-p", "no:cacheprovider")
    assert result.parseoutcomes().get("errors") == 1, result.stdout.str()
    out = result.stdout.str()
    assert "--webmcp-chromium: The Chromium set explicitly does not exist: " in out
    assert "apt-get install chromium" in out  # what to install
    assert "chromium.py" not in out and "Traceback" not in out


def test_a_bad_trial_count_is_one_line_and_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess("--webmcp-suite", str(CASES), "--webmcp-trials", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--webmcp-trials: 0 is out of range: give a whole number from 1 to 1000" in result.stderr.str()
    assert "Traceback" not in result.stderr.str() + result.stdout.str()
    huge = pytester.runpytest_inprocess("--webmcp-suite", str(CASES), "--webmcp-trials", "100000000")
    assert huge.ret == pytest.ExitCode.USAGE_ERROR  # was taken, and collection stalled on 100,000,000 items per case
    assert "--webmcp-trials: 100000000 is out of range" in huge.stderr.str()
    url = pytester.runpytest_inprocess("--webmcp-suite", str(CASES), "--webmcp-suite-base-url", "staging")
    assert url.ret == pytest.ExitCode.USAGE_ERROR
    assert "--webmcp-suite-base-url: 'staging' is not a URL like http://127.0.0.1:8000/" in url.stderr.str()
    (pytester.path / "a-file").write_text("x")
    out = pytester.runpytest_inprocess("--webmcp-suite", str(CASES), "--webmcp-out", "a-file")
    assert out.ret == pytest.ExitCode.USAGE_ERROR and "Traceback" not in out.stderr.str() + out.stdout.str()
    assert "--webmcp-out a-file: is a file, not a folder" in out.stderr.str()


PLAIN_TEST = """
def test_plain_page(page, base_url, pytestconfig):
    page.goto(base_url)
    page.wait_for_function("document.modelContext && document.querySelector('#products li')")
    assert page.evaluate("typeof window.__webmcpEval") == "undefined"        # no shim
    assert page.evaluate("typeof window.__webmcpEvalReport") == "undefined"  # no binding
    # no proxy: the page's requests carry no trial header and the context has no proxy
    assert "proxy" not in (page.context._impl_obj._options or {})
    assert pytestconfig.pluginmanager.get_plugin("webmcp-suite") is None
"""


@pytest.mark.browser
def test_the_plugin_is_inert_for_a_plain_pytest_playwright_test(broken_shop_session: BrokenShopSession) -> None:
    """A plain test of a session with --webmcp-proxy, beside tests that use the fixture (the README's file on
    the broken shop, test_the_readmes_test_file_fails_on_a_broken_shop): nothing of the plugin touches it."""
    result, junit = broken_shop_session
    assert _file_outcomes(junit, "test_plain") == {"passed": 1}, result.stdout.str()


# ---- the fixture and its helpers ------------------------------------------------------------------

FIXTURE_TESTS = """
import re

import pytest

from webmcp_eval.pytest import NoProxy, ToolCallError


def test_every_frames_tools_and_a_call_in_a_child_frame(page, webmcp, base_url):
    page.goto(base_url + "frames.html")
    tools = webmcp.wait_for_tools("host_info", "add_to_cart", "share_cart")
    where = {t.name: (t.frame_name, t.frame_url.rsplit("/", 1)[-1]) for t in tools}
    assert where["host_info"] == ("", "frames.html")
    assert where["add_to_cart"] == ("shop", "index.html")
    assert where["subscribe_newsletter"] == ("shop", "index.html")
    assert webmcp.tool("subscribe_newsletter").kind == "declarative"
    assert webmcp.tool("host_info").read_only and not webmcp.tool("add_to_cart").read_only
    assert webmcp.call("add_to_cart", {"product_id": "tea-green-01"})["status"] == "ok"
    assert webmcp.call("host_info")["data"] == {"host": "frames"}
    made = webmcp.calls()
    assert [(c.tool, c.args) for c in made] == [("add_to_cart", {"product_id": "tea-green-01"}), ("host_info", {})]
    assert made[0].result["status"] == "ok" and made[0].route == "/demo/index.html"
    registered = {(r["name"], r["frame_url"].rsplit("/", 1)[-1]) for r in webmcp.registrations()}
    assert ("host_info", "frames.html") in registered and ("list_products", "index.html") in registered
    assert webmcp.witness().disagreements == []
    with pytest.raises(ToolCallError, match="no tool 'nope' on the page; it lists: add_to_cart"):
        webmcp.call("nope")
    with pytest.raises(NoProxy, match="--webmcp-proxy"):
        webmcp.writes()


@pytest.mark.webmcp(proxy=True)
def test_helpers_pass(page, webmcp, base_url):
    page.goto(base_url)
    webmcp.wait_for_tools("list_products", "add_to_cart", "share_cart")
    webmcp.assert_tool("add_to_cart", description={"$contains": "cart"},
                       schema={"required": ["product_id"], "properties": {"quantity": {"minimum": 1}}})
    webmcp.assert_tool("list_products", annotations={"readOnlyHint": True})
    webmcp.call("list_products")
    webmcp.call("add_to_cart", {"product_id": "tea-oolong-02", "quantity": 2})
    webmcp.assert_called("add_to_cart", {"product_id": {"$pattern": "^tea-"}, "quantity": {"$gte": 2}},
                         result={"status": "ok"})
    webmcp.assert_calls([{"tool": "list_products"}, {"tool": "add_to_cart"}], order="exact")
    webmcp.assert_calls([{"tool": "add_to_cart"}, {"tool": "list_products"}], order="set")
    webmcp.assert_calls([{"unordered": [{"tool": "add_to_cart"}, {"tool": "list_products"}]},
                         {"tool": "share_cart", "optional": True}], order="exact")
    webmcp.assert_no_writes()
    webmcp.call("share_cart")
    webmcp.assert_writes(1)
    (write,) = webmcp.writes()
    assert write.method == "POST" and write.outbound and write.path == "/share"
    assert any(r.path == "/share" for r in webmcp.outbound())
    # the old names, kept for one release: the same answer, and one warning that names the new one
    from webmcp_eval.pytest import expect
    old = {
        "webmcp.mutations()": (lambda: len(webmcp.mutations()) == 1, "webmcp.writes()"),
        "webmcp.assert_mutations()": (lambda: webmcp.assert_mutations(1) is None, "webmcp.assert_writes()"),
        "expect(webmcp).to_have_mutations()": (
            lambda: expect(webmcp).to_have_mutations(1) is None, "expect(webmcp).to_have_writes()"
        ),
    }
    for name, (use, new) in old.items():
        with pytest.warns(DeprecationWarning, match=re.escape(f"{name} is deprecated: use {new}")) as said:
            assert use()
        assert len(said) == 1, name
    with pytest.warns(DeprecationWarning, match=re.escape("use webmcp.assert_no_writes()")):
        with pytest.raises(AssertionError, match="expected 0 network write"):
            webmcp.assert_no_mutations()


@pytest.mark.webmcp(proxy=True)
def test_helpers_fail_with_a_readable_diff(page, webmcp, base_url):
    page.goto(base_url)
    webmcp.wait_for_tools("add_to_cart", "share_cart")
    webmcp.call("add_to_cart", {"product_id": "tea-black-03", "quantity": 1})
    webmcp.call("share_cart")
    failures = {}
    checks = {
        "missing tool": lambda: webmcp.assert_tool("remove_from_cart"),
        "schema": lambda: webmcp.assert_tool("add_to_cart", schema={"properties": {"quantity": {"minimum": 2}}}),
        "description": lambda: webmcp.assert_tool("add_to_cart", description="Empty the cart."),
        "called": lambda: webmcp.assert_called("add_to_cart", {"product_id": "tea-green-01"}),
        "matcher": lambda: webmcp.assert_called("add_to_cart", {"quantity": {"$gt": 1}}),
        "exact": lambda: webmcp.assert_calls([{"tool": "add_to_cart"}], order="exact"),
        "sequence": lambda: webmcp.assert_calls([{"tool": "share_cart"}, {"tool": "add_to_cart"}]),
        "forbidden": lambda: webmcp.assert_calls([], forbidden=[{"tool": "share_cart"}]),
        "no writes": lambda: webmcp.assert_no_writes(),
        "writes": lambda: webmcp.assert_writes(2),
    }
    for name, check in checks.items():
        with pytest.raises(AssertionError) as err:
            check()
        failures[name] = str(err.value)
    assert failures["missing tool"].splitlines() == [
        "assert_tool('remove_from_cart'): the page lists no such tool",
        "  listed: add_to_cart, list_products, share_cart, subscribe_newsletter",
    ]
    assert failures["schema"].splitlines()[1:] == [
        "  schema: properties: quantity: minimum: expected 2, got 1",
        '    expected: {"properties": {"quantity": {"minimum": 2}}}',
        '    actual:   {"properties": {"product_id": {"description": "a tea id from list_products", "type": "string"}, '
        '"quantity": {"minimum": 1, "type": "integer"}}, "required": ["product_id"], "type": "object"}',
    ]
    assert 'description: expected "Empty the cart.", got "Put a tea into the cart."' in failures["description"]
    assert 'argument product_id: expected "tea-green-01", got "tea-black-03"' in failures["called"]
    assert '#0 add_to_cart({"product_id": "tea-black-03", "quantity": 1}) in /demo/ ->' in failures["called"]
    assert "argument quantity: 1 is not greater than 1" in failures["matcher"]
    assert "no calls besides the expected ones: extra: #1 share_cart" in failures["exact"]
    assert "calls add_to_cart: after call #1: no call to add_to_cart" in failures["sequence"]
    assert "never calls share_cart: called at #1" in failures["forbidden"]
    assert failures["no writes"].splitlines()[0] == "expected 0 network write(s), the proxy counted 1:"
    assert re.search(r"POST http://127.0.0.1:\\d+/share -> 200", failures["no writes"])
    assert failures["writes"].startswith("expected 2 network write(s), the proxy counted 1:")
    with pytest.raises(ValueError, match=r"expected\\[0\\]\\.args\\.q\\.\\$regex: unknown matcher \\$regex"):
        webmcp.assert_calls([{"tool": "add_to_cart", "args": {"q": {"$regex": "x"}}}])
    with pytest.raises(ValueError, match="only under 'exact'"):
        webmcp.assert_calls([{"tool": "add_to_cart", "optional": True}], order="set")


def test_a_failing_helper_shows_its_diff_in_pytests_report(page, webmcp, base_url):
    page.goto(base_url)
    webmcp.wait_for_tools("add_to_cart")
    webmcp.call("add_to_cart", {"product_id": "tea-green-01", "quantity": 3})
    webmcp.assert_called("add_to_cart", {"quantity": {"$lt": 3}})


def test_a_mistake_in_the_test_is_reported_at_its_line(webmcp):
    webmcp.writes()  # no proxy for this test
"""


def audit_file(contract: Path) -> str:
    """The audit's example file (AUDIT_TESTS), its contract test holding the page to ``contract``."""
    return f"CONTRACT = {str(contract)!r}\n" + AUDIT_TESTS


class ShopSession:
    """One pytest session (no --webmcp-proxy) on the static shop playing three example files: the fixture and
    its helpers (test_shop.py), mocks and recordings (test_mocks.py), the audit's engine (test_audit.py), with
    JUnit XML and pytest-html's report; each file is judged by its own test below. It is started here and
    waited for by ``end``: it plays beside your tests' session (``sessions``)."""

    def __init__(self, folder: Path, shop: StaticSite) -> None:
        site = shop.root / "site" / "demo"
        (site / "frames.html").write_text(FRAMES_PAGE, encoding="utf-8")
        (site / "slow.html").write_text(SLOW_PAGE, encoding="utf-8")
        self.recording, self.contract = folder / "rec.json", folder / "shop.contract.json"
        self.junit, self.html = folder / "junit.xml", folder / "report.html"
        self.tests = folder / "tests"
        self.tests.mkdir()
        (self.tests / "test_shop.py").write_text(FIXTURE_TESTS, encoding="utf-8")
        head = f"from pathlib import Path\nRECORDING = {str(self.recording)!r}\nBASE = Path({str(site)!r})\n"
        (self.tests / "test_mocks.py").write_text(head + MOCK_TESTS, encoding="utf-8")
        (self.tests / "test_audit.py").write_text(audit_file(self.contract), encoding="utf-8")
        reports = ("--junitxml", self.junit, "--html", self.html, "--self-contained-html")
        process = _started(self.tests, "--base-url", shop.url, "--webmcp-chromium", *reports)
        # its output read as it plays, in a thread: a full pipe would stall the session meanwhile
        self._reader = ThreadPoolExecutor(1)
        self._ending = self._reader.submit(_ended, process)

    def end(self) -> None:
        self.result = self._ending.result()
        self._reader.shutdown()
        self.out = self.result.stdout.str()

    def outcomes(self, module: str) -> dict[str, int]:
        return _file_outcomes(self.junit, module)


@pytest.fixture(scope="module")
def sessions(
    static_shop: StaticSite, tmp_path_factory: pytest.TempPathFactory
) -> tuple[ShopSession, OneSession, BrokenShopSession]:
    """The shop's session and your tests' session, side by side (each an interpreter and a Chromium that mostly
    wait for pages), and the broken shop's as soon as yours has written the contract it is held to, beside the
    rest of the shop's: each audit file holds the page to a contract of its own session's folder, so the shop's
    finds its contract missing whatever the other writes meanwhile."""
    shop = ShopSession(tmp_path_factory.mktemp("shop-session"), static_shop)
    try:
        one = OneSession(tmp_path_factory.mktemp("one-session"), static_shop)
        broken = _broken_shop_session(tmp_path_factory.mktemp("broken-shop-session"), one.contract)
    finally:
        shop.end()
    return shop, one, broken


@pytest.fixture(scope="module")
def shop_session(sessions: tuple[ShopSession, OneSession, BrokenShopSession]) -> ShopSession:
    return sessions[0]


@pytest.mark.browser
def test_the_fixture_and_every_helper_against_the_static_shop(shop_session: ShopSession) -> None:
    result, out = shop_session.result, shop_session.out
    assert shop_session.outcomes("test_shop") == {"passed": 3, "failed": 2}, out
    # a mistake in the test: its line and the one-line reason, no frames of the plugin
    mistake = _section(out, "test_a_mistake_in_the_test_is_reported_at_its_line")
    assert "E       webmcp_eval.pytest.NoProxy: this test has no proxy: run pytest with" in mistake
    assert "page_webmcp.py:" not in mistake, mistake
    # pytest's own report of the failing helper: what was asked, why no call matched, the calls made
    result.stdout.fnmatch_lines(
        [
            ">       webmcp.assert_called(*",
            'E       AssertionError: assert_called(\'add_to_cart\', {"quantity": {"$lt": 3}}): no call matches',
            'E         ✗ calls add_to_cart({"quantity": {"$lt": 3}}): call #0: argument quantity: 3 is not less than 3',
            "E       calls made:",
            'E         #0 add_to_cart({"product_id": "tea-green-01", "quantity": 3}) in /demo/ -> {"data": *',
            "test_shop.py:*: AssertionError",
        ]
    )


# ---- the README's test file, as it is ---------------------------------------------------------------


def readme_test_file() -> str:
    """The Python block of docs/pytest.md (the README links it as "From pytest")."""
    section = (ROOT / "docs" / "pytest.md").read_text(encoding="utf-8")
    return section[
        section.index("```python\n") + len("```python\n") : section.index("```\n", section.index("```python"))
    ]


def _break_the_shop(root: Path) -> None:
    """A shop whose list_products lost its read-only hint and whose cart also writes to the server, a moment
    after the call has returned (fire and forget: the proxy's count must still see it)."""
    app = root / "site" / "demo" / "app.js"
    text = app.read_text(encoding="utf-8")
    text = text.replace(
        "annotations: { readOnlyHint: true },\n        execute: async () => ok({ products }),",
        "execute: async () => ok({ products }),",
        1,
    )
    later_write = "    setTimeout(() => fetch('cart', { method: 'POST' }), 150);\n"
    text = text.replace("    cart.write(value);\n", "    cart.write(value);\n" + later_write, 1)
    app.write_text(text, encoding="utf-8")


BrokenShopSession = tuple[pytest.RunResult, Path]


@pytest.fixture(scope="module")
def broken_shop_session(sessions: tuple[ShopSession, OneSession, BrokenShopSession]) -> BrokenShopSession:
    return sessions[2]


def _broken_shop_session(folder: Path, contract: Path) -> BrokenShopSession:
    """On a broken shop, in one session with --webmcp-proxy: the README's test file, as it is, a plain
    pytest-playwright test, and the contract test of the audit's file, whose contract the session with
    --webmcp-update-contracts wrote (``one_session``); its JUnit XML."""
    tests = folder / "tests"
    tests.mkdir()
    (tests / "test_shop_tools.py").write_text(readme_test_file(), encoding="utf-8")
    (tests / "test_plain.py").write_text(PLAIN_TEST, encoding="utf-8")
    (tests / "test_audit.py").write_text(audit_file(contract), encoding="utf-8")
    junit = folder / "junit.xml"
    files = ("test_shop_tools.py", "test_plain.py", "test_audit.py::test_the_contract")
    with static_site(folder / "broken") as broken:
        _break_the_shop(broken.root)
        options = ("--webmcp-proxy", "--webmcp-chromium", "--webmcp-expect-timeout", "1000", "--junitxml", junit)
        return _session(tests, *files, "--base-url", broken.url, *options), junit


@pytest.mark.browser
def test_the_readmes_test_file_passes_on_the_shop(one_session: OneSession) -> None:
    """Played as it is, with --base-url the shop and --webmcp-proxy, as its first line says: in the session that
    also plays a suite (test_your_tests_and_a_suite_in_one_session_each_on_its_own_site), each of its tests passed."""
    result = one_session.result
    passed = [line for line in result.stdout.lines if line.startswith("PASSED tests/test_shop_tools.py::")]
    assert len(passed) == 3 and "failed" not in _outcomes(result), result.stdout.str()


@pytest.mark.browser
def test_the_readmes_test_file_fails_on_a_broken_shop(broken_shop_session: BrokenShopSession) -> None:
    failed, junit = broken_shop_session
    assert _file_outcomes(junit, "test_shop_tools") == {"passed": 1, "failed": 2}, failed.stdout.str()
    failed.stdout.fnmatch_lines(
        [
            "*test_the_shop_registers_its_tools*",
            "E       AssertionError: expect(webmcp).to_have_tool('list_products'): still not met after 1 s of retrying",
            "E       assert_tool('list_products'): the tool differs",
            "E         annotations: readOnlyHint: missing, expected true",
            "*test_adding_to_the_cart_writes_nothing*",
            "E       AssertionError: expected 0 network write(s), the proxy counted 1:",
            "E         POST http://127.0.0.1:*/demo/cart -> *",
        ]
    )


# ---- a suite as test items ----------------------------------------------------------------------------


def _shop_suite(folder: Path, shop: StaticSite) -> Path:
    """The shop's cases as a suite folder, plus one that cannot run (SHOP-00), one that fails (a wrong
    tea, SHOP-05) and one after it (SHOP-07)."""
    _good_suite(folder, shop)
    one = (CASES / "SHOP-01.yaml").read_text(encoding="utf-8")
    wrong = one.replace("id: SHOP-01", "id: SHOP-05")
    # a tea the plan's captured id is not: only playing the case can tell (validate cannot)
    wrong = wrong.replace("args: {product_id: tea-green-01,", "args: {product_id: tea-black-03,")
    (folder / "SHOP-05.yaml").write_text(wrong, encoding="utf-8")
    gone = one.replace("id: SHOP-01", "id: SHOP-00").replace("start_route: /", "start_route: /gone.html")
    (folder / "SHOP-00.yaml").write_text(gone, encoding="utf-8")
    after = (CASES / "SHOP-03.yaml").read_text(encoding="utf-8").replace("id: SHOP-03", "id: SHOP-07")
    (folder / "SHOP-07.yaml").write_text(after, encoding="utf-8")
    return folder


@pytest.mark.browser
def test_a_suite_runs_as_items_with_k_lf_junit_and_a_run_directory(
    pytester: pytest.Pytester, static_shop: StaticSite, tmp_path: Path
) -> None:
    suite = _shop_suite(tmp_path / "suite", static_shop)
    out, junit = tmp_path / "traces", tmp_path / "junit.xml"
    args = ("--webmcp-suite", str(suite), "--webmcp-out", str(out), "-rs")
    # one trial of each outcome: SHOP-01 and SHOP-03 pass as items in the session of your tests and a suite
    chosen = ("-k", "not SHOP-01 and not SHOP-03 and not SHOP-04")
    first = pytester.runpytest_subprocess(*args, *chosen, "--maxfail", "1", "--junitxml", str(junit))
    text = first.stdout.str()
    # SHOP-07 comes after the first failure: --maxfail stops the run before it
    assert _outcomes(first) == {"passed": 1, "failed": 1, "skipped": 1, "deselected": 3}, text
    # failed: the failing assertions, each with why; not_run: a skip with its reason
    first.stdout.fnmatch_lines(
        [
            "*SHOP-05.t1: Two green teas into the cart*",
            "SHOP-05.t1 failed: * of * assertion(s)",
            "  ✗ calls.expected?1?: calls add_to_cart(*",
            '      why: *argument product_id: expected "tea-black-03", got "tea-green-01"*',
            "  tool calls: #0 list_products, #1 add_to_cart; writes: 0",
            f"  trace: {out}/*/trials/SHOP-05.t1.json",
        ]
    )
    skip = r"SKIPPED \[1\] .*SHOP-00\.yaml:\d+: not_run: setup: the start route /gone.html answered HTTP 404"
    assert re.search(skip, text), text
    first.stdout.fnmatch_lines(["1 passed, 1 failed, 1 not_run, incomplete: 1 planned trial(s) not played"])
    # the run directory as `run` writes it: the plan lists exactly the chosen trials, each has its trace
    (run_dir,) = out.iterdir()
    plan = json.loads((run_dir / "plan.json").read_text(encoding="utf-8"))
    played = ["SHOP-00.t1", "SHOP-02.t1", "SHOP-05.t1"]
    assert sorted(t["trial_id"] for t in plan["trials"]) == [*played, "SHOP-07.t1"]
    assert sorted(p.stem for p in (run_dir / "trials").glob("*.json")) == played
    assert (run_dir / "report.html").is_file() and (run_dir / "junit.xml").is_file()
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["run_id"] == run_dir.name
    report = cli("report", str(run_dir), "--out", str(tmp_path / "again"))  # in-process: it only reads the run
    assert report.returncode == 1, report.stdout + report.stderr  # one trial failed
    assert "1 passed, 1 failed, 1 not_run" in report.stdout
    assert "incomplete: 3 of 4 trials" in report.stdout + report.stderr
    # pytest's own JUnit names each (case, trial)
    names = re.findall(r'testcase classname="[^"]*" name="([^"]+)"', junit.read_text(encoding="utf-8"))
    assert sorted(names) == played
    # --lf plays only the trial that failed, into a new run of its own
    again = pytester.runpytest_subprocess(*args, "--lf")
    assert _outcomes(again) == {"failed": 1}, again.stdout.str()
    again.stdout.fnmatch_lines(["run-last-failure: rerun previous 1 failure (skipped 6 files)"])
    newest = max(out.iterdir(), key=lambda p: p.name)
    assert [t["trial_id"] for t in json.loads((newest / "plan.json").read_text())["trials"]] == ["SHOP-05.t1"]


# ---- your tests and a suite in one session, each on its own site; assertions that wait -------------------

LATE_PAGE = """<!doctype html>
<title>Late</title>
<script>
  // late_tool comes a second after load and goes 300 ms after its first call
  addEventListener("load", () => setTimeout(() => {
    const gone = new AbortController();
    document.modelContext.registerTool({
      name: "late_tool",
      description: "Registered a second after the page has loaded.",
      inputSchema: {type: "object", properties: {}},
      annotations: {readOnlyHint: true},
      execute: async () => { setTimeout(() => gone.abort(), 300); return {status: "ok"}; },
    }, {signal: gone.signal});
  }, 1000));
</script>
"""

EXPECT_TESTS = """
import pytest

from webmcp_eval.pytest import expect


def test_expect_waits_for_a_late_tool_where_the_one_look_form_fails(page, webmcp, base_url):
    page.goto(base_url + "late.html")
    with pytest.raises(AssertionError, match=r"assert_tool\\('late_tool'\\): the page lists no such tool"):
        webmcp.assert_tool("late_tool")
    assert expect(webmcp).to_have_tool("late_tool", annotations={"readOnlyHint": True}).read_only
    webmcp.call("late_tool")
    assert expect(webmcp).to_have_called("late_tool").result == {"status": "ok"}
    expect(webmcp).not_to_have_tool("late_tool")  # withdrawn 300 ms after the call
    with pytest.raises(AssertionError) as err:
        expect(webmcp).to_have_tool("no_such_tool", timeout=300)
    assert str(err.value).splitlines()[:2] == [
        "expect(webmcp).to_have_tool('no_such_tool'): still not met after 0.3 s of retrying",
        "assert_tool('no_such_tool'): the page lists no such tool",
    ]
    with pytest.raises(ValueError, match="unknown matcher"):  # a broken matcher is not retried
        expect(webmcp).to_have_called("late_tool", {"q": {"$regex": "x"}})


def test_the_fixture_asked_for_after_the_page_has_loaded(page, base_url, request):
    page.goto(base_url)
    while "share_cart" not in {t["name"] for t in page.webmcp.tools()}:  # every tool registered, unseen
        page.wait_for_timeout(50)
    webmcp = request.getfixturevalue("webmcp")
    expect(webmcp).to_have_tool("share_cart")  # the page as it is now
    assert webmcp.call("list_products")["status"] == "ok"
    assert webmcp.calls() == []  # registered before the fixture came: its calls are not logged
    page.reload()  # the next document is seen whole
    expect(webmcp).to_have_tool("list_products")
    webmcp.call("list_products")
    assert [c.tool for c in webmcp.calls()] == ["list_products"]


@pytest.mark.webmcp(proxy=True)
def test_the_proxy_takes_the_site_of_the_tests_own_page(page, webmcp):
    page.goto(OTHER_SHOP)  # not --base-url's shop: the suite's
    expect(webmcp).to_have_tool("share_cart")
    webmcp.call("add_to_cart", {"product_id": "tea-green-01"})
    webmcp.call("share_cart")
    expect(webmcp).to_have_writes(1)
    assert {(r.port, r.path) for r in webmcp.outbound()} >= {(OTHER_CDN_PORT, "/share")}
    assert {r.port for r in webmcp.outbound()} == {OTHER_CDN_PORT}  # the page's own origin is the site
"""


class OneSession:
    """Your tests (the README's file as it is, the waiting assertions) and a suite on another shop, in one
    session with --base-url the static shop and --webmcp-proxy; with --webmcp-update-contracts, where the audit
    file's contract test, whose contract is missing as the shop's session found its own, writes it (it is the
    only test here that reads that option)."""

    def __init__(self, folder: Path, shop: StaticSite) -> None:
        (shop.root / "site" / "demo" / "late.html").write_text(LATE_PAGE, encoding="utf-8")
        mine = folder / "tests"
        mine.mkdir()
        (mine / "test_shop_tools.py").write_text(readme_test_file(), encoding="utf-8")
        self.contract = folder / "shop.contract.json"
        (mine / "test_audit.py").write_text(audit_file(self.contract), encoding="utf-8")
        self.junit = folder / "junit.xml"
        with static_site(folder / "suite-shop") as other:
            suite = _good_suite(folder / "suite", other)
            constants = f"OTHER_SHOP = {other.url!r}\nOTHER_CDN_PORT = {other.cdn_port}\n"
            (mine / "test_expect.py").write_text(constants + EXPECT_TESTS, encoding="utf-8")
            self.out = folder / "traces"
            # --base-url is the tests' shop; the suite keeps its suite.yaml's, the other shop
            files = ("tests/test_shop_tools.py", "tests/test_expect.py", "tests/test_audit.py::test_the_contract")
            args = (
                *files,
                "--webmcp-suite",
                suite,
                "--base-url",
                shop.url,
                "--webmcp-proxy",
                "--webmcp-chromium",
                "-rp",
            )
            # two of the suite's trials are enough to share a session; SHOP-02 plays in the suite's own session
            two = ("-k", "not SHOP-02 and not SHOP-04")
            update = ("--webmcp-update-contracts", "--junitxml", self.junit)
            self.result = _session(folder, *args, *two, *update, "--webmcp-out", self.out)
            self.suite_requests = [path for _, path in other.site_seen]


@pytest.fixture(scope="module")
def one_session(sessions: tuple[ShopSession, OneSession, BrokenShopSession]) -> OneSession:
    return sessions[1]


@pytest.mark.browser
def test_your_tests_and_a_suite_in_one_session_each_on_its_own_site(
    one_session: OneSession, static_shop: StaticSite
) -> None:
    result, out, suite_requests = one_session.result, one_session.out, one_session.suite_requests
    assert _outcomes(result) == {"passed": 9, "deselected": 2}, result.stdout.str()
    result.stdout.fnmatch_lines(["2 passed, 0 failed, 0 not_run"])
    (run_dir,) = out.iterdir()
    assert sorted(p.stem for p in (run_dir / "trials").glob("*.json")) == ["SHOP-01.t1", "SHOP-03.t1"]
    assert "/demo/late.html" not in suite_requests  # each site saw its own tests
    assert ("GET", "/demo/late.html") in static_shop.site_seen


def _good_suite(folder: Path, shop: StaticSite) -> Path:
    """The shop's four cases as a suite folder whose suite.yaml names this shop."""
    folder.mkdir()
    for case in CASES.glob("*.yaml"):
        shutil.copy(case, folder / case.name)
    site = yaml.safe_load((SOURCE / "site.yaml").read_text(encoding="utf-8"))
    suite = {
        "site": {**site, "base_url": shop.url},
        "behaviours": {b: b for b in ("selection", "arguments", "ordering", "freshness")},
        "min_cases_per_behaviour": 1,
    }
    (folder / "suite.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")
    return folder


def test_a_suite_over_xdist_workers_is_refused_at_once_with_one_line(pytester: pytest.Pytester) -> None:
    # refused by the controller before any worker starts: a worker's error would be retried by xdist
    pytest.importorskip("xdist")
    result = pytester.runpytest_inprocess("--webmcp-suite", str(CASES), "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR == 4
    err = result.stderr.str()
    assert "ERROR: --webmcp-suite plays its items in this process, on one open run: it does not spread over " in err
    assert "run it without -n (or with -n 0)" in err
    assert "Traceback" not in err + result.stdout.str()


def test_ini_values_stand_in_for_options_and_a_bad_one_is_a_usage_error(pytester: pytest.Pytester) -> None:
    _good_suite(pytester.path / "suite", StaticSite(root=pytester.path, site_port=9))  # collected, never played
    pytester.makeini("[pytest]\nwebmcp_suite = suite\nwebmcp_trials = 2\n")  # relative to the ini file
    listed = pytester.runpytest_inprocess("--collect-only", "-q")
    assert listed.ret == 0, listed.stdout.str()
    assert {line.rsplit("::", 1)[-1] for line in listed.stdout.lines if "::" in line} >= {"SHOP-01.t1", "SHOP-01.t2"}
    pytester.makeini("[pytest]\nwebmcp_suite = suite\nwebmcp_trials = none\n")
    bad = pytester.runpytest_inprocess("--collect-only")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    assert "ini webmcp_trials: 'none' is not a whole number" in bad.stderr.str()
    assert "Traceback" not in bad.stderr.str()
    pytester.makeini("[pytest]\nwebmcp_suite = suite\nwebmcp_suite_base_url = staging.example\n")
    url = pytester.runpytest_inprocess("--collect-only")
    assert url.ret == pytest.ExitCode.USAGE_ERROR
    assert "ini webmcp_suite_base_url: 'staging.example' is not a URL like http://127.0.0.1:8000/" in url.stderr.str()


def test_an_invalid_suite_stops_before_anything_runs(pytester: pytest.Pytester, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "BAD-01.yaml").write_text((CASES / "SHOP-01.yaml").read_text().replace("{$ref: tea}", "{$regex: x}"))
    result = pytester.runpytest_inprocess("--webmcp-suite", str(suite))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert re.search(r"BAD-01\.yaml:\d+: steps\[0\]\.plan\[1\]\.args\.product_id: .* not \$regex", err), err
    assert "Traceback" not in err


# ---- mocks, recordings, clear_calls, call timing, coverage, the report's properties -------------------------

MOCK_TESTS = """
import warnings

import pytest

from webmcp_eval.pytest import MockWarning, ToolCallError, expect

NO_PRODUCTS = {"status": "ok", "data": {"products": []}}


def test_mocks_answer_whoever_calls_and_outlive_a_reload(page, webmcp, base_url):
    page.goto(base_url)
    expect(webmcp).to_have_tool("share_cart")
    real = webmcp.call("list_products")
    webmcp.mock("list_products", NO_PRODUCTS)
    assert webmcp.call("list_products") == NO_PRODUCTS
    # not through the fixture: the page's own WebMCP, as an in-page agent calls
    assert page.main_frame.webmcp.call_tool("list_products", {}) == NO_PRODUCTS
    webmcp.mock("add_to_cart", error="the cart service is down")
    with pytest.raises(ToolCallError) as err:  # in the mock's words, not the browser's "UnknownError: …"
        webmcp.call("add_to_cart", {"product_id": "tea-green-01"})
    assert str(err.value) == 'add_to_cart({"product_id": "tea-green-01"}): the cart service is down'
    assert webmcp.calls()[-1].error == "the cart service is down"
    with pytest.raises(Exception, match="UnknownError"):  # the page's own call: the browser's words to the page
        page.main_frame.webmcp.call_tool("add_to_cart", {"product_id": "tea-green-01"})
    assert webmcp.calls()[-1].error == "the cart service is down"  # and the mock's in the test's account
    webmcp.mock("add_to_cart", lambda args: {"status": "ok", "data": {"echo": args["product_id"]}})
    assert webmcp.call("add_to_cart", {"product_id": "tea-black-03"})["data"] == {"echo": "tea-black-03"}
    page.reload()
    expect(webmcp).to_have_tool("list_products")
    assert webmcp.call("list_products") == NO_PRODUCTS  # the next document is mocked too
    webmcp.unmock("list_products")
    assert webmcp.call("list_products") == real
    webmcp.unmock_all()
    assert webmcp.call("add_to_cart", {"product_id": "tea-green-01"})["status"] == "ok"
    assert len([c for c in webmcp.calls() if c.error]) == 2
    with pytest.raises(ValueError, match="the result must be JSON"):
        webmcp.mock("list_products", object())


def test_record_then_replay(page, webmcp, base_url):
    page.goto(base_url)
    expect(webmcp).to_have_tool("add_to_cart")
    recorded = webmcp.call("add_to_cart", {"product_id": "tea-green-01", "quantity": 2})
    webmcp.record(RECORDING)
    page.evaluate("localStorage.clear()")
    page.reload()
    expect(webmcp).to_have_tool("add_to_cart")
    assert webmcp.replay(RECORDING) == ["add_to_cart"]
    assert webmcp.call("add_to_cart", {"product_id": "tea-green-01", "quantity": 2}) == recorded
    miss = 'webmcp-eval replay: no recorded call of add_to_cart with {"product_id": "tea-oolong-02"}'
    with pytest.raises(ToolCallError) as err:
        webmcp.call("add_to_cart", {"product_id": "tea-oolong-02"})
    assert str(err.value) == 'add_to_cart({"product_id": "tea-oolong-02"}): ' + miss
    assert webmcp.calls()[-1].error == miss
    with pytest.raises(ValueError, match="not a recording"):
        webmcp.replay(BASE / "products.json")


def test_clear_calls_timing_coverage_and_smoke_calls(page, webmcp, base_url):
    page.goto(base_url + "slow.html")
    expect(webmcp).to_have_tool("slow_tool")
    webmcp.call("slow_tool")
    webmcp.clear_calls()
    assert webmcp.calls() == []
    with pytest.raises(AssertionError):
        webmcp.assert_called("slow_tool")
    webmcp.call("slow_tool", {"ms": 200})
    webmcp.call("slow_tool", {"ms": 0})
    first, second = webmcp.calls()
    assert first.duration_ms >= 200 and first.started_ms > 0  # the tool waited 200 ms on the page's clock
    assert second.started_ms >= first.started_ms + first.duration_ms
    cov = webmcp.coverage()
    assert cov.called == ["slow_tool"] and cov.not_called == ["idle_tool"] and cov.fraction == 0.5
    assert {t.tool: t.params for t in cov.tools}["slow_tool"] == (1, 1)
    found = webmcp.smoke("slow_tool")  # it takes a ms above its maximum: accepted input its schema forbids
    assert {f.rule for f in found} == {"smoke-accepts-invalid"} and found.calls >= 2

def test_a_mock_that_cannot_answer_warns_once(page, webmcp, base_url):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        webmcp.mock("list_offers", {"status": "ok"})  # before the first page: a later document may register it
        page.goto(base_url)
        expect(webmcp).to_have_tool("share_cart")
        webmcp.mock("list_products", NO_PRODUCTS)  # an imperative tool of the page: nothing to say
    with pytest.warns(MockWarning) as said:
        webmcp.mock("subscribe_newsletter", {"status": "ok"})
        webmcp.mock("subscribe_newsletter", {"status": "ok"})  # once
        webmcp.mock("list_offers", {"status": "ok"})
    assert [str(w.message) for w in said] == [
        "webmcp.mock('subscribe_newsletter') is a <form toolname> tool: the browser's form answers its calls, "
        "not the mock",
        "webmcp.mock('list_offers') is no tool of the page (it lists: add_to_cart, list_products, share_cart, "
        "subscribe_newsletter): it answers only if a later document registers it",
    ]
    assert {w.filename for w in said} == {__file__}  # at the test's line


def test_a_failed_call_is_the_tools_own_words_at_the_tests_line(page, webmcp, base_url):
    page.goto(base_url)
    webmcp.wait_for_tools("add_to_cart")
    webmcp.mock("add_to_cart", error="the cart service is down")
    webmcp.call("add_to_cart", {"product_id": "tea-green-01"})


def test_a_mock_that_is_not_json_is_reported_at_the_tests_line(webmcp):
    webmcp.mock("list_products", object())
"""

SLOW_PAGE = """<!doctype html>
<title>Slow</title>
<script>
  document.modelContext.registerTool({
    name: "idle_tool",
    description: "Never called by the tests.",
    inputSchema: {type: "object", properties: {}},
    execute: async () => ({status: "ok"}),
  });
  document.modelContext.registerTool({
    name: "slow_tool",
    description: "Answers after the given time.",
    inputSchema: {type: "object", properties: {ms: {type: "integer", minimum: 0, maximum: 300}}},
    annotations: {readOnlyHint: true},
    execute: (input) => new Promise((done) => setTimeout(() => done({status: "ok"}), (input || {}).ms || 0)),
  });
</script>
"""


@pytest.mark.browser
def test_mocks_recordings_timing_coverage_and_the_reports_properties(shop_session: ShopSession) -> None:
    junit, html = shop_session.junit, shop_session.html
    assert shop_session.outcomes("test_mocks") == {"passed": 4, "failed": 2}, shop_session.out
    not_json = _section(shop_session.out, "test_a_mock_that_is_not_json_is_reported_at_the_tests_line")
    assert "E       ValueError: mock('list_products'): the result must be JSON" in not_json, not_json
    assert "pytest_plugin/" not in not_json and "test_mocks.py:" in not_json  # no frame of the plugin
    failed = _section(shop_session.out, "test_a_failed_call_is_the_tools_own_words_at_the_tests_line")
    said = 'ToolCallError: add_to_cart({"product_id": "tea-green-01"}): the cart service is down'
    assert f"E       webmcp_eval.pytest.{said}" in failed, failed
    assert ">       webmcp.call(" in failed and "pytest_plugin/" not in failed and "UnknownError" not in failed
    recording = json.loads(shop_session.recording.read_text(encoding="utf-8"))
    assert [(c["tool"], c["args"]) for c in recording["calls"]] == [
        ("add_to_cart", {"product_id": "tea-green-01", "quantity": 2})
    ]
    # each test's evidence as properties of its JUnit test case
    cases = {c.get("name"): c for c in ElementTree.parse(junit).iter("testcase")}
    props = {
        p.get("name"): json.loads(p.get("value")) for p in cases["test_record_then_replay[chromium]"].iter("property")
    }
    calls = props["webmcp.calls"]
    assert [c["tool"] for c in calls] == ["add_to_cart"] * 3
    # JSON values: the result as the tool returned it, the error in the replay's words
    assert calls[0]["result"]["status"] == "ok" and calls[1]["result"] == calls[0]["result"]
    assert calls[2]["error"].startswith("webmcp-eval replay: no recorded call of add_to_cart with {")
    assert calls[0]["duration_ms"] >= 0 and calls[1]["started_ms"] > calls[0]["started_ms"]
    assert props["webmcp.coverage"]["called"] == ["add_to_cart"]
    last = {
        p.get("name"): json.loads(p.get("value"))
        for p in cases["test_clear_calls_timing_coverage_and_smoke_calls[chromium]"].iter("property")
    }
    assert last["webmcp.smoke"]["calls"] >= 2
    assert [f["rule"] for f in last["webmcp.smoke"]["findings"]] == ["smoke-accepts-invalid"]
    # and pytest-html's report shows them as JSON extras, named as the properties
    page = html.read_text(encoding="utf-8")
    for name in ("webmcp.calls", "webmcp.coverage", "webmcp.smoke"):
        assert f"&#34;name&#34;: &#34;{name}&#34;" in page or f'"name": "{name}"' in page, name


# ---- the audit's engine from the fixture: lint, timeline, contracts ---------------------------------------

AUDIT_TESTS = """
import pytest

LOGS_LATER = \"\"\"() => document.modelContext.registerTool({
  name: "logs_later", description: "Tells today's date at once, then logs the question to the server.",
  inputSchema: {type: "object", properties: {}}, annotations: {readOnlyHint: true},
  execute: async () => {
    setTimeout(() => fetch("/demo/api/log", {method: "POST", body: "{}"}), 50);
    return {date: "2026-12-04"};
  },
})\"\"\"


def test_lint_and_timeline(page, webmcp, base_url):
    page.goto(base_url)
    webmcp.wait_for_tools("list_products", "add_to_cart", "share_cart")
    webmcp.assert_lint_clean(fail_on="error")
    with pytest.raises(AssertionError) as err:
        webmcp.assert_lint_clean(fail_on="error", too_many_tools={"severity": "error", "max": 2})
    assert str(err.value).splitlines()[0] == f"1 finding(s) at error or worse on {base_url}:"
    assert "  error too-many-tools: " in str(err.value)
    assert "too-many-tools" not in {f.rule for f in webmcp.lint()}
    with pytest.raises(ValueError, match="audit.rules.no-such-rule: unknown rule"):
        webmcp.lint(no_such_rule="off")
    assert "share_cart" in webmcp.timeline(late_tool={"after_ms": 0}).late  # registered by a timer after load


@pytest.mark.webmcp(proxy=True)
def test_smoke(page, webmcp, base_url):
    page.goto(base_url)
    webmcp.wait_for_tools("list_products", "add_to_cart", "share_cart")
    assert webmcp.smoke() == []  # list_products alone: read-only, and it answers well
    assert {c.tool for c in webmcp.calls()} == {"list_products"}
    found = {(f.rule, f.tool) for f in webmcp.smoke("share_cart", all_tools=True)}
    assert found == {("smoke-other-hosts", "share_cart")}  # its POST to the CDN, as the proxy saw it
    page.evaluate(LOGS_LATER)  # a read-only tool that writes from a 50 ms timer after answering: still its write
    webmcp.wait_for_tools("logs_later")
    assert {(f.rule, f.tool) for f in webmcp.smoke("logs_later")} == {("readonly-writes", "logs_later")}


def test_the_contract(page, webmcp, base_url):
    page.goto(base_url)
    webmcp.wait_for_tools("list_products", "add_to_cart", "share_cart")
    webmcp.assert_contract(CONTRACT)
"""


@pytest.mark.browser
def test_lint_and_contracts_written_then_enforced(
    shop_session: ShopSession, one_session: OneSession, broken_shop_session: BrokenShopSession
) -> None:
    assert shop_session.outcomes("test_audit") == {"passed": 2, "failed": 1}, shop_session.out
    missing = shop_session.result  # no contract yet: the session of the shop's three files
    missing.stdout.fnmatch_lines(
        [f"E       AssertionError: no contract at {shop_session.contract}: run pytest with --webmcp-update-contracts*"]
    )
    contract = one_session.contract
    written = one_session.result  # the contract test alone of the audit's file, with --webmcp-update-contracts
    assert _file_outcomes(one_session.junit, "tests.test_audit") == {"passed": 1}, written.stdout.str()
    tools = json.loads(contract.read_text(encoding="utf-8"))["pages"]["/demo/"]["tools"]
    assert sorted(tools) == ["add_to_cart", "list_products", "share_cart", "subscribe_newsletter"]
    changed, junit = broken_shop_session  # the contract test alone of the audit's file, on the broken shop
    assert _file_outcomes(junit, "test_audit") == {"failed": 1}, changed.stdout.str()
    changed.stdout.fnmatch_lines(
        [
            f"E       AssertionError: the page's tools differ from the contract {contract} (1 change(s)):",
            "E         *list_products*",
            "E         (if the change is meant: run pytest with --webmcp-update-contracts)",
        ]
    )


# ---- the suite's items judge what run judges -----------------------------------------------------------


def _built_in_surface(trace_file: Path) -> dict[str, tuple[str, str]]:
    """The trial's built-in surface assertions (the catalog's hints, the descriptions read by the audit's rule)."""
    trace = json.loads(trace_file.read_text(encoding="utf-8"))
    surface = ("calls.annotations", "tools.descriptions")
    return {a["id"]: (a["status"], a["why"]) for a in trace["assertions"] if a["id"] in surface}


@pytest.mark.browser
def test_a_suite_item_judges_the_built_in_surface_checks_as_run_does(tmp_path: Path) -> None:
    seed = ROOT / "cases"
    out = tmp_path / "items"
    (tmp_path / "session").mkdir()
    # the item's session and the run play side by side, each with its own demo site, browser and output folder
    session = _started(tmp_path / "session", "--webmcp-suite", seed, "-k", "SEL-01", "--webmcp-out", out)
    try:
        ran = cli("run", str(seed / "SEL-01.yaml"), "--out", str(tmp_path / "runs"), "--run-id", "r")
    finally:
        result = _ended(session)
    assert _outcomes(result).get("passed") == 1, result.stdout.str()
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (item_trace,) = out.glob("*/trials/SEL-01.t1.json")
    by_run = _built_in_surface(tmp_path / "runs" / "r" / "trials" / "SEL-01.t1.json")
    assert set(by_run) == {"calls.annotations", "tools.descriptions"}
    assert _built_in_surface(item_trace) == by_run
