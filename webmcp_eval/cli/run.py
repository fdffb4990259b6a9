"""run and record: their arguments and handler."""

from __future__ import annotations

import argparse
from pathlib import Path

from webmcp_eval.cli.common import (
    DAYS,
    MILLISECONDS,
    NON_NEGATIVE,
    POSITIVE,
    RETRIES,
    SECONDS,
    TRIALS,
    WORKERS,
    DeprecatedSpelling,
    Subcommands,
    add_history_flags,
    add_output_flags,
    base_url_type,
    cdp_endpoint_type,
    regex_type,
    request_of,
    run_id_type,
    shard_type,
    timezone_type,
    ws_endpoint_type,
)
from webmcp_eval.errors import Outcome
from webmcp_eval.llm.config import AGENT_FLAGS, GRADER_FLAGS, USER_FLAGS


def handle_run(args: argparse.Namespace) -> Outcome:
    """run and record: the request from the flags, checked before any case loads, then the run."""
    # The core loads the browser stack: imported when the command runs, so --help and a usage mistake stay fast.
    from webmcp_eval.evaluation.reporting import ReportFiles
    from webmcp_eval.evaluation.run import RunRequest, run_command

    return run_command(request_of(RunRequest, args, outputs=ReportFiles.of(args)))


def add_run_arguments(run: argparse.ArgumentParser) -> None:
    """The arguments run and record share, group by group (--help lists them in this order)."""
    _which_cases_and_site(run)
    _running_again(run)
    _remote_browsers(run)
    _sharding(run)
    _outputs_and_suite(run)
    _agent_arguments(run)
    _grader_arguments(run)
    _simulated_user_arguments(run)
    _evidence_arguments(run)


def _which_cases_and_site(run: argparse.ArgumentParser) -> None:
    """The cases, the site and where the run goes."""
    run.add_argument(
        "cases",
        nargs="*",
        help="case IDs or globs (SEL-01, 'CONF-*'), or case files/directories, or one webmcp-evals evals.json "
        "(with --base-url)",
    )
    run.add_argument("-g", "--grep", type=regex_type, help="only cases whose id or title matches this regex")
    run.add_argument("-b", "--behaviour", action="append", help="only cases of this behaviour (repeatable)")
    run.add_argument("--trials", type=TRIALS, default=None, help="trials per case, each from clean state (default 1)")
    run.add_argument("-j", "--workers", type=WORKERS, default=1, help="trials in parallel (default 1)")
    run.add_argument("--headed", action="store_true", help="show the browser; hold at confirmation points")
    run.add_argument("--slowmo", type=MILLISECONDS, default=None, metavar="MS", help="slow every browser action by MS")
    run.add_argument(
        "--hold-ms",
        type=NON_NEGATIVE,
        default=None,
        metavar="MS",
        help="headed: hold MS at a confirmation point (default: until Enter)",
    )
    run.add_argument(
        "--base-url", type=base_url_type, help="an already running or deployed site instead of the embedded one"
    )
    run.add_argument("--site-config", help="YAML naming the site's hooks (reset, state, ...) and what is a write")
    run.add_argument(
        "--timezone",
        type=timezone_type,
        metavar="ZONE",
        help="the person's time zone for this run (IANA, e.g. America/Los_Angeles) instead of suite.yaml's: "
        "play the suite as a viewer elsewhere (a case's own timezone_id still wins)",
    )
    run.add_argument("--no-proxy", dest="proxy", action="store_false", help="no proxy: network checks become not_run")
    run.add_argument("--chromium", help="the Chromium binary (else $WEBMCP_EVAL_CHROMIUM, Playwright's, system)")
    run.add_argument(
        "--out",
        dest="out_root",
        metavar="OUT",
        type=Path,
        default="traces",
        help="where run directories go (default traces/)",
    )
    run.add_argument(
        "--run-id", type=run_id_type, help="name of the run directory (default: a timestamp and a random part)"
    )
    run.add_argument(
        "--force", action="store_true", help="a --run-id whose directory holds a run: replace that run (else exit 2)"
    )


