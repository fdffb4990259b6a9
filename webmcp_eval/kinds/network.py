"""``expect.network``: the writes the proxy counted (``writes``: method and path glob -> count) and the
requests to other hosts (``outbound``), and in a replayed run, that the fixture answered every request.

Without a proxy (``--no-proxy``) nothing was counted: each rule is not_run.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Any

from pydantic import Field, field_validator, model_validator

from webmcp_eval.data_file import renamed_in_model
from webmcp_eval.kinds import Captures, CaseFacts, Evidence, Kind, RuleProblem, answerable
from webmcp_eval.kinds import assertion as _a
from webmcp_eval.kinds._locator import Strict
from webmcp_eval.trace import Assertion, Trace, WriteRecord


class NetworkExpectation(Strict):
    writes: dict[str, int] = Field(
        default_factory=dict,
        description='"METHOD /path" (glob) on the site, "METHOD //host:port/path" on another host, '
        'or "total" -> expected count',
    )
    outbound: int | None = Field(
        default=None,
        ge=0,
        description="requests to other hosts than the site's (passed or blocked); "
        "none: not asserted unless the site config asks",
    )

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: object) -> Any:
        """``mutations``, this key's old name, still reads (a case file's loader says so at its line)."""
        return renamed_in_model(data, {("mutations",): "writes"})

    @field_validator("writes")
    @classmethod
    def _keys(cls, value: dict[str, int]) -> dict[str, int]:
        for key in value:
            if key != "total" and not re.fullmatch(r"[A-Za-z*]+ /\S*", key):
                raise ValueError(f"write key {key!r} must be 'total' or 'METHOD /path-glob', e.g. 'POST /api/saved'")
        return value


def _where(m: WriteRecord) -> str:
    """A write's place as write keys name it: the path, or //host:port/path on another host."""
    return f"//{m.host}:{m.port}{m.path}" if m.outbound else m.path


def check_network(exp: NetworkExpectation, trace: Trace) -> list[Assertion]:
    net = trace.network
    out = []
    for key, expected in exp.writes.items():
        desc = f"{expected} write(s) " + ("in total" if key == "total" else f"matching {key}")
        if not net.available:
            out.append(_a(f"network.writes[{key}]", "network", desc, None, "no proxy: writes were not counted"))
            continue
        if key == "total":
            seen = net.writes
        else:
            method, _, pattern = key.partition(" ")
            seen = [m for m in net.writes if fnmatchcase(m.method, method.upper()) and fnmatchcase(_where(m), pattern)]
        listing = ", ".join(f"{m.method} {_where(m)}" for m in seen) or "none"
        out.append(_a(f"network.writes[{key}]", "network", desc, len(seen) == expected, f"{len(seen)} seen: {listing}"))
    outbound = exp.outbound if exp.outbound is not None else net.outbound_expected
    if outbound is not None:
        desc = f"{outbound} request(s) to other hosts"
        if exp.outbound is None:
            desc += " (the site config asks it of every case)"
        if not net.available:
            out.append(_a("network.outbound", "network", desc, None, "no proxy: requests to other hosts were not seen"))
        else:
            urls = ", ".join(
                f"{r.method or '?'} {r.url or '?'}" + (" (blocked)" if r.blocked else "") for r in net.outbound
            )
            out.append(
                _a(
                    "network.outbound",
                    "network",
                    desc,
                    len(net.outbound) == outbound,
                    f"{len(net.outbound)} seen: {urls or 'none'}",
                )
            )
    if trace.network_mode == "replay":
        misses = net.replay_misses
        out.append(
            _a(
                "network.replay",
                "network",
                "every request was answered from the fixture",
                not misses,
                (
                    "; ".join(m.summary for m in misses)
                    + f" — the fixture lacks these requests; re-record with: webmcp-eval record {trace.case_id}"
                )
                if misses
                else "no misses",
            )
        )
    return out


def _network(exp: NetworkExpectation, trace: Trace, captures: Captures) -> list[Assertion]:
    return check_network(exp, trace)


def never_counted(exp: NetworkExpectation, facts: CaseFacts) -> list[RuleProblem]:
    """A write rule on a method the proxy never counts always sees 0: it can never fire."""
    out: list[RuleProblem] = []
    methods = {m.upper() for m in facts.write_methods}
    for key in exp.writes:
        method = key.split(" ", 1)[0].upper()
        if key != "total" and method != "*" and method not in methods:
            out.append(
                (
                    ("expect", "network", "writes", key),
                    f"{method} requests are never counted as writes (counted: {', '.join(sorted(methods))}), "
                    "so this rule can never fire; name a write method or '*'",
                )
            )
    return out


NETWORK = Evidence(
    "network",
    ("network",),
    lambda t: {
        "writes": [f"{m.method} {m.path}" for m in t.network.writes],
        "blocked": [b.url for b in t.network.blocked],
    },
)


def _about_writes(exp: NetworkExpectation) -> bool:
    return bool(exp.writes)  # any count named, {total: 0} too, is a claim about writes


KIND = Kind(
    "network",
    NetworkExpectation,
    _network,
    (NETWORK,),
    answerable,
    annotation=NetworkExpectation,
    field=Field(default_factory=NetworkExpectation),
    validate=never_counted,
    about_writes=_about_writes,
)
