"""Record/replay fixtures: one file per case, readable and diffable.

Bodies are stored as a parsed object when JSON, as text when text and as
base64 only when binary, so a reviewer can read a fixture and a re-recording
shows up as a plain diff. Secrets never reach the file: secret headers and
cookie values are redacted, JSON/form/query fields named like tokens or
passwords hold ``<redacted>``, and volatile headers (Date, Server, ETag...) are
dropped so two recordings of the same site compare equal.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .canonical import TRIAL_HEADER, parse_json
from .files import write_atomic
from .redaction import REDACTED, is_secret_header, redact_cookie, redact_json, redact_query

FORMAT_VERSION = 1

Encoding = Literal["json", "text", "base64"]
Headers = dict[str, str | list[str]]

# Transport framing: recomputed when a response is served again.
TRANSPORT_HEADERS = {
    "content-length",
    "content-encoding",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-connection",
    "host",
    "te",
    "trailer",
    "upgrade",
}
# Different on every recording; keeping them would make every re-record a diff.
VOLATILE_HEADERS = {
    "date",
    "server",
    "server-timing",
    "age",
    "expires",
    "last-modified",
    "etag",
    "x-request-id",
    "x-runtime",
    "x-response-time",
    "cf-ray",
    "via",
    "x-served-by",
    "x-cache",
    "x-cache-hits",
    "x-timer",
    "report-to",
    "nel",
    "alt-svc",
    "accept-encoding",
    "user-agent",
    "if-none-match",
    "if-modified-since",
    "priority",
    TRIAL_HEADER.lower(),
}
TEXT_TYPES = ("text/", "javascript", "ecmascript", "xml", "html", "css", "svg", "x-www-form-urlencoded")


class FixtureError(ValueError):
    """A fixture file that cannot be used; the message names the file and what is wrong."""


# ---- bodies and headers -------------------------------------------------------


def encode_body(content: bytes, content_type: str = "") -> tuple[Encoding | None, Any]:
    """(encoding, body) for storage, with secret fields redacted."""
    if not content:
        return None, None
    ctype = content_type.lower()
    # fetch() sends a string body as text/plain: parse it too, or its secrets would stay.
    if "json" in ctype or not ctype or ctype.startswith("text/plain"):
        is_json, value = parse_json(content)
        if is_json:
            return "json", redact_json(value)
    if not ctype or any(t in ctype for t in TEXT_TYPES):
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            return "text", redact_query(text) if "x-www-form-urlencoded" in ctype else text
    return "base64", base64.b64encode(content).decode()


def decode_body(encoding: Encoding | None, body: Any) -> bytes:
    if encoding is None:
        return b""
    if encoding == "json":
        # The compact form Starlette and most servers send; a replay need not be byte-identical.
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    if encoding == "text":
        return str(body).encode()
    return base64.b64decode(body)


def sanitize_headers(pairs: list[tuple[str, str]]) -> Headers:
    """Stored headers: lower-case names, no transport/volatile ones, secrets redacted."""
    out: Headers = {}
    for raw_name, value in pairs:
        name = raw_name.lower()
        if name in TRANSPORT_HEADERS or name in VOLATILE_HEADERS or name.startswith("sec-ch-"):
            continue
        if name in ("cookie", "set-cookie"):
            value = redact_cookie(value, set_cookie=name == "set-cookie")
        elif is_secret_header(name):
            value = REDACTED
        previous = out.get(name)
        if previous is None:
            out[name] = value
        else:
            out[name] = [*([previous] if isinstance(previous, str) else previous), value]
    return out


def header_pairs(headers: Headers) -> list[tuple[str, str]]:
    return [(k, v) for k, vs in headers.items() for v in ([vs] if isinstance(vs, str) else vs)]


def _content_type(headers: Headers) -> str:
    value = headers.get("content-type", "")
    return value if isinstance(value, str) else value[0]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _check_body(encoding: Encoding | None, body: Any) -> None:
    if encoding is None and body is not None:
        raise ValueError("a body needs an encoding (json, text or base64)")
    if encoding in ("text", "base64") and not isinstance(body, str):
        raise ValueError(f"a {encoding} body must be a string")
    if encoding == "base64":
        try:
            base64.b64decode(body, validate=True)
        except binascii.Error as err:
            raise ValueError(f"the base64 body does not decode: {err}") from None


class StoredRequest(_Strict):
    method: str
    url: str
    headers: Headers = Field(default_factory=dict)
    encoding: Encoding | None = None
    body: Any = None

    @model_validator(mode="after")
    def _valid_body(self) -> StoredRequest:
        _check_body(self.encoding, self.body)
        return self

    def content(self) -> bytes:
        return decode_body(self.encoding, self.body)

    @property
    def content_type(self) -> str:
        return _content_type(self.headers)


class StoredResponse(_Strict):
    status: int = Field(ge=100, le=999)
    headers: Headers = Field(default_factory=dict)
    encoding: Encoding | None = None
    body: Any = None

    @model_validator(mode="after")
    def _valid_body(self) -> StoredResponse:
        _check_body(self.encoding, self.body)
        return self

    def content(self) -> bytes:
        return decode_body(self.encoding, self.body)


class FixtureEntry(_Strict):
    key: str
    request: StoredRequest
    response: StoredResponse


def utc_now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class HookRecord(_Strict):
    """One call the runner made to the site's own hooks (reset, state, ...), so replay needs no site."""

    hook: str
    args: dict[str, Any] = Field(default_factory=dict)
    response: Any = None


