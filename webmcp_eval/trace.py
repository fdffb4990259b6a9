"""The trace: one JSON file per trial, the evidence behind its verdict.

Every field docs/design.md ("The trace") lists is here (revision, start route, prompt, active
catalog per step, tool calls and inputs, results, AI result, verdict; for
writes the write count, visible UI, state before/after and the human
confirmation point), plus the evidence kind, agent, timings, every assertion
and the WebMCP path. Files are written atomically (temp file, fsync, rename),
so a killed run leaves only complete traces behind.

Over 500 lines on purpose: this is the one model of the trace file, ``Trace`` and
the records its fields hold (each record is read only as part of a trace), and
every module that reads or writes a trace imports them from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from webmcp_eval.data_file import RUN_FILE_DEPTH, FileProblem, Renames, load_json, renamed_in_model
from webmcp_eval.proxies.files import (
    write_atomic as write_atomic,  # the runner writes its files through webmcp_eval.trace
)

TRACE_SCHEMA_VERSION = 1

Verdict = Literal["passed", "failed", "not_run"]
# deterministic: the reference agent plays the case's plan; agent: a model or harness; control: the null
# agent (webmcp_eval/agents/null.py), which does nothing. Each is a series of its own in every report.
EvidenceKind = Literal["deterministic", "agent", "control", "simulated_user"]
Status = Literal["passed", "failed", "not_run"]
WebMCPPath = Literal["native", "shim", "unknown"]  # the browser's own WebMCP, the shim's polyfill, or not known
# Why a trial could not run, as data (webmcp_eval/play/run/retry.py retries only "infrastructure"):
#   infrastructure  the browser crashed or its connection was lost; the site was unreachable or answered 5xx
#   setup           the site answered, but not as a case needs (4xx, no tools, a page error, state_js)
#   case            the case asks for what the site or run lacks (a site hook, the proxy, a reset for breaks)
#   fixture         record/replay: no recording to answer from
#   evidence        the checks lacked evidence for an assertion; or the case states no expectations
#   checker         a check raised
#   step            a scripted step could not be performed (a control that is not there)
#   agent           the agent could not go on (model error, budget, a capture that found nothing)
#   timeout         the trial did not finish in time
#   runner          a bug of the runner itself (an external agent harness that fails is "agent")
NotRunKind = Literal[
    "infrastructure", "setup", "case", "fixture", "evidence", "checker", "step", "agent", "timeout", "runner"
]
# kinds renamed since: a stored trace with the old name reads as the new one
RENAMED_NOT_RUN_KINDS = {"harness": "runner"}


def _renamed_kind(value: object) -> object:
    """A not_run kind as stored, in today's name (traces written before a rename still read)."""
    return RENAMED_NOT_RUN_KINDS.get(value, value) if isinstance(value, str) else value


StoredNotRunKind = Annotated[NotRunKind, BeforeValidator(_renamed_kind)]
# evidence kinds renamed since: a stored trace or plan with the old name reads as the new one
RENAMED_EVIDENCE_KINDS = {"baseline": "control"}


def _renamed_evidence_kind(value: object) -> object:
    """An evidence kind as stored, in today's name (traces and plans written before a rename still read)."""
    return RENAMED_EVIDENCE_KINDS.get(value, value) if isinstance(value, str) else value


StoredEvidenceKind = Annotated[EvidenceKind, BeforeValidator(_renamed_evidence_kind)]


# ---- sub-records: the items of the trace's lists, typed ------------------------------------------
#
# Each is a model read by attribute, so a misspelt name raises where a string key would read None.
# A trace on disk keeps its shape: a record writes back exactly the keys it was given, in their
# order, and keeps keys it does not declare, so a trace read and written again is the same file,
# old traces included. Numbers are ``int | float`` where the producer (the page, the proxy) may
# write either: a declared ``float`` would turn 1 into 1.0.


