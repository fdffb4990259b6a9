"""``pytest --webmcp-suite DIR``: each (case, trial) of a suite is one test item, played as ``run`` plays it.

The suite is loaded and validated as ``validate`` and ``run`` do, before anything
starts; one invalid case stops the session (every problem as
``file:line: field: message``). The items are ``CASE.yaml::CASE.tN``, so ``-k``,
``--lf``, ``-x`` and ``--maxfail`` select and stop them as any test. Once pytest
has chosen the items, the run opens (webmcp_eval/play/run/run.py ``open_run``: its plan
lists exactly the chosen trials, the site, the proxy and the browser start) on
an event loop of its own thread, and each item plays its trial there and waits
for its trace. passed is a pass; failed a failure that lists the failing
assertions with their evidence; not_run a skip with its reason. At the end the
run directory gets ``summary.json``, ``junit.xml`` and ``report.html`` from the
run's own reporters, so ``webmcp-eval report`` and ``compare`` read it.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Coroutine, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from webmcp_eval.rundir.layout import RunDir
from webmcp_eval.rundir.plan import trial_id_for
from webmcp_eval.suite.loader import LoadedCase
from webmcp_eval.trace import Trace

if TYPE_CHECKING:
    from webmcp_eval.evaluation.loading import LoadedCases
    from webmcp_eval.play.run.settings import RunSettings, RunState
    from webmcp_eval.suite.site import SiteConfig

T = TypeVar("T")

SUITE_PLUGIN = "webmcp-suite"


def configure(config: pytest.Config) -> None:
    """Load and check the suite; collect only it when --webmcp-suite is given without test paths, else beside
    them (an ini ``webmcp_suite`` is always beside the tests pytest would collect anyway)."""
    from webmcp_eval.pytest_plugin.settings import setting

    given = config.getoption("webmcp_suite")
    folder = Path(given) if given else _ini_path(config, setting(config, "webmcp_suite"))
    out = Path(setting(config, "webmcp_out"))
    if out.exists() and not out.is_dir():  # before any trial: the run directory goes under it
        raise pytest.UsageError(f"--webmcp-out {out}: is a file, not a folder; give a folder for the run directories")
    plugin = SuitePlugin(config, _load(folder, setting(config, "webmcp_suite_base_url")))
    config.pluginmanager.register(plugin, SUITE_PLUGIN)
    if given and config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args[:] = [str(folder)]
    elif not any(folder.resolve().is_relative_to(Path(a).resolve()) for a in config.args if Path(a).exists()):
        config.args.append(str(folder))


def _ini_path(config: pytest.Config, value: str) -> Path:
    """An ini file's path is relative to the ini file."""
    path = Path(value)
    return path if path.is_absolute() or config.inipath is None else config.inipath.parent / path


@dataclass
class LoadedSuite:
    """The suite as ``run`` loads it (its cases, checked as ``validate`` checks them, its catalog) and its site."""

    loaded: LoadedCases
    site_config: SiteConfig | None  # None: the embedded demo site (or a bare --webmcp-suite-base-url)

    @property
    def cases(self) -> list[LoadedCase]:
        return self.loaded.cases


def _load(folder: Path, base_url: str | None) -> LoadedSuite:
    """The suite loaded and checked by the loading ``run`` and ``validate`` use (webmcp_eval/evaluation/loading.py)."""
    # the suite's loader loads only when --webmcp-suite is given: every other pytest session skips it
    from webmcp_eval.errors import EvalError
    from webmcp_eval.evaluation.loading import load_cases
    from webmcp_eval.suite.folder import site_for_run

    if not folder.is_dir():
        raise pytest.UsageError(f"--webmcp-suite {folder}: not a folder")
    try:
        loaded = load_cases([str(folder)], None)
        if loaded.problems:
            lines = [str(p) for p in loaded.problems]
            count = f"--webmcp-suite {folder}: {len(loaded.problems)} problem(s)"
            raise pytest.UsageError("\n".join([*lines, count]))
        site = site_for_run(loaded.suite, base_url, None)
    except EvalError as err:  # a suite, catalog or site config that cannot be used: one line
        raise pytest.UsageError(f"--webmcp-suite {folder}: {err}") from None
    return LoadedSuite(loaded, site)


