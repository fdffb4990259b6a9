"""The user's scripted actions (play/page/actions.py) and the human windows they leave, without a browser."""

from __future__ import annotations

import typing
from typing import Any

import pytest
from playwright.async_api import Error as PlaywrightError

from tests.fake_page import Control, FakePage, run
from webmcp_eval.play.evidence.fixture_store import FixtureMissing
from webmcp_eval.play.page.actions import ACTIONS, UserActions
from webmcp_eval.play.page.human_windows import HumanWindows
from webmcp_eval.play.page.surface.log import ClickEvent
from webmcp_eval.play.run.abort import TrialAborted
from webmcp_eval.proxies.models import FaultSpec
from webmcp_eval.suite.case import Action, ClickAction, Locator
from webmcp_eval.suite.site import HookMissing, SiteConfig

CONFIRM = Locator(role="button", name="確認報名")


class FakeSite:
    """The hook tape's face: its config and the hooks the actions call."""

    def __init__(self, missing: Exception | None = None) -> None:
        self.config = SiteConfig(base_url="http://site.test")
        self.missing = missing
        self.calls: list[tuple[Any, ...]] = []

    async def expire_session(self, world: str) -> None:
        if self.missing:
            raise self.missing
        self.calls.append(("expire_session", world))

    async def change(self, world: str, op: str, params: dict[str, Any]) -> None:
        if self.missing:
            raise self.missing
        self.calls.append(("change", world, op, params))


class FakeHost:
    def __init__(self) -> None:
        self.waited: list[tuple[list[str] | None, int | None]] = []

    async def wait_for_tools(self, names: list[str] | None = None, timeout_ms: int | None = None) -> None:
        self.waited.append((names, timeout_ms))


class FakeProxy:
    def __init__(self) -> None:
        self.armed: list[tuple[str, FaultSpec]] = []

    def arm_fault(self, trial_id: str, fault: FaultSpec) -> None:
        self.armed.append((trial_id, fault))


def user(page: FakePage, site: FakeSite | None = None, proxy: FakeProxy | None = None) -> UserActions:
    return UserActions(
        page,  # type: ignore[arg-type]
        FakeHost(),  # type: ignore[arg-type]
        site or FakeSite(),  # type: ignore[arg-type]
        "run-X-01-t1",
        "X-01.t1",
        proxy,  # type: ignore[arg-type]
        HumanWindows(page, page.events),  # type: ignore[arg-type]
    )


def step(**fields: Any) -> Any:
    """One action step as a case file gives it."""
    from pydantic import TypeAdapter

    return TypeAdapter(Action).validate_python(fields)


def test_every_action_of_the_case_format_has_a_handler() -> None:
    (union, *_) = typing.get_args(Action)
    assert set(typing.get_args(union)) == set(ACTIONS)


def test_an_action_without_a_handler_stops_the_trial_as_a_runner_fault() -> None:
    with pytest.raises(TrialAborted) as err:
        run(user(FakePage()).perform(CONFIRM))
    assert err.value.kind == "runner"


def test_a_human_click_clicks_the_control_inside_a_human_window() -> None:
    page = FakePage({CONFIRM.describe(): Control(text="確認報名")})
    actions = user(page)
    run(actions.perform(ClickAction(action="click", target=CONFIRM, times=2)))
    assert page.did == [("click", CONFIRM.describe())] * 2
    (window,) = actions.humans.windows
    clicks = [i for i, e in enumerate(page.events) if isinstance(e, ClickEvent)]
    assert all(actions.humans.by_human(i, page.events[i]) for i in clicks)
    assert window == (clicks[0] - 1, clicks[-1] + 1)  # between the two marks


def test_a_human_click_on_a_missing_control_fails_the_step_and_leaves_no_window() -> None:
    page = FakePage()
    actions = user(page)
    with pytest.raises(PlaywrightError, match="Timeout"):
        run(actions.perform(ClickAction(action="click", target=CONFIRM)))
    assert actions.humans.windows == [] and page.did == []


def test_navigate_follows_the_pages_own_link_when_there_is_one() -> None:
    page = FakePage(links=["http://site.test/events/1"])
    run(user(page).perform(step(action="navigate", to="/events/1")))
    assert page.did == [("click", "a[href][0]"), ("wait_for_url", "http://site.test/events/1")]


def test_navigate_without_a_link_goes_to_the_url() -> None:
    page = FakePage(links=["http://site.test/other"])
    run(user(page).perform(step(action="navigate", to="/events/1")))
    assert page.did == [("goto", "http://site.test/events/1")]


