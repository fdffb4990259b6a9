"""Fixture files, keys, redaction and diffs, without a proxy."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from pathlib import Path

import pytest

from webmcp_eval.proxies import Fixture, FixtureEntry, FixtureError, age_days, diff_fixtures, fixture_key, load_fixture
from webmcp_eval.proxies.canonical import canonical_body, redact_json
from webmcp_eval.proxies.fixture import StoredRequest, StoredResponse, encode_body, sanitize_headers

PRIMARY = "http://127.0.0.1:8000"


def entry(key: str, status: int = 200, body: object = None, encoding: str | None = "json") -> FixtureEntry:
    method, _, rest = key.partition(" ")
    return FixtureEntry(
        key=key,
        request=StoredRequest(method=method, url=f"{PRIMARY}{rest.split(' ')[0]}"),
        response=StoredResponse(
            status=status,
            headers={"content-type": "application/json"},
            encoding=encoding if body is not None else None,
            body=body,
        ),
    )


def sample() -> Fixture:
    return Fixture(
        case_id="SEL-01",
        recorded_at="2026-11-30T08:00:00Z",
        site_revision="abc123",
        base_url=PRIMARY,
        entries=[
            entry("GET /api/events?city=taipei", body={"events": [{"id": "e1", "title": "台北 WebMCP"}]}),
            entry('POST /api/saved {"eventId":"e1"}', body={"alreadySaved": False}),
            FixtureEntry(
                key="GET /index.html",
                request=StoredRequest(method="GET", url=f"{PRIMARY}/index.html", headers={"accept": "text/html"}),
                response=StoredResponse(
                    status=200,
                    headers={"content-type": "text/html", "set-cookie": ["a=REDACTED", "b=REDACTED"]},
                    encoding="text",
                    body="<p>\n  你好\n</p>\n",
                ),
            ),
            FixtureEntry(
                key="GET /logo.png",
                request=StoredRequest(method="GET", url=f"{PRIMARY}/logo.png"),
                response=StoredResponse(
                    status=200,
                    headers={"content-type": "image/png"},
                    encoding="base64",
                    body=base64.b64encode(b"\x89PNG\x00\xff").decode(),
                ),
            ),
        ],
    )


@pytest.mark.parametrize("name", ["case.yaml", "case.json"])
def test_save_and_load_round_trip(tmp_path: Path, name: str):
    original = sample()
    path = original.save(tmp_path / "sub" / name)
    assert load_fixture(path) == original
    assert [p.name for p in path.parent.iterdir()] == [name]  # the temp file was renamed, not left behind
    assert original.entries[3].response.content() == b"\x89PNG\x00\xff"


def test_yaml_is_readable(tmp_path: Path):
    text = sample().save(tmp_path / "case.yaml").read_text(encoding="utf-8")
    assert "title: 台北 WebMCP" in text  # JSON bodies stored as objects, unicode as is
    assert "body: |\n      <p>\n        你好\n" in text  # text bodies as literal blocks: line diffs
    assert text.index("format_version") < text.index("entries")


def test_save_replaces_atomically(tmp_path: Path):
    path = tmp_path / "case.yaml"
    sample().save(path)
    changed = sample()
    changed.site_revision = "def456"
    changed.save(path)
    assert load_fixture(path).site_revision == "def456"


def test_load_errors_name_the_file_and_the_problem(tmp_path: Path):
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("entries: [\n  - key: x\n", encoding="utf-8")
    with pytest.raises(FixtureError, match=r"bad\.yaml: not valid YAML"):
        load_fixture(bad_yaml)

    missing = tmp_path / "missing-status.yaml"
    missing.write_text("entries:\n- key: GET /x\n  request: {method: GET, url: 'http://h/x'}\n  response: {}\n")
    where = r"missing-status\.yaml: not a valid fixture:\n  entries\.0\.response\.status"
    with pytest.raises(FixtureError, match=where):
        load_fixture(missing)

    bad_body = tmp_path / "bad-body.json"
    bad_body.write_text(
        '{"entries": [{"key": "GET /x", "request": {"method": "GET", "url": "http://h/x"},'
        ' "response": {"status": 200, "encoding": "base64", "body": "%%%"}}]}'
    )
    with pytest.raises(FixtureError, match="base64 body does not decode"):
        load_fixture(bad_body)

    newer = tmp_path / "newer.yaml"
    newer.write_text("format_version: 99\nentries: []\n")
    with pytest.raises(FixtureError, match="newer than this webmcp-eval reads"):
        load_fixture(newer)

    with pytest.raises(FixtureError, match=r"absent\.yaml: cannot read"):
        load_fixture(tmp_path / "absent.yaml")
    typo = tmp_path / "typo.yaml"
    typo.write_text("entrys: []\n")
    with pytest.raises(FixtureError, match="entrys: Extra inputs are not permitted"):
        load_fixture(typo)


def test_diff_fixtures_request_by_request():
    old, new = sample(), sample()
    assert diff_fixtures(old, new) == []
    new.entries[0].response.body["events"][0]["title"] = "高雄 WebMCP"
    new.entries[1].response.status = 409
    del new.entries[3]
    new.entries.append(entry("GET /api/events?city=kaohsiung", body={"events": []}))
    new.entries.append(entry("GET /api/events?city=kaohsiung", body={"events": []}))
    lines = diff_fixtures(old, new)

    assert "- removed: GET /logo.png (was 200)" in lines
    assert "+ added: GET /api/events?city=kaohsiung (200)" in lines
    assert "+ added: GET /api/events?city=kaohsiung (answer #2) (200)" in lines
    assert '~ changed: POST /api/saved {"eventId":"e1"}: status 200 -> 409' in lines
    assert "~ changed: GET /api/events?city=taipei: response body" in lines
    assert any(line.strip() == '-      "title": "台北 WebMCP"' for line in lines)
    assert any(line.strip() == '+      "title": "高雄 WebMCP"' for line in lines)


def test_diff_is_short_for_long_bodies():
    old, new = sample(), sample()
    old.entries[2].response.body = "".join(f"line {i}\n" for i in range(200))
    new.entries[2].response.body = "".join(f"LINE {i}\n" for i in range(200))
    lines = diff_fixtures(old, new, max_lines=10)
    assert len(lines) == 12 and lines[-1].strip().endswith("more diff lines")


def test_age_days():
    fixture = Fixture(recorded_at="2026-11-30T00:00:00Z")
    assert age_days(fixture, now=datetime(2026, 12, 2, 12, tzinfo=UTC)) == pytest.approx(2.5)
    assert age_days(Fixture()) < 0.01  # recorded_at defaults to now


def test_fixture_key_is_canonical_and_portable():
    body = b'{"b": 1, "a": {"d": [2, 1], "c": null}}'
    key = fixture_key("post", f"{PRIMARY}/api/x?z=1&a=2&a=1", body, "application/json", PRIMARY)
    assert key == 'POST /api/x?a=1&a=2&z=1 {"a":{"c":null,"d":[2,1]},"b":1}'
    # Another host keeps its origin in the key; the primary site's origin is implied.
    assert (
        fixture_key("GET", "https://cdn.example.com/lib.js", b"", "", PRIMARY) == "GET https://cdn.example.com/lib.js"
    )
    assert fixture_key("GET", "http://localhost:9/x", b"", "", PRIMARY) == "GET http://localhost:9/x"
    # Secrets are redacted before keying: any token value gives the same key.
    assert fixture_key("GET", f"{PRIMARY}/x?token=abc", b"", "", PRIMARY) == fixture_key(
        "GET", f"{PRIMARY}/x?token=xyz", b"", "", PRIMARY
    )
    assert canonical_body(b"x" * 2000).startswith("sha256:")
    assert canonical_body(b"\xff\xfe") == "base64://4="
    assert canonical_body(b"password=pw&user=a", "application/x-www-form-urlencoded") == (
        "password=%3Credacted%3E&user=a"
    )


def test_redaction_of_json_fields_and_headers():
    assert redact_json(
        {"csrfToken": "abc", "user": {"apiKey": "k", "name": "n"}, "items": [{"password": "p"}], "token": ""}
    ) == {
        "csrfToken": "<redacted>",
        "user": {"apiKey": "<redacted>", "name": "n"},
        "items": [{"password": "<redacted>"}],
        "token": "",
    }
    headers = sanitize_headers(
        [
            ("Cookie", "a=1; b=2"),
            ("Set-Cookie", "s=v; Path=/; Expires=Wed, 01 Jan 2031"),
            ("Authorization", "Bearer x"),
            ("X-CSRF-Token", "t"),
            ("X-Api-Key", "k"),
            ("X-Auth-Token", "t2"),
            ("Date", "now"),
            ("Server", "s"),
            ("Content-Length", "3"),
            ("X-WebMCP-Eval-Trial", "t1"),
            ("Content-Type", "text/plain"),
        ]
    )
    assert headers == {
        "cookie": "a=REDACTED; b=REDACTED",
        "set-cookie": "s=REDACTED; Path=/",
        "authorization": "<redacted>",
        "x-csrf-token": "<redacted>",
        "x-api-key": "<redacted>",
        "x-auth-token": "<redacted>",
        "content-type": "text/plain",
    }


def test_body_encodings():
    assert encode_body(b'{"a": 1, "token": "t"}', "application/json") == ("json", {"a": 1, "token": "<redacted>"})
    assert encode_body(b'{"a": 1}', "text/plain;charset=UTF-8") == ("json", {"a": 1})  # fetch() with a string body
    assert encode_body("你好".encode(), "text/html; charset=utf-8") == ("text", "你好")
    assert encode_body(b"\x89PNG", "image/png") == ("base64", "iVBORw==")
    assert encode_body(b"", "application/json") == (None, None)
