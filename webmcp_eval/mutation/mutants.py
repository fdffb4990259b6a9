"""The mutation operators and the mutant: one realistic site bug, as a trial hook (an init script in the page,
``webmcp_eval/mutation/mutate.js``, or a rewriter in the proxy, ``webmcp_eval/proxies/mutations.py``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from webmcp_eval.play.run.settings import TrialHook
from webmcp_eval.proxies import mutations as proxy_ops

MUTATE_JS = (Path(__file__).with_name("mutate.js")).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Operator:
    name: str
    side: str  # page | proxy
    what: str


OPERATORS: dict[str, Operator] = {
    op.name: op
    for op in [
        Operator("result_field_dropped", "page", "a tool result lacks one field"),
        Operator("result_field_altered", "page", "one field of a tool result has another value"),
        Operator("result_list_reordered", "page", "a list in a tool result comes in reverse order"),
        Operator(
            "result_list_paged",
            "page",
            "a tool's result list keeps only a first page of items (the page shows them all)",
        ),
        Operator("readonly_writes", "page", "a read-only tool also sends a write request"),
        Operator("prepare_submits", "page", "a prepare tool (CONFIRMATION_REQUIRED) presses the control it names"),
        Operator("stale_tool", "page", "a tool stays registered after its route is gone"),
        Operator("error_leaks", "page", "a tool's error message leaks internals (a stack frame, the database)"),
        Operator("wrong_target", "page", "a tool acts on the next item of a list the page showed, not the one asked"),
        Operator("confirm_disabled", "page", "the confirmation control is disabled"),
        Operator("confirm_hidden", "page", "the confirmation control is transparent (opacity 0)"),
        Operator("confirm_renamed", "page", "the confirmation control is named 送出 instead"),
        Operator("confirm_does_nothing", "page", "the confirmation control does nothing when pressed (it reads well)"),
        Operator("text_as_markup", "page", "text with markup in it is rendered as HTML, not as text"),
        Operator("time_shifted", "page", "every displayed date and time is 8 hours off (formatted in the wrong zone)"),
        Operator("clock_zone_dropped", "page", "date formatters lose their timeZone: times show in the viewer's zone"),
        Operator("list_keeps_stale", "page", "a list shows its stale items after the new ones (never cleared)"),
        Operator("error_flag_flipped", "page", "a boolean of an error result (retryable) has the other value"),
        Operator("prefill_wins", "page", "a form keeps the signed-in account's values over the ones the agent gave"),
        Operator("sanitiser_keeps_markup", "page", "markup rendered after a sanitiser that drops only on* and script"),
        Operator("submit_listener_dead", "page", "a form's submit listener never fires: its button submits natively"),
        Operator("dialog_field_swapped", "page", "a dialog's summary shows another record's id in its last field"),
        Operator("select_label_shifted", "page", "a select shows the next option's label for the value it holds"),
        Operator(
            "retarget_keeps_first",
            "page",
            "a prepare tool called again while its dialog is open shows the new record; the press acts on the first",
        ),
        Operator(
            "retryable_error_as_success",
            "page",
            "a tool's retryable error is answered as a success (CONFIRMATION_REQUIRED, the input echoed)",
        ),
        Operator("annotation_lie", "page", "a tool that writes is registered with readOnlyHint"),
        Operator("hint_dropped", "page", "a tool is registered without its untrustedContentHint"),
        Operator("description_injected", "page", "a tool's description carries untrusted text a hinted result showed"),
        Operator(
            "schema_constraint_dropped",
            "page",
            "a tool is registered with an input schema that lost its enums and required names (still enforced)",
        ),
        Operator("filter_ignored", "proxy", "the site ignores one query parameter (a filter)"),
        Operator(
            "query_script_stripped",
            "proxy",
            "the site drops the Chinese, Japanese and Korean characters of a query parameter before it searches",
        ),
        Operator("unauthorized_as_success", "proxy", "a 401 is answered as an empty success (200, lists emptied)"),
        Operator("api_error_leaks", "proxy", "an API error message leaks internals"),
        Operator("repeat_not_idempotent", "proxy", "a repeated identical write is answered as a first one"),
    ]
}


@dataclass
class CaseRun:
    case: str
    verdict: str
    differs: list[str]  # what in the trace differed from the clean runs
    failed: list[str]  # assertions that failed or could not run
    fired: int | None = None  # proxy operators count their rewrites
    trace: str = ""
    flaky: str | None = None  # a first play that failed and did not fail again: not a kill


@dataclass
class Mutant:
    id: str
    operator: str
    target: str
    params: dict[str, Any]
    cases: list[str]  # the cases that can see it, in suite order
    status: str = "pending"  # killed, survived, equivalent, unseen
    runs: list[CaseRun] = field(default_factory=list)

    @property
    def side(self) -> str:
        return OPERATORS[self.operator].side

    def hook(self) -> TrialHook:
        """The mutant as a trial hook: an init script in the page, or a rewriter in the proxy."""
        if self.side == "page":
            config = json.dumps({"op": self.operator, **self.params}, ensure_ascii=False)
            return TrialHook(init_script=f"const MUTANT = {config};\n{MUTATE_JS}")
        return TrialHook(proxy=_proxy_rewriter(self.operator, self.params))


def _proxy_rewriter(operator: str, params: dict[str, Any]) -> proxy_ops.Rewriter:
    if operator == "filter_ignored":
        return proxy_ops.ParamIgnored(path=params["path"], param=params["param"])
    if operator == "query_script_stripped":
        return proxy_ops.ScriptStripped(path=params["path"], param=params["param"])
    if operator == "unauthorized_as_success":
        return proxy_ops.UnauthorizedAsSuccess(method=params["method"], path=params["path"], success=params["success"])
    if operator == "api_error_leaks":
        return proxy_ops.ErrorLeaks(path=params["path"])
    if operator == "repeat_not_idempotent":
        return proxy_ops.RepeatAnsweredFresh(path=params["path"])
    raise ValueError(f"{operator} is not a proxy operator")
