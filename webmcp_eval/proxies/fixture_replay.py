"""Answering requests from a fixture, by key, never by global call order.

Identical keys answer in their recorded order. Past the last recorded answer a
read (GET/HEAD/OPTIONS) repeats the last one (a page may poll or reload), while
a write is a miss: answering a second POST with the first one's answer would
hide exactly the extra write an eval exists to catch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .canonical import READ_METHODS
from .fixture import Fixture, FixtureEntry


@dataclass
class ReplayIndex:
    by_key: dict[str, list[FixtureEntry]] = field(default_factory=dict)
    used: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, fixture: Fixture) -> ReplayIndex:
        index = cls()
        for entry in fixture.entries:
            index.by_key.setdefault(entry.key, []).append(entry)
        return index

    def answer(self, method: str, key: str) -> tuple[FixtureEntry | None, str]:
        """(entry, "") on a hit; (None, why) on a miss."""
        entries = self.by_key.get(key)
        if not entries:
            return None, "never recorded"
        n = self.used.get(key, 0)
        self.used[key] = n + 1
        if n < len(entries):
            return entries[n], ""
        if method.upper() in READ_METHODS:
            return entries[-1], ""
        return None, f"recorded {len(entries)} time(s); this is call {n + 1} (a write is never answered twice)"