def test_reload_reloads_the_page() -> None:
    page = FakePage()
    run(user(page).perform(step(action="reload")))
    assert page.did == [("reload", "http://site.test/")]


def test_site_changes_go_to_the_trials_world() -> None:
    site = FakeSite()
    actions = user(FakePage(), site)
    run(actions.perform(step(action="expire_session")))
    run(actions.perform(step(action="change", op="cancel_event", params={"id": 1})))
    assert site.calls == [("expire_session", "run-X-01-t1"), ("change", "run-X-01-t1", "cancel_event", {"id": 1})]


@pytest.mark.parametrize(
    ("missing", "kind", "says"),
    [
        (HookMissing("expire_session"), "case", "needs the site's expire_session hook"),
        (FixtureMissing("no tape"), "fixture", "no tape"),
    ],
)
def test_a_hook_the_site_lacks_or_replay_has_no_tape_for_stops_the_trial(missing, kind, says) -> None:
    with pytest.raises(TrialAborted, match=says) as err:
        run(user(FakePage(), FakeSite(missing)).perform(step(action="expire_session")))
    assert err.value.kind == kind


def test_a_fault_is_armed_in_the_proxy_for_this_trial() -> None:
    proxy = FakeProxy()
    run(user(FakePage(), proxy=proxy).perform(step(action="fault", method="POST", path="/api/*", status=503)))
    ((trial, fault),) = proxy.armed
    assert trial == "X-01.t1" and (fault.method, fault.path, fault.status, fault.times) == ("POST", "/api/*", 503, 1)


def test_a_fault_without_the_proxy_stops_the_trial_as_the_cases_fault() -> None:
    with pytest.raises(TrialAborted, match="needs the proxy") as err:
        run(user(FakePage()).perform(step(action="fault", path="/api/*", drop=True)))
    assert err.value.kind == "case"


def test_wait_for_waits_for_the_control_and_the_tools() -> None:
    page = FakePage({CONFIRM.describe(): Control()})
    actions = user(page)
    run(actions.perform(step(action="wait_for", target=CONFIRM.model_dump(), tools=["book"], timeout_ms=700)))
    assert page.did == [("wait_for", CONFIRM.describe())]
    assert actions.host.waited == [(["book"], 700)]  # type: ignore[attr-defined]


def test_wait_for_a_control_that_never_comes_fails_the_step() -> None:
    with pytest.raises(PlaywrightError):
        run(user(FakePage()).perform(step(action="wait_for", target=CONFIRM.model_dump())))


# -- human windows (webmcp_eval/play/page/human_windows.py) --


def test_a_click_is_the_humans_only_inside_a_window_and_only_when_trusted() -> None:
    page = FakePage()
    humans = HumanWindows(page, page.events)  # type: ignore[arg-type]
    humans.windows = [(2, 5)]
    click, scripted = ClickEvent(kind="click", raw={}), ClickEvent(kind="click", raw={}, trusted=False)
    assert humans.by_human(3, click)
    assert not humans.by_human(3, scripted)  # a page script's click
    assert not humans.by_human(5, click) and not humans.by_human(1, click)


def test_a_mark_splits_the_log_where_the_shim_reported_it() -> None:
    page = FakePage()
    page.report({"type": "call"})
    page.report({"type": "click"})
    humans = HumanWindows(page, page.events)  # type: ignore[arg-type]
    assert run(humans.mark("human-begins")) == 2
    assert page.events[2].reported() == {"type": "mark", "label": "human-begins-1"}


def test_a_page_that_cannot_take_a_mark_is_split_at_the_end_of_the_log() -> None:
    page = FakePage()
    page.takes_marks = False
    page.report({"type": "call"})
    assert run(HumanWindows(page, page.events).mark("human-ends")) == 1  # type: ignore[arg-type]


# -- locate (webmcp_eval/play/page/locate.py) --


def test_a_locator_finds_by_role_label_or_text_and_within_another() -> None:
    from webmcp_eval.play.page.locate import locate

    page = FakePage()
    dialog = Locator(role="dialog")
    inside = Locator(role="button", name="確認", within=dialog)
    assert locate(page, CONFIRM).key == "button '確認報名'"  # type: ignore[arg-type, attr-defined]
    assert locate(page, Locator(label="Email")).key == "label 'Email'"  # type: ignore[arg-type, attr-defined]
    assert locate(page, Locator(text="Sold out")).key == "text 'Sold out'"  # type: ignore[arg-type, attr-defined]
    assert locate(page, inside).key == inside.describe() == "button '確認' within dialog"  # type: ignore[arg-type, attr-defined]