class Record(BaseModel):
    """A trace sub-record: declared fields typed, undeclared keys kept, written back as given."""

    model_config = ConfigDict(extra="allow")
    _keys: tuple[str, ...] = PrivateAttr(default=())
    renamed: ClassVar[Renames] = {}  # (old key,) -> new key: a stored record's old key reads as the new one

    @model_validator(mode="wrap")
    @classmethod
    def _remember_keys(cls, data: object, handler: ModelWrapValidatorHandler[Record]) -> Record:
        data = renamed_in_model(data, cls.renamed)
        record = handler(data)
        if isinstance(data, Mapping):
            record._keys = tuple(data)
        return record

    @model_serializer(mode="wrap")
    def _as_given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        given = self.model_fields_set | set(self.model_extra or {})
        keys = [k for k in self._keys if k in given]
        keys += [k for k in data if k in given and k not in keys]  # set since: declared order, then extras
        return {k: data[k] for k in keys if k in data}


class UiObservation(Record):
    """What the page showed of one ui expectation's target (webmcp_eval/play/run/trial.py ``_observe_one``)."""

    target: str  # the locator, described: the expectation it answers has the same description
    count: int | None = None  # elements found; None: not counted (see error)
    visible: bool | None = None  # the first of them
    text: str | None = None  # its inner text, when there was one
    value: str | None = None  # its input value, when it is a form control (absent otherwise)
    # its label/value pairs (dl's dt/dd, th/td rows), read only for a summary expectation
    pairs: list[list[str]] | None = Field(default=None, exclude_if=lambda v: v is None)
    error: str | None = None  # why it could not be observed


class WriteRecord(Record):
    """A request that changed something (the proxy's ``RequestRecord``, as the trace keeps it)."""

    method: str
    path: str
    url: str | None = None
    host: str | None = None
    port: int | None = None
    query: str | None = None
    status: int | None = None  # None: no answer (dropped, failed upstream)
    outbound: bool = False  # to another host than the site's
    fault: str | None = None  # the fault effect applied to it
    replay: str | None = None  # replay mode: hit or miss
    error: str | None = None


class OutboundRecord(Record):
    """A request to another host than the site's, passed or blocked (counted: one record, one request)."""

    method: str | None = None
    url: str | None = None
    host: str | None = None
    port: int | None = None
    path: str | None = None
    status: int | None = None
    blocked: bool = False
    write: bool = False
    renamed: ClassVar[Renames] = {("mutation",): "write"}
    outbound: bool = True
    error: str | None = None


class BlockedRecord(Record):
    """A request the proxy refused to pass on."""

    method: str | None = None
    url: str
    reason: str | None = None


class FaultRecord(Record):
    """A fault the case armed that broke a request."""

    method: str | None = None
    url: str | None = None
    path: str | None = None
    effect: str | None = None


class ReplayMissRecord(Record):
    """A request that replay could not answer from the fixture."""

    method: str | None = None
    url: str | None = None
    summary: str  # one line: what was asked and why nothing answered


class FrameRecord(Record):
    """The frame a shim event came from: the top page or a frame (iframe) in it.

    Traces before frames were logged have none: every event there is the top page's.
    """

    url: str | None = None  # the frame document's URL when the event happened
    origin: str | None = None
    top: bool = True  # the top page itself, not a frame in it
    same_origin: bool | None = None  # same origin as the top page
    allow: str | None = None  # the frame element's allow attribute (absent: not read, or the top page)
    tools_allowed: bool | None = None  # whether the frame's permissions policy allows "tools"

    @property
    def path(self) -> str | None:
        return urlsplit(self.url).path or "/" if self.url else None


class RegistrationEvent(Record):
    """One event of the shim's registration log: a document loaded, a tool registered, withdrawn or refused."""

    type: str  # loaded, register, unregister, register_error, refused
    instance: int | None = None  # the shim's number for a registration (counts per document)
    route: str | None = None  # the path of its frame's document when it happened
    document: str | None = None  # which document (traces before documents have none)
    frame: FrameRecord | None = None  # which frame's document (traces before frames have none: the top page)
    error: str | None = None  # register_error: the browser's (or the page's) reason for refusing it
    declarative: bool | None = None  # a form's tool (toolname attribute), not registerTool's
    # As the page passed them to registerTool: a broken page may pass anything, and the trace keeps it
    # (a register_error says what went wrong); read them through tool_name and hints.
    name: Any = None
    annotations: Any = None

    @property
    def tool_name(self) -> str | None:
        return self.name if isinstance(self.name, str) else None

    @property
    def hints(self) -> dict[str, Any]:
        """The annotations (readOnlyHint, untrustedContentHint, ...); none when the page passed no object."""
        return self.annotations if isinstance(self.annotations, dict) else {}


