"""The pytest plugin (entry point ``pytest11``): the ``webmcp`` fixture, and ``--webmcp-suite`` as test items.

Inert for a test that does not ask for it: no fixture of pytest-playwright is
overridden, no option of theirs is changed. A test that requests ``webmcp``
gets its page's context fitted with the shim and the DevTools witness; with the
proxy (``--webmcp-proxy``, or ``@pytest.mark.webmcp(proxy=True)``) its context
is created through the proxy, by pytest-playwright's own ``browser_context_args``
marker, before its page exists.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pluggy
import pytest

from webmcp_eval.pytest_plugin.settings import INI, bare_base_url, http_url, setting, timeout_ms, trials_count

if TYPE_CHECKING:
    from webmcp_eval.pytest_plugin.page_webmcp import PageWebMCP

# Nothing of the runner is imported until a test asks for it: every pytest run in an environment with
# webmcp-eval installed loads this module, and a test that does not use it should not pay for it.

TRIAL_PREFIX = "pytest-"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
QUIET_MODULES = ("mitmproxy.*", "ldap3.*", "passlib.*", "pyasn1.*")
XDIST = (
    "--webmcp-suite plays its items in this process, on one open run: it does not spread over "
    "pytest-xdist workers; run it without -n (or with -n 0)"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("webmcp", "webmcp-eval (WebMCP tools in your tests, case suites as test items)")
    group.addoption(
        "--webmcp-proxy",
        action="store_true",
        default=False,
        help="route every test that uses the webmcp fixture through the counting proxy "
        "(writes(), outbound(); the site is the origin of the test's first page, and --base-url's)",
    )
    group.addoption(
        "--webmcp-allow-host",
        metavar="HOST",
        action="append",
        default=[],
        help="a host (or glob) the proxy lets the page reach besides the site and loopback, repeatable; "
        "every other host is blocked and recorded",
    )
    group.addoption(
        "--webmcp-update-contracts",
        action="store_true",
        default=False,
        help="webmcp.assert_contract(path) writes the page's tool contract to path instead of comparing",
    )
    group.addoption(
        "--webmcp-suite",
        metavar="DIR",
        default=None,
        help="also collect this webmcp-eval suite folder: one test item per (case, trial); "
        "without test paths on the command line, only the suite",
    )
    group.addoption(
        "--webmcp-suite-base-url",
        metavar="URL",
        type=http_url,
        default=None,
        help="the suite's site (default: its suite.yaml's, else the embedded demo site); "
        "--base-url is your tests' site and never moves the suite",
    )
    group.addoption(
        "--webmcp-trials",
        metavar="K",
        type=trials_count,
        default=None,
        help="trials per case of --webmcp-suite (default 1)",
    )
    group.addoption(
        "--webmcp-expect-timeout",
        metavar="MS",
        type=timeout_ms,
        default=None,
        help="how long expect(webmcp) assertions retry (default 5000 ms, as Playwright's expect)",
    )
    group.addoption(
        "--webmcp-chromium",
        action="store_true",
        default=False,
        help="pytest-playwright launches the Chromium with WebMCP that webmcp-eval runs (its flags; the "
        "headless shell for headless runs): no conftest code; other --browser types are left alone",
    )
    group.addoption(
        "--webmcp-out",
        metavar="DIR",
        default=None,
        help="where --webmcp-suite writes its run directory, as `webmcp-eval run --out` (default traces)",
    )
    for name, (kind, text) in INI.items():
        parser.addini(name, text, type=kind)


def _xdist_controller(config: pytest.Config) -> bool:
    """pytest-xdist is to spread this session over workers (and this process is not one of them)."""
    if hasattr(config, "workerinput"):
        return False
    return bool(getattr(config.option, "numprocesses", None)) or getattr(config.option, "dist", "no") != "no"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "webmcp(proxy=False): options of the webmcp fixture; proxy=True routes the test through the proxy"
    )
    config.addinivalue_line("markers", "webmcp_case(behaviour): a (case, trial) item of --webmcp-suite")
    for module in QUIET_MODULES:  # the proxy's dependencies' deprecations: nothing a test of yours can act on
        config.addinivalue_line("filterwarnings", f"ignore::DeprecationWarning:{module}")
    for name in INI:  # a bad ini value stops the session here, as a bad option does
        setting(config, name)
    config.pluginmanager.register(ProxyPlugin(config), "webmcp-proxy")
    if setting(config, "webmcp_chromium"):
        from webmcp_eval.pytest_plugin import chromium

        config.pluginmanager.register(chromium, "webmcp-chromium")
    from webmcp_eval.pytest_plugin.expect import expect

    expect.set_options(timeout=setting(config, "webmcp_expect_timeout"))
    if setting(config, "webmcp_suite"):
        if _xdist_controller(config):  # refused here, at once: a worker's usage error would be retried by xdist
            raise pytest.UsageError(XDIST)
        from webmcp_eval.pytest_plugin import suite_items

        suite_items.configure(config)


class ProxyPlugin:
    """The counting proxy for tests that ask for it: one per session (mitmproxy allows one per process),
    started at the first such test; each test is a trial of its own on it, with its own site: the origin
    of the first page it opens (and --base-url's). With --webmcp-suite it is the suite's run's proxy."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.proxy: Any = None  # webmcp_eval.proxies.controller.NetworkProxy
        self.own = False  # started here (else the suite's run owns it)
        self.numbers = 0

    def wanted(self, item: pytest.Item) -> bool:
        if "webmcp" not in getattr(item, "fixturenames", ()):
            return False
        marker = item.get_closest_marker("webmcp")
        asked = marker.kwargs.get("proxy") if marker else None
        return bool(setting(self.config, "webmcp_proxy") if asked is None else asked)

    def site_origins(self) -> list[str]:
        base_url = bare_base_url(self.config)[0]
        if not base_url:
            return []
        parts = urlsplit(base_url)
        return [f"{parts.scheme}://{parts.netloc}"]

    def _start(self) -> Any:
        if self.proxy is None:
            suite = self.config.pluginmanager.get_plugin("webmcp-suite")
            self.proxy = suite.shared_proxy() if suite is not None else None
            if self.proxy is None:
                from webmcp_eval.proxies.controller import NetworkProxy

                self.proxy = NetworkProxy(site_origins=self.site_origins(), allow_hosts=self.allow_hosts())
                self.proxy.start()
                self.own = True
        return self.proxy

    def allow_hosts(self) -> list[str]:
        # Loopback hosts pass (a local CDN, a second local service), and what --webmcp-allow-host names;
        # the rest is blocked and recorded, so a test never reaches out (the browser's own services too).
        return [*LOOPBACK, *setting(self.config, "webmcp_allow_host")]

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        if "webmcp" not in getattr(item, "fixturenames", ()):
            return
        # pytest-playwright's context fixture takes the closest browser_context_args marker: ours goes
        # first, with the test's own arguments kept in it.
        own = item.get_closest_marker("browser_context_args")
        args = dict(own.kwargs) if own else {}
        base_url, credentials = bare_base_url(self.config)
        if credentials:  # --base-url's user:password@: the context's HTTP authentication, in no URL of the test
            from webmcp_eval.play.browser.browser import http_credentials

            args.update(base_url=base_url, http_credentials=http_credentials(credentials))
        if self.wanted(item):
            args.update(self._trial_args(item, args.get("extra_http_headers", {})))
        if args != (own.kwargs if own else {}):
            item.add_marker(pytest.mark.browser_context_args(**args), append=False)

    def _trial_args(self, item: pytest.Item, headers: dict[str, str]) -> dict[str, Any]:
        """The test as a trial of its own on the proxy: the context's arguments that route it there."""
        from webmcp_eval.proxies.canonical import TRIAL_HEADER
        from webmcp_eval.proxies.trial_state import TrialSite

        proxy = self._start()
        self.numbers += 1
        trial_id = f"{TRIAL_PREFIX}{self.numbers}"
        proxy.begin_trial(trial_id, site=TrialSite(self.site_origins(), self.allow_hosts()))
        item.stash[TRIAL_KEY] = trial_id
        return {
            "proxy": {"server": proxy.url, "bypass": "<-loopback>"},
            "extra_http_headers": {**headers, TRIAL_HEADER: trial_id},
        }

    def pytest_runtest_teardown(self, item: pytest.Item) -> None:
        trial_id = item.stash.get(TRIAL_KEY, None)
        if trial_id and self.proxy is not None:
            # the fixture's teardown, which comes after, scrubs its report of the secrets the trial carried
            item.stash[SECRETS_KEY] = self.proxy.end_trial(trial_id).secrets

    def network_of(self, item: pytest.Item) -> Any:
        trial_id = item.stash.get(TRIAL_KEY, None)
        if trial_id is None or self.proxy is None:
            return None
        return lambda: self.proxy.snapshot(trial_id)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.proxy is not None and self.own:
            self.proxy.stop()


TRIAL_KEY = pytest.StashKey[str]()
SECRETS_KEY = pytest.StashKey[set[str]]()


@pytest.fixture
def webmcp(page: Any, request: pytest.FixtureRequest) -> Iterator[PageWebMCP]:
    """The WebMCP side of the test's ``page``: tools, calls, registrations, the proxy's account, assertions.

    Request it before the page navigates: the shim sees what a document registers from its first script on.
    """
    from webmcp_eval.pytest_plugin.page_webmcp import PageWebMCP

    proxies = request.config.pluginmanager.get_plugin("webmcp-proxy")
    assert isinstance(proxies, ProxyPlugin)  # registered at configure
    update = request.config.getoption("webmcp_update_contracts")
    fixture = PageWebMCP(page, _account=proxies.network_of(request.node), _update_contracts=update)._install()
    yield fixture
    from webmcp_eval.proxies.redaction import scrub  # the proxy's package: loaded by tests that use the fixture

    # the test's calls, coverage, lint and smoke: properties of its report (JUnit XML, pytest-html), without a
    # secret the site echoed in an answer
    secrets = _secrets_of(request, fixture)
    request.node.user_properties.extend((name, scrub(value, secrets)) for name, value in fixture._report_properties())


def _secrets_of(request: pytest.FixtureRequest, fixture: PageWebMCP) -> set[str]:
    """The secrets the test's page carried: --base-url's password and the Basic value made of it, the cookies the
    site set, and the tokens the proxy saw (webmcp_eval/proxies/redaction.py)."""
    from webmcp_eval.proxies.redaction import MIN_SECRET, credential_secrets

    found = credential_secrets(bare_base_url(request.config)[1])
    with contextlib.suppress(Exception):  # a page already gone has no cookies to give; the rest still counts
        found |= {str(c.get("value") or "") for c in fixture.page.context.cookies()}
    found |= request.node.stash.get(SECRETS_KEY, set())  # the proxy's account, when its trial has ended
    if fixture._account is not None:
        with contextlib.suppress(KeyError):  # or while it still runs
            found |= fixture._account().secrets
    return {s for s in found if len(s) >= MIN_SECRET}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pluggy.Result[pytest.TestReport], None]:
    """pytest-html, when installed, shows the test's WebMCP properties as JSON extras."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "teardown" or not item.config.pluginmanager.hasplugin("html"):
        return
    ours = [(name, value) for name, value in item.user_properties if str(name).startswith("webmcp.")]
    if ours:
        import pytest_html

        extras = list(getattr(report, "extras", []))
        extras += [pytest_html.extras.json(json.loads(str(value)), name=name) for name, value in ours]
        report.extras = extras  # type: ignore[attr-defined]  # pytest-html reads this attribute of its own
