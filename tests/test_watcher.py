"""The headed watcher (webmcp_eval/play/page/watcher.py): the cue line and both ways of waiting, without a browser."""

from __future__ import annotations

import asyncio
import io

from tests.eval_support import in_thread
from webmcp_eval.play.page.watcher import Watcher


def test_a_timed_hold_names_the_trial_and_control_and_waits_without_asking() -> None:
    out = io.StringIO()
    asked: list[bool] = []
    watcher = Watcher(hold_ms=0, out=out, wait_for_enter=lambda: asked.append(True))
    in_thread(asyncio.run, watcher.hold("CONF-01.t1", "getByRole('button', name='Confirm')"))
    assert out.getvalue() == (
        "  CONF-01.t1: stopped at the confirmation point (getByRole('button', name='Confirm')); holding 0 ms\n"
    )
    assert asked == []


def test_without_a_hold_time_it_waits_for_enter() -> None:
    out = io.StringIO()
    asked: list[bool] = []
    watcher = Watcher(hold_ms=None, out=out, wait_for_enter=lambda: asked.append(True))
    in_thread(asyncio.run, watcher.hold("CONF-01.t2", "#pay"))
    assert out.getvalue().endswith("(#pay); press Enter to go on\n")
    assert asked == [True]
