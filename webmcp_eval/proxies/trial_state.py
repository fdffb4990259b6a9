"""A trial's state in the proxy: its own site, its armed faults, its replay index or recording, the secrets it
learnt, and each flow's link to its trial and record."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from mitmproxy import http

from .canonical import parse_json
from .fixture import Fixture, FixtureEntry
from .fixture_replay import ReplayIndex
from .models import FaultFired, FaultSpec, Mode, RequestRecord, TrialNetwork
from .redaction import secrets_in_headers, secrets_in_html, secrets_in_json


@dataclass
class ArmedFault:
    spec: FaultSpec
    left: int


@dataclass
class TrialSite:
    """A trial's own site, apart from the proxy's: a test of the pytest plugin opens whatever page it likes.

    ``origins`` are the site's; with ``learn_first_page`` the origin of the trial's first top-level page is
    added when the trial sees it. ``allow_hosts`` are the other hosts it may reach (as the proxy's)."""

    origins: list[str]
    allow_hosts: list[str]
    learn_first_page: bool = True
    learnt: bool = False


@dataclass
class TrialState:
    network: TrialNetwork
    site: TrialSite | None = None  # None: the proxy's site and allow list
    faults: list[ArmedFault] = field(default_factory=list)
    replay: ReplayIndex | None = None
    recording: Fixture | None = None  # record mode: metadata; entries are built at the end
    recorded: list[tuple[int, FixtureEntry]] = field(default_factory=list)
    secrets: set[str] = field(default_factory=set)
    rewrite: Any = None  # request(flow) / response(flow): the trial's traffic changed on purpose (mutate)

    @property
    def mode(self) -> Mode:
        return self.network.mode

    def take_fault(self, method: str, path: str) -> ArmedFault | None:
        """The first armed fault matching this request, consumed by one."""
        for armed in self.faults:
            if armed.left > 0 and armed.spec.matches(method, path):
                armed.left -= 1
                return armed
        return None


@dataclass
class FlowState:
    trial: TrialState
    record: RequestRecord
    duplicate: FaultFired | None = None
    synthetic: bool = False  # answered by the proxy, not by the origin: never recorded
    lose_answer: bool = False  # the origin's answer is replaced by a 502 once it has acted


def _learn_secrets(flow: http.HTTPFlow, trial: TrialState) -> None:
    """The secret values a request and its answer carry (cookies the site sets, tokens, CSRF values), in every
    mode: a site that echoes one is scrubbed of it in the trace as in a recording."""
    req, resp = flow.request, flow.response
    assert resp is not None
    trial.secrets |= secrets_in_headers(list(req.headers.items(multi=True)))
    trial.secrets |= secrets_in_headers(list(resp.headers.items(multi=True)))
    for message in (req, resp):
        raw = message.get_content(strict=False)
        if not raw:
            continue
        kind = message.headers.get("content-type", "").lower()
        # as a recording reads bodies (fixture.encode_body): fetch() sends a JSON string as text/plain
        is_json, value = (
            parse_json(raw) if "json" in kind or not kind or kind.startswith("text/plain") else (False, None)
        )
        if is_json:
            with contextlib.suppress(RecursionError):
                trial.secrets |= secrets_in_json(value)
        elif "html" in kind or "text" in kind:  # a page's HTML: its CSRF tokens
            trial.secrets |= secrets_in_html(raw.decode("utf-8", "replace"))
