"""What a test that uses the ``webmcp`` fixture imports: ``from webmcp_eval.pytest import expect, ToolCallError``.

The names in ``__all__`` are the public API of the pytest plugin: they, and their public attributes, hold
across releases (tests/public_api.txt lists them; a renamed attribute stays one release as a deprecated alias
with a ``DeprecationWarning``). Everything else under ``webmcp_eval.pytest_plugin`` is private and may move.

(A module of this package named ``pytest`` does not stand in for pytest itself: imports are absolute, so
``import pytest`` anywhere, this package included, is pytest.)
"""

from __future__ import annotations

from webmcp_eval.audit.model import Finding
from webmcp_eval.audit.timeline import Timeline
from webmcp_eval.play.page.surface.model import Frame, PageSurface, Source, Tool
from webmcp_eval.proxies.models import RequestRecord
from webmcp_eval.pytest_plugin.expect import Expect, WebMCPAssertions, expect
from webmcp_eval.pytest_plugin.mocks import MockWarning
from webmcp_eval.pytest_plugin.page_webmcp import NoProxy, PageWebMCP, ToolCallError
from webmcp_eval.pytest_plugin.reporting import CallCoverage, SmokeFindings
from webmcp_eval.trace import ToolCall, WitnessRecord

__all__ = [
    "CallCoverage",  # webmcp.coverage()
    "Expect",  # the type of expect
    "Finding",  # webmcp.lint(), webmcp.smoke()
    "Frame",  # webmcp.surface().frames
    "MockWarning",  # webmcp.mock() of a name that cannot be mocked
    "NoProxy",  # webmcp.writes() / outbound() without a proxy
    "PageSurface",  # webmcp.surface()
    "PageWebMCP",  # the webmcp fixture
    "RequestRecord",  # webmcp.writes(), webmcp.outbound()
    "SmokeFindings",  # webmcp.smoke()
    "Source",  # Tool.source: where the tool was registered
    "Timeline",  # webmcp.timeline()
    "Tool",  # webmcp.tools(), webmcp.tool(name)
    "ToolCall",  # webmcp.calls()
    "ToolCallError",  # webmcp.call() that failed
    "WebMCPAssertions",  # expect(webmcp)
    "WitnessRecord",  # webmcp.witness()
    "expect",
]