class Fixture(_Strict):
    format_version: int = FORMAT_VERSION
    case_id: str = ""
    recorded_at: str = Field(default_factory=utc_now)  # ISO 8601, UTC
    site_revision: str = ""
    base_url: str = ""  # the site origin that keys without a host refer to
    entries: list[FixtureEntry] = Field(default_factory=list)
    hooks: list[HookRecord] = Field(default_factory=list)

    def save(self, path: str | Path) -> Path:
        return save_fixture(self, path)

    @classmethod
    def load(cls, path: str | Path) -> Fixture:
        return load_fixture(path)


# ---- files --------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (HTML, scripts) as literal blocks, so diffs are per line."""


def _str_presenter(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_presenter)


def _plain(fixture: Fixture) -> dict[str, Any]:
    data = fixture.model_dump(mode="json")
    for entry in data["entries"]:
        for part in (entry["request"], entry["response"]):
            if part["encoding"] is None:  # no body: leave both keys out
                del part["encoding"], part["body"]
            if not part["headers"]:
                del part["headers"]
    return data


def dumps_fixture(fixture: Fixture, fmt: Literal["yaml", "json"] = "yaml") -> str:
    data = _plain(fixture)
    if fmt == "json":
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


def _format_of(path: Path) -> Literal["yaml", "json"]:
    return "json" if path.suffix.lower() == ".json" else "yaml"


def save_fixture(fixture: Fixture, path: str | Path) -> Path:
    """Write atomically (temp file in the same directory, fsync, then os.replace)."""
    target = Path(path)
    write_atomic(target, dumps_fixture(fixture, _format_of(target)))
    return target


def _describe(err: ValidationError) -> str:
    lines = []
    for problem in err.errors():
        where = ".".join(str(p) for p in problem["loc"]) or "(top level)"
        lines.append(f"  {where}: {problem['msg']}")
    return "\n".join(lines)


def load_fixture(path: str | Path) -> Fixture:
    """Read a fixture; any problem raises FixtureError naming the file and the field."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as err:
        raise FixtureError(f"{source}: cannot read the fixture: {err.strerror or err}") from None
    try:
        data = json.loads(text) if _format_of(source) == "json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as err:
        raise FixtureError(f"{source}: not valid {_format_of(source).upper()}: {err}") from None
    if not isinstance(data, dict):
        raise FixtureError(f"{source}: a fixture is a mapping with format_version, recorded_at and entries")
    version = data.get("format_version")
    if isinstance(version, int) and version > FORMAT_VERSION:
        raise FixtureError(
            f"{source}: format_version {version} is newer than this webmcp-eval reads "
            f"({FORMAT_VERSION}); upgrade webmcp-eval"
        )
    try:
        return Fixture.model_validate(data)
    except ValidationError as err:
        raise FixtureError(f"{source}: not a valid fixture:\n{_describe(err)}") from None


# ---- review -------------------------------------------------------------------


def age_days(fixture: Fixture, now: datetime | None = None) -> float:
    """Days since the fixture was recorded (docs/design.md, "Record and replay": re-record on a schedule)."""
    recorded = datetime.fromisoformat(fixture.recorded_at.replace("Z", "+00:00"))
    if recorded.tzinfo is None:
        recorded = recorded.replace(tzinfo=UTC)
    return ((now or datetime.now(UTC)) - recorded).total_seconds() / 86400


def _body_lines(response: StoredResponse) -> list[str]:
    if response.encoding == "json":
        return json.dumps(response.body, ensure_ascii=False, indent=2, sort_keys=True).splitlines()
    if response.encoding == "text":
        return str(response.body).splitlines()
    if response.encoding == "base64":
        raw = response.content()
        return [f"<binary, {len(raw)} bytes, sha256 {hashlib.sha256(raw).hexdigest()[:16]}>"]
    return []


def _numbered(entries: list[FixtureEntry]) -> dict[tuple[str, int], FixtureEntry]:
    """Entries by (key, occurrence): the n-th answer to a key is compared with the n-th."""
    seen: dict[str, int] = {}
    out = {}
    for entry in entries:
        n = seen.get(entry.key, 0)
        seen[entry.key] = n + 1
        out[(entry.key, n)] = entry
    return out


def _label(key: str, n: int) -> str:
    return key if n == 0 else f"{key} (answer #{n + 1})"


def diff_fixtures(old: Fixture, new: Fixture, max_lines: int = 20) -> list[str]:
    """What changed between two recordings, request by request; [] when nothing did."""
    before, after = _numbered(old.entries), _numbered(new.entries)
    out: list[str] = []
    for (key, n), entry in before.items():
        if (key, n) not in after:
            out.append(f"- removed: {_label(key, n)} (was {entry.response.status})")
    for (key, n), entry in after.items():
        label = _label(key, n)
        was = before.get((key, n))
        if was is None:
            out.append(f"+ added: {label} ({entry.response.status})")
            continue
        if was.response.status != entry.response.status:
            out.append(f"~ changed: {label}: status {was.response.status} -> {entry.response.status}")
        old_lines, new_lines = _body_lines(was.response), _body_lines(entry.response)
        if old_lines != new_lines:
            out.append(f"~ changed: {label}: response body")
            diff = list(difflib.unified_diff(old_lines, new_lines, "recorded", "re-recorded", n=1, lineterm=""))
            out += [f"    {line}" for line in diff[:max_lines]]
            if len(diff) > max_lines:
                out.append(f"    ... {len(diff) - max_lines} more diff lines")
    return out