class StaleRegistration(Record):
    """A registration still active after its route was left."""

    instance: int
    name: Any  # the tool's name as the page passed it (see RegistrationEvent)
    route: str | None = None  # where it was registered (in its own frame)
    frame: FrameRecord | None = None  # the frame it was registered in (none: the top page)


class StateChange(Record):
    """One difference between the server state before and after the trial (``checks.state_diff``)."""

    path: str
    change: Literal["added", "removed", "changed"]
    before: Any = None
    after: Any = None


class ActionableRecord(Record):
    """What a person meets at a control (``probes.actionable``); None: the probe did not say."""

    enabled: bool | None = None
    opacity: int | float | None = None
    hidden_by_style: bool | None = None
    size: list[int | float] | None = None
    pointer_events: str | None = None
    reachable: bool | None = None
    covered: bool | None = None  # None also when the control is outside the viewport
    name: str | None = None
    submits_form: bool | None = None
    in_open_dialog: bool | None = None


class HumanClick(Record):
    seq: int | None = None
    text: str | None = None


class ConsistencyRecord(Record):
    """The page right after a call of a tool ``expect.consistency`` names: what it shows for that call."""

    call: int  # index into Trace.calls
    tool: str
    selector: str
    count: int | None = None  # a count selector's number
    items: list[str] | None = None  # a list selector's items, each its text
    error: str | None = None  # why the page could not be read (no element, no number, the page went away)


class UntrustedText(Record):
    """Untrusted text with markup in it, and what the page made of it (``probes.untrusted_rendering``)."""

    text: str
    elements: list[str] | None = None  # selectors of elements made of its markup; None: not read
    shown_as_text: bool | None = None


class WitnessEvent(Record):
    """One event of the DevTools WebMCP domain (webmcp_eval/play/browser/session.py keeps it slim)."""

    event: str  # toolsAdded, toolsRemoved, toolInvoked, toolResponded
    t_ms: int | float | None = None  # since the trial started
    toolName: str | None = None  # as DevTools names it (toolInvoked)
    input: Any = None
    tools: list[str | None] | None = None  # toolsAdded, toolsRemoved: the tools' names
    frame_id: str | None = None  # DevTools' id of the frame whose document it was (traces before frames: none)
    top: bool | None = None  # that frame is the top page's
    frame_url: str | None = None  # that frame's URL when it happened (when DevTools said)


class EarlierAttempt(Record):
    """An attempt before this one (--retries), whose trace was set aside (webmcp_eval/rundir/attempts.py)."""

    attempt: int
    verdict: Verdict
    kind: StoredNotRunKind | None = None
    reason: str = ""
    duration_ms: int | float | None = None
    trace: str  # its trace file, relative to this one


class ConversationTurn(Record):
    """One message of a goal case's conversation: who said it, what, and when (ms since the trial started)."""

    who: Literal["user", "agent"]
    text: str
    at_ms: int | float = 0
    turn: int = 0  # the user's turn it belongs to (0-based)


class ConversationRecord(BaseModel):
    """A goal case's conversation with the simulated user (webmcp_eval/agents/simulated_user.py), and why it ended.

    ``ended``: goal_met and gave_up are the simulated user's markers; max_turns and max_seconds are its
    budgets; agent_stopped: the agent's own limits; scripted: the reference agent played the goal's plan;
    simulator_error: the simulated user could not answer (the trial is not_run).
    """

    simulator: str  # provider:model:vN, or "scripted"
    turns: list[ConversationTurn] = Field(default_factory=list)
    ended: str = ""
    ended_detail: str = ""
    revealed: dict[str, int] = Field(default_factory=dict)  # fact -> the user turn that first gave its value
    facts_shown_from: int | None = None  # the simulator's request from which it was given the facts
    log: dict[str, Any] = Field(default_factory=dict)  # the simulator's requests, tokens, cassette