def _running_again(run: argparse.ArgumentParser) -> None:
    """--resume, --rerun-not-run, --last-failed, --retries."""
    again = run.add_argument_group("running again")
    again.add_argument(
        "--resume",
        metavar="RUN_DIR",
        help="play only the planned trials of RUN_DIR that have no trace, into RUN_DIR; its report covers the plan",
    )
    again.add_argument(
        "--rerun-not-run", action="store_true", help="with --resume: also play again the trials that were not_run"
    )
    again.add_argument(
        "--force-replan",
        action="store_true",
        help="with --resume: the case files changed since the plan; play the rest with them as they are now",
    )
    again.add_argument(
        "--break-lock",
        action="store_true",
        help="take the run directory's lock over whoever holds it: only when no run plays there (a run of "
        "another host that is gone, whose lock cannot be judged stale from here)",
    )
    again.add_argument(
        "--last-failed",
        action="store_true",
        help="run again only the cases that failed in the latest run under --out (a new run)",
    )
    again.add_argument(
        "--retries",
        type=RETRIES,
        default=0,
        metavar="N",
        help="play a trial again, up to N times, when it could not run for an infrastructure reason "
        "(browser crash, lost connection, site unreachable or 5xx); a failed trial is never retried",
    )


def _remote_browsers(run: argparse.ArgumentParser) -> None:
    """A browser server or a running Chromium, and where the proxy is reached."""
    remote = run.add_argument_group("remote browsers")
    remote.add_argument(
        "--connect",
        type=ws_endpoint_type,
        metavar="WS_ENDPOINT",
        help="play in browsers of a Playwright browser server (`playwright run-server --unsafe`): one per worker",
    )
    remote.add_argument(
        "--connect-over-cdp",
        type=cdp_endpoint_type,
        metavar="URL",
        help="play in a running Chromium (started with --remote-debugging-port and --enable-features=WebMCP)",
    )
    remote.add_argument(
        "--proxy-host",
        default="127.0.0.1",
        metavar="HOST",
        help="where the proxy listens (default 127.0.0.1; 0.0.0.0 when the browser is on another machine)",
    )
    remote.add_argument(
        "--proxy-advertise",
        metavar="HOST",
        help="the proxy's host as the browser reaches it (default: --proxy-host; e.g. this machine's name)",
    )


def _sharding(run: argparse.ArgumentParser) -> None:
    """--shard and --durations."""
    scale = run.add_argument_group("sharding")
    scale.add_argument(
        "--shard",
        type=shard_type,
        metavar="i/n",
        help="play only shard i of n of the planned (case, trial) pairs; the same split on every machine",
    )
    scale.add_argument(
        "--durations",
        metavar="RUN_DIR_OR_FILE",
        help="balance --shard by trial durations from an earlier run directory (or a JSON id -> ms file)",
    )


def _outputs_and_suite(run: argparse.ArgumentParser) -> None:
    """The extra report files, the trend's earlier runs, the catalog, the suite folder, --skip-invalid."""
    add_output_flags(run)
    add_history_flags(run)
    run.add_argument(
        "--catalog", help="the site's tools per route, to check cases against (default: catalog.json beside the cases)"
    )
    run.add_argument(
        "--suite",
        metavar="DIR",
        help="the suite folder (its suite.yaml, catalog and cases) to take the cases from; "
        "default: the folder of the cases given, else cases/",
    )
    run.add_argument(
        "--skip-invalid",
        action="store_true",
        help="run the valid cases and list the invalid ones as not run (default: an invalid case stops the run)",
    )


def _agent_arguments(run: argparse.ArgumentParser) -> None:
    """Who plays the cases: the reference agent, a model, the null agent, a harness."""
    agent = run.add_argument_group("agents (default: the reference agent, deterministic evidence)")
    agent.add_argument(
        "--agent",
        choices=["reference", "openai", "anthropic", "none"],
        default="reference",
        help="openai: any OpenAI-compatible chat-completions endpoint (hosted, vLLM, Ollama, "
        "llama.cpp, LM Studio); anthropic: the Messages API; none: the null agent (reads the tools, "
        "calls none, answers nothing: the do-nothing control, a series of its own)",
    )
    agent.add_argument(
        "--control",
        choices=["none"],
        help="also play the control: the null agent (none) over the same cases, one trial each, as a series of "
        "its own beside the agent's (never pooled; its failures decide no exit code); cases it passes are flagged "
        "'passes with no agent'",
    )
    # the null agent's run beside another is the control (baseline meant four other things): one release
    agent.add_argument("--baseline", dest="control", choices=["none"], action=DeprecatedSpelling, instead="--control")
    AGENT_FLAGS.add(agent)
    agent.add_argument("--max-steps", type=POSITIVE, default=16, help="model requests per trial (default 16)")
    agent.add_argument("--max-seconds", type=SECONDS, default=90.0, help="agent time per trial (default 90)")
    agent.add_argument("--max-tokens", type=POSITIVE, default=200_000, help="tokens per trial (default 200000)")
    agent.add_argument("--prices", help="YAML/JSON price table: model-prefix: {input, output} USD per 1M tokens")
    agent.add_argument(
        "--harness",
        metavar="COMMAND",
        help="an external agent harness as the trial's agent, through the MCP bridge: a command line with "
        "{prompt} and {mcp_config} placeholders, run once per user message; its final answer is its output",
    )
    agent.add_argument(
        "--allow-harness",
        action="store_true",
        help="let suite.yaml's harness: run (a command line the suite file names); without it, a suite with a "
        "harness is refused (exit 2)",
    )


