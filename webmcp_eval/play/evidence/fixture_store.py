"""Record and replay for whole trials (docs/design.md, "Record and replay"): the fixture store and the site hooks' tape.

The proxy records and replays what the browser asked the site. The runner's
own calls to the site hooks (reset a world, dump its state, expire the
session, change data) are taped into the same fixture, so a replay needs no
site at all: the origin is never contacted.

One fixture per case, ``<dir>/<CASE>.yaml``. Re-recording over an existing
fixture prints what changed, request by request: a changed expectation is a
reviewed change to the suite, not a re-record until green.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from webmcp_eval.proxies.fixture import (
    Fixture,
    FixtureError,
    HookRecord,
    age_days,
    diff_fixtures,
    load_fixture,
    save_fixture,
)
from webmcp_eval.suite.site import HookMissing, SiteClient, SiteConfig

DEFAULT_MAX_AGE_DAYS = 30.0


class FixtureMissing(Exception):
    """Replay has no fixture (or no taped hook) for what the trial needs."""


def record_command(case_id: str, base_url: str | None = None) -> str:
    where = f" --base-url {base_url}" if base_url else ""
    return f"webmcp-eval record {case_id}{where}"


@dataclass
class FixtureStore:
    directory: Path
    mode: str  # record or replay
    max_age_days: float | None = DEFAULT_MAX_AGE_DAYS
    diffs: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    recorded: list[Path] = field(default_factory=list)

    def path_for(self, case_id: str) -> Path:
        return self.directory / f"{case_id}.yaml"

    def for_trial(self, case_id: str, site_info: dict[str, Any], base_url: str) -> Fixture:
        if self.mode == "record":
            return Fixture(case_id=case_id, site_revision=str(site_info.get("revision") or ""), base_url=base_url)
        path = self.path_for(case_id)
        if not path.is_file():
            raise FixtureMissing(f"no fixture for {case_id} at {path}; record it with: {record_command(case_id)}")
        try:
            fixture = load_fixture(path)
        except FixtureError as err:
            raise FixtureMissing(f"{err}; re-record it with: {record_command(case_id)}") from None
        self._warn_if_old(fixture, path)
        return fixture

    def _warn_if_old(self, fixture: Fixture, path: Path) -> None:
        if self.max_age_days is None:
            return
        age = age_days(fixture)
        if age > self.max_age_days:
            self.warnings.append(
                f"{path} was recorded {age:.0f} days ago (limit {self.max_age_days:.0f}); "
                f"re-record it with: {record_command(fixture.case_id)} and review the diff"
            )

    def store(self, case_id: str, fixture: Fixture, hooks: list[HookRecord]) -> Path:
        fixture = fixture.model_copy(update={"hooks": hooks, "case_id": case_id})
        path = self.path_for(case_id)
        if path.is_file():
            try:
                self.diffs[case_id] = diff_fixtures(load_fixture(path), fixture)
            except FixtureError as err:
                self.diffs[case_id] = [f"(the old fixture could not be read: {err})"]
        save_fixture(fixture, path)
        self.recorded.append(path)
        return path


class HookTape:
    """The site hooks for one trial: live, taped (record) or played back (replay)."""

    def __init__(self, site: SiteClient, mode: str, fixture: Fixture | None):
        self.site = site
        self.mode = mode
        self.tape: list[HookRecord] = []
        self._playback = list(fixture.hooks) if fixture and mode == "replay" else []

    @property
    def config(self) -> SiteConfig:  # the wrapped client's
        return self.site.config

    def has(self, hook: str) -> bool:
        if self.mode == "replay":
            return any(h.hook == hook for h in self._playback)
        return self.site.has(hook)

    async def _call(self, hook: str, args: dict[str, Any], *live_args: Any) -> Any:
        if self.mode == "replay":
            for i, taped in enumerate(self._playback):
                if taped.hook == hook:
                    del self._playback[i]
                    return taped.response
            raise FixtureMissing(f"the fixture has no taped {hook} hook call left; re-record the case")
        if not self.site.has(hook):
            raise HookMissing(hook)
        response = await getattr(self.site, hook)(*live_args)
        if self.mode == "record":
            self.tape.append(HookRecord(hook=hook, args=args, response=response))
        return response

    async def reset(self, world: str, seed: str, breaks: list[str]) -> None:
        await self._call("reset", {"seed": seed, "breaks": breaks}, world, seed, breaks)

    async def state(self, world: str) -> Any:
        return await self._call("state", {}, world)

    async def expire_session(self, world: str) -> None:
        await self._call("expire_session", {}, world)

    async def change(self, world: str, op: str, params: dict[str, Any]) -> Any:
        return await self._call("change", {"op": op, **params}, world, op, params)
