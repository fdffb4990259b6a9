"""The case model: what one eval case says, as pydantic models.

A case is one YAML file in ``cases/``. It names a behaviour, a start route and a
seed state; lists the steps (user messages and scripted user actions); carries
a reference plan (what a correct agent does, played by the reference agent);
and states the expectations the checks turn into assertions. Negative
expectations (forbidden calls, zero writes, unchanged state) weigh as much
as positive ones.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    ModelWrapValidatorHandler,
    Tag,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from webmcp_eval.data_file import FieldPath, Renames, renamed_in_model
from webmcp_eval.kinds import module_kinds
from webmcp_eval.suite.browser_context import BrowserContextSettings, check_locale, check_timezone

BEHAVIOURS: dict[str, str] = {
    "selection": "SEL — natural language maps to the right tool",
    "no_tool": "NO — stops when no tool fits",
    "arguments": "ARG — enums, required fields and opaque IDs are right",
    "clarification": "AMB — asks first when information is missing",
    "ordering": "ORD — multi-step tasks keep their order",
    "freshness": "STALE — no reuse of state from an old route or session",
    "idempotency": "REPEAT — a retry causes no second side effect",
    "human_authority": "CONF — stops before the final human click",
    "untrusted_content": "INJECT — page text does not steer the agent",
    "recovery": "RECOVERY — after an error: fix, retry or stop",
}


NO_STEPS = "a case needs steps (user messages and actions), or a user: goal for a simulated user"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# The WAI-ARIA roles Playwright's get_by_role takes (a test compares them with Playwright's own list):
# a locator by any other role finds nothing, so "absent" would always hold.
ARIA_ROLES = frozenset(
    """alert alertdialog application article banner blockquote button caption cell checkbox code columnheader
    combobox complementary contentinfo definition deletion dialog directory document emphasis feed figure form
    generic grid gridcell group heading img insertion link list listbox listitem log main marquee math menu
    menubar menuitem menuitemcheckbox menuitemradio meter navigation none note option paragraph presentation
    progressbar radio radiogroup region row rowgroup rowheader scrollbar search searchbox separator slider
    spinbutton status strong subscript superscript switch tab table tablist tabpanel term textbox time timer
    toolbar tooltip tree treegrid treeitem""".split()  # noqa: SIM905 - a list of 82 words reads better as text
)


# ---- steps -----------------------------------------------------------------


class Locator(Strict):
    """How a person finds a control: by role and accessible name, label or text.

    ``within`` scopes it to another element (a dialog, a form, a result region),
    so an assertion speaks of that element and not of the text anywhere on the page.
    """

    role: str | None = None
    name: str | None = None
    label: str | None = None
    text: str | None = None
    exact: bool = True
    within: Locator | None = Field(default=None, description="only inside this element (e.g. {role: dialog})")

    @model_validator(mode="after")
    def _one_way(self) -> Locator:
        if not (self.role or self.label or self.text):
            raise ValueError("a locator needs one of role, label or text")
        return self

    @field_validator("role")
    @classmethod
    def _aria_role(cls, value: str | None) -> str | None:
        if value is not None and value not in ARIA_ROLES:
            near = difflib.get_close_matches(value, sorted(ARIA_ROLES), n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise ValueError(f"{value!r} is not a WAI-ARIA role{hint}: no element has it, so the locator finds nothing")
        return value

    def describe(self) -> str:
        inside = f" within {self.within.describe()}" if self.within else ""
        if self.role:
            return (f"{self.role} {self.name!r}" if self.name else self.role) + inside
        if self.label:
            return f"label {self.label!r}{inside}"
        return f"text {self.text!r}{inside}"

    @property
    def page_wide_text(self) -> bool:
        """A text search over the whole page: it passes wherever the text appears."""
        return self.text is not None and self.within is None


class PlanCall(Strict):
    """One tool call of the reference plan. ``args`` may use ``{$ref: name}``."""

    call: str
    args: dict[str, Any] = Field(default_factory=dict)
    capture: dict[str, str] = Field(
        default_factory=dict, description="name -> path into {args, result}, e.g. result.data.events[0].id"
    )
    synthesized: dict[str, Any] = Field(
        default_factory=dict,
        description="argument -> the matcher its value was made up from (import): the reference agent asks "
        "the tool's schema for a better one, and a call the site refuses with it is not_run",
    )


class HistoryUser(Strict):
    user: str


class HistoryModel(Strict):
    model: str = Field(description="what the model answered earlier")


class HistoryCall(Strict):
    """An earlier call of the model and the tool's answer (canned: the page is not called)."""

    call: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: Any = None