class SuitePlugin:
    def __init__(self, config: pytest.Config, loaded: LoadedSuite) -> None:
        self.config = config
        self.loaded = loaded
        self.by_file = {Path(lc.file).resolve(): lc for lc in loaded.cases}
        self.chosen: list[CaseItem] = []
        self.run: OpenRunThread | None = None
        self.traces: list[Trace] = []
        self.summary: list[str] = []  # the run's lines for pytest's terminal summary

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
        lc = self.by_file.get(file_path.resolve())
        return CaseFile.from_parent(parent, path=file_path, loaded=lc) if lc else None

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.chosen = [item for item in session.items if isinstance(item, CaseItem)]

    def _open(self) -> OpenRunThread:
        if self.run is None:
            self.run = OpenRunThread(*self._inputs(), self.loaded.cases)
        return self.run

    def shared_proxy(self) -> Any:
        """The run's proxy, for the session's own tests that ask for one (mitmproxy allows one per process);
        None when no item of the suite was chosen (no run opens)."""
        if not self.chosen:
            return None
        return self._open().run.env.proxy

    def play(self, item: CaseItem) -> Trace:
        trace = self._open().play(item.loaded, item.index)
        self.traces.append(trace)
        return trace

    def trace_file(self, trace: Trace) -> Path:
        assert self.run is not None
        return RunDir(self.run.run.env.out_dir).trace(trace.trial_id)

    def _inputs(self) -> tuple[RunSettings, RunState]:
        """The run's settings (the ini options, the suite's) and its state: the selection of pytest's chosen items
        (-k, --lf), the only trials its plan lists."""
        from webmcp_eval.agents.reference import ReferenceAgent
        from webmcp_eval.evaluation.demo_site import with_demo_site
        from webmcp_eval.play.run.run import new_run_id
        from webmcp_eval.play.run.settings import RunSettings, RunState, surface_checks
        from webmcp_eval.pytest_plugin.settings import setting

        suite, catalog = self.loaded.loaded.suite, self.loaded.loaded.catalog
        hints = catalog.annotations if catalog else None
        settings = RunSettings(
            agent_factory=ReferenceAgent,
            out_root=Path(setting(self.config, "webmcp_out")),
            run_id=new_run_id(),
            trials=setting(self.config, "webmcp_trials"),
            headed=bool(self.config.getoption("headed", False)),
            base_url=setting(self.config, "webmcp_suite_base_url"),
            site_config=self.loaded.site_config,
            browser_context=suite.config.browser_context(),  # suite.yaml's time zone and locale
            live_rules=self.loaded.loaded.live_rules,
            # the catalog's hints and schemas and the audit's rule, as run hands them
            **surface_checks(hints, catalog.schema_surface() if catalog else None),
        )
        return settings, with_demo_site(RunState(selection=frozenset(item.trial_id for item in self.chosen)))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.run is None:
            return
        run = self.run.close()
        out_dir = run.out_dir
        from webmcp_eval.report.reporters import ReportTargets, build_reporters, run_dir_files
        from webmcp_eval.results.run_results import RunInput, build_results

        reporters = build_reporters(
            ReportTargets(
                out_dir=out_dir,
                files=run_dir_files(out_dir),  # what run writes into its run directory
                json_extra={"run_id": run.run_id, "site": run.site_info},
            )
        )
        results = build_results([RunInput(self.traces, run.plan)])
        problems = reporters.end(results)
        counts = results.counts
        missing = f", incomplete: {counts.missing} planned trial(s) not played" if counts.missing else ""
        self.summary = [
            f"{counts.passed} passed, {counts.failed} failed, {counts.not_run} not_run{missing}",
            f"traces and reports: {out_dir}",
            *problems,
        ]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.summary:
            terminalreporter.write_sep("-", "webmcp-eval")
            for line in self.summary:
                terminalreporter.write_line(line)