class SetupRecord(BaseModel):
    """What the case's setup did before the agent started: never credited to the agent."""

    calls: list[ToolCall] = Field(default_factory=list)
    actions: list[Any] = Field(default_factory=list)
    writes: list[WriteRecord] = Field(default_factory=list)  # writes setup made: not the agent's

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: object) -> Any:
        return renamed_in_model(data, {("mutations",): "writes"})  # traces from before the rename


class ToolCall(BaseModel):
    index: int
    step: int  # index of the case step during which the call was made
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    error: str | None = None
    refused: bool = False  # the host refused it: the tool was not in the active catalog
    in_catalog: bool = True
    # argument -> how the reference plan's made-up value was chosen (suite/synthesize.py); written only then
    synthesized: dict[str, str] | None = Field(default=None, exclude_if=lambda v: v is None)
    route: str = ""
    instance: int | None = None  # the shim's registration instance that ran it
    document: str | None = None  # the document that registered it (instances count per document)
    # the frame whose handler ran it, as the shim saw it at the call; written only when known
    frame: FrameRecord | None = Field(default=None, exclude_if=lambda v: v is None)
    # "devtools": made through the DevTools WebMCP domain, the frame's own listing having hung
    via: str | None = Field(default=None, exclude_if=lambda v: v is None)
    # the writes the proxy counted while the call ran ("POST /api/saved"); None: not counted (no proxy)
    writes: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)
    # what was changed to bring the site's answer within bounds (a lone surrogate escaped, an answer cut to its
    # cap: webmcp_eval/play/page/surface/bounds.py); written only then
    bounds: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)
    started_ms: float = 0.0  # since the trial started
    duration_ms: float = 0.0


class StepRecord(BaseModel):
    # the trial assigns the page's and the proxy's dicts: they become typed records (or a clear error) here
    model_config = ConfigDict(validate_assignment=True)

    index: int
    kind: Literal["user", "action"]
    input: Any  # the user's message, or the action as written in the case
    route_before: str = ""
    route_after: str = ""
    catalog: list[str] = Field(default_factory=list)  # active tool names when the step began
    catalog_after: list[str] = Field(default_factory=list)
    calls: list[int] = Field(default_factory=list)  # indexes into Trace.calls
    reply: str | None = None
    error: str | None = None
    # a scripted human step the page did not let happen (it never showed the control): the trial fails here
    not_shown: str | None = Field(default=None, exclude_if=lambda v: v is None)
    stale_registrations: list[StaleRegistration] = Field(default_factory=list)  # outlived their route
    duration_ms: float = 0.0


class SettleRecord(Record):
    """One wait for the page to settle (webmcp_eval/play/page/toolhost.py): after the start route, a setup
    step, a trial step or an agent's call."""

    step: int = 0  # the step it followed (-1: setup); the start route's comes before step 0 begins
    at_ms: int | float = 0  # when it began, since the trial started (the clock of the calls' started_ms)
    route: str = ""
    # quiet: nothing was left under way; window: the fixed quiet window closed (suite.yaml settle: window);
    # cap: it stopped waiting with something still under way (waited_for says what)
    reason: str = "quiet"
    # what it waited for: request (the page's), registration (the shim's), dom (the document changing),
    # tools (a wanted tool, or any tool on an empty page), document (a new document loading)
    waited_for: list[str] = Field(default_factory=list)
    ms: int | float = 0


class PageError(BaseModel):
    """An error the page's own scripts reported during the trial (docs/design.md, "The trace")."""

    source: Literal["exception", "console"]  # uncaught (an exception or a rejected promise), or console.error()
    text: str  # its first line


class Assertion(BaseModel):
    id: str  # stable within a case, e.g. "calls.expected[0]"
    kind: str  # calls, forbidden, catalog, stale, result, network, ui, state, answer, confirmation
    description: str
    status: Status
    why: str = ""  # the reason it passed, failed or could not run
    evidence: Any = None
    # Who judged it: code (the checks), a model grader (rubric criteria) or a person. Reports keep them apart.
    grader: Literal["code", "model", "human"] = "code"
    gates: bool = True  # False: shown, but not part of the verdict (a model grader not calibrated well enough)

    @field_validator("id", mode="before")
    @classmethod
    def _renamed(cls, value: object) -> Any:
        """An id as a stored trace has it, in today's words (the rules under expect.network.mutations are
        expect.network.writes now): a re-judged trace compares its checks by id."""
        if isinstance(value, str) and value.startswith("network.mutations["):
            return "network.writes[" + value.removeprefix("network.mutations[")
        return value


