"""The ``webmcp`` fixture's audit: the audit's engine (webmcp_eval/audit/) on the test's page as it is now.

``PageAudit`` is a part of the fixture's object (``page_webmcp.PageWebMCP``): ``surface()``, ``lint()``,
``timeline()``, ``smoke()``, ``contract()`` and the assertions on them read the page through the same page
surface engine as ``webmcp-eval audit``, and judge it with the audit's own rules. The audit's modules are
imported when a test asks for them.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page

from webmcp_eval.play.page.surface.blocking import run
from webmcp_eval.play.page.surface.log import ShimLog
from webmcp_eval.play.page.surface.model import PageSurface
from webmcp_eval.play.page.surface.opened import LOAD_JS
from webmcp_eval.play.page.surface.reader import Answer, LoadClock, Surface
from webmcp_eval.proxies.models import TrialNetwork
from webmcp_eval.pytest_plugin.reporting import SmokeFindings, TestEvidence

if TYPE_CHECKING:  # the audit's engine is imported when a test asks for it
    from webmcp_eval.audit.config import AuditConfig
    from webmcp_eval.audit.model import Finding
    from webmcp_eval.audit.model import Frame as AuditFrame
    from webmcp_eval.audit.smoke import CallOutcome
    from webmcp_eval.audit.timeline import Timeline


class PageAudit:
    """The audit's engine on the fixture's page; the fixture's object (PageWebMCP) has what it reads."""

    # what it reads of the fixture's object (its fields, page_webmcp.py)
    page: Page
    _account: Callable[[], TrialNetwork] | None
    _update_contracts: bool
    _log: ShimLog
    _load_t: float | None
    _script_errors: list[str]
    _evidence: TestEvidence

    if TYPE_CHECKING:  # and its methods (page_webmcp.py)

        @property
        def _surface_engine(self) -> Surface: ...

        def _call(self, name: str, args: dict[str, Any], timeout_ms: float, frame_url: str | None = None) -> Answer: ...

        def _network(self) -> TrialNetwork: ...

    def surface(self) -> PageSurface:
        """The page's surface as ``webmcp-eval audit`` reads it: every frame's tools, forms, refusals, timeline."""
        page = self.page
        loaded = None  # the load event by the page's own clock, as the audit times the timeline
        with contextlib.suppress(PlaywrightError):
            loaded = page.evaluate(LOAD_JS)
        clock = LoadClock(float(loaded[0]) if loaded else None, self._load_t or time.monotonic())
        frames = run(self._surface_engine.read_frames(clock))
        return PageSurface(url=page.url, frames=frames, script_errors=list(self._script_errors))

    def lint(self, **rules: Any) -> list[Finding]:
        """The audit's static rules and timeline rules on this page; ``rules`` tune them as suite.yaml's
        ``audit.rules`` does (``too_many_tools={"max": 3}``, ``description_length="off"``)."""
        __tracebackhide__ = True
        from webmcp_eval.audit.rules import lint
        from webmcp_eval.audit.timeline import timeline_findings

        config, surface = _audit_config(rules), self.surface()
        found = lint(surface, config) + timeline_findings(surface, config)
        self._evidence.lint = found
        return found

    def timeline(self, **rules: Any) -> Timeline:
        """When the tools came (after the load event), which came late and which churned."""
        __tracebackhide__ = True
        from webmcp_eval.audit.timeline import timeline_of

        return timeline_of(self.surface(), _audit_config(rules))

    def smoke(self, *names: str, all_tools: bool = False, **rules: Any) -> SmokeFindings:
        """The audit's smoke calls on this page and its judgement of the answers (``names``: only these tools).

        Valid and invalid inputs are drawn from each tool's schema, as ``audit --smoke`` draws them. Only
        read-only tools are called unless ``all_tools``; then every tool is called here, in this page, so its
        writes are this test's. With the proxy, each call's writes and requests to other hosts are judged too.
        The calls are the page's calls like any other: ``calls()`` lists them. The findings are a list with
        ``calls``: how many calls the smoke made.
        """
        __tracebackhide__ = True
        from webmcp_eval.audit.inputs import smoke_inputs
        from webmcp_eval.audit.smoke import judge, smoke_choice, waits_for_person

        config, surface = _audit_config(rules), self.surface()
        findings: list[Finding] = []
        calls = 0
        for frame_info, tool in surface.tools():
            if names and tool.name not in names:
                continue
            choice = smoke_choice(tool, all_tools)  # the audit's choice: a call would wait for a person, so it is said
            if choice == "say":
                findings += waits_for_person(tool, frame_info, surface.url, config)
            if choice != "call":
                continue
            outcomes = []
            mark = self._count_network(None, 0)
            for smoke_input in smoke_inputs(tool.input_schema):
                outcomes.append(self._smoke_call(frame_info, tool.name, smoke_input, config))
                mark = self._count_network(outcomes[-1], mark)
                if outcomes[-1].timed_out:
                    break  # a tool that hangs once is judged; waiting out every input would only cost time
            if outcomes and self._account:  # the requests after the tool's last call are its own too
                # read once the network settled (page_webmcp._network: no request open, none began and no call
                # ended for NETWORK_QUIET_S), so a write the tool fires after answering is counted: no wait here
                self._count_network(outcomes[-1], mark)
            findings += judge(tool, frame_info, surface.url, outcomes, config)
            calls += len(outcomes)
        self._evidence.smoke_calls += calls
        self._evidence.smoke += findings
        return SmokeFindings(findings, calls)

    def _smoke_call(self, frame_info: AuditFrame, name: str, smoke_input: Any, config: AuditConfig) -> CallOutcome:
        """One smoke call, recorded as the audit's engine records it (webmcp_eval/audit/engine.py ``_call``); the
        caller counts its network."""
        from webmcp_eval.audit.smoke import CallOutcome, page_answer, take_answer

        outcome = CallOutcome(smoke_input)
        seen = len(self._log.events)
        try:
            answer = self._call(name, smoke_input.args, config.options("smoke-timeout")["timeout_ms"], frame_info.url)
        except LookupError:
            outcome.error = "its frame is gone"
            return outcome
        take_answer(outcome, answer)
        page_answer(outcome, self._surface_engine.call_events(seen, name)[1])
        return outcome

    def _count_network(self, outcome: CallOutcome | None, start: int) -> int:
        """Add the requests the proxy counted since start to outcome; return where the next count starts."""
        if not self._account:
            return start
        from webmcp_eval.audit.smoke import add_requests

        requests = self._network().requests
        if outcome:
            add_requests(outcome, requests[start:])
        return len(requests)

    def contract(self) -> dict[str, Any]:
        """The page's tool contract, as ``audit --contract`` writes it."""
        from webmcp_eval.audit.contract import contract_of

        return contract_of([self.surface()])

    def assert_lint_clean(self, fail_on: str = "warning", **rules: Any) -> None:
        """No finding of the audit's rules at ``fail_on`` severity or worse (error > warning > note)."""
        __tracebackhide__ = True
        from webmcp_eval.audit.model import SEVERITIES

        if fail_on not in SEVERITIES:
            raise ValueError(f"fail_on must be one of {', '.join(SEVERITIES)}, not {fail_on!r}")
        worst = SEVERITIES[: SEVERITIES.index(fail_on) + 1]  # SEVERITIES runs from error down to note
        found = [f for f in self.lint(**rules) if f.severity in worst]
        if found:
            lines = [f"{len(found)} finding(s) at {fail_on} or worse on {self.page.url}:"]
            lines += [f"  {f.severity} {f.rule}: {f.message}{_where(f)}" for f in found]
            raise AssertionError("\n".join(lines))

    def assert_contract(self, path: str | Path) -> None:
        """The page's tools are the contract at ``path`` (written there instead with --webmcp-update-contracts)."""
        __tracebackhide__ = True
        from webmcp_eval.audit.contract import ContractError, contract_diff, contract_of, read_contract, write_contract

        path = Path(path)
        surface = self.surface()
        if self._update_contracts:
            write_contract(path, [surface])
            return
        if not path.exists():
            raise AssertionError(f"no contract at {path}: run pytest with --webmcp-update-contracts to write it")
        try:
            old = read_contract(path)
        except ContractError as err:
            raise ValueError(f"{path}: {err}") from None
        changes = contract_diff(old, contract_of([surface]))
        if changes:
            lines = [f"the page's tools differ from the contract {path} ({len(changes)} change(s)):"]
            lines += [f"  {change}" for _, _, change in changes]
            lines.append("  (if the change is meant: run pytest with --webmcp-update-contracts)")
            raise AssertionError("\n".join(lines))


def _audit_config(rules: dict[str, Any]) -> AuditConfig:
    __tracebackhide__ = True  # a rule the audit does not know: the test's line
    from webmcp_eval.audit.config import AuditConfigError, parse_audit_config

    try:
        return parse_audit_config({"rules": {k.replace("_", "-"): v for k, v in rules.items()}})
    except AuditConfigError as err:
        raise ValueError(str(err)) from None


def _where(finding: Finding) -> str:
    parts = [p for p in (finding.tool, finding.pointer) if p]
    frame = f" in the frame {finding.frame}" if finding.frame and finding.frame != finding.page else ""
    return (f" ({' '.join(parts)})" if parts else "") + frame