class OpenRunThread:
    """An open run (webmcp_eval.play.run.run.open_run) on an event loop of its own thread: pytest calls in, one trial
    at a time, and waits for each trace."""

    def __init__(self, settings: RunSettings, state: RunState, cases: list[LoadedCase]) -> None:
        from webmcp_eval.play.run.run import open_run

        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="webmcp-eval-run", daemon=True)
        self.thread.start()
        self._context = open_run(cases, settings, state)
        self.run = self._wait(self._context.__aenter__())

    def _wait(self, coro: Coroutine[Any, Any, T]) -> T:
        future: Future[T] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()
            raise

    def play(self, lc: LoadedCase, index: int) -> Trace:
        return self._wait(self.run.play(lc, index))

    def close(self) -> Any:
        try:
            self._wait(self._context.__aexit__(None, None, None))
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=30)
        return self.run


class CaseFile(pytest.File):
    def __init__(self, *, loaded: LoadedCase, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.loaded = loaded

    def collect(self) -> Iterator[CaseItem]:
        from webmcp_eval.pytest_plugin.settings import setting

        trials = setting(self.config, "webmcp_trials")
        for index in range(trials):
            yield CaseItem.from_parent(self, name=trial_id_for(self.loaded.case.id, index), index=index)


class CaseFailed(Exception):
    def __init__(self, trace: Trace, trace_file: Path) -> None:
        super().__init__(trace.verdict_reason)
        self.trace = trace
        self.trace_file = trace_file


class CaseItem(pytest.Item):
    def __init__(self, *, index: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.index = index
        assert isinstance(self.parent, CaseFile)  # a case's trials are items of its file
        self.loaded: LoadedCase = self.parent.loaded
        self.trial_id = trial_id_for(self.loaded.case.id, index)
        self.add_marker(pytest.mark.webmcp_case(behaviour=self.loaded.case.behaviour))

    def runtest(self) -> None:
        plugin = self.config.pluginmanager.get_plugin(SUITE_PLUGIN)
        assert isinstance(plugin, SuitePlugin)  # registered with the suite's items
        trace = plugin.play(self)
        if trace.verdict == "not_run":
            # reported at the case file, as a skip marker's is, not at this line
            raise pytest.skip.Exception(f"not_run: {trace.verdict_reason}", _use_item_location=True)
        if trace.verdict == "failed":
            raise CaseFailed(trace, plugin.trace_file(trace))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if not isinstance(excinfo.value, CaseFailed):
            return super().repr_failure(excinfo)
        return failure_text(excinfo.value.trace, excinfo.value.trace_file)

    def reportinfo(self) -> tuple[Path, int, str]:
        case = self.loaded.case
        return self.path, 0, f"{self.trial_id}: {case.title}"


def failure_text(trace: Trace, trace_file: Path) -> str:
    """The failing assertions with their evidence, then where the trace is."""
    failed = sum(a.status == "failed" for a in trace.assertions)
    lines = [f"{trace.trial_id} failed: {failed} of {len(trace.assertions)} assertion(s)"]
    for a in trace.assertions:
        if a.status != "failed":
            continue
        by = "" if a.grader == "code" else f" [{a.grader} grader]"
        lines.append(f"  ✗ {a.id}: {a.description}{by}")
        lines.append(f"      why: {a.why}")
        if a.evidence is not None:
            lines.append(f"      evidence: {json.dumps(a.evidence, ensure_ascii=False, default=str)[:300]}")
    calls = ", ".join(f"#{c.index} {c.tool}" for c in trace.calls) or "none"
    lines.append(f"  tool calls: {calls}; writes: {trace.write_total}")
    lines.append(f"  trace: {trace_file}")
    return "\n".join(lines)
