"""Benchmark (not a test): memory against the number of trials, for the runner and for ``report``.

runner  plays short cases of the embedded demo site many times (``run --trials N -j 2``, the reference
        agent by default, the proxy on) in a subprocess, and samples every half second the resident set of
        the runner's process (the runner, the proxy and the demo site: they run in it as threads) and,
        apart, the proportional set size of its descendants (the browser and Playwright's driver). Each
        sample is filed under the number of traces written so far; the table gives the figures at trial
        1, 10, 100, 200, ... and the spread (max - min) of the runner's resident set from trial 100 on.
        It stops at --max-trials or after --minutes, whichever comes first.
report  copies the traces of a run directory (--from, else a short run made first) into a synthetic run of
        --traces trials (no plan: completeness unknown), runs ``report`` on it (summary.json, JUnit and the
        HTML report written into the run directory), and prints the report's peak resident set (wait4's
        ru_maxrss), its wall time and the size of what it wrote.

--pythonpath DIR makes the subprocess import webmcp_eval from DIR (e.g. an unpacked older commit:
``git archive f6cd50c | tar -x -C /tmp/base``), so the same script measures before and after a change.

Usage: .venv/bin/python bench/memory.py runner [--cases SEL-01,SEL-02] [--max-trials 2000] [--minutes 15]
       [--jobs 2] [--agent reference] [--pythonpath DIR] [--keep DIR]
       .venv/bin/python bench/memory.py report [--traces 10000] [--from RUN_DIR] [--pythonpath DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MB = 1024 * 1024


def _status_kb(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return 0
    return 0


def _children(pid: int) -> list[int]:
    """Every descendant of pid (from /proc/*/stat's parent ids)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _pss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        return 0
    return 0


def _cwd(pythonpath: str | None) -> str:
    """``python -m`` puts its working directory first on sys.path: run in the code's own checkout (its cases/)."""
    return pythonpath or str(ROOT)


def _env(pythonpath: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return env


def _which_code(pythonpath: str | None) -> str:
    code = "import webmcp_eval, os; print(os.path.dirname(os.path.dirname(webmcp_eval.__file__)))"
    out = subprocess.run(
        [sys.executable, "-c", code], env=_env(pythonpath), capture_output=True, text=True, cwd=_cwd(pythonpath)
    )
    return out.stdout.strip()


@dataclass
class Sample:
    trials: int
    runner_kb: int
    browser_kb: int


def _count_traces(trials_dir: Path) -> int:
    try:
        return sum(1 for e in os.scandir(trials_dir) if e.name.endswith(".json") and not e.name.startswith("."))
    except OSError:
        return 0


def measure_runner(args: argparse.Namespace) -> None:
    out_root = Path(args.keep or tempfile.mkdtemp(prefix="memory-runner-"))
    cases = args.cases.split(",")
    per_case = -(-args.max_trials // len(cases))
    run_id = "memory-bench"
    cmd = [sys.executable, "-m", "webmcp_eval", "run", *cases, "--trials", str(per_case), "-j", str(args.jobs)]
    cmd += ["--agent", args.agent, "--out", str(out_root), "--run-id", run_id, "--force"]
    print(f"code: {_which_code(args.pythonpath)}")
    print("command:", " ".join(cmd))
    trials_dir = out_root / run_id / "trials"
    log = (out_root / "run.log").open("wb")  # a file, not a pipe: a long run's output never blocks it
    proc = subprocess.Popen(cmd, env=_env(args.pythonpath), cwd=_cwd(args.pythonpath), stdout=log, stderr=log)
    samples: list[Sample] = []
    start = time.monotonic()
    try:
        while proc.poll() is None:
            n = _count_traces(trials_dir)
            runner = _status_kb(proc.pid, "VmRSS")
            browser = sum(_pss_kb(c) for c in _children(proc.pid))
            samples.append(Sample(n, runner, browser))
            if n >= args.max_trials or time.monotonic() - start > args.minutes * 60:
                break
            time.sleep(0.5)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
    elapsed = time.monotonic() - start
    _runner_table(samples, elapsed, args.jobs)
    if not args.keep:
        shutil.rmtree(out_root, ignore_errors=True)


def _runner_table(samples: list[Sample], elapsed: float, jobs: int) -> None:
    """Per trial: the first sample taken with at least that many traces written."""
    done = max((s.trials for s in samples), default=0)
    print(f"{done} trials in {elapsed:.0f} s with -j {jobs} (load {os.getloadavg()[0]:.1f})")
    if not done:
        return
    marks = [1, 10, 50, *range(100, done + 1, 100)]
    if done not in marks:
        marks.append(done)
    print(f"{'trial':>6} {'runner RSS MB':>14} {'browser PSS MB':>15}")
    for k in marks:
        s = next((x for x in samples if x.trials >= k and x.browser_kb), None)
        if s:
            print(f"{k:>6} {s.runner_kb / 1024:>14.1f} {s.browser_kb / 1024:>15.1f}")
    later = [s for s in samples if s.trials >= 100 and s.browser_kb]  # not the browser's closing
    if later:
        runner = [s.runner_kb for s in later]
        browser = [s.browser_kb for s in later]
        print(
            f"from trial 100 to {done}: runner RSS {min(runner) / 1024:.1f} .. {max(runner) / 1024:.1f} MB "
            f"(spread {(max(runner) - min(runner)) / 1024:.1f} MB); browser PSS {min(browser) / 1024:.1f} .. "
            f"{max(browser) / 1024:.1f} MB (spread {(max(browser) - min(browser)) / 1024:.1f} MB)"
        )
        first, last = later[0], later[-1]
        if last.trials > first.trials:
            slope = (last.runner_kb - first.runner_kb) / 1024 / (last.trials - first.trials)
            print(f"runner RSS slope from trial 100: {slope * 1000:.1f} KB per trial")


def _source_run(args: argparse.Namespace, work: Path) -> Path:
    if args.source:
        return Path(args.source)
    cmd = [sys.executable, "-m", "webmcp_eval", "run", "SEL-01", "SEL-02", "--trials", "2"]
    cmd += ["--out", str(work / "source"), "--run-id", "source"]
    subprocess.run(cmd, env=_env(None), stdout=subprocess.DEVNULL, check=False)
    return work / "source" / "source"


def synthetic_run(source: Path, target: Path, count: int) -> None:
    """``count`` traces made by copying the source run's traces round-robin, each under its own trial id."""
    originals = [json.loads(p.read_text()) for p in sorted((source / "trials").glob("*.json"))]
    if not originals:
        raise SystemExit(f"{source}: no traces to copy")
    (target / "trials").mkdir(parents=True)
    run_id = originals[0]["run_id"]
    (target / "run.json").write_text(json.dumps({"run_id": run_id}) + "\n")
    for i in range(count):
        trace = dict(originals[i % len(originals)])
        trace["trial_index"] = i
        trace["trial_id"] = f"{trace['case_id']}.s{i + 1}"
        trace["run_id"] = run_id
        trace.pop("plan_hash", None)
        (target / "trials" / f"{trace['trial_id']}.json").write_text(json.dumps(trace, indent=2) + "\n")


def measure_report(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="memory-report-"))
    try:
        source = _source_run(args, work)
        run = work / "synthetic"
        synthetic_run(source, run, args.traces)
        size = sum(p.stat().st_size for p in (run / "trials").iterdir())
        print(f"code: {_which_code(args.pythonpath)}")
        print(f"{args.traces} traces copied from {source}: {size / MB:.0f} MB of trace files")
        cmd = [sys.executable, "-m", "webmcp_eval", "report", str(run), "--json", str(work / "summary.json")]
        cmd += ["--junit", str(work / "junit.xml"), "--html", str(work / "report.html")]
        start = time.monotonic()
        proc = subprocess.Popen(
            cmd, env=_env(args.pythonpath), cwd=_cwd(args.pythonpath), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.monotonic() - start
        code = os.waitstatus_to_exitcode(status)
        html = work / "report.html"
        wrote = html.stat().st_size / MB if html.exists() else 0.0
        print(
            f"report: exit {code}, peak RSS {usage.ru_maxrss / 1024:.0f} MB, {elapsed:.0f} s, "
            f"report.html {wrote:.0f} MB (load {os.getloadavg()[0]:.1f})"
        )
        if code not in (0, 1, 3):  # failed / not_run trials are exit 1 / 3; anything else is the report's
            print(proc.stderr.read().decode() if proc.stderr else "")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    runner = sub.add_parser("runner", help="the runner's memory per trial over a long run")
    runner.add_argument("--cases", default="SEL-01,SEL-02", help="comma-separated case ids (default SEL-01,SEL-02)")
    runner.add_argument("--max-trials", type=int, default=2000)
    runner.add_argument("--minutes", type=float, default=15.0, help="stop after this long (default 15)")
    runner.add_argument("--jobs", type=int, default=2)
    runner.add_argument("--agent", default="reference", help="reference (default) or none (the null agent)")
    runner.add_argument("--pythonpath", help="import webmcp_eval from this directory instead")
    runner.add_argument("--keep", help="play into this directory and keep it")
    runner.set_defaults(func=measure_runner)
    report = sub.add_parser("report", help="report's peak memory over many synthetic traces")
    report.add_argument("--traces", type=int, default=10000)
    report.add_argument("--from", dest="source", help="the run directory whose traces are copied")
    report.add_argument("--pythonpath", help="import webmcp_eval from this directory instead")
    report.set_defaults(func=measure_report)
    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
