"""The mitmproxy addon: attribution, counting, outbound guard, faults, record/replay.

Runs on mitmproxy's event loop thread; the controller reads and changes trial
state from other threads, so every access to ``trials`` holds ``lock``. Hooks
used (mitmproxy 11): ``request``, ``response``, ``error``, ``server_connect``
and ``done``.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from fnmatch import fnmatchcase
from typing import Any
from urllib.parse import urlsplit

import httpx
from mitmproxy import http
from mitmproxy.proxy.server_hooks import ServerConnectionHookData

from .canonical import TRIAL_HEADER, canonical_body, fixture_key, normalize_origin, short_origin
from .fixture import (
    Fixture,
    FixtureEntry,
    StoredRequest,
    StoredResponse,
    encode_body,
    header_pairs,
    sanitize_headers,
)
from .fixture_replay import ReplayIndex
from .flows import MARK_HEADER, _call_rewrite, _json_response, _keep_client_alive
from .models import (
    BlockedRequest,
    FaultFired,
    FaultSpec,
    Mode,
    ReplayMiss,
    RequestRecord,
    TrialNetwork,
)
from .redaction import redact_url, scrub
from .trial_state import ArmedFault, FlowState, TrialSite, TrialState, _learn_secrets

REPLAY_MISS_STATUS = 599
UNATTRIBUTED_KEEP = 2000  # the "" trial is never ended by the runner: keep only its latest records
HOP_HEADERS = {"host", "content-length", "connection", "proxy-connection", "keep-alive", "transfer-encoding"}


class EvalAddon:
    def __init__(
        self,
        *,
        site_origins: list[str],
        allow_hosts: list[str],
        write_methods: tuple[str, ...],
        ignore_paths: list[str],
        ssl_insecure: bool = False,
        block_other_hosts: bool = True,
    ) -> None:
        self.site_origins = [normalize_origin(o) for o in site_origins]
        # none: each trial brings its own (TrialSite); fixture keys then carry every host
        self.primary_origin = self.site_origins[0] if self.site_origins else ""
        self.site_addresses = {(urlsplit(o).hostname, urlsplit(o).port) for o in self.site_origins}
        self.allow_hosts = [h.lower() for h in allow_hosts]
        self.block_other_hosts = block_other_hosts
        self.write_methods = {m.upper() for m in write_methods}
        self.ignore_paths = list(ignore_paths)
        self.ssl_insecure = ssl_insecure
        self.lock = threading.Lock()
        self.trials: dict[str, TrialState] = {"": TrialState(TrialNetwork(trial_id=""))}
        self.flows: dict[str, FlowState] = {}
        self._seq = itertools.count(1)
        self._client: httpx.AsyncClient | None = None
        self.client_connections = 0  # connections the browser (or any client) opened to the proxy

    # ---- controller side (any thread) ---------------------------------------

    def begin_trial(
        self, trial_id: str, mode: Mode, fixture: Fixture | None, rewrite: Any = None, site: TrialSite | None = None
    ) -> None:
        if not trial_id:
            raise ValueError('a trial id must not be empty ("" collects unattributed requests)')
        if mode not in ("live", "record", "replay"):
            raise ValueError(f"unknown network mode {mode!r}: live, record or replay")
        if mode == "replay" and fixture is None:
            raise ValueError(f"trial {trial_id}: replay mode needs a fixture")
        if site is not None:
            site = TrialSite(
                [normalize_origin(o) for o in site.origins],
                [h.lower() for h in site.allow_hosts],
                site.learn_first_page,
            )
        state = TrialState(TrialNetwork(trial_id=trial_id, mode=mode), site=site, rewrite=rewrite)
        if mode == "replay":
            assert fixture is not None
            state.replay = ReplayIndex.of(fixture)
        elif mode == "record":
            meta = fixture.model_copy(update={"entries": []}) if fixture else Fixture()
            state.recording = meta.model_copy(
                update={
                    "base_url": meta.base_url or short_origin(self.primary_origin),
                    "recorded_at": Fixture().recorded_at,
                }
            )
        with self.lock:
            if trial_id in self.trials:
                raise ValueError(f"trial {trial_id} has already begun")
            self.trials[trial_id] = state

    def arm_fault(self, trial_id: str, fault: FaultSpec) -> None:
        with self.lock:
            self._trial(trial_id).faults.append(ArmedFault(fault, fault.times))

    def snapshot(self, trial_id: str) -> TrialNetwork:
        with self.lock:
            return self._network_of(self._trial(trial_id))

    def so_far(self, trial_id: str) -> tuple[int, list[str]]:
        """How many requests and which writes ("POST /api/saved") the trial has made so far: what a tool call reads
        before and after itself, without a deep copy of the whole account under the lock."""
        with self.lock:
            network = self._trial(trial_id).network
            return len(network.requests), [f"{w.method} {w.path}" for w in network.writes]

    def end_trial(self, trial_id: str) -> TrialNetwork:
        with self.lock:
            state = self._trial(trial_id)
            network = self._network_of(state)
            if trial_id:
                del self.trials[trial_id]
            else:  # "" is never ended, only emptied
                self.trials[""] = TrialState(TrialNetwork(trial_id=""))
        return network

    def _trial(self, trial_id: str) -> TrialState:
        try:
            return self.trials[trial_id]
        except KeyError:
            raise KeyError(f"no trial {trial_id!r} has begun on this proxy") from None

    def _network_of(self, state: TrialState) -> TrialNetwork:
        """A deep copy (the proxy thread keeps mutating the live records)."""
        network = state.network.model_copy(deep=True)
        network.secrets = set(state.secrets)
        if state.recording is not None:
            network.fixture = self._finish_recording(state)
        return network

    def _finish_recording(self, state: TrialState) -> Fixture:
        """Entries in request order, secrets seen anywhere in the trial scrubbed, keys recomputed."""
        assert state.recording is not None
        entries = [self._scrubbed(entry, state.secrets) for _, entry in sorted(state.recorded, key=lambda r: r[0])]
        return state.recording.model_copy(update={"entries": entries}, deep=True)

    def _scrubbed(self, entry: FixtureEntry, secrets: set[str]) -> FixtureEntry:
        def clean(part: Any) -> Any:
            body = part.body if part.encoding == "base64" else scrub(part.body, secrets)
            return part.model_copy(update={"headers": scrub(part.headers, secrets), "body": body})

        request = clean(entry.request).model_copy()
        request.url = scrub(request.url, secrets)
        key = fixture_key(request.method, request.url, request.content(), request.content_type, self.primary_origin)
        return FixtureEntry(key=key, request=request, response=clean(entry.response))

    # ---- policy -----------------------------------------------------------------

    def _host_allowed(self, host: str, port: int | None, trial: TrialState | None = None) -> bool:
        if not self.block_other_hosts:
            return True
        host = host.lower()
        patterns = trial.site.allow_hosts if trial and trial.site else self.allow_hosts
        return any(fnmatchcase(host, pattern) or fnmatchcase(f"{host}:{port}", pattern) for pattern in patterns)

    def _is_site(self, origin: str, trial: TrialState | None = None) -> bool:
        return origin in (trial.site.origins if trial and trial.site else self.site_origins)

    def _learn_site(self, trial: TrialState, flow: http.HTTPFlow, origin: str) -> None:
        """The trial's first top-level page names its site (a frame's page or a fetch does not)."""
        site = trial.site
        if site is None or not site.learn_first_page or site.learnt:
            return
        headers = flow.request.headers
        dest = headers.get("sec-fetch-dest")
        # no Sec-Fetch headers on plain http to a host that is not loopback: a GET that asks for HTML then
        top_page = dest.lower() == "document" if dest is not None else headers.get("accept", "").startswith("text/html")
        if not top_page or flow.request.method != "GET":
            return
        site.learnt = True
        if origin not in site.origins:
            site.origins.append(origin)
        # server_connect does not know the trial: the learnt site's address is let through from now on
        self.site_addresses.add((flow.request.host, flow.request.port))

    def _is_write(self, method: str, origin: str, path: str, trial: TrialState | None = None) -> bool:
        """A write to the site (outside the ignored paths), or a write that leaves for another host."""
        if method.upper() not in self.write_methods:
            return False
        return not self._is_site(origin, trial) or not any(path.startswith(prefix) for prefix in self.ignore_paths)

    # ---- mitmproxy hooks (proxy thread) ---------------------------------------

    def server_connect(self, data: ServerConnectionHookData) -> None:
        """Last line of the guard: never open a connection to a host outside the site and allow list."""
        host, port = data.server.address or ("", 0)
        with self.lock:  # the proxy's allow list, or a trial's own
            allowed = any(self._host_allowed(host, port, trial) for trial in self.trials.values())
        if (host, port) not in self.site_addresses and not allowed:
            data.server.error = f"webmcp-eval: {host}:{port} is neither a site origin nor an allowed host"

    async def request(self, flow: http.HTTPFlow) -> None:
        req = flow.request
        if self._our_preflight(flow):
            return
        trial_id = req.headers.pop(TRIAL_HEADER, "")  # never reaches upstream
        origin = normalize_origin(req.url)
        safe_url = redact_url(req.url)  # records end up in traces: no tokens in query strings
        parts = urlsplit(safe_url)
        with self.lock:
            trial = self.trials.get(trial_id) or self.trials[""]
            record = RequestRecord(
                seq=next(self._seq),
                trial=trial.network.trial_id,
                method=req.method,
                url=safe_url,
                host=req.host,
                port=req.port,
                path=parts.path or "/",
                query=parts.query,
            )
            trial.network.requests.append(record)
            if not record.trial and len(trial.network.requests) > UNATTRIBUTED_KEEP:
                del trial.network.requests[:-UNATTRIBUTED_KEEP]
                del trial.network.blocked[:-UNATTRIBUTED_KEEP]
            flow_state = self.flows[flow.id] = FlowState(trial, record)
            self._learn_site(trial, flow, origin)
            record.outbound = not self._is_site(origin, trial)
            if record.outbound and not self._host_allowed(req.host, req.port, trial):
                self._block(flow, flow_state, origin)
                return
            if self._is_write(req.method, origin, record.path, trial):
                record.write = True
                trial.network.writes.append(record)
                # another host's write is keyed by its host too: "POST //cdn.example:443/share"
                where = f"//{req.host}:{req.port}{record.path}" if record.outbound else record.path
                counts = trial.network.write_counts
                counts[f"{req.method} {where}"] = counts.get(f"{req.method} {where}", 0) + 1
            armed = trial.take_fault(req.method, record.path)
            fired = self._fired(flow, armed) if armed else None
        if trial.rewrite is not None:  # after counting: the page's request is what the trial saw
            _call_rewrite(trial.rewrite, "request", flow)
        if fired is not None and armed is not None and await self._apply_fault(flow, flow_state, armed.spec, fired):
            return
        if trial.mode == "replay":
            self._replay(flow, flow_state)
        elif trial.mode == "record":
            # A conditional request could be answered 304, which replays as an empty page.
            for name in ("if-none-match", "if-modified-since"):
                req.headers.pop(name, None)

    def _our_preflight(self, flow: http.HTTPFlow) -> bool:
        """Keep the trial header out of the page's CORS: a preflight only it caused is answered here.

        The header goes on every request of a trial's context, so a cross-origin
        request that is simple (a web font, a plain GET) gets a CORS preflight it
        would never have had, which most hosts refuse. When our header is all the
        preflight asks about, the proxy allows it itself (the real response's CORS
        headers still decide); otherwise the host answers the preflight without
        our header in it, and the proxy adds the header to what it allows.
        """
        req = flow.request
        asked = req.headers.get("access-control-request-headers")
        if req.method != "OPTIONS" or asked is None:
            return False
        names = [n.strip() for n in asked.split(",") if n.strip()]
        others = [n for n in names if n.lower() != TRIAL_HEADER.lower()]
        if len(others) == len(names):
            return False  # the page's own preflight: not ours to touch
        method = req.headers.get("access-control-request-method", "GET").upper()
        if not others and method in ("GET", "HEAD", "POST"):
            origin = req.headers.get("origin", "*")
            flow.response = http.Response.make(
                204,
                b"",
                {
                    "Access-Control-Allow-Origin": origin,
                    "Access-Control-Allow-Credentials": "true",
                    "Access-Control-Allow-Methods": method,
                    "Access-Control-Allow-Headers": TRIAL_HEADER,
                    "Vary": "Origin",
                    MARK_HEADER: "preflight",
                },
            )
            return True
        if others:
            req.headers["access-control-request-headers"] = ", ".join(others)
        else:
            del req.headers["access-control-request-headers"]
        flow.metadata["webmcp_eval_preflight"] = True
        return False

    @staticmethod
    def _allow_our_header(flow: http.HTTPFlow) -> None:
        response = flow.response
        if response is None or not flow.metadata.get("webmcp_eval_preflight"):
            return
        allowed = response.headers.get("access-control-allow-headers")
        if allowed is not None and allowed.strip() != "*":
            response.headers["access-control-allow-headers"] = f"{allowed}, {TRIAL_HEADER}"

    def _block(self, flow: http.HTTPFlow, flow_state: FlowState, origin: str) -> None:
        record = flow_state.record
        record.blocked = True
        flow_state.synthetic = True
        flow_state.trial.network.blocked.append(
            BlockedRequest(
                trial=record.trial,
                method=record.method,
                url=record.url,
                reason=f"{origin} is not a site origin and {record.host} is not an allowed host",
            )
        )
        flow.response = _json_response(
            403, "BLOCKED_BY_EVAL", "webmcp-eval blocked a request to another host.", "blocked"
        )

    def _fired(self, flow: http.HTTPFlow, armed: ArmedFault) -> FaultFired:
        state = self.flows[flow.id]
        state.record.fault = armed.spec.effect()
        fired = FaultFired(
            trial=state.record.trial,
            method=state.record.method,
            url=state.record.url,
            path=state.record.path,
            effect=armed.spec.effect(),
            spec=armed.spec,
            left=armed.left,
        )
        state.trial.network.faults_fired.append(fired)
        return fired

    async def _apply_fault(
        self, flow: http.HTTPFlow, flow_state: FlowState, spec: FaultSpec, fired: FaultFired
    ) -> bool:
        """Apply one fault; True when the request is finished (answered or killed)."""
        if spec.status is not None:
            flow_state.synthetic = True
            flow.response = _json_response(
                spec.status, "INJECTED_FAULT", f"injected fault (status {spec.status})", "fault"
            )
            return True
        if spec.drop:
            flow_state.synthetic = True
            flow.kill()
            return True
        if spec.delay_ms is not None:
            await asyncio.sleep(spec.delay_ms / 1000)
        elif spec.duplicate:
            flow_state.duplicate = fired  # sent once the original has its answer
        elif spec.lose_answer:
            flow_state.lose_answer = True
        return False

    def _replay(self, flow: http.HTTPFlow, flow_state: FlowState) -> None:
        req, record, trial = flow.request, flow_state.record, flow_state.trial
        content = req.get_content(strict=False) or b""
        ctype = req.headers.get("content-type", "")
        key = fixture_key(req.method, req.url, content, ctype, self.primary_origin)
        assert trial.replay is not None
        with self.lock:
            entry, why = trial.replay.answer(req.method, key)
        flow_state.synthetic = True
        if entry is not None:
            record.replay = "hit"
            response = entry.response
            headers = [(k.encode(), v.encode()) for k, v in header_pairs(response.headers)]
            flow.response = http.Response.make(response.status, response.content(), headers)
            return
        record.replay = "miss"
        body = canonical_body(content, ctype)
        summary = f"{key}: {why}"
        with self.lock:
            trial.network.replay_misses.append(
                ReplayMiss(
                    trial=record.trial, method=record.method, url=record.url, key=key, body=body, summary=summary
                )
            )
        message = f"webmcp-eval replay miss: no recorded answer for {key} ({why}); re-record the fixture"
        flow.response = _json_response(REPLAY_MISS_STATUS, "REPLAY_MISS", message, "replay-miss", {"key": key})

    async def response(self, flow: http.HTTPFlow) -> None:
        self._allow_our_header(flow)
        flow_state = self.flows.pop(flow.id, None)
        if flow_state is None or flow.response is None:
            return
        if flow_state.trial.rewrite is not None and not flow_state.record.blocked:
            _call_rewrite(flow_state.trial.rewrite, "response", flow)
        if flow_state.duplicate is not None and flow_state.trial.mode != "replay":
            status, error = await self._send_duplicate(flow)
            with self.lock:
                flow_state.duplicate.duplicate_status, flow_state.duplicate.duplicate_error = status, error
        with self.lock:
            record = flow_state.record
            record.status = flow.response.status_code
            record.duration_ms = round((time.time() - flow.request.timestamp_start) * 1000, 2)
            if not flow_state.synthetic:
                _learn_secrets(flow, flow_state.trial)
            if flow_state.trial.mode == "record" and not flow_state.synthetic:
                self._record(flow, flow_state)
        if flow_state.lose_answer:  # the site has acted (and its answer is recorded); the page never hears of it
            flow.response = _json_response(502, "ANSWER_LOST", "injected fault (answer lost)", "fault")
        _keep_client_alive(flow)

    def client_connected(self, _client: Any) -> None:
        with self.lock:
            self.client_connections += 1

    def error(self, flow: http.HTTPFlow) -> None:
        flow_state = self.flows.pop(flow.id, None)
        if flow_state is None:
            return
        with self.lock:
            flow_state.record.error = str(flow.error) if flow.error else "no response"
            flow_state.record.duration_ms = round((time.time() - flow.request.timestamp_start) * 1000, 2)

    async def done(self) -> None:
        if self._client is not None:
            await self._client.aclose()

    # ---- record and duplicate ---------------------------------------------------

    def _record(self, flow: http.HTTPFlow, flow_state: FlowState) -> None:
        req, resp = flow.request, flow.response
        assert resp is not None
        req_pairs, resp_pairs = list(req.headers.items(multi=True)), list(resp.headers.items(multi=True))
        req_enc, req_body = encode_body(req.get_content(strict=False) or b"", req.headers.get("content-type", ""))
        resp_enc, resp_body = encode_body(resp.get_content(strict=False) or b"", resp.headers.get("content-type", ""))
        stored_req = StoredRequest(
            method=req.method,
            url=redact_url(req.url),
            headers=sanitize_headers(req_pairs),
            encoding=req_enc,
            body=req_body,
        )
        stored_resp = StoredResponse(
            status=resp.status_code, headers=sanitize_headers(resp_pairs), encoding=resp_enc, body=resp_body
        )
        entry = FixtureEntry(key="", request=stored_req, response=stored_resp)  # keyed when the trial ends
        flow_state.trial.recorded.append((flow_state.record.seq, entry))

    async def _send_duplicate(self, flow: http.HTTPFlow) -> tuple[int | None, str | None]:
        """The same request once more to the site, as a network retry would deliver it."""
        if self._client is None:
            # trust_env=False: an HTTP(S)_PROXY in the environment must not reroute the copy.
            self._client = httpx.AsyncClient(verify=not self.ssl_insecure, trust_env=False, timeout=30)
        req = flow.request
        headers = [(k, v) for k, v in req.headers.items(multi=True) if k.lower() not in HOP_HEADERS]
        try:
            answer = await self._client.request(req.method, req.url, headers=headers, content=req.raw_content or b"")
        except httpx.HTTPError as err:
            return None, f"{type(err).__name__}: {err}"
        return answer.status_code, None
