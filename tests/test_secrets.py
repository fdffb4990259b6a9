"""Secrets stay out of every artifact: a protected site (HTTP authentication through credentials in
--base-url), a session cookie, and CSRF tokens in a hidden input and a meta tag; every file of the run, its
fixtures and its trace.zip are searched for the values, and so are the outputs of ``tools``, ``audit`` and a
pytest session of the plugin given the same URL with its password."""

from __future__ import annotations

import base64
import json
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from eval_support import ROOT, cli
from pydantic import BaseModel
from test_pytest_plugin import CONFTEST

from webmcp_eval.proxies.redaction import REDACTED, may_hold_secret, scrub, secrets_in_html, spellings

pytest_plugins = ["pytester"]

PASSWORD = "S3cretPassw0rd-4242"
COOKIE = "COOKIEVAL-abcdef123456"
HIDDEN = "CSRFHIDDEN-1234567890"
META = "CSRFMETA-0987654321"
BASIC = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
SECRETS = (PASSWORD, COOKIE, HIDDEN, META, BASIC)

PAGE = f"""<!doctype html><html><head><meta charset="utf-8"><meta name="csrf-token" content="{META}">
<title>Protected shop</title></head><body><h1>Protected shop</h1>
<form method="post" action="/buy"><input type="hidden" name="csrfmiddlewaretoken" value="{HIDDEN}"></form>
<p id="status">ready</p>
<script>
document.modelContext.registerTool({{
  name: "list_items", description: "List the items on sale.",
  inputSchema: {{type: "object", properties: {{}}}}, annotations: {{readOnlyHint: true}},
  execute: async () => ({{status: "ok", data: {{items: ["tea"]}}}}),
}});
document.modelContext.registerTool({{
  name: "who_am_i", description: "Say who the shop thinks the visitor is.",
  inputSchema: {{type: "object", properties: {{}}}}, annotations: {{readOnlyHint: true}},
  execute: async () => {{
    const echo = await (await fetch("/whoami")).json();  // the request's credentials, as a careless site echoes
    document.getElementById("status").textContent = JSON.stringify(echo);
    return {{status: "ok", data: echo}};
  }},
}});
</script></body></html>""".encode()

CASE = """id: SECRET-01
behaviour: selection
title: the items of a protected site
start_route: /
steps:
  - user: What is on sale, and who am I here?
    plan: [{call: list_items}, {call: who_am_i}]
    reply: Tea is on sale.
expect:
  calls:
    expected: [{tool: list_items}, {tool: who_am_i}]
"""


def _echo(headers: Any) -> bytes:
    """What a careless site answers on /whoami: the request's credentials, as they came, in JSON inside a JSON
    string, base64-encoded and URL-encoded."""
    auth, cookie = headers.get("Authorization", ""), headers.get("Cookie", "")
    echo = {
        "authorization": auth,
        "cookie": cookie,
        "wrapped": json.dumps({"inner": json.dumps({"cookie": cookie})}),
        "cookie_b64": base64.b64encode(cookie.split("=", 1)[-1].encode()).decode(),
        "password_url": quote(auth and PASSWORD),
    }
    return json.dumps(echo).encode()


class _Protected(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.headers.get("Authorization") != f"Basic {BASIC}":
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="staging"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path = self.path.split("?")[0]
        body = PAGE if path in ("/", "/index.html") else _echo(self.headers) if path == "/whoami" else b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8" if body is PAGE else "application/json")
        self.send_header("Set-Cookie", f"sessionid={COOKIE}; Path=/; HttpOnly")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def protected() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Protected)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def test_csrf_tokens_are_found_in_hidden_inputs_and_meta_tags():
    assert secrets_in_html(PAGE.decode()) == {HIDDEN, META}
    assert secrets_in_html('<input value="not-a-secret-at-all" name="q">') == set()


