"""Kept Playwright trace.zip files hold no cookie, session or CSRF value (the fixtures' rules)."""

from __future__ import annotations

import json
import re
import zipfile

import pytest
from eval_support import play

from webmcp_eval.play.browser.playwright_trace import redact_trace_zip

SESSION = "LDP4zWMIzUDZlva0GFAALLOvwOF_2T1AZsR8sI6yALU"
CSRF = "cA7p4pyKRKpIvU0lEsFaxHxFGlMu7nn_"


def _members(path) -> dict[str, str]:
    with zipfile.ZipFile(path) as z:
        return {name: z.read(name).decode("utf-8", "replace") for name in z.namelist()}


def test_the_rules_reach_every_file_of_the_zip(tmp_path):
    """Headers, cookie lists, bodies, snapshots and resources: a secret seen anywhere is gone everywhere."""
    network = {
        "type": "resource-snapshot",
        "snapshot": {
            "request": {
                "url": "http://site/api/x?token=abcdefgh12345678&q=1",
                "cookies": [{"name": "wmcp_session", "value": SESSION}],
                "headers": [
                    {"name": "Cookie", "value": f"wmcp_session={SESSION}"},
                    {"name": "X-CSRF-Token", "value": CSRF},
                ],
                "postData": {"text": json.dumps({"csrfToken": CSRF, "eventId": "evt-1"})},
            },
            "response": {"headers": [{"name": "set-cookie", "value": f"wmcp_session={SESSION}; HttpOnly; Path=/"}]},
        },
    }
    snapshot = {"type": "frame-snapshot", "html": f'<meta name="csrf" content="{CSRF}"><p>{SESSION}</p>'}
    path = tmp_path / "t.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("trace.network", json.dumps(network) + "\n")
        z.writestr("trace.trace", json.dumps(snapshot) + "\n")
        z.writestr("resources/a.json", json.dumps({"user": {"name": "r"}, "csrfToken": CSRF}))
        z.writestr("resources/b.html", f"<input type=hidden value={CSRF}>")
    assert redact_trace_zip(path) >= 2
    files = _members(path)
    for name, text in files.items():
        assert SESSION not in text and CSRF not in text and "abcdefgh12345678" not in text, name
    request = json.loads(files["trace.network"])["snapshot"]["request"]
    assert request["headers"][0]["value"] == "wmcp_session=REDACTED"
    assert json.loads(request["postData"]["text"])["eventId"] == "evt-1"  # what is not secret stays
    assert json.loads(files["resources/a.json"])["user"] == {"name": "r"}


@pytest.mark.browser
def test_a_kept_trace_zip_of_a_real_run_holds_no_cookie_or_csrf_value(tmp_path):
    (trace,) = play(tmp_path, ("CONF-01",), playwright_trace="on")
    assert trace.playwright_trace == "../playwright/CONF-01.t1.zip"
    files = _members(tmp_path / "run" / "playwright" / "CONF-01.t1.zip")
    network = files["trace.network"]
    assert "wmcp_session" in network and "csrfToken" in "".join(files.values())  # they were there to redact
    for name, text in files.items():
        assert not re.search(r"wmcp_(session|world)=(?!REDACTED)", text), name
        assert not re.search(r'"csrfToken": ?"(?!<redacted>)', text), name
    for line in filter(None, network.splitlines()):
        record = json.loads(line)["snapshot"]
        for part in (record["request"], record["response"]):
            assert all(c["value"] == "REDACTED" for c in part["cookies"])