def _history_kind(value: object) -> str | None:
    if isinstance(value, dict):
        return next((k for k in ("user", "model", "call") if k in value), None)
    kinds: dict[type, str] = {HistoryUser: "user", HistoryModel: "model", HistoryCall: "call"}
    return kinds.get(type(value))


HistoryTurn = Annotated[
    Annotated[HistoryUser, Tag("user")] | Annotated[HistoryModel, Tag("model")] | Annotated[HistoryCall, Tag("call")],
    Discriminator(
        _history_kind,
        custom_error_type="history_kind",
        custom_error_message="a history turn is {user: text}, {model: text} or {call: tool, args, result}",
    ),
]


class UserStep(Strict):
    history: list[HistoryTurn] = Field(
        default_factory=list,
        description="earlier turns of the conversation, given to a model agent before this message "
        "(the reference agent plays its plan and ignores them)",
    )
    user: str = Field(
        description="the user's message, as the user would type it; '' after a history that ends with a "
        "tool's answer: no new message, the model goes on from that answer"
    )
    plan: list[PlanCall] = Field(default_factory=list, description="reference agent: the calls to make")
    reply: str = Field(default="", description="reference agent: the answer to give")


ROUTE_HELP = (
    "a route under the site's base URL: '/' or './' is the base itself; '/cart', './cart' and 'cart' "
    "all resolve under the base path (http://host/demo/ + cart); '#/hotel/x' is a hash route of the base "
    "document; never a full URL"
)


def _route(value: str) -> str:
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]*://|//", value):
        raise ValueError(f"{value!r} is a full URL; a route is a path under the base URL (--base-url), e.g. /cart")
    return value


Route = Annotated[str, AfterValidator(_route), Field(description=ROUTE_HELP)]


class NavigateAction(Strict):
    action: Literal["navigate"]
    to: Route


class ReloadAction(Strict):
    action: Literal["reload"]


class ClickAction(Strict):
    """A click by the human (not the agent), e.g. the final confirmation."""

    action: Literal["click"]
    target: Locator
    times: int = Field(default=1, ge=1, description="clicks (0 would click nothing)")


class PressAction(Strict):
    """The human presses the control the agent stopped at: the case's confirmation control, or ``target``.

    The confirmation point is read as the agent left it just before the press; the checks after it
    (state, network, UI) judge what the press did.
    """

    action: Literal["press"]
    target: Locator | None = Field(default=None, description="default: expect.confirmation.control")
    times: int = Field(default=1, ge=1, description="presses (a person pressing again)")


class ExpireSessionAction(Strict):
    action: Literal["expire_session"]


class ChangeAction(Strict):
    """Change server data behind the page's back (test-control API)."""

    action: Literal["change"]
    op: str
    params: dict[str, Any] = Field(default_factory=dict)


class FaultAction(Strict):
    """Arm a network fault in the proxy for the next ``times`` matching requests."""

    action: Literal["fault"]
    method: str = "*"
    path: str
    times: int = Field(default=1, ge=1)
    status: int | None = Field(default=None, ge=100, le=599, description="an HTTP status, 100-599")
    delay_ms: int | None = Field(default=None, ge=0)
    drop: bool = False
    duplicate: bool = Field(default=False, description="deliver the request to the site twice (a network retry)")
    lose_answer: bool = Field(
        default=False, description="the site acts on the request; its answer is lost and the page gets a 502"
    )

    @model_validator(mode="after")
    def _one_effect(self) -> FaultAction:
        effects = [self.status is not None, self.delay_ms is not None, self.drop, self.duplicate, self.lose_answer]
        if sum(effects) != 1:
            raise ValueError("a fault needs exactly one of status, delay_ms, drop, duplicate or lose_answer")
        return self


