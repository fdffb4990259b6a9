"""The proxy's account of one trial's traffic as the trace keeps it, and whether the site stopped answering.

The proxy (webmcp_eval/proxies/) counts every request of the trial; here its records become
the trace's network record. Requests to the site itself that got no answer at
all (not a fault the case armed, not a blocked host) mean the site went away:
the trial is then not_run for the site's failure, never the agent's.
"""

from __future__ import annotations

import json
from fnmatch import fnmatchcase
from typing import Any
from urllib.parse import urlsplit

from webmcp_eval.proxies.canonical import DEFAULT_PORTS
from webmcp_eval.proxies.models import RequestRecord, TrialNetwork
from webmcp_eval.trace import NetworkRecord, OutboundRecord

OUTBOUND_FIELDS = tuple(OutboundRecord.model_fields)  # what the trace keeps of a request to another host


def network_record(net: TrialNetwork, outbound_expected: int | None) -> NetworkRecord:
    return NetworkRecord.model_validate(
        {
            "requests": len(net.requests),
            "writes": [_slim(m) for m in net.writes],
            "write_counts": dict(net.write_counts),
            "blocked": [_slim(b) for b in net.blocked],
            "outbound": [{k: getattr(r, k) for k in OUTBOUND_FIELDS} for r in net.requests if r.outbound],
            "outbound_expected": outbound_expected,
            "faults_fired": [_slim(f) for f in net.faults_fired],
            "replay_misses": [_slim(m) for m in net.replay_misses],
        }
    )


def _site_address(base_url: str) -> tuple[str | None, int | None]:
    """(host, port) of the site, as the proxy's records name where a request went."""
    site = urlsplit(base_url)
    return site.hostname, site.port or DEFAULT_PORTS.get(site.scheme)


# mitmproxy's error when the browser itself gave up a request (its page navigated away or was closed
# at the trial's end, under load while the site was still answering): nothing about the site.
CLIENT_GAVE_UP = "Client disconnected"


def unanswered_site_requests(net: TrialNetwork, base_url: str) -> list[RequestRecord]:
    """Requests to the site that got no answer, other than those a fault or the block list stopped
    or the browser itself gave up."""
    address = _site_address(base_url)
    return [
        r
        for r in net.requests
        if r.error
        and not r.error.startswith(CLIENT_GAVE_UP)
        and not r.fault
        and not r.blocked
        and (r.host, r.port) == address
    ]


def site_server_errors(net: TrialNetwork, base_url: str) -> list[RequestRecord]:
    """The live site's own 5xx answers (to the page or to a tool's request), other than those a proxy fault
    made (the case's own doing: its checks judge them) or a replay gave (a fixture's answer, or the proxy's
    for a request the fixture lacks)."""
    address = _site_address(base_url)
    return [
        r
        for r in net.requests
        if (r.status or 0) >= 500 and not r.fault and r.replay is None and (r.host, r.port) == address
    ]


def on_the_trials_path(
    errors: list[RequestRecord], net: TrialNetwork, call_windows: list[tuple[int, int]], expected_writes: list[str]
) -> list[RequestRecord]:
    """The 5xx answers the trial depends on: a request made while a tool call ran (``call_windows``: the
    proxy's request count before and after each call) or a write the case expects ("POST /api/saved",
    globs). Any other (an analytics beacon, a font) says nothing of what the agent did."""
    during_calls = {r.seq for start, end in call_windows for r in net.requests[start:end]}
    return [r for r in errors if r.seq in during_calls or _expected_write(r, expected_writes)]


def _expected_write(record: RequestRecord, keys: list[str]) -> bool:
    for key in keys:
        method, _, path = key.partition(" ")
        if path.startswith("//"):  # another host's write: never the site's own answer
            continue
        if (method == "*" or method.upper() == record.method.upper()) and fnmatchcase(record.path, path):
            return True
    return False


def site_failed(errors: list[RequestRecord], base_url: str) -> str | None:
    """The reason a trial is not_run when the site answered 5xx on its path; None when it never did."""
    if not errors:
        return None
    first = errors[0]
    return (
        f"the site answered {first.status} during the trial: {len(errors)} request(s) the trial depends on "
        f"failed on the server (first: {first.method} {first.path}); the site's fault, not the agent's: "
        f"check the site at {base_url}"
    )


def server_error_warnings(errors: list[RequestRecord], on_path: list[RequestRecord]) -> list[str]:
    """One warning per 5xx that did not decide the verdict: the trace and the report show it."""
    lines = []
    for r in errors:
        if r in on_path:
            why = "a request the trial depends on; its checks passed on their evidence"
        else:
            why = "not a request the trial depends on (no tool call made it, the case expects no such write)"
        lines.append(f"the site answered {r.status} to {r.method} {r.path}: {why}; the verdict stands on the evidence")
    return lines


HUNG_MS = 1000  # a site request open this long without an answer, given up or still open, is the site hanging


def hung_on_the_trials_path(
    net: TrialNetwork, base_url: str, call_windows: list[tuple[int, int]]
) -> list[RequestRecord]:
    """Requests to the site a tool call made that never got an answer: still open when the trial ended, or
    given up by the page after HUNG_MS or more (its own time-out: the tool then answers an error of its own).
    Not a fault the case armed, not a blocked host."""
    address = _site_address(base_url)
    during_calls = {r.seq for start, end in call_windows for r in net.requests[start:end]}
    return [
        r
        for r in net.requests
        if r.seq in during_calls
        and r.status is None
        and not r.fault
        and not r.blocked
        and (r.host, r.port) == address
        and (r.error is None or (r.error.startswith(CLIENT_GAVE_UP) and (r.duration_ms or 0) >= HUNG_MS))
    ]


def site_hung(hung: list[RequestRecord], base_url: str) -> str | None:
    """The reason a failed trial is not_run when the site hung on a request a tool call made; None otherwise."""
    if not hung:
        return None
    first = hung[0]
    waited = f"given up after {first.duration_ms / 1000:.1f} s" if first.duration_ms else "still open at the end"
    return (
        f"the site did not answer {first.method} {first.path}, a request a tool call made ({waited}; "
        f"{len(hung)} such request(s)): the site hung, not the agent's fault: check the site at {base_url}"
    )


def site_stopped_answering(lost: list[RequestRecord], base_url: str) -> str | None:
    """The reason a trial is not_run when the site went away under it; None when it answered throughout."""
    if not lost:
        return None
    first = lost[0]
    return (
        f"the site stopped answering during the trial: {len(lost)} request(s) to it got no answer "
        f"(first: {first.method} {first.path}: {first.error}); check that the site is running at {base_url}"
    )


def _slim(item: Any) -> dict[str, Any]:
    data = item.model_dump() if hasattr(item, "model_dump") else dict(item) if not isinstance(item, dict) else item
    plain: dict[str, Any] = json.loads(json.dumps(data, default=str))
    return plain
