"""``webmcp.mock`` / ``unmock`` / ``replay``: a tool's answer given by the test instead of its own execute.

A mock lives in the page: the shim's wrapper of every registered tool asks
``window.__webmcpEvalMocks`` before it runs the tool's own execute, so a call
from anywhere (``webmcp.call``, the page's own scripts, an in-page agent) gets
the mocked answer, and the shim logs it as any call (``mocked: true``). A fixed
answer (a result, or an error the tool throws) is held in the page; a callable
stays in Python, and the page asks it through a binding at each call. The
mocks are put into every frame now and into every document the context opens
later (an init script, which runs after the shim's).

A recording is the calls of a test (``webmcp.record(path)``) or of a trial
(a trace file ``trials/CASE.tN.json`` of ``webmcp-eval run``): ``{"calls": [...]}``,
each a trace's tool call. ``replay(path)`` mocks every tool in it: a call with
the same arguments as a recorded one gets the recorded result (or error), any
other call of that tool fails with a line that says so.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from webmcp_eval.trace import ToolCall


class MockWarning(UserWarning):
    """A mock that cannot answer: the name is a ``<form toolname>`` (the browser's form answers), or no frame of
    the page lists it."""

    __module__ = "webmcp_eval.pytest"


MOCKS_GLOBAL = "__webmcpEvalMocks"
MOCK_BINDING = "__webmcpEvalMock"


@dataclass
class Mock:
    result: Any = None
    error: str | None = None
    answer: Callable[[dict[str, Any]], Any] | None = None  # asked at each call, with the call's arguments

    def in_page(self) -> dict[str, Any]:
        """What the page holds: the fixed answer, or that it must ask."""
        if self.answer is not None:
            return {"ask": True}
        return {"error": self.error} if self.error is not None else {"result": self.result}


@dataclass
class Mocks:
    """The test's mocks, by tool name."""

    by_name: dict[str, Mock] = field(default_factory=dict)

    def set(self, name: str, result: object = None, error: str | None = None) -> None:
        __tracebackhide__ = True  # a test's mistake: its own line, not the plugin's
        if not isinstance(name, str) or not name:
            raise ValueError(f"mock: a tool name, not {name!r}")
        if callable(result):
            self.by_name[name] = Mock(answer=result)
            return
        try:
            json.dumps(result)
        except (TypeError, ValueError):
            raise ValueError(f"mock({name!r}): the result must be JSON (or a callable), not {result!r}") from None
        self.by_name[name] = Mock(result=result, error=error)

    def script(self) -> str:
        """The page's view of the mocks, as a script for a document."""
        state = {name: mock.in_page() for name, mock in self.by_name.items()}
        return f"window.{MOCKS_GLOBAL} = {json.dumps(state, ensure_ascii=False)};"

    def ask(self, name: str, args: Any) -> dict[str, Any]:
        """The page asks a callable mock for its answer: ``{"result": …}`` or ``{"error": …}``."""
        mock = self.by_name.get(name)
        if mock is None or mock.answer is None:  # unmocked while the call was on its way
            return {"error": f"webmcp-eval: {name} is no longer mocked"}
        try:
            result = mock.answer(args if isinstance(args, dict) else {})
            json.dumps(result)
        except Exception as err:  # noqa: BLE001 - the mock's failure is the tool's error, as a throwing execute's
            return {"error": str(err) or type(err).__name__}
        return {"result": result}


def read_recording(path: str | Path) -> list[ToolCall]:
    """The calls of a recording (``webmcp.record``'s file, or a trial's trace); ValueError says why not."""
    __tracebackhide__ = True
    from webmcp_eval.data_file import RUN_FILE_DEPTH, FileProblem, load_json

    path = Path(path)
    try:
        data = load_json(path, RUN_FILE_DEPTH)  # as deep as a trace: a recording holds the same answers
    except FileProblem as err:
        raise ValueError(err.at(path)) from None
    calls = data.get("calls") if isinstance(data, dict) else None
    if not isinstance(calls, list):
        raise ValueError(f"{path}: not a recording: no list of calls under 'calls'")
    try:
        return [ToolCall.model_validate(c) for c in calls]
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"{path}: calls.{where}: {first['msg']}") from None


def write_recording(path: str | Path, calls: list[ToolCall]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"calls": [c.model_dump(mode="json") for c in calls]}
    path.write_text(json.dumps(body, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return path


def replayer(name: str, recorded: list[ToolCall]) -> Callable[[dict[str, Any]], Any]:
    """A callable mock of one tool that answers as the recording did for the same arguments."""
    answers = [c for c in recorded if c.tool == name and not c.refused]

    def answer(args: dict[str, Any]) -> Any:
        for call in answers:
            if call.args == args:
                if call.error is not None:
                    raise RuntimeError(call.error)
                return call.result
        given = json.dumps(args, ensure_ascii=False, sort_keys=True)
        raise LookupError(f"webmcp-eval replay: no recorded call of {name} with {given}")

    return answer


class PageMocks:
    """The test's mocks on its page's context: in every frame now and every document opened later."""

    def __init__(self, page: Any) -> None:
        self.page = page  # playwright.sync_api.Page
        self.mocks = Mocks()
        self._bound = False

    def set(self, name: str, result: object = None, error: str | None = None) -> None:
        __tracebackhide__ = True
        self.mocks.set(name, result, error)
        self._push()

    def unset(self, name: str | None = None) -> None:
        """One tool's mock (every tool's with None) is gone: the tool's own execute answers again."""
        if name is None:
            self.mocks.by_name.clear()
        else:
            self.mocks.by_name.pop(name, None)
        self._push()

    def replay(self, path: str | Path) -> list[str]:
        """Mock every tool of the recording at path with its recorded answers; the tools' names."""
        __tracebackhide__ = True
        recorded = read_recording(path)
        names = sorted({c.tool for c in recorded})
        for name in names:
            self.mocks.set(name, replayer(name, recorded))
        self._push()
        return names

    def _push(self) -> None:
        from playwright.sync_api import Error as PlaywrightError

        context = self.page.context
        if not self._bound and any(m.answer is not None for m in self.mocks.by_name.values()):
            context.expose_binding(MOCK_BINDING, lambda _source, name, args: self.mocks.ask(name, args))
            self._bound = True
        # Init scripts run in the order they were added, after the shim's: the latest state wins in a new document.
        context.add_init_script(self.mocks.script())
        state = {name: mock.in_page() for name, mock in self.mocks.by_name.items()}
        for frame in self.page.frames:
            with contextlib.suppress(PlaywrightError):  # a frame going away: its next document gets the init script
                frame.evaluate(f"(state) => {{ window.{MOCKS_GLOBAL} = state; }}", state)
