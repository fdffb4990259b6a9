"""The network layer of webmcp-eval: a mitmproxy addon run in-process.

Counts each trial's requests and writes, blocks traffic to other hosts,
injects faults, and records or replays the site's answers (docs/design.md, "Record and replay").
"""

from typing import TYPE_CHECKING, Any

from .canonical import TRIAL_HEADER, fixture_key
from .fixture import Fixture, FixtureEntry, FixtureError, age_days, diff_fixtures, load_fixture, save_fixture
from .models import BlockedRequest, FaultFired, FaultSpec, ReplayMiss, RequestRecord, TrialNetwork

if TYPE_CHECKING:
    from .controller import NetworkProxy, ProxyError


def __getattr__(name: str) -> Any:
    """The proxy itself is imported when first asked for: mitmproxy takes ~0.6 s to import, and
    most commands (validate, report, a usage error) never start a proxy."""
    if name in ("NetworkProxy", "ProxyError"):
        from . import controller

        return getattr(controller, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "TRIAL_HEADER",
    "BlockedRequest",
    "FaultFired",
    "FaultSpec",
    "Fixture",
    "FixtureEntry",
    "FixtureError",
    "NetworkProxy",
    "ProxyError",
    "ReplayMiss",
    "RequestRecord",
    "TrialNetwork",
    "age_days",
    "diff_fixtures",
    "load_fixture",
    "fixture_key",
    "save_fixture",
]
