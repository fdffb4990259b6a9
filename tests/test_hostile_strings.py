"""Site strings stay data: a hostile site's names, descriptions, page errors and answers (terminal escape
sequences, markup, CR, control characters) reach every output as text, parsed by real parsers."""

from __future__ import annotations

import json
import re
import threading
from functools import partial
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from xml.parsers import expat as expat_parser

import jsonschema
import pytest
from eval_support import cli
from markdown_it import MarkdownIt

from webmcp_eval.report.sanitise import json_text, markdown, markdown_code, terminal, xml
from webmcp_eval.trace import Assertion, Trace, write_trace

# set the window title, plant an OSC 8 hyperlink, erase the line and write over it; a new Markdown heading
# and image after a CR; raw HTML; a NUL and a form feed XML 1.0 cannot hold
HOSTILE = (
    "evil\x1b]0;PWNED-TITLE\x07\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\\x1b[2K\r"
    "\r# HEADING-INJECTED\r![img](http://evil.example/x.png) <img src=x onerror=alert(1)>|cell\x00\x0c"
)
RAW_MARKERS = ("\x1b", "\x07", "\r", "\x00", "\x0c")


def test_each_sanitiser_keeps_the_text_and_drops_its_power():
    assert terminal("a\x1b[2Kb\rc\u202ed") == "a\\x1b[2Kb\\rc\\u202ed"
    assert terminal("a\nb\tc", lines=True) == "a\nb\tc" and terminal("a\nb") == "a\\nb"
    assert xml("a\x00b\x1bc\n") == "a\\x00b\\x1bc\n"
    assert markdown("a|b\r# c <b>") == "a\\|b \\# c &lt;b&gt;"
    assert markdown_code("x ` y") == "``x ` y``"
    as_json = json.dumps({"a": "x\x9b2J\u202ey\n"}, ensure_ascii=False)
    assert json_text(as_json) == '{"a": "x\\u009b2J\\u202ey\\n"}' and json.loads(json_text(as_json)) == json.loads(
        as_json
    )


def _hostile_run(run_dir: Path) -> None:
    for n, verdict in enumerate(("failed", "not_run"), 1):
        trace = Trace(
            run_id=run_dir.name,
            trial_id=f"HOSTILE.t{n}",
            trial_index=n - 1,
            case_id="HOSTILE",
            case_file="cases/HOSTILE.yaml",
            behaviour="selection",
            start_route="/",
            verdict=verdict,
            verdict_reason=f"the page said: {HOSTILE}",
            not_run_kind="step" if verdict == "not_run" else None,
            ai_result=HOSTILE,
            warnings=[f"shim and DevTools disagree: {HOSTILE}"],
            assertions=[Assertion(id="answer", kind="answer", description="the answer", status="failed", why=HOSTILE)],
        )
        write_trace(trace, run_dir / "trials")


def _markdown_is_inert(text: str, own_headings: int, whole: bool = True) -> None:
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    every = [*tokens, *(c for t in tokens for c in (t.children or []))]
    assert not {t.type for t in every} & {"html_block", "html_inline", "image"}
    assert not [t for t in every if t.type == "link_open" and "evil" in str(t.attrs.get("href"))]
    assert sum(t.type == "heading_open" for t in tokens) == own_headings
    assert "HEADING-INJECTED" in text or not whole  # kept, as text (unless the view shortens it)


def test_report_analyze_every_view_of_a_hostile_trace_is_text(tmp_path):
    run = tmp_path / "run"
    _hostile_run(run)
    md, amd, junit, js = (tmp_path / n for n in ("s.md", "a.md", "junit.xml", "s.json"))
    html = tmp_path / "r.html"
    out = cli("report", str(run), "--markdown", str(md), "--junit", str(junit), "--json", str(js), "--html", str(html))
    assert out.returncode == 1, out.stderr
    console = out.stdout + out.stderr
    assert not any(m in console for m in RAW_MARKERS), repr(console)
    assert "PWNED-TITLE" in console and "\\x1b" in console  # shown, as visible escapes
    expat = expat_parser.ParserCreate()
    expat.Parse(junit.read_bytes(), True)  # a CI job keeps its test report
    _markdown_is_inert(md.read_text(encoding="utf-8"), own_headings=md.read_text().count("\n#") + 1)
    assert HOSTILE in json.loads(js.read_text())["trials"][0]["reason"]  # JSON keeps the string as it was
    page = html.read_text(encoding="utf-8")
    assert "<img src=x" not in page and "&lt;img src=x" in page
    HTMLParser().feed(page)
    analyzed = cli("analyze", str(run), "--markdown", str(amd))
    assert not any(m in analyzed.stdout + analyzed.stderr for m in RAW_MARKERS)
    _markdown_is_inert(amd.read_text(encoding="utf-8"), own_headings=2)


