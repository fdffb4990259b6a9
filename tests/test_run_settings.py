"""A run's settings are frozen once built; its state (plan, selection, live objects, test seam) is apart from them."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator

import pytest
from eval_support import suite_cases

from webmcp_eval.agents.reference import ReferenceAgent
from webmcp_eval.errors import UsageError
from webmcp_eval.evaluation.demo_site import embedded_demo_site, with_demo_site
from webmcp_eval.play.run.run import _site, plan_of
from webmcp_eval.play.run.settings import RunSettings, RunState, TrialHook, TrialHooks
from webmcp_eval.suite.site import SiteConfig


def test_settings_cannot_be_changed_once_built_only_copied():
    settings = RunSettings(ReferenceAgent, trials=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(settings, "base_url", "http://127.0.0.1:9/")  # noqa: B010 - the assignment under test
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(settings, "trials", 3)  # noqa: B010
    copy = dataclasses.replace(settings, base_url="http://127.0.0.1:9/")
    assert copy.site.base_url == "http://127.0.0.1:9/" and copy.plan.trials == 2
    assert settings.site.base_url is None  # the original is as it was built


def test_the_state_and_its_test_seam_are_not_reassigned_either():
    state = RunState(selection=frozenset({"SEL-01.t1"}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(state, "selection", None)  # noqa: B010
    seam = TrialHooks(breaks=("save_not_idempotent",), by_case={"SEL-01": TrialHook(init_script="1")})
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(seam, "breaks", ())  # noqa: B010
    assert dataclasses.replace(state, plan=None).selection == frozenset({"SEL-01.t1"})


def test_a_selection_narrows_a_new_plan_and_leaves_its_hash():
    cases = suite_cases("SEL-01", "NO-01")
    settings = RunSettings(ReferenceAgent, trials=2)
    whole = plan_of(cases, settings, ReferenceAgent(), "r")
    assert [t["trial_id"] for t in whole["trials"]] == ["NO-01.t1", "NO-01.t2", "SEL-01.t1", "SEL-01.t2"]
    chosen = plan_of(cases, settings, ReferenceAgent(), "r", selection=frozenset({"NO-01.t2", "SEL-01.t1"}))
    assert [t["trial_id"] for t in chosen["trials"]] == ["NO-01.t2", "SEL-01.t1"]
    assert chosen["plan_hash"] == whole["plan_hash"]  # the same suite, agent and settings: one plan


def test_a_shard_is_a_selection_too_and_a_selection_narrows_it_further():
    cases = suite_cases("SEL-01", "NO-01")
    settings = RunSettings(ReferenceAgent, trials=2, shard=(1, 2))
    shard = plan_of(cases, settings, ReferenceAgent(), "r")
    assert [t["trial_id"] for t in shard["trials"]] == ["NO-01.t1", "SEL-01.t1"]
    assert shard["shard"] == {"index": 1, "count": 2, "planned_trials": 4}
    narrowed = plan_of(cases, settings, ReferenceAgent(), "r", selection=frozenset({"NO-01.t1", "NO-01.t2"}))
    assert [t["trial_id"] for t in narrowed["trials"]] == ["NO-01.t1"]


def test_test_breaks_are_part_of_the_plan_hash():
    cases = suite_cases("SEL-01")
    settings = RunSettings(ReferenceAgent)
    plain = plan_of(cases, settings, ReferenceAgent(), "r")
    broken = plan_of(cases, settings, ReferenceAgent(), "r", breaks=("save_not_idempotent",))
    assert plain["plan_hash"] != broken["plan_hash"]
    assert plan_of(cases, settings, ReferenceAgent(), "r", breaks=())["plan_hash"] == plain["plan_hash"]


def test_a_run_takes_the_credentials_out_of_its_own_copy_of_the_site_config():
    given = SiteConfig(base_url="http://ann:secret@127.0.0.1:9/")
    settings = RunSettings(ReferenceAgent, site_config=given)
    with _site(settings, RunState()) as config:
        assert config.base_url == "http://127.0.0.1:9/" and config.credentials == ("ann", "secret")
        assert config is not given
    assert settings.site.site_config is given and given.base_url == "http://ann:secret@127.0.0.1:9/"
    with _site(dataclasses.replace(settings, base_url="http://bob:pw@127.0.0.1:8/"), RunState()) as config:
        assert config.base_url == "http://127.0.0.1:8/" and config.credentials == ("bob", "pw")
    assert given.base_url == "http://ann:secret@127.0.0.1:9/"


def test_a_run_that_names_no_site_starts_the_demo_site_its_front_end_hands_it_and_else_is_refused():
    """play/ never starts the demo site of its own: the front end hands it one (webmcp_eval/evaluation/demo_site.py)."""
    settings = RunSettings(ReferenceAgent)
    with pytest.raises(UsageError, match="no site"), _site(settings, RunState()):
        pass
    started: list[str] = []

    @contextlib.contextmanager
    def demo() -> Iterator[SiteConfig]:
        started.append("up")
        yield SiteConfig(base_url="http://127.0.0.1:9/")

    with _site(settings, RunState(demo_site=demo)) as config:
        assert config.base_url == "http://127.0.0.1:9/" and started == ["up"]
    named = RunSettings(ReferenceAgent, base_url="http://127.0.0.1:8/")
    with _site(named, RunState(demo_site=demo)) as config:
        assert config.base_url == "http://127.0.0.1:8/" and started == ["up"]  # a named site: no demo site
    assert with_demo_site().demo_site is embedded_demo_site