def test_a_secret_is_scrubbed_in_every_spelling_and_nothing_else_is():
    secret = 'tok"en/é+4242=x'
    texts = {
        "raw": f"a {secret} b",
        "json": json.dumps({"v": secret}),
        "json in json": json.dumps({"v": json.dumps({"v": secret})}),
        "json in json, ascii": json.dumps({"v": json.dumps({"v": secret}, ensure_ascii=False)}),
        "three deep": json.dumps([json.dumps([json.dumps([secret])])]),
        "base64": base64.b64encode(secret.encode()).decode(),
        "url-safe base64, no padding": base64.urlsafe_b64encode(secret.encode()).decode().rstrip("="),
        "url": quote(secret),
        "url, nothing safe": quote(secret, safe=""),
        "html": '<p title="tok&quot;en/é+4242=x">',
    }
    for name, text in texts.items():
        assert REDACTED in scrub(text, {secret}), name
        assert not any(form in scrub(text, {secret}) for form in spellings(secret)), name
    # what is not the secret stays: its first characters, another value, the structure around it
    assert scrub({"a": ['tok"en/é', "other", 12]}, {secret}) == {"a": ['tok"en/é', "other", 12]}
    assert json.loads(scrub(json.dumps({"v": secret, "w": "kept"}), {secret})) == {"v": REDACTED, "w": "kept"}


class _Held(BaseModel):
    text: str
    nested: dict[str, Any] = {}


def test_a_secret_in_any_spelling_is_seen_in_the_json_text_of_a_model_and_a_near_miss_is_not():
    """A trial looks at its trace's JSON text before scrubbing the trace: whatever scrub would change must be seen
    there, however the writer escapes it (quotes, a backslash, control and non-ASCII characters, a spelling
    escaped once more); a value that holds only part of the secret needs no scrub."""
    for secret in ('tok"en/é+4242=x', "back\\slash\ttab\x01ctl-4242"):
        for form in spellings(secret):
            for model in (_Held(text=f"<{form}>"), _Held(text="", nested={"deep": [f"x{form}y"]})):
                assert may_hold_secret(model.model_dump_json(), {secret}), (secret, form)
                assert scrub(model.model_dump(mode="json"), {secret}) != model.model_dump(mode="json")
        clean = _Held(text=secret[:-1], nested={"other": "kept"})
        assert not may_hold_secret(clean.model_dump_json(), {secret})
        assert scrub(clean.model_dump(mode="json"), {secret}) == clean.model_dump(mode="json")


def _every_text(root: Path) -> Iterator[tuple[str, str]]:
    for path in root.rglob("*"):
        if path.is_file() and path.suffix == ".zip":
            with zipfile.ZipFile(path) as zf:
                for name in zf.namelist():
                    yield f"{path}!{name}", zf.read(name).decode("utf-8", "replace")
        elif path.is_file():
            yield str(path), path.read_bytes().decode("utf-8", "replace")


def _spelled(secret: str) -> set[str]:
    """The secret as the echo and the files may spell it: as it is, JSON-escaped once and twice, base64 and
    URL-encoded (a test's own list, so the redactor is not judged by its own spellings)."""
    once = json.dumps(secret)[1:-1]
    return {secret, once, json.dumps(once)[1:-1], base64.b64encode(secret.encode()).decode(), quote(secret, safe="")}


def _leaks(roots: tuple[Path, ...], console: str) -> list[tuple[str, str]]:
    """(where, secret) for every planted secret, in any spelling, in a file under roots (trace.zip's files
    too) or the console."""
    spelled = {(s, form) for s in SECRETS for form in _spelled(s)}
    found = [(where, s) for root in roots for where, text in _every_text(root) for s, form in spelled if form in text]
    return sorted(set(found + [("console", s) for s, form in spelled if form in console]))