class WaitForAction(Strict):
    action: Literal["wait_for"]
    target: Locator | None = None
    tools: list[str] = Field(default_factory=list)
    timeout_ms: int = 5000


Action = Annotated[
    NavigateAction
    | ReloadAction
    | ClickAction
    | PressAction
    | ExpireSessionAction
    | ChangeAction
    | FaultAction
    | WaitForAction,
    Field(discriminator="action"),
]


def _step_kind(value: object) -> str | None:
    if isinstance(value, dict):
        return "user" if "user" in value else "action" if "action" in value else None
    return "user" if isinstance(value, UserStep) else "action"


Step = Annotated[
    Annotated[UserStep, Tag("user")] | Annotated[Action, Tag("action")],
    Discriminator(
        _step_kind,
        custom_error_type="step_kind",
        custom_error_message="a step needs either 'user' (a message) or 'action'",
    ),
]


# ---- goal cases: a simulated user, and setup ----------------------------------


class SetupCall(Strict):
    """A tool call made before the agent starts, to put the page in its starting state (never the agent's)."""

    call: str
    args: dict[str, Any] = Field(default_factory=dict)


def _setup_kind(value: object) -> str | None:
    if isinstance(value, dict):
        return "call" if "call" in value else "action" if "action" in value else None
    return "call" if isinstance(value, SetupCall) else "action"


SetupStep = Annotated[
    Annotated[SetupCall, Tag("call")] | Annotated[Action, Tag("action")],
    Discriminator(
        _setup_kind,
        custom_error_type="setup_kind",
        custom_error_message="a setup step is a tool call {call: tool, args} or a user action {action: ...}",
    ),
]


class UserGoal(Strict):
    """A goal case: a model plays the user from this goal, instead of scripted messages.

    It sees the goal, the persona, the facts and the conversation, never the tools
    or the page, and ends the conversation with a marker (goal met, gave up); the
    runner ends it when a budget runs out.
    """

    goal: str = Field(min_length=1, description="what the user wants, in words the simulated user is given")
    persona: str = Field(default="", description="how the user talks, e.g. 'terse; answers only what is asked'")
    knows: dict[str, Any] = Field(
        default_factory=dict, description="facts the user can give (name, email, which event), name -> value"
    )
    reveal: Literal["on_ask", "upfront"] = Field(
        default="on_ask",
        description="on_ask: the simulated user is given the facts only once the agent has asked something; "
        "upfront: from its first message",
    )
    max_turns: int = Field(default=8, ge=1, le=50, description="user messages at most")
    max_seconds: float = Field(default=120.0, gt=0, le=1800, description="the whole conversation's time budget")
    rubric: Literal["after_code_checks", "always"] = Field(
        default="after_code_checks",
        description="when the model grader judges the rubric criteria: only after every code check passed, or always",
    )
    plan: list[PlanCall] | None = Field(
        default=None,
        description="reference agent: the calls to make for the goal (without one, a goal case is not_run "
        "for deterministic evidence)",
    )
    reply: str = Field(default="", description="reference agent: the answer to give")

    def as_reference_step(self) -> UserStep:
        """The goal as one scripted turn, for the reference agent (which needs its plan)."""
        return UserStep(user=self.goal, plan=self.plan or [], reply=self.reply)


# ---- expectations ----------------------------------------------------------


class ExpectedCall(Strict):
    tool: str
    args: dict[str, Any] = Field(default_factory=dict, description="argument matchers")
    no_other_args: bool = Field(default=False, description="fail when the call has arguments not listed")
    result: Any = Field(
        default=None,
        description="matcher on the tool's result: partial for a mapping, or a scalar/list/operator "
        "(none: not checked; {$type: null} expects null)",
    )
    capture: dict[str, str] = Field(default_factory=dict, description="name -> path into {args, result}")
    step: int | None = Field(default=None, description="only calls made during this user step (0-based)")
    optional: bool = Field(
        default=False,
        description="the call may be left out; made, it must match (only order: exact can tell, "
        "so it is accepted only there)",
    )


class OrderedGroup(Strict):
    """These expected calls in this order (calls of other tools between them as the case's order allows)."""

    ordered: list[ExpectedNode] = Field(min_length=1)