class NetworkRecord(BaseModel):
    # the trial assigns the page's and the proxy's dicts: they become typed records (or a clear error) here
    model_config = ConfigDict(validate_assignment=True)

    requests: int = 0
    writes: list[WriteRecord] = Field(default_factory=list)
    write_counts: dict[str, int] = Field(default_factory=dict)
    blocked: list[BlockedRecord] = Field(default_factory=list)
    # every request to another host than the site's (a font CDN, an analytics beacon, a leak),
    # whether it passed or was blocked; an assertion only where the case or the site asks
    outbound: list[OutboundRecord] = Field(default_factory=list)
    outbound_expected: int | None = None  # the site's (suite's) default ask, for cases that say nothing
    faults_fired: list[FaultRecord] = Field(default_factory=list)
    replay_misses: list[ReplayMissRecord] = Field(default_factory=list)
    available: bool = True  # False when the proxy was off: network checks are not_run

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: object) -> Any:
        return renamed_in_model(data, {("mutations",): "writes", ("mutation_counts",): "write_counts"})


class UiRecord(BaseModel):
    # the trial assigns the page's and the proxy's dicts: they become typed records (or a clear error) here
    model_config = ConfigDict(validate_assignment=True)

    url: str = ""
    aria_snapshot: str | None = None
    screenshot: str | None = None  # path relative to the trace file
    observations: list[UiObservation] = Field(default_factory=list)  # one per ui expectation, in its order


class StateRecord(BaseModel):
    # the trial assigns the page's and the proxy's dicts: they become typed records (or a clear error) here
    model_config = ConfigDict(validate_assignment=True)

    available: bool = False  # False when the site has no state hook
    before: Any = None
    after: Any = None
    diff: list[StateChange] = Field(default_factory=list)
    source: str = ""  # "http" (the site's state hook) or "page" (the site's state_js, read in the page)


class PressRecord(BaseModel):
    """The final control pressed where the case plays no press: in a fork of the trial (a world of its own, reset
    to the case's seed, setup and the agent's calls replayed in a new context of the same browser, its traffic
    counted apart from the trial's), so what the press makes is seen and the trial's own world is never written.
    webmcp_eval/play/page/press.py makes it; docs/cases.md, "The confirmation point", says how it is judged."""

    # "fork": pressed in the fork; "trial": the case's own steps press it (they judge what followed);
    # "none": not pressed, ``not_pressed`` says why (confirmation.actionable then reads the control only)
    context: Literal["fork", "trial", "none"] = "none"
    not_pressed: str | None = Field(default=None, exclude_if=lambda v: v is None)
    replayed: list[str] = Field(default_factory=list)  # what brought the fork to the confirmation point, in order
    pressed: str | None = Field(default=None, exclude_if=lambda v: v is None)  # the control pressed
    press_error: str | None = Field(default=None, exclude_if=lambda v: v is None)  # the press could not happen
    expected: list[str] = Field(default_factory=list)  # the writes the case names for it ("POST /api/x"; "total")
    writes: list[WriteRecord] = Field(default_factory=list)  # the writes the press made (the fork's account)
    url_before: str = ""
    url_after: str = ""
    # the trial's own world's state read before and after the fork (None: the site has no state hook)
    trial_world_unchanged: bool | None = None

    def made(self) -> list[WriteRecord]:
        """The press's writes the case names, each answered (a write to nowhere, answered 404, made nothing)."""
        answered = [w for w in self.writes if w.status is not None and w.status < 400 and not w.outbound]
        if "total" in self.expected:
            return answered
        keys = [key.partition(" ") for key in self.expected]
        return [
            w for w in answered if any(fnmatchcase(w.method, m.upper()) and fnmatchcase(w.path, p) for m, _, p in keys)
        ]


