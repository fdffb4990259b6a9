"""The network layer of webmcp-eval: a mitmproxy addon run in-process.

Counts each trial's requests and mutations, blocks traffic to other hosts,
injects faults, and records or replays the site's answers (seed 002).
"""

from .canonical import TRIAL_HEADER, fixture_key
from .controller import NetworkProxy, ProxyError
from .fixture import Fixture, FixtureEntry, FixtureError, age_days, diff_fixtures, load_fixture, save_fixture
from .models import BlockedRequest, FaultFired, FaultSpec, ReplayMiss, RequestRecord, TrialNetwork

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