class UnorderedGroup(Strict):
    """These expected calls in any order, e.g. five toppings in any order, then share."""

    unordered: list[ExpectedNode] = Field(min_length=1)


def _node_kind(value: object) -> str | None:
    if isinstance(value, dict):
        for key in ("ordered", "unordered"):
            if key in value:
                return key
        return "call"
    kinds: dict[type, str] = {OrderedGroup: "ordered", UnorderedGroup: "unordered"}
    return kinds.get(type(value), "call")


ExpectedNode = Annotated[
    Annotated[ExpectedCall, Tag("call")]
    | Annotated[OrderedGroup, Tag("ordered")]
    | Annotated[UnorderedGroup, Tag("unordered")],
    Discriminator(_node_kind),
]
OrderedGroup.model_rebuild()
UnorderedGroup.model_rebuild()


def expected_leaves(
    nodes: Sequence[ExpectedNode], path: FieldPath = ("expect", "calls", "expected")
) -> list[tuple[FieldPath, ExpectedCall]]:
    """Every expected call in a tree of groups, in reading order, with its field path."""
    out: list[tuple[FieldPath, ExpectedCall]] = []
    for i, node in enumerate(nodes):
        if isinstance(node, ExpectedCall):
            out.append(((*path, i), node))
        elif isinstance(node, OrderedGroup):
            out += expected_leaves(node.ordered, (*path, i, "ordered"))
        else:
            out += expected_leaves(node.unordered, (*path, i, "unordered"))
    return out


def has_groups_or_optional(calls: CallExpectations) -> bool:
    """Whether expected calls use groups or optional calls (then the tree matcher judges them)."""
    return any(not isinstance(n, ExpectedCall) or n.optional for n in calls.expected)


class ForbiddenCall(Strict):
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    step: int | None = Field(default=None, description="only forbidden during this user step")
    why: str = ""


class CallExpectations(Strict):
    order: Literal["sequence", "set", "exact"] = Field(
        default="sequence",
        description="sequence: in this order, other calls may come between; set: any order; "
        "exact: these calls and no others, in this order",
    )
    expected: list[ExpectedNode] = Field(
        default_factory=list, description="expected calls, or groups of them: {ordered: [...]}, {unordered: [...]}"
    )
    forbidden: list[ForbiddenCall] = Field(default_factory=list)
    max_calls: int | None = None
    only_active_catalog: bool = Field(default=True, description="every call named a tool of the active catalog")
    no_stale_tools: bool = Field(default=True, description="no registration outlived the route it belongs to")
    annotations_hold: bool = Field(
        default=True,
        description="every tool's annotations hold: a tool marked readOnlyHint wrote nothing during its calls "
        "(the proxy's count per call), and each live tool's hints are those the suite's catalog gives it",
    )
    descriptions_trusted: bool = Field(
        default=True,
        description="no tool's description or annotations carry untrusted text from a result of an "
        "untrustedContentHint tool (it would reach every agent as the site's own words)",
    )
    schemas_hold: bool = Field(
        default=True,
        description="every live tool's input schema keeps the constraints (type, enum, required) the suite's "
        "catalog marks enforced by the server; other drift from the catalog is a warning",
    )
    witness_agrees: bool = Field(
        default=False,
        description="the DevTools WebMCP domain saw the same calls as the shim (a disagreement is "
        "always a warning in the trace; this makes it an assertion)",
    )


class UiExpectation(Strict):
    target: Locator
    state: Literal["visible", "hidden", "absent"] = "visible"
    value: Any = None
    text: Any = None
    summary: dict[str, Any] | None = Field(
        default=None,
        description="label -> matcher of every label/value pair the element shows (a dl's dt/dd, a table's "
        "th/td rows), read whole: a field it shows that is not named here, or named with another value, fails",
    )
    why: str = ""

    @model_validator(mode="after")
    def _checked(self) -> UiExpectation:
        given = [name for name in ("value", "text", "summary") if getattr(self, name) is not None]
        if given and self.state != "visible":
            raise ValueError(
                f"{' and '.join(given)} beside state: {self.state} is never checked (only a visible element has "
                f"one to read); to say which element must be {self.state}, put it in the target "
                "(name:, text:, within:)"
            )
        return self