def _grader_arguments(run: argparse.ArgumentParser) -> None:
    """The model grader of rubric criteria."""
    graders = run.add_argument_group("model grader (rubric criteria; default: not judged)")
    graders.add_argument("--grader", choices=["openai", "anthropic"], help="judge rubric criteria with this provider")
    GRADER_FLAGS.add(graders)
    graders.add_argument(
        "--labels", help="people's labels that calibrate the grader (default: labels.json beside the cases)"
    )


def _simulated_user_arguments(run: argparse.ArgumentParser) -> None:
    """The simulated user of goal cases."""
    users = run.add_argument_group("simulated user (goal cases, user: in the case; default: none)")
    users.add_argument("--user-simulator", choices=["openai", "anthropic"], help="a model plays the user of goal cases")
    USER_FLAGS.add(users)


def _evidence_arguments(run: argparse.ArgumentParser) -> None:
    """Suite health, Playwright's trace, screenshots, network fixtures."""
    run.add_argument(
        "--health-min-trials",
        type=POSITIVE,
        default=5,
        metavar="N",
        help="flag cases with 0%% (broken task?) or 100%% (saturated) only over at least N trials (default 5)",
    )
    trace_modes = ["off", "on", "retain-on-failure"]
    run.add_argument(
        "--playwright-trace",
        dest="playwright_trace",
        choices=trace_modes,
        default="off",
        help="keep Playwright's own trace.zip per trial (open with: playwright show-trace FILE); "
        "our trace of every trial is always kept",
    )
    # "trace" alone is our JSON record of a trial: the old spelling stays for one release
    run.add_argument(
        "--trace", dest="playwright_trace", choices=trace_modes, action=DeprecatedSpelling, instead="--playwright-trace"
    )
    run.add_argument(
        "--screenshot",
        dest="screenshots",
        choices=["on", "off", "only-on-failure"],
        default="only-on-failure",
        help="the screenshot at each trial's end: only of trials that did not pass (only-on-failure, the "
        "default: taken once the verdict is known), every trial's (on), or none (off)",
    )
    run.add_argument("--fixtures", default="fixtures", help="record/replay fixture directory (default fixtures/)")
    run.add_argument(
        "--max-fixture-age",
        type=DAYS,
        default=30.0,
        metavar="DAYS",
        help="warn when a replayed fixture is older than this (default 30)",
    )


def add_run(sub: Subcommands) -> None:
    run = sub.add_parser(
        "run",
        help="run cases as trials and report verdicts",
        description="Run cases (default: all of cases/) against the embedded demo site or "
        "--base-url, headless unless --headed, and write traces and reports under "
        "--out/<run-id>/.",
    )
    add_run_arguments(run)
    run.add_argument(
        "--network",
        dest="network_mode",
        choices=["live", "record", "replay"],
        default="live",
        help="live: pass through and count (default); record: also save every response into --fixtures; "
        "replay: answer only from --fixtures, never contacting the site",
    )
    run.set_defaults(func=handle_run)


def add_record(sub: Subcommands) -> None:
    rec = sub.add_parser(
        "record",
        help="(re)record the fixtures of cases; shows what changed since the last recording",
        description="Run cases in record mode: every response the browser receives, and the site's hook "
        "answers, go into --fixtures/<CASE>.yaml. An existing fixture is compared request by request.",
    )
    add_run_arguments(rec)
    rec.set_defaults(func=handle_run, network_mode="record")
