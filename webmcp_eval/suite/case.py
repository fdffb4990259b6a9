"""The case model: what one eval case says, as pydantic models.

A case is one YAML file in ``cases/``. It names a behaviour, a start route and a
seed state; lists the steps (user messages and scripted user actions); carries
a reference plan (what a correct agent does, played by the reference agent);
and states the expectations the checks turn into assertions. Negative
expectations (forbidden calls, zero writes, unchanged state) weigh as much
as positive ones.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
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

from webmcp_eval.data_file import Renames
from webmcp_eval.kinds import blocks, module_kinds
from webmcp_eval.kinds._locator import ARIA_ROLES, Locator, Strict
from webmcp_eval.kinds.answer import AnswerExpectation, RubricCriterion
from webmcp_eval.kinds.calls import (
    CallExpectations,
    ExpectedCall,
    ExpectedNode,
    ForbiddenCall,
    OrderedGroup,
    UnorderedGroup,
    expected_leaves,
    has_groups_or_optional,
)
from webmcp_eval.kinds.confirmation import ConfirmationExpectation
from webmcp_eval.kinds.network import NetworkExpectation
from webmcp_eval.kinds.state import StateExpectation
from webmcp_eval.kinds.ui import UiExpectation
from webmcp_eval.kinds.untrusted import UntrustedExpectation
from webmcp_eval.suite.browser_context import BrowserContextSettings, check_locale, check_timezone

# the expectations' models live with their kinds (webmcp_eval/kinds/); they are named here too, with the case's
__all__ = [
    "ARIA_ROLES",
    "AnswerExpectation",
    "CallExpectations",
    "ConfirmationExpectation",
    "ExpectedCall",
    "ExpectedNode",
    "ForbiddenCall",
    "Locator",
    "NetworkExpectation",
    "OrderedGroup",
    "RubricCriterion",
    "StateExpectation",
    "UiExpectation",
    "UnorderedGroup",
    "UntrustedExpectation",
    "expected_leaves",
    "has_groups_or_optional",
]

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


# ---- steps -----------------------------------------------------------------


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


# ---- expectations: one field per kind (webmcp_eval/kinds/), in the order they are judged ----------------------

# keys of a case file renamed since (README.md, "Renamed"): the old one reads as the new for one release
RENAMED_KEYS: Renames = {("expect", "network", "mutations"): "writes"}


def _expectations() -> type[BaseModel]:
    """The expect: block: one field per kind, its type and default the kind's (an optional block by default:
    absent, nothing is checked). The checks, validate, the page observer, rejudge and mutate find the same kinds."""
    fields: dict[str, Any] = {kind.name: kind.expect_field() for kind in module_kinds()}
    return create_model("Expectations", __base__=Strict, __module__=__name__, **fields)


if TYPE_CHECKING:
    from webmcp_eval.kinds.consistency import ConsistencyExpectation
    from webmcp_eval.kinds.console import ConsoleExpectation
    from webmcp_eval.kinds.tool_answers import ToolAnswers

    class Expectations(Strict):
        """The expect: block as the type checker sees it: the model is built from the kinds when the module loads
        (``_expectations``), which a type checker cannot run. tests/test_kinds.py holds these fields to that
        model, name by name in its order, with the same type and default: a kind added, renamed or retyped
        fails there until it is written here too."""

        calls: CallExpectations = Field(default_factory=CallExpectations)
        network: NetworkExpectation = Field(default_factory=NetworkExpectation)
        ui: list[UiExpectation] = Field(default_factory=list)
        state: StateExpectation | None = None
        answer: AnswerExpectation | None = None
        confirmation: ConfirmationExpectation | None = None
        untrusted: UntrustedExpectation | None = None
        consistency: ConsistencyExpectation | None = None
        console: ConsoleExpectation | None = None
        tool_answers: ToolAnswers | None = None

else:
    Expectations = _expectations()


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
        """Whether the case is about a write (docs/design.md, "The trace": writes carry more evidence): a block
        of its expect: whose kind says so (its ``about_writes``: network writes, state, a confirmation point)."""
        return any(kind.about_writes(value) for kind, value in blocks(self.expect) if kind.about_writes is not None)


def case_json_schema() -> dict[str, Any]:
    """The JSON Schema of a case file, for editors (``webmcp-eval schema``)."""
    schema = Case.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "webmcp-eval case"
    schema["oneOf"] = [{"required": ["steps"]}, {"required": ["user"]}]  # scripted steps, or a goal case
    return schema