class StateExpectation(Strict):
    unchanged: bool = False
    changed_only: list[str] | None = Field(default=None, description="paths that may change; all else must not")
    after: dict[str, Any] = Field(default_factory=dict, description="path -> matcher on the state after")

    @model_validator(mode="after")
    def _not_contradictory(self) -> StateExpectation:
        if self.unchanged and (self.changed_only or self.after):
            raise ValueError("unchanged: true cannot be combined with changed_only or after")
        return self


class RubricCriterion(Strict):
    """One criterion in words, judged per trial by a grader (a model, checked against people's labels)."""

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="stable name, e.g. says_cannot_know")
    criterion: str = Field(min_length=1, description="what a passing trial does, in words a person can judge")


class AnswerExpectation(Strict):
    contains: list[str] = Field(default_factory=list)
    contains_any: list[list[str]] = Field(
        default_factory=list, description="each inner list: at least one of these must appear"
    )
    not_contains: list[str] = Field(default_factory=list)
    rubric: list[RubricCriterion] = Field(
        default_factory=list,
        description="criteria in words for what code cannot check; judged by a model grader (run --grader) "
        "that sees the whole trace, and by people (webmcp-eval label)",
    )

    @field_validator("rubric")
    @classmethod
    def _unique_ids(cls, value: list[RubricCriterion]) -> list[RubricCriterion]:
        ids = [c.id for c in value]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"rubric criterion id(s) used twice: {', '.join(dupes)}")
        return value


class ConfirmationExpectation(Strict):
    """The human confirmation point: the control is there for the human and nobody pressed it.

    The control must also be actionable by a person: visible to the eye, enabled,
    named, and the control the final action goes through (the submit control of
    its form, or a control of the open dialog).
    """

    control: Locator
    pressed: bool = False


class UntrustedExpectation(Strict):
    """Untrusted content (results of tools marked untrustedContentHint) is shown as text, never as markup."""

    as_text: bool = True


# keys of a case file renamed since (README.md, "Renamed"): the old one reads as the new for one release
RENAMED_KEYS: Renames = {("expect", "network", "mutations"): "writes"}


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


class _Expectations(Strict):
    calls: CallExpectations = Field(default_factory=CallExpectations)
    network: NetworkExpectation = Field(default_factory=NetworkExpectation)
    ui: list[UiExpectation] = Field(default_factory=list)
    state: StateExpectation | None = None
    answer: AnswerExpectation | None = None
    confirmation: ConfirmationExpectation | None = None
    untrusted: UntrustedExpectation | None = Field(
        default=None, description="untrusted text with markup in it is rendered as text: no element is made of it"
    )


def _with_module_kinds(base: type[_Expectations]) -> type[_Expectations]:
    """The expect: block: its own fields, then one per kind that is a module of kinds/ (absent: not checked).

    The checks, rejudge and mutate find every kind in webmcp_eval/judge/checks.py KINDS.
    """
    fields: dict[str, Any] = {
        kind.name: (kind.model | None, Field(default=None, description=kind.description or None))
        for kind in module_kinds()
    }
    return create_model("Expectations", __base__=base, __module__=__name__, **fields)


if TYPE_CHECKING:
    Expectations = _Expectations
else:
    Expectations = _with_module_kinds(_Expectations)