class ConfirmationRecord(BaseModel):
    # the trial assigns the page's and the proxy's dicts: they become typed records (or a clear error) here
    model_config = ConfigDict(validate_assignment=True)

    control: str
    found: bool = False
    visible: bool = False
    pressed_by_agent: bool = False
    pressed_by_human: bool = False
    human_clicks: list[HumanClick] = Field(default_factory=list)
    actionable: ActionableRecord | None = None  # what a person meets: enabled, opacity, reach, name, form/dialog
    # why the control could not be observed (the page or browser failed): found and visible say nothing then.
    # Written only when there is one, so every other trace keeps its shape.
    error: str | None = Field(default=None, exclude_if=lambda v: v is None)
    # the control pressed in a fork of the trial, and what followed; None: a trace made before presses were played
    press: PressRecord | None = Field(default=None, exclude_if=lambda v: v is None)


class WitnessRecord(BaseModel):
    """The DevTools WebMCP domain's view, compared with the shim's log."""

    available: bool = False
    events: list[WitnessEvent] = Field(default_factory=list)
    disagreements: list[str] = Field(default_factory=list)
    # calls in a frame DevTools does not see (a cross-site frame runs in its own process): neither agreement
    # nor disagreement; written only when there are some
    unwitnessed: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)


class Trace(BaseModel):
    # the trial assigns the page's and the proxy's dicts: they become typed records (or a clear error) here
    model_config = ConfigDict(validate_assignment=True)

    schema_version: int = TRACE_SCHEMA_VERSION
    run_id: str
    # the plan it was played for (webmcp_eval/rundir/plan.py plan_hash): a trace of another run is never mixed in
    plan_hash: str | None = Field(default=None, exclude_if=lambda v: v is None)
    trial_id: str
    trial_index: int = 0
    world: str = ""  # the server-side world it ran in (run, shard and trial)
    case_id: str
    case_file: str = ""
    case: dict[str, Any] = Field(default_factory=dict)  # the case as it was run, so a trace replays on its own
    behaviour: str
    title: str = ""
    evidence_kind: StoredEvidenceKind = "deterministic"
    agent: str = "reference"
    model: str | None = None
    site_name: str = ""
    site_revision: str | None = None
    base_url: str = ""
    network_mode: str = "live"
    webmcp_path: WebMCPPath = "unknown"
    browser: dict[str, str] = Field(default_factory=dict)
    # the browser context's pinned time zone and locale (suite.yaml); None in traces made before they were pinned
    timezone_id: str | None = Field(default=None, exclude_if=lambda v: v is None)
    locale: str | None = Field(default=None, exclude_if=lambda v: v is None)
    start_route: str
    prompt: list[str] = Field(default_factory=list)
    steps: list[StepRecord] = Field(default_factory=list)
    calls: list[ToolCall] = Field(default_factory=list)
    registrations: list[RegistrationEvent] = Field(default_factory=list)  # the shim's log
    # tool -> the distinct input schemas the pages of this trial registered it with (None: not recorded)
    live_tools: dict[str, list[Any]] | None = Field(default=None, exclude_if=lambda v: v is None)
    ai_result: str | None = None
    network: NetworkRecord = Field(default_factory=NetworkRecord)
    ui: UiRecord = Field(default_factory=UiRecord)
    state: StateRecord = Field(default_factory=StateRecord)
    confirmation: ConfirmationRecord | None = None
    untrusted_rendering: list[UntrustedText] | None = None  # per untrusted text with markup: elements made of it
    # the page after each call of the tool expect.consistency names; None: not read (no such expectation)
    consistency: list[ConsistencyRecord] | None = Field(default=None, exclude_if=lambda v: v is None)
    witness: WitnessRecord = Field(default_factory=WitnessRecord)
    # the page's errors from its start route to the verdict, in order; None: not recorded (no page was opened,
    # or a trace made before they were kept)
    page_errors: list[PageError] | None = Field(default=None, exclude_if=lambda v: v is None)
    # each wait for the page to settle, in order; None: not recorded (a trace made before they were kept)
    settles: list[SettleRecord] | None = Field(default=None, exclude_if=lambda v: v is None)
    assertions: list[Assertion] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)  # worth a look, not an assertion (e.g. the witness disagrees)
    verdict: Verdict = "not_run"
    verdict_reason: str = ""
    not_run_kind: StoredNotRunKind | None = None  # set exactly when the verdict is not_run
    # the suite catalog's hints of the tools ({route pattern: {tool: {readOnlyHint: true, ...}}}): each live
    # registration is held to them (calls.annotations); None: the run had no catalog with hints
    catalog_hints: dict[str, dict[str, dict[str, Any]]] | None = Field(default=None, exclude_if=lambda v: v is None)
    # the suite catalog's input schemas and the arguments whose constraints the server enforces ({"routes":
    # {route: {tool: schema}}, "enforced": {route: {tool: [argument]}}}): each live registration is held to
    # them (tools.schemas); None: the run had no catalog
    catalog_schemas: dict[str, Any] | None = Field(default=None, exclude_if=lambda v: v is None)
    # each registered tool whose description speaks to the agent (the audit's rule); None: not read
    tool_instructions: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)
    # why the trial stopped before the page and the state were read: its unread checks are "not reached"
    stopped: str | None = Field(default=None, exclude_if=lambda v: v is None)
    attempt: int = 1  # --retries: which attempt this is; earlier ones are kept under attempts/
    earlier_attempts: list[EarlierAttempt] = Field(default_factory=list)
    tokens: dict[str, int] = Field(default_factory=dict)
    cost_usd: float | None = None
    playwright_trace: str | None = None  # Playwright's trace.zip, relative to the trace file (--trace)
    agent_log: dict[str, Any] = Field(default_factory=dict)  # model agents: system prompt, turns, usage
    harness: dict[str, Any] = Field(default_factory=dict)  # external harness: command, version, per-step output
    grader: dict[str, Any] = Field(default_factory=dict)  # model grader: who, verdicts, reasoning, tokens, cost
    # a goal case: the conversation with the simulated user, and what setup did (both absent otherwise)
    conversation: ConversationRecord | None = Field(default=None, exclude_if=lambda v: v is None)
    setup: SetupRecord | None = Field(default=None, exclude_if=lambda v: v is None)
    started_at: str = ""
    duration_ms: float = 0.0
    timings: dict[str, float] = Field(default_factory=dict)
    # webmcp-eval rejudge: the run it was judged in first and what it said then (only in a re-judged run)
    rejudged: dict[str, Any] = Field(default_factory=dict, exclude_if=lambda v: not v)

    @field_validator("trial_id")
    @classmethod
    def _a_file_name(cls, value: str) -> str:
        """A trial id names the trace's file: never a path that leaves its folder (``../x``, ``/x``)."""
        if not value or value in (".", "..") or any(c in value for c in "/\\\0"):
            raise ValueError("a trial id is a file name in trials/, without / \\ or ..")
        return value

    @property
    def assertions_passed(self) -> int:
        return sum(a.status == "passed" for a in self.assertions)

    @property
    def write_total(self) -> int:
        return len(self.network.writes)


