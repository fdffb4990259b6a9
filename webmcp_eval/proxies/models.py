"""What the proxy tells the runner: fault specs in, per-trial network records out.

Every model is pydantic, so ``TrialNetwork.model_dump(mode="json")`` is what a
trace stores.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from .fixture import Fixture

Mode = Literal["live", "record", "replay"]


class FaultSpec(BaseModel):
    """Break the next ``times`` requests matching method and path (exact or glob).

    Exactly one effect: ``status`` (the proxy answers it, the site never sees
    the request), ``delay_ms`` (then forward), ``drop`` (kill the connection) or
    ``duplicate`` (deliver the request to the site twice, like a network retry;
    the client gets the first answer) or ``lose_answer`` (the site gets the
    request and acts on it; its answer is lost on the way back and the client
    gets the proxy's 502 instead).
    """

    method: str = "*"
    path: str
    times: int = Field(default=1, ge=1)
    status: int | None = Field(default=None, ge=100, le=999)
    delay_ms: int | None = Field(default=None, ge=0)
    drop: bool = False
    duplicate: bool = False
    lose_answer: bool = False

    @model_validator(mode="after")
    def _one_effect(self) -> FaultSpec:
        effects = [self.status is not None, self.delay_ms is not None, self.drop, self.duplicate, self.lose_answer]
        if sum(effects) != 1:
            raise ValueError("a fault needs exactly one of status, delay_ms, drop, duplicate or lose_answer")
        return self

    def matches(self, method: str, path: str) -> bool:
        return (self.method == "*" or self.method.upper() == method.upper()) and fnmatchcase(path, self.path)

    def effect(self) -> str:
        if self.status is not None:
            return f"status {self.status}"
        if self.delay_ms is not None:
            return f"delay {self.delay_ms}ms"
        if self.lose_answer:
            return "answer lost"
        return "drop" if self.drop else "duplicate"


class RequestRecord(BaseModel):
    """One request as the proxy saw it, in the order it arrived."""

    seq: int
    trial: str
    method: str
    url: str
    host: str
    port: int
    path: str
    query: str = ""
    status: int | None = None  # None: no response (dropped, failed upstream)
    duration_ms: float | None = None
    write: bool = False  # a write request the proxy counts (see the site config's write_methods)
    outbound: bool = False  # to another host than the site's
    blocked: bool = False
    fault: str | None = None  # the fault effect applied, if any
    replay: Literal["hit", "miss"] | None = None
    error: str | None = None


class BlockedRequest(BaseModel):
    trial: str
    method: str
    url: str
    reason: str


class FaultFired(BaseModel):
    trial: str
    method: str
    url: str
    path: str
    effect: str
    spec: FaultSpec
    left: int  # how many more requests this fault will still break
    duplicate_status: int | None = None  # the site's answer to the duplicated copy
    duplicate_error: str | None = None


class ReplayMiss(BaseModel):
    trial: str
    method: str
    url: str
    key: str
    body: str  # the canonical (redacted) body the fixture was searched for
    summary: str  # one line: what was asked and why nothing answered


class TrialNetwork(BaseModel):
    """Everything the proxy saw for one trial."""

    trial_id: str
    mode: Mode = "live"
    requests: list[RequestRecord] = Field(default_factory=list)
    writes: list[RequestRecord] = Field(default_factory=list)
    write_counts: dict[str, int] = Field(default_factory=dict)  # "POST /api/saved" -> n
    blocked: list[BlockedRequest] = Field(default_factory=list)
    faults_fired: list[FaultFired] = Field(default_factory=list)
    replay_misses: list[ReplayMiss] = Field(default_factory=list)
    fixture: Fixture | None = None  # record mode: what was recorded
    # secret values the trial's traffic carried (webmcp_eval/proxies/redaction.py): for scrubbing, never written
    secrets: set[str] = Field(default_factory=set, exclude=True)
