"""Finding and launching a Chromium that has WebMCP.

One place decides which browser every part of webmcp-eval uses, in this order:
an explicit setting (``--chromium PATH`` or ``WEBMCP_EVAL_CHROMIUM``), then
Playwright's own downloaded Chromium when it is installed, then the system's
Chromium. A machine without any gets a message that says what to install.

A headless run takes the system's ``chromium-headless-shell`` before the full
Chromium when it is installed (Debian packages it at the same version): it has
native WebMCP and the DevTools WebMCP domain, every check keeps its evidence
(the end-to-end tests run on it), and it costs less per trial (docs/speed.md).
A headed run always takes the full Chromium.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from playwright.async_api import Browser, BrowserType, HttpCredentials

from webmcp_eval.errors import CannotRun, InvalidInput

ENV_VAR = "WEBMCP_EVAL_CHROMIUM"
SYSTEM_CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")
HEADLESS_SHELL = "chromium-headless-shell"  # headless runs only

# Chromium reads only the last --enable-features it is given, and Playwright
# passes its own: ours repeats Playwright's (1.65: the new screenshot surface,
# no accounts.google.com lookups at start) so that WebMCP does not switch them off.
PLAYWRIGHT_FEATURES = ("CDPScreenshotNewSurface", "SkipListAccountsWithoutGaiaCookies")

# Flags every launch needs. WebMCP is behind a feature flag in Chromium 15x;
# the others stop Chromium phoning home, which on a closed network floods the
# logs with refused connections and slows start-up.
BASE_ARGS = (
    "--enable-features=" + ",".join(("WebMCP", *PLAYWRIGHT_FEATURES)),
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)

INSTALL_HINT = (
    "No Chromium found for webmcp-eval. Install one of:\n"
    "  - Debian/Ubuntu: apt-get install chromium   (gives /usr/bin/chromium)\n"
    "  - Playwright's own: python -m playwright install chromium\n"
    f"or point at an existing binary with --chromium PATH or {ENV_VAR}=PATH."
)


class ChromiumNotFound(CannotRun, RuntimeError):
    """No usable Chromium; the message says what to install."""


@dataclass(frozen=True)
class ChromiumChoice:
    path: str
    source: str  # "explicit", "playwright" or "system"


def http_credentials(found: tuple[str, str] | None) -> HttpCredentials | None:
    """A browser context's HTTP authentication from credentials taken out of a URL
    (webmcp_eval/suite/site.py ``split_credentials``): the browser sends them, no URL carries them."""
    return {"username": found[0], "password": found[1]} if found else None


class KnowsItsBinary(Protocol):
    """A Playwright browser type, of its async API or its sync one: where its own Chromium would be."""

    @property
    def executable_path(self) -> str: ...


def find_chromium(
    explicit: str | None = None, browser_type: KnowsItsBinary | None = None, *, headless: bool = False
) -> ChromiumChoice:
    """Return the Chromium to launch, or raise ChromiumNotFound with an install hint.

    headless: the system's headless shell is taken before the system's full Chromium."""
    wanted = explicit or os.environ.get(ENV_VAR)
    if wanted:
        resolved = shutil.which(wanted) or (wanted if Path(wanted).is_file() else None)
        if not resolved:
            raise ChromiumNotFound(f"The Chromium set explicitly does not exist: {wanted}\n{INSTALL_HINT}")
        return ChromiumChoice(resolved, "explicit")
    if browser_type is not None:
        try:
            own = browser_type.executable_path
        except Exception:  # Playwright raises when its registry has no entry
            own = ""
        if own and Path(own).is_file():
            return ChromiumChoice(own, "playwright")
    for candidate in ((HEADLESS_SHELL,) if headless else ()) + SYSTEM_CANDIDATES:
        found = shutil.which(candidate)
        if found:
            return ChromiumChoice(found, "system")
    raise ChromiumNotFound(INSTALL_HINT)


def launch_args(proxy_bypass_loopback: bool = False) -> list[str]:
    args = list(BASE_ARGS)
    if os.geteuid() == 0:
        # Chromium refuses to run as root with its sandbox on.
        args.append("--no-sandbox")
    if proxy_bypass_loopback:
        # Chromium never proxies loopback unless the bypass list removes it.
        args.append("--proxy-bypass-list=<-loopback>")
    return args


async def launch(
    browser_type: BrowserType,
    *,
    explicit: str | None = None,
    headless: bool = True,
    slow_mo: float | None = None,
    proxy_server: str | None = None,
) -> tuple[Browser, ChromiumChoice]:
    """Launch Chromium with WebMCP on; proxy_server routes all traffic (loopback too)."""
    choice = find_chromium(explicit, browser_type, headless=headless)
    kwargs: dict[str, Any] = {
        "executable_path": choice.path,
        "headless": headless,
        "args": launch_args(proxy_bypass_loopback=proxy_server is not None),
    }
    if slow_mo:
        kwargs["slow_mo"] = slow_mo
    if proxy_server:
        kwargs["proxy"] = {"server": proxy_server, "bypass": "<-loopback>"}
    return await browser_type.launch(**kwargs), choice


class BrowserUnavailable(InvalidInput, RuntimeError):
    """A remote browser (--connect, --connect-over-cdp) could not be reached; the message says what to check."""


REMOTE_TIMEOUT_MS = 30_000


def server_launch_options(explicit: str | None, headless: bool) -> dict[str, Any]:
    """What a ``playwright run-server`` is asked to launch: headless or not, the WebMCP flags, the binary.

    The options travel in the ``x-playwright-launch-options`` header. A server drops ``args`` and
    ``executablePath`` unless it was started with ``--unsafe``: without them its Chromium has no
    WebMCP flag (the shim's polyfill and no DevTools witness) and is Playwright's own build.
    """
    options: dict[str, Any] = {"headless": headless, "args": launch_args()}
    wanted = explicit or os.environ.get(ENV_VAR)
    if wanted:  # a path on the server's machine: not checked here
        options["executablePath"] = wanted
    return options


async def connect_server(
    browser_type: BrowserType,
    endpoint: str,
    *,
    explicit: str | None = None,
    headless: bool = True,
    slow_mo: float | None = None,
) -> tuple[Browser, ChromiumChoice]:
    """Connect to a Playwright browser server (``playwright run-server``); it launches a Chromium for us."""
    import json

    options = server_launch_options(explicit, headless)
    try:
        browser = await browser_type.connect(
            endpoint,
            headers={"x-playwright-launch-options": json.dumps(options)},
            slow_mo=slow_mo,
            timeout=REMOTE_TIMEOUT_MS,
        )
    except Exception as err:
        raise BrowserUnavailable(
            f"--connect {endpoint}: cannot use the browser server there ({_first_line(err)}); check that "
            "`playwright run-server --host HOST --port PORT --unsafe` runs there, of the same Playwright version"
        ) from None
    return browser, ChromiumChoice(options.get("executablePath", "(the server's own)"), f"server {endpoint}")


async def connect_cdp(
    browser_type: BrowserType, url: str, *, slow_mo: float | None = None
) -> tuple[Browser, ChromiumChoice]:
    """Attach to a running Chromium over the DevTools protocol (started with --remote-debugging-port)."""
    try:
        browser = await browser_type.connect_over_cdp(url, slow_mo=slow_mo, timeout=REMOTE_TIMEOUT_MS)
    except Exception as err:
        raise BrowserUnavailable(
            f"--connect-over-cdp {url}: cannot attach to a Chromium there ({_first_line(err)}); start it with "
            "--remote-debugging-port=PORT --enable-features=WebMCP and give http://HOST:PORT"
        ) from None
    return browser, ChromiumChoice(url, "cdp")


def _first_line(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).splitlines() if line.strip() and not set(line.strip()) <= {"=", "-"}]
    return lines[0] if lines else type(err).__name__


def main() -> int:
    """``python -m webmcp_eval.play.browser.browser``: print the Chromium that would be used, or what to install."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        try:
            headed = find_chromium(browser_type=p.chromium)
            headless = find_chromium(browser_type=p.chromium, headless=True)
        except ChromiumNotFound as err:
            print(err)
            return 1
    if headless == headed:
        print(f"{headed.path} ({headed.source})")
    else:
        print(f"{headless.path} ({headless.source}, headless runs); {headed.path} ({headed.source}, --headed)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