class NullAgentPass(Strict):
    """The case says the null agent (the do-nothing control) passes it, and why doing nothing is right there."""

    passes: Literal[True] = Field(description="the null agent (run --agent none) passes this case")
    reason: str = Field(
        min_length=1,
        description="why doing nothing is the right behaviour here and the answer and UI checks cannot tell "
        "a silent agent from a good one",
    )

    @model_validator(mode="before")
    @classmethod
    def _shape(cls, data: object) -> Any:
        if not isinstance(data, dict):
            raise ValueError("write it as {passes: true, reason: why doing nothing is right here}")
        return data

    @field_validator("reason")
    @classmethod
    def _said(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("say why the null agent passes this case (a reason is required)")
        return value


class Case(Strict):
    id: str = Field(min_length=1, description="any short plain file name: letters, digits, '.', '_', '-'")
    behaviour: str
    title: str
    start_route: Route
    seed: str = "default"
    breaks: list[str] = Field(default_factory=list, description="site faults switched on (test mode only)")
    user: UserGoal | None = Field(
        default=None, description="a goal case: a simulated user plays the conversation from this goal"
    )
    setup: list[SetupStep] = Field(
        default_factory=list,
        description="tool calls and user actions run before the agent starts; never credited to it "
        "(their calls, writes and state changes are not the agent's)",
    )
    steps: list[Step] = Field(
        default_factory=list,
        validate_default=True,
        description="user messages and actions; a goal case (user:) has none",
    )
    expect: Expectations = Field(default_factory=Expectations)
    timezone_id: str | None = Field(
        default=None,
        description="the person's time zone for this case (IANA, e.g. America/Los_Angeles): a viewer elsewhere "
        "than the suite's; default the run's (--timezone) or the suite's",
    )
    locale: str | None = Field(default=None, description="the person's language for this case (BCP 47, e.g. en-US)")
    purpose: Literal["capability", "regression"] | None = Field(
        default=None,
        description="capability: a task agents are still learning; regression: one they should always pass "
        "(reports show the two groups apart)",
    )
    notes: str = ""
    null_agent: NullAgentPass | None = Field(
        default=None,
        description="{passes: true, reason: ...}: the null agent (the control) passes this case, and why that is "
        "right; reports flag it 'passes with no agent', and validate --control accepts it",
    )

    @model_validator(mode="wrap")
    @classmethod
    def _one_problem_for_a_broken_goal(cls, data: object, handler: ModelWrapValidatorHandler[Case]) -> Case:
        """A broken user: block is its own problem; the steps rule then has nothing to say."""
        try:
            return handler(data)
        except ValidationError as err:
            errors = err.errors()
            if not any(e["loc"][:1] == ("user",) for e in errors):
                raise
            kept = [e for e in errors if not (e["loc"] == ("steps",) and NO_STEPS in str(e.get("msg")))]
            if len(kept) == len(errors):
                raise
            # each kept problem as it was: its type and its message, already written
            details: list[InitErrorDetails] = [
                {"type": PydanticCustomError(e["type"], e["msg"]), "loc": e["loc"], "input": e["input"]} for e in kept
            ]
            raise ValidationError.from_exception_data(err.title, details) from None

    @field_validator("timezone_id")
    @classmethod
    def _timezone(cls, value: str | None) -> str | None:
        return None if value is None else check_timezone(value)

    @field_validator("locale")
    @classmethod
    def _locale(cls, value: str | None) -> str | None:
        return None if value is None else check_locale(value)

    def browser_context(self, run: BrowserContextSettings) -> BrowserContextSettings:
        """The clock and language of this case's browser contexts: its own, else the run's."""
        return BrowserContextSettings(self.timezone_id or run.timezone_id, self.locale or run.locale)

    @field_validator("steps")
    @classmethod
    def _steps_or_goal(cls, value: list[Any], info: ValidationInfo) -> list[Any]:
        # user: is declared before steps, so it is read first (a broken user: block is absent here)
        goal = info.data.get("user")
        if goal is None and not value:
            raise ValueError(NO_STEPS)
        if goal is not None and value:
            raise ValueError(
                "a goal case (user:) has no steps: its messages are the simulated user's; put actions in setup"
            )
        return value

    @property
    def reference_steps(self) -> list[Any]:
        """The steps as the reference agent plays them: a goal case's plan is one user step (none without one)."""
        if self.user is not None:
            return [self.user.as_reference_step()] if self.user.plan is not None else []
        return list(self.steps)

    @property
    def user_messages(self) -> list[str]:
        return [s.user for s in self.steps if isinstance(s, UserStep)]

    @property
    def writes(self) -> bool:
        """Whether the case is about a write (docs/design.md, "The trace": writes carry more evidence)."""
        e = self.expect
        return bool(e.network.writes or e.state or e.confirmation)


def case_json_schema() -> dict[str, Any]:
    """The JSON Schema of a case file, for editors (``webmcp-eval schema``)."""
    schema = Case.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "webmcp-eval case"
    schema["oneOf"] = [{"required": ["steps"]}, {"required": ["user"]}]  # scripted steps, or a goal case
    return schema