@pytest.mark.browser
def test_no_secret_of_a_protected_site_reaches_any_artifact(tmp_path, protected):
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "SECRET-01.yaml").write_text(CASE)
    (suite / "suite.yaml").write_text("min_cases_per_behaviour: 1\n")
    url = protected.replace("http://", f"http://alice:{PASSWORD}@")
    out = cli(
        "run", str(suite / "SECRET-01.yaml"), "--base-url", url, "--out", str(tmp_path / "runs"), "--run-id", "r",
        "--trace", "on", "--screenshot", "on", "--network", "record", "--fixtures", str(tmp_path / "fixtures"),
        "--markdown", str(tmp_path / "runs" / "r" / "summary.md"), cwd=ROOT,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert list((tmp_path / "runs" / "r" / "playwright").glob("*.zip")), "the trace.zip is kept and searched"
    assert list((tmp_path / "fixtures").rglob("*.yaml")), "the fixture is kept and searched"
    assert _leaks((tmp_path / "runs", tmp_path / "fixtures"), out.stdout + out.stderr) == []


@pytest.mark.browser
def test_tools_and_audit_take_the_password_out_of_the_url_and_authenticate(tmp_path, protected):
    url = protected.replace("http://", f"http://alice:{PASSWORD}@")
    tools = cli("tools", url, "--json", "--settle-ms", "300")
    assert tools.returncode == 0, tools.stdout + tools.stderr  # the browser authenticated: the page opened
    assert [t["name"] for t in json.loads(tools.stdout)["routes"][0]["tools"]] == ["list_items", "who_am_i"]
    assert _leaks((), tools.stdout + tools.stderr) == []
    out = tmp_path / "audit"
    out.mkdir()
    views = ("--json", "a.json", "--sarif", "a.sarif", "--markdown", "a.md", "--html", "a.html", "--junit", "a.xml")
    audit = cli("audit", url, "--smoke", "--watch-ms", "300", *views, cwd=out)
    report = json.loads((out / "a.json").read_text(encoding="utf-8"))
    (page,) = report["pages"]
    assert report["url"] == protected and page["error"] is None, audit.stdout + audit.stderr
    assert page["frames"][0]["tools"] == ["list_items", "who_am_i"] and page["calls"], audit.stdout  # read and called
    assert sorted(p.name for p in out.iterdir()) == ["a.html", "a.json", "a.md", "a.sarif", "a.xml"]
    assert _leaks((out,), audit.stdout + audit.stderr) == []


PLUGIN_TEST = """
def test_the_protected_page(page, webmcp):
    page.goto("/")
    assert sorted(t.name for t in webmcp.wait_for_tools("list_items", "who_am_i")) == ["list_items", "who_am_i"]
    assert webmcp.call("who_am_i", {})["data"]["cookie"]  # the site echoed the credentials to the test
    assert webmcp.outbound() == []  # the site is the bare origin: its own requests are not another host's
    assert webmcp.lint(description_length={"min": 100})  # findings name the page: its URL, in the JUnit XML
"""


@pytest.mark.browser
def test_a_plugin_session_takes_the_password_out_of_both_base_urls(
    pytester: pytest.Pytester, tmp_path: Path, protected: str
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "SECRET-01.yaml").write_text(CASE)
    (suite / "suite.yaml").write_text("min_cases_per_behaviour: 1\n")
    url = protected.replace("http://", f"http://alice:{PASSWORD}@")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_protected=PLUGIN_TEST)
    out, junit = tmp_path / "traces", tmp_path / "junit.xml"
    result = pytester.runpytest_subprocess(
        "test_protected.py", "--base-url", url, "--webmcp-proxy", "--webmcp-suite", str(suite),
        "--webmcp-suite-base-url", url, "--webmcp-out", str(out), "-p", "no:cacheprovider",
        "--junitxml", str(junit), "-o", "junit_family=xunit1",  # xunit1: the tests' properties in the XML
    )  # fmt: skip
    console = result.stdout.str() + result.stderr.str()
    assert result.parseoutcomes().get("passed") == 2, console  # the test and the suite's trial, both let in
    assert _leaks((out, junit.parent), console) == []
