"""Headed watching: where a trial stops for the person at the screen, and how long it waits.

A headed trial stops at the case's confirmation point: the person sees one line
naming the trial and the control, then the trial waits, either for Enter (no
``--hold-ms``) or for a fixed time. The screen and the waiting are given in, so
this unit is tested without a browser or a terminal.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO


@dataclass
class Watcher:
    hold_ms: int | None  # None: until the person presses Enter
    out: TextIO = field(default_factory=lambda: sys.stdout)
    wait_for_enter: Callable[[], object] = input

    def cue(self, trial_id: str, control: str) -> str:
        """The one line the person sees at the stop."""
        how = f"; holding {self.hold_ms} ms" if self.hold_ms is not None else "; press Enter to go on"
        return f"  {trial_id}: stopped at the confirmation point ({control}){how}"

    async def hold(self, trial_id: str, control: str) -> None:
        """Say where the trial stopped, then wait for the person (Enter) or the hold time."""
        print(self.cue(trial_id, control), file=self.out, flush=True)
        if self.hold_ms is None:
            await asyncio.to_thread(self.wait_for_enter)
        else:
            await asyncio.sleep(self.hold_ms / 1000)
