"""Site strings stay data: a hostile site's names, descriptions, page errors and answers (terminal escape
sequences, markup, CR, control characters) reach every output as text, parsed by real parsers."""

from __future__ import annotations

import json
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