def assertions_verdict(assertions: list[Assertion], when_none: str) -> tuple[Verdict, str]:
    """The one verdict rule: failed if any failed, else not_run if any lacks evidence, else passed.

    ``when_none`` is the not_run reason when there is nothing to judge. Shared by the
    trial's own verdict and each evidence series' verdict, so the two never drift apart.
    """
    failed = [a for a in assertions if a.status == "failed"]
    if failed:
        return "failed", "; ".join(f"{a.description}: {a.why}" for a in failed)
    missing = [a for a in assertions if a.status == "not_run"]
    if missing:
        return "not_run", "no evidence for: " + "; ".join(f"{a.description} ({a.why})" for a in missing)
    if not assertions:
        return "not_run", when_none
    return "passed", f"all {len(assertions)} assertions passed"


def write_trace(trace: Trace, directory: Path) -> Path:
    path = directory / f"{trace.trial_id}.json"
    write_atomic(path, trace.model_dump_json(indent=2) + "\n")
    return path


def read_trace(path: Path) -> Trace:
    """The trace in a file; a ValueError naming the file and the first field that is wrong."""
    try:
        return Trace.model_validate(load_json(path, RUN_FILE_DEPTH))
    except FileProblem as err:
        raise ValueError(err.at(path)) from None
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise ValueError(f"{path}: not a trace: {where}: {first['msg']}") from None