HOSTILE_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>hostile</title></head><body><p>shop</p>
<script>
const evil = %s;
document.modelContext.registerTool({
  name: "list_items", description: evil,
  inputSchema: {type: "object", properties: {q: {type: "string", description: evil}}},
  annotations: {readOnlyHint: true},
  execute: async () => ({status: "ok", data: {note: evil}}),
});
document.modelContext.registerTool({
  name: "buy_item", description: evil, inputSchema: {type: "object", properties: {}},
  execute: async () => ({status: "ok"}),
});
setTimeout(() => { throw new Error(evil); }, 0);
</script></body></html>"""


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    (root / "index.html").write_text(HOSTILE_PAGE % json.dumps(HOSTILE), encoding="utf-8")

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.mark.browser
def test_tools_init_and_audit_of_a_hostile_site_print_and_write_text(hostile_site, tmp_path):
    out = {k: tmp_path / f"audit.{k}" for k in ("json", "sarif", "md", "html")}
    runs = [
        cli("tools", hostile_site),
        cli("init", "--base-url", hostile_site, "-o", str(tmp_path / "suite")),
        cli(
            "audit",
            hostile_site,
            "--json",
            str(out["json"]),
            "--sarif",
            str(out["sarif"]),
            "--markdown",
            str(out["md"]),
            "--html",
            str(out["html"]),
        ),  # fmt: skip
    ]
    for run in runs:
        console = run.stdout + run.stderr
        assert "Traceback" not in console and "internal error" not in console, console
        assert not any(m in console for m in RAW_MARKERS), (run.args[:2], repr(console[:2000]))
    assert "PWNED-TITLE" in runs[0].stdout  # the description is shown, as text
    sarif = Path(__file__).resolve().parent / "sarif" / "sarif-schema-2.1.0.json"
    jsonschema.Draft4Validator(json.loads(sarif.read_text())).validate(json.loads(out["sarif"].read_text()))
    json.loads(out["json"].read_text())
    _markdown_is_inert(out["md"].read_text(encoding="utf-8"), own_headings=1, whole=False)
    page = out["html"].read_text(encoding="utf-8")
    assert "<img src=x" not in page
    HTMLParser().feed(page)


def test_a_page_url_or_route_that_cannot_be_a_page_of_the_site_is_refused_before_any_browser():
    from webmcp_eval.suite.site import page_url_problem, route_problem, shown_url

    for url in ("http://127.0.0.1:8000/demo/", "https://shop.example/x/index.html?a=1#/b", "file:///tmp/page.html"):
        assert page_url_problem(url) is None, url
    bad = {
        "http://[::1": "Invalid IPv6 URL",
        "http://127.0.0.1:99999/": "Port out of range",
        "http://127.0.0.1/a b": "a space or a control character",
        "http://127.0.0.1/\r\nX: y": "a space or a control character",
        "ftp://127.0.0.1/": "not an http(s) or file URL",
        "javascript:alert(1)": "not an http(s) or file URL",
        "http:///nohost": "not an http(s) or file URL",
    }
    for url, reason in bad.items():
        assert reason in (page_url_problem(url) or ""), url
    base = "http://127.0.0.1:8000/demo/"
    for route in ("/", "cart.html", "?q=1", "#/hotel/1", "http://127.0.0.1:8000/demo/x.html"):
        assert route_problem(base, route) is None, route
    assert route_problem(base, "http://127.0.0.1:8001/") is None  # another site's page, named in full
    for route in ("file:///etc/hostname", "javascript:alert(1)", "data:text/html,x"):
        assert route_problem(base, route), route
    assert route_problem("file:///tmp/a.html", "http://127.0.0.1/")
    assert route_problem("file:///tmp/a.html", "b.html") is None
    assert shown_url("http://ann:secret@127.0.0.1/") == "http://127.0.0.1/"


def test_a_header_is_an_http_token_and_a_printable_value():
    from webmcp_eval.audit.access import AccessError, parse_header

    assert parse_header("Authorization: Bearer a.b-c") == ("Authorization", "Bearer a.b-c")
    assert parse_header("X-Token:\tv 1") == ("X-Token", "v 1")
    for text in ("(X): a", "X Y: a", "X: a\r\nInjected: b", "X: é", "X: a\x00", ": a", "no colon"):
        with pytest.raises(AccessError):
            parse_header(text)


def test_a_timeout_that_no_clock_reaches_is_refused_at_once():
    from webmcp_eval.pytest_plugin.expect import Expect

    for bad in (float("nan"), float("inf"), -1, 10**12, True):
        with pytest.raises(ValueError, match="give milliseconds from 0 to 3600000"):
            Expect().set_options(timeout=bad)
    Expect().set_options(timeout=0)
    from webmcp_eval.pytest_plugin.expect import WebMCPAssertions

    with pytest.raises(ValueError, match="give milliseconds"):  # a wait of NaN ms would never end
        WebMCPAssertions(None, 5000)._retry("to_have_tool", lambda: True, float("nan"))  # type: ignore[arg-type]


def test_the_plugins_url_settings_refuse_what_does_not_parse_in_one_line():
    from webmcp_eval.pytest_plugin.settings import _check_url

    for bad in ("http://[::1", "http://u:pw@127.0.0.1:99999/", "file:///tmp/x.html", "http://h/\r\n"):
        with pytest.raises(pytest.UsageError, match="is not a URL like") as caught:
            _check_url(bad, "ini webmcp_suite_base_url")
        assert "pw" not in str(caught.value)
    assert _check_url("http://127.0.0.1:8000/", None) == "http://127.0.0.1:8000/"


def test_files_of_the_wrong_shape_or_depth_are_one_line_never_an_internal_error(tmp_path: Path):
    from webmcp_eval.audit.access import AccessError, read_storage_state
    from webmcp_eval.audit.config import AuditConfigError, parse_audit_config
    from webmcp_eval.audit.contract import ContractError, read_contract

    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    shapes = {
        "name must be a string": {"cookies": [{"name": 1, "value": "v", "url": "http://h/"}]},
        "give a url, or a domain and a path": {"cookies": [{"name": "a", "value": "v"}]},
        "sameSite must be": {"cookies": [{"name": "a", "value": "v", "url": "http://h/", "sameSite": "x"}]},
        "expected {origin": {"origins": [{"origin": 5}]},
        "must be an http(s) origin": {"origins": [{"origin": "file:///", "localStorage": []}]},
        "localStorage must be a list": {"origins": [{"origin": "http://h", "localStorage": [{"name": 1}]}]},
    }
    for message, state in shapes.items():
        (tmp_path / "s.json").write_text(json.dumps(state))
        with pytest.raises(AccessError, match=re.escape(message)):
            read_storage_state(tmp_path / "s.json")
    with pytest.raises(AccessError, match="nested deeper"):
        read_storage_state(deep)
    with pytest.raises(ContractError, match="nested deeper"):
        read_contract(deep)
    for rules, message in (
        ({"smoke-timeout": {"timeout_ms": 3_000_000_000}}, "give 0 to 600000"),  # past the browser's timer
        ({"name-invalid": {"pattern": "x{99999999999}"}}, "not a valid regular expression"),
    ):
        with pytest.raises(AuditConfigError, match=re.escape(message)):
            parse_audit_config({"rules": rules})


def test_export_into_a_folder_named_evals_json_and_a_pattern_that_does_not_compile_are_one_line(tmp_path: Path):
    (tmp_path / "out" / "evals.json").mkdir(parents=True)
    out = cli("export", str(Path(__file__).parent.parent / "cases"), "-o", str(tmp_path / "out"), "--lossy")
    assert out.returncode == 2 and "evals.json: is a directory" in out.stderr, out.stderr
    source = tmp_path / "p.json"
    source.write_text(
        '[{"messages": [{"role": "user", "type": "message", "content": "hi"}], '
        '"expectedCall": [{"functionName": "f", "arguments": {"a": {"$pattern": "^(a|b[)$"}}}]}]'
    )
    out = cli("import", str(source), "-o", str(tmp_path / "in"))
    assert out.returncode == 2 and "does not compile" in out.stderr and "internal error" not in out.stderr


def test_a_recording_as_deep_as_a_trace_allows_is_read_back(tmp_path: Path):
    from webmcp_eval.pytest_plugin.mocks import read_recording

    deep: object = "leaf"
    for _ in range(120):  # a tool's deep answer, as record() wrote it
        deep = {"a": deep}
    call = {"index": 0, "step": 0, "tool": "t", "args": {}, "result": deep}
    (tmp_path / "rec.json").write_text(json.dumps({"calls": [call]}))
    (recorded,) = read_recording(tmp_path / "rec.json")
    assert recorded.tool == "t" and recorded.result == deep
