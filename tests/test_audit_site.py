"""webmcp-eval audit end to end: a real Chromium and proxy against the audit's own test site (tests/audit_site/).

One page per concern (lint, smoke, timeline, crawl); each test reads its page once and checks every rule that
page holds, firing on the tool made for it and quiet on its twin.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from audit_server import AuditSite, audit_site
from eval_support import cli, in_thread

from webmcp_eval.audit.audit_report import AuditReport
from webmcp_eval.audit.config import parse_audit_config
from webmcp_eval.audit.engine import AuditOptions, audit
from webmcp_eval.audit.rulebook import RULES

SARIF_SCHEMA = Path(__file__).resolve().parent / "sarif" / "sarif-schema-2.1.0.json"

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def audit_web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuditSite]:
    with audit_site(tmp_path_factory.mktemp("audit-site")) as site:
        yield site


def run_audit(**kw: object) -> AuditReport:
    return in_thread(asyncio.run, audit(AuditOptions(**kw)))  # type: ignore[arg-type]


def by_rule(report: AuditReport) -> dict[str, set[str | None]]:
    out: dict[str, set[str | None]] = {}
    for f in report.all_findings():
        out.setdefault(f.rule, set()).add(f.tool)
    return out


def test_lint_page_every_rule_fires_on_its_tool_and_frames_are_apart(audit_web: AuditSite):
    config = parse_audit_config({"rules": {"too-many-tools": {"max": 15}}})
    report = run_audit(url=audit_web.url + "index.html", watch_ms=300, config=config)
    rules = by_rule(report)
    assert rules["description-injection"] == {"injected_desc", "hidden_chars"}
    assert rules["form-autosubmit-sensitive"] == {"sign_in_form"}  # not the newsletter form, autosubmit too
    assert rules["name-duplicate"] == {"lookup_item"}  # the frame's, not frame_lookup
    assert rules["registration-refused"] == {"lookup item!", "no_description"}  # one cause: the form's finding
    assert rules["form-tooldescription-missing"] == {"undescribed_form"}  # ... and the denied frame's
    assert rules["schema-not-object"] == {"schema_array"}
    assert rules["schema-required-unknown"] == {"schema_required_ghost"}
    assert rules["description-length"] == {"short_desc", "long_desc"}
    assert rules["description-similar"] & {"lookup_item", "find_item"} and len(rules["description-similar"]) == 1
    assert rules["name-inconsistent"] == {"listOrders"}
    assert rules["param-description-missing"] == {"param_undocumented"}
    assert rules["param-sensitive"] == {"sign_in", "sign_in_form"}
    assert rules["schema-depth"] == {"schema_deep"}
    assert rules["schema-null"] == {"schema_null_default"}
    assert rules["schema-unsupported-keyword"] == {"schema_oneof"}
    assert rules["too-many-tools"] == {None}
    assert "no-tools" not in rules and "page-script-error" not in rules and report.exit_code == 1
    (cross,) = [f for f in report.all_findings() if f.rule == "frame-cross-origin-without-allow"]
    assert cross.frame.endswith("/cross.html")  # not cross_allowed.html, whose iframe has allow="tools"
    assert "NotAllowedError" in cross.message  # ... one finding, with the browser's error

    # every frame apart: a frame's document is not the top page's, and both keep their tools' details
    frames = {f.url.rsplit("/", 1)[-1]: f for f in report.pages[0].surface.frames}
    assert set(frames) == {"index.html", "frame.html", "cross.html", "cross_allowed.html"}
    top, same, other = frames["index.html"], frames["frame.html"], frames["cross_allowed.html"]
    assert top.main and not same.main and same.same_origin and same.allow == "tools"
    assert not other.same_origin and [t.name for t in other.tools] == ["pay_widget"]
    assert {t.name for t in same.tools} == {"frame_lookup", "lookup_item"}
    tools = {t.name: t for t in top.tools}
    assert tools["list_orders_page"].read_only and next(t for t in same.tools if t.name == "frame_lookup").read_only
    assert tools["sign_in_form"].kind == "declarative" and tools["newsletter"].kind == "declarative"
    assert tools["lookup_item"].kind == "imperative" and "frame_lookup" not in tools


def test_crawl_follows_same_origin_links_once_reports_drift_and_writes_every_view(audit_web: AuditSite, tmp_path):
    out = {k: tmp_path / f"audit.{k}" for k in ("json", "sarif", "md", "html")}
    run = cli(
        "audit",
        audit_web.url + "loop.html",
        "--max-pages",
        "4",
        "--watch-ms",
        "300",
        "--json",
        str(out["json"]),
        "--sarif",
        str(out["sarif"]),
        "--markdown",
        str(out["md"]),
        "--html",
        str(out["html"]),
    )
    assert run.returncode == 1, run.stderr  # the redirect away and the lint page's errors
    assert "Traceback" not in run.stderr
    data = json.loads(out["json"].read_text())
    pages = [p["url"].rsplit("/", 1)[-1] for p in data["pages"]]
    assert pages == ["loop.html", "away", "clean.html", "index.html"]  # each once, the loop and #top too
    away = data["pages"][1]
    assert "redirects to another origin" in away["error"] and "not followed" in away["error"]
    clean = data["pages"][2]
    assert clean["findings"] == [] and clean["score"] > 80
    (drift,) = data["findings"]
    assert drift["rule"] == "cross-page-drift" and drift["tool"] == "search_items"
    assert audit_web.writes == []  # no form submitted, no tool called
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text())).validate(json.loads(out["sarif"].read_text()))
    assert "cross-page-drift" in out["md"].read_text() and "search_items" in out["html"].read_text()
    categories = ", ".join(f"{k} {v}" for k, v in data["categories"].items())
    assert f"score {data['score']}/100 ({categories}) over 4 page(s)" in run.stdout


def test_smoke_judges_every_answer_and_the_proxy_catches_a_read_only_tool_that_writes(audit_web: AuditSite):
    config = parse_audit_config({"rules": {"smoke-slow": {"max_ms": 1000}}})
    before = len(audit_web.writes)
    report = run_audit(url=audit_web.url + "smoke.html", watch_ms=200, smoke=True, config=config)
    rules = by_rule(report)
    assert rules["smoke-error-on-valid"] == {"throws_on_valid"}
    assert "smoke-timeout" not in rules  # 10 MB in time: too large, not a time-out
    assert rules["smoke-null"] == {"returns_null"}
    assert rules["smoke-unserializable"] == {"returns_undefined", "returns_cyclic"}
    assert rules["smoke-too-large"] == {"returns_huge"}
    assert "slow_lookup" in rules["smoke-slow"] and "echo_strict" not in rules["smoke-slow"]  # 1.5 s against 1 s
    assert rules["smoke-json-string"] == {"returns_json_string"}
    assert rules["smoke-result-injection"] == {"returns_injection"}
    assert rules["readonly-writes"] == {"readonly_writes", "forgets_its_write"}  # the latter writes after answering
    assert "echo_strict" not in rules["smoke-accepts-invalid"] and "accepts_anything" in rules["smoke-accepts-invalid"]
    assert not any("echo_strict" in tools for tools in rules.values())
    assert not any(t in tools for tools in rules.values() for t in ("says_no_in_words", "flags_is_error"))
    calls = {k.rsplit(" ", 1)[-1]: [o.as_dict() for o in v] for k, v in report.pages[0].calls.items()}
    evidence = {t: {c["evidence"] for c in calls[t] if not c["valid"]} for t in calls}
    assert evidence["echo_strict"] == {"a thrown error"} and evidence["flags_is_error"] == {"isError or an error field"}
    assert evidence["says_no_in_words"] == {"the text heuristic (words that say no)"}
    assert all(c["evidence"] is None and c["answer"] for c in calls["says_no_in_words"] if c["valid"])
    writes = audit_web.writes[before:]
    assert writes and all('"lookup ' in w for w in writes)  # save_word (not read-only) was never called
    calls = report.pages[0].calls
    assert not any("save_word" in key for key in calls)


def test_the_network_settles_on_evidence_after_a_tool_s_last_call(audit_web: AuditSite):
    """After a tool's last call the audit counts its requests once the page is still (engine.SMOKE_QUIET_S with no
    request open and nothing new), not after a fixed wait: a write from a 50 ms timer after the answer is still
    the tool's; a quiet page needs no cap; a page whose document never stops changing is waited for until the cap
    (NETWORK_SETTLE_S), and its call is judged with the write it made by then."""
    before = len(audit_web.writes)
    report = run_audit(url=audit_web.url, routes=["settle.html", "busy.html"], watch_ms=100, smoke=True)
    settled = {key.rsplit(" ", 1)[-1]: calls[-1].settled for page in report.pages for key, calls in page.calls.items()}
    assert set(settled) == {"quiet_lookup", "writes_after_answering", "busy_writes"}
    assert by_rule(report)["readonly-writes"] == {"writes_after_answering", "busy_writes"}
    assert (settled["quiet_lookup"] or "").startswith("quiet")  # nothing under way for the quiet: no cap needed
    assert (settled["busy_writes"] or "").startswith("cap") and "dom" in (settled["busy_writes"] or "")
    writes = audit_web.writes[before:]
    assert any("late lookup" in w for w in writes) and any("busy lookup" in w for w in writes)


def test_timeline_late_and_flapping_tools(audit_web: AuditSite):
    report = run_audit(url=audit_web.url + "timeline.html", watch_ms=4500)  # late_tool: 2.5 s after load (late: 2 s)
    rules = by_rule(report)
    assert rules == {"late-tool": {"late_tool"}, "tool-churn": {"flappy_tool"}}
    timeline = report.pages[0].timeline
    assert timeline is not None and timeline.first_tool_ms is not None and timeline.churn["flappy_tool"] >= 3
    assert "prompt_tool" not in timeline.late and "steady_tool" not in timeline.churn


def test_pages_that_register_nothing_throw_or_cannot_open_are_findings_not_crashes(audit_web: AuditSite):
    empty = cli(
        "audit",
        audit_web.url,
        "--route",
        "empty.html",
        "--route",
        "throws.html",
        "--route",
        "http://127.0.0.1:9/",
        "--watch-ms",
        "200",
        "--html",
        "/dev/null",
    )
    assert empty.returncode == 1 and "Traceback" not in empty.stderr
    lines = empty.stdout.splitlines()
    assert any("no-tools" in line for line in lines)
    assert any("page-script-error" in line and "boom before registering" in line for line in lines)
    assert any("page-unreachable" in line for line in lines)


def test_a_tool_that_hangs_times_out_once_as_suite_yaml_configures(audit_web: AuditSite, tmp_path: Path):
    (tmp_path / "suite.yaml").write_text("audit:\n  rules:\n    smoke-timeout: {timeout_ms: 1000}\n")
    out = tmp_path / "a.json"
    run = cli(
        "audit",
        audit_web.url + "hang.html",
        "--smoke",
        "--suite",
        str(tmp_path),
        "--watch-ms",
        "200",
        "--json",
        str(out),
        "--html",
        "/dev/null",
    )
    # the first input is the page's own (realistic), its label saying where its value came from
    assert run.returncode == 1 and re.search(r"hangs \(realistic: q .*?\) did not answer within 1000 ms", run.stdout)
    calls = json.loads(out.read_text())["pages"][0]["calls"]
    hung = next(v for k, v in calls.items() if k.endswith(" hangs"))
    assert len(hung) == 1 and hung[0]["timed_out"]  # one time-out is enough: the other inputs are not waited out
    assert not any(f["tool"] == "answers" for f in json.loads(out.read_text())["pages"][0]["findings"])
    (tmp_path / "suite.yaml").write_text("audit:\n  rules:\n    smoke-timeout: {timeout: 2000}\n")
    bad = cli("audit", audit_web.url + "hang.html", "--suite", str(tmp_path))
    assert bad.returncode == 2 and "suite.yaml:3: audit.rules.smoke-timeout.timeout: unknown option" in bad.stderr


def test_contract_written_then_a_change_is_an_error_with_a_readable_diff(audit_web: AuditSite, tmp_path: Path):
    contract = tmp_path / "tools.contract.json"
    url = audit_web.url + "clean.html"
    wrote = cli(
        "audit", url, "--contract", str(contract), "--update-contract", "--watch-ms", "200", "--html", "/dev/null"
    )
    assert wrote.returncode == 0, wrote.stdout + wrote.stderr
    # --all-tools with the site's reset hook (the suite's site): a writing tool is called in a fresh world per call
    (tmp_path / "suite.yaml").write_text(
        f"site:\n  base_url: {audit_web.url}\n  world_cookie: world\n  hooks: {{reset: /__test__/reset}}\n"
    )
    resets, writes = len(audit_web.resets), len(audit_web.writes)
    out = tmp_path / "all.json"
    same = cli(
        "audit", url, "--contract", str(contract), "--watch-ms", "200", "--html", "/dev/null", "--smoke", "--all-tools",
        "--suite", str(tmp_path), "--json", str(out),
    )  # fmt: skip
    # every tool called, none changes the surface
    assert same.returncode == 0 and "contract changes" not in same.stdout, same.stdout
    assert "note: no reset hook" not in same.stdout  # the suite's site has one
    data = json.loads(out.read_text())
    calls = next(v for k, v in data["pages"][0]["calls"].items() if k.endswith(" add_to_cart"))
    assert len(audit_web.resets) - resets == len(calls) >= 4  # each call its own world: required, enums, invalid
    assert all("world" in r for r in audit_web.resets[resets:])
    assert any("add_to_cart tea-1" in w for w in audit_web.writes[writes:])
    findings = data["findings"] + [f for p in data["pages"] for f in p["findings"]]
    assert findings == [] and data["exit_code"] == 0  # the clean page is clean, its calls too
    data = json.loads(contract.read_text())
    tools = data["pages"]["/clean.html"]["tools"]
    tools["search_items"]["description"] = "An older description."
    del tools["get_item_price"]
    contract.write_text(json.dumps(data))
    changed = cli("audit", url, "--contract", str(contract), "--watch-ms", "200", "--html", "/dev/null")
    assert changed.returncode == 1
    assert "search_items: description changed: 'An older description.' ->" in changed.stdout
    assert "tool get_item_price added" in changed.stdout


def test_the_score_ranks_sites_by_their_findings(audit_web: AuditSite, site, static_shop):
    """A set of sites whose order is known: the store built to be bad ranks below the static shop and the demo
    site; a page with no finding scores 100 (score.py)."""
    bad = run_audit(url=audit_web.url + "bad_store.html", watch_ms=300)
    shop = run_audit(url=static_shop.url, max_pages=3, watch_ms=300)  # share_cart, registered later, is not needed
    demo = run_audit(url=site.url + "/", routes=["/events"], watch_ms=300)
    clean = run_audit(url=audit_web.url + "clean.html", watch_ms=300)
    assert bad.counts()["error"] >= 8 and shop.counts()["error"] == 1 and demo.counts()["error"] == 0
    assert bad.score < shop.score and bad.score < demo.score, (bad.categories, shop.categories, demo.categories)
    assert clean.all_findings() == [] and clean.score == 100 and clean.pages[0].score == 100
    assert set(bad.categories) == {"declarations", "runtime", "safety"} and bad.categories["safety"] < 100


def test_a_page_behind_a_login_with_header_and_storage_state_and_no_secret_in_any_output(
    audit_web: AuditSite, tmp_path: Path
):
    from audit_server import TOKEN

    origin = audit_web.url.rstrip("/")
    state = {
        "cookies": [
            {
                "name": "session",
                "value": "sess-4d2e8b1c9a",
                "domain": "127.0.0.1",
                "path": "/",
                "expires": -1,
                "httpOnly": False,
                "secure": False,
                "sameSite": "Lax",
            }
        ],
        "origins": [{"origin": origin, "localStorage": [{"name": "profile", "value": "profile-88c1e0f2"}]}],
    }
    (tmp_path / "state.json").write_text(json.dumps(state))
    out = {k: tmp_path / f"audit.{k}" for k in ("json", "sarif", "md", "html", "xml")}
    url = audit_web.url + "private.html"
    denied = cli("audit", url, "--watch-ms", "200", "--html", str(out["html"]))
    assert denied.returncode == 1 and "HTTP 401" in denied.stdout
    views = [f"--{k if k != 'md' else 'markdown'}" if k != "xml" else "--junit" for k in out]
    paths = [a for k, flag in zip(out, views, strict=True) for a in (flag, str(out[k]))]
    run = cli(
        "audit",
        url,
        "--watch-ms",
        "200",
        "--smoke",
        "--all-tools",
        "--header",
        f"Authorization: {TOKEN}",
        "--storage-state",
        str(tmp_path / "state.json"),
        "--fail-on",
        "note",
        *paths,
    )
    assert "Traceback" not in run.stderr
    assert "note: no reset hook" in run.stdout and "server's state was not reset" in run.stdout  # no --suite
    data = json.loads(out["json"].read_text())
    calls = {k.rsplit(" ", 1)[-1]: v for k, v in data["pages"][0]["calls"].items()}
    assert set(calls) == {"whoami", "save_note"}  # the page opened with the header: its tools were read
    # every call saw the session, also after --all-tools cleared the origin's data before each of save_note's calls
    answers = [c["answer"] for c in calls["save_note"]]
    assert len(answers) >= 2 and all(a.count("<redacted>") == 3 for a in answers), answers
    for text in [run.stdout, *(p.read_text() for p in out.values())]:
        for secret in ("audit-secret-7f3a9c", "sess-4d2e8b1c9a", "profile-88c1e0f2"):
            assert secret not in text
    assert audit_web.other_auths == []  # the header went to the audited origin only, never to the other host
    assert any(a.startswith("/private.html ") for a in audit_web.auths)
    junit = out["xml"].read_text()
    assert junit.count("<testcase ") == len(RULES) and 'name="smoke-other-hosts"' in junit
    # --fail-on note: the calls reached another host (a note), so the exit is 1; at error level it would be 0
    assert 'type="note"' in junit and run.returncode == 1 and data["exit_code"] == 0


def test_trust_boundaries_on_a_page_built_for_them(audit_web: AuditSite):
    report = run_audit(url=audit_web.url + "trust.html", watch_ms=200, smoke=True)
    rules = by_rule(report)
    assert rules["smoke-result-injection"] == {"get_reviews"}  # the review orders a call of pay_now
    (injection,) = [f for f in report.all_findings() if f.rule == "smoke-result-injection"]
    assert "an order to call pay_now" in injection.message and "a role marker" in injection.message
    assert rules["untrusted-content-unmarked"] == {"get_reviews"}
    assert rules["untrusted-hint-unneeded"] == {"get_price"}
    assert rules["capability-trifecta"] == {None}
    (trifecta,) = [f for f in report.all_findings() if f.rule == "capability-trifecta"]
    assert "get_account" in trifecta.message and "get_reviews" in trifecta.message and "share_page" in trifecta.message
    assert "description-injection" not in rules and "shop_help" not in {t for ts in rules.values() for t in ts}


def test_forms_as_lighthouse_checks_them(audit_web: AuditSite):
    report = run_audit(url=audit_web.url + "forms.html", watch_ms=300)
    found = {(f.rule, f.tool) for f in report.all_findings()}
    assert ("form-required-unnamed", "order_gift") in found
    assert ("form-param-undescribed", "order_gift") in found
    (undescribed,) = [f for f in report.all_findings() if f.rule == "form-param-undescribed"]
    assert "'message'" in undescribed.message  # not the required field without a name: that one is no parameter
    assert ("form-toolname-missing", None) in found and ("form-not-tool", None) in found
    assert ("form-tooldescription-missing", "contact_us") in found
    assert "registration-refused" not in {r for r, _ in found}  # one cause: the form's finding says it
    assert not [f for f in report.all_findings() if f.tool == "book_tasting"]  # the good form is quiet
    (note,) = [f for f in report.all_findings() if f.rule == "form-not-tool"]
    assert "#search" in note.message and note.severity == "note"
