"""Commands over run directories: report, replay, compare, analyze, rejudge, power, label, calibrate."""

from __future__ import annotations

import argparse

from webmcp_eval.cli.common import (
    LABELS_SERIES_HELP,
    NON_NEGATIVE,
    POSITIVE,
    SEED,
    SHARE,
    TRIALS,
    DeprecatedSpelling,
    Subcommands,
    add_history_flags,
    add_output_flags,
    base_url_type,
    request_of,
)
from webmcp_eval.errors import Outcome
from webmcp_eval.llm.config import ANALYST_FLAGS, CALIBRATE_FLAGS

# Each handler builds its command's request from the parsed arguments and calls the command's core, imported when
# the command runs: the cores load the results, reports and browser stacks, which --help and a usage mistake skip.


def handle_report(args: argparse.Namespace) -> Outcome:
    from webmcp_eval.evaluation.reporting import ReportFiles
    from webmcp_eval.evaluation.reports import ReportRequest, report_command

    return report_command(request_of(ReportRequest, args, outputs=ReportFiles.of(args)))


def handle_replay(args: argparse.Namespace) -> Outcome:
    from webmcp_eval.evaluation.replay import ReplayRequest, replay_command

    return replay_command(request_of(ReplayRequest, args))


def handle_compare(args: argparse.Namespace) -> Outcome:
    from webmcp_eval.evaluation.reports import CompareRequest, compare_command

    return compare_command(request_of(CompareRequest, args))


def handle_analyze(args: argparse.Namespace) -> Outcome:
    from webmcp_eval.evaluation.reports import AnalyzeRequest, analyze_command

    return analyze_command(request_of(AnalyzeRequest, args))


def handle_rejudge(args: argparse.Namespace) -> Outcome:
    from webmcp_eval.evaluation.rejudging import RejudgeRequest, rejudge_command
    from webmcp_eval.evaluation.reporting import ReportFiles

    return rejudge_command(request_of(RejudgeRequest, args, outputs=ReportFiles.of(args)))


def handle_power(args: argparse.Namespace) -> Outcome:
    from webmcp_eval.evaluation.reports import PowerRequest, power_command

    return power_command(request_of(PowerRequest, args))


def handle_label(args: argparse.Namespace) -> Outcome:
    from webmcp_eval.evaluation.labelling import LabelRequest, label_command

    return label_command(request_of(LabelRequest, args))


def handle_calibrate(args: argparse.Namespace) -> Outcome:
    from webmcp_eval.evaluation.labelling import CalibrateRequest, calibrate_command

    return calibrate_command(request_of(CalibrateRequest, args))


def add_report(sub: Subcommands) -> None:
    rep = sub.add_parser("report", help="rebuild reports from the traces of one or more run directories")
    rep.add_argument(
        "run_dirs",
        nargs="+",
        help="run directories (e.g. traces/<run-id>), or all shards of one plan (run --shard i/n): merged into one run",
    )
    rep.add_argument("--out", help="where a merged report goes (default traces/merged)")
    add_output_flags(rep)
    rep.add_argument(
        "--no-html",
        action="store_true",
        help="no default report.html when merging (a merge of very many trials: docs/running.md, Sizing)",
    )
    rep.add_argument("--labels", metavar="FILE", help=LABELS_SERIES_HELP)
    add_history_flags(rep)
    rep.set_defaults(func=handle_report)


def add_replay(sub: Subcommands) -> None:
    rp = sub.add_parser("replay", help="re-run recorded traces offline against their fixtures, and compare")
    rp.add_argument("traces", nargs="+", help="trace files (…/trials/<CASE>.t1.json)")
    rp.add_argument("--fixtures", help="fixture directory (default: the fixtures/ beside the trace's trials/)")
    rp.add_argument("--live", action="store_true", help="against a live deployment instead (needs --base-url)")
    rp.add_argument("--base-url", type=base_url_type, help="the deployment for --live")
    rp.add_argument("--out", default="traces/replays", help="where replay results go (default traces/replays)")
    rp.add_argument("--chromium", help="the Chromium binary")
    rp.set_defaults(func=handle_replay)


def add_compare(sub: Subcommands) -> None:
    cmp_ = sub.add_parser("compare", help="paired per-case differences between two runs, with a 95%% interval")
    cmp_.add_argument("run_a", help="run A: the run directory compared against (the before)")
    cmp_.add_argument("run_b", help="run B: the run directory compared with it (the after)")
    cmp_.add_argument("--labels", metavar="FILE", help=LABELS_SERIES_HELP)
    cmp_.set_defaults(func=handle_compare)


def add_analyze(sub: Subcommands) -> None:
    ana = sub.add_parser(
        "analyze",
        help="why runs failed: failing trials grouped by failing assertion and message, across runs",
        description="Group the failing trials of one or more runs (oldest first) by failing assertion and "
        "message; say which cases fail in every run, in some runs or newly, with links to the traces. With "
        "--model, a model reads each group's traces and says which hypothesis they support (the agent's "
        "logic, the tool or site, an assertion too strict), quoting the trace fields it used. Never changes "
        "a verdict. Writes analysis.html in the last run directory (or --html FILE).",
    )
    ana.add_argument("runs", nargs="+", metavar="RUN", help="run directories, oldest first")
    ANALYST_FLAGS.add(ana, rest=False)
    ana.add_argument("--provider", choices=["openai", "anthropic"], default="openai", help="the model's API")
    ANALYST_FLAGS.add(ana, model=False)
    ana.add_argument("--markdown", metavar="FILE", help="also write the analysis as Markdown")
    ana.add_argument("--html", metavar="FILE", help="the HTML page (default: analysis.html in the last run)")
    ana.set_defaults(func=handle_analyze)


def add_rejudge(sub: Subcommands) -> None:
    rj = sub.add_parser(
        "rejudge",
        help="judge a run's stored traces again with the current case files and checks, into a new run",
        description="Judge every trace of RUN again with the cases as they are now (--suite DIR, default "
        "cases/) and the current checks; the evidence is unchanged. Writes a new run directory (-o, default "
        "RUN-rejudged-<time> beside RUN; RUN is never written) with summary.json, junit.xml and report.html, "
        "and prints the verdict changes. A trace whose case is not in the suite, or whose case now plays "
        "differently or asks for what the trial never observed, stops it (exit 2, nothing written) unless "
        "--keep-going writes such trials as not_run with the reason. Exit codes as report.",
    )
    rj.add_argument("run_dir", help="the run directory whose traces to judge again (traces/<run-id>)")
    rj.add_argument("--suite", metavar="DIR", help="the suite folder whose cases judge them (default cases/)")
    rj.add_argument("-o", "--output", metavar="NEWRUN", help="the new run directory (default RUN-rejudged-<time>)")
    rj.add_argument(
        "--keep-going", action="store_true", help="write traces the current cases cannot judge as not_run, with why"
    )
    add_output_flags(rj)
    rj.set_defaults(func=handle_rejudge)


def add_power(sub: Subcommands) -> None:
    pw = sub.add_parser("power", help="cases and trials needed to detect a difference; the smallest detectable one")
    rate = pw.add_mutually_exclusive_group(required=True)
    rate.add_argument("--base-rate", type=SHARE, help="the case pass rate the change starts from, e.g. 0.7")
    # "baseline" is no word of power's: the old spelling stays for one release
    rate.add_argument("--baseline", dest="base_rate", type=SHARE, action=DeprecatedSpelling, instead="--base-rate")
    pw.add_argument("--delta", type=SHARE, help="the difference to detect, e.g. 0.1")
    pw.add_argument("--cases", type=POSITIVE, help="the suite's size: report the smallest detectable difference")
    pw.add_argument("--trials", type=TRIALS, default=1, help="trials per case (default 1)")
    pw.add_argument("--alpha", type=SHARE, default=0.05, help="significance level (default 0.05)")
    pw.add_argument("--power", type=SHARE, default=0.8, help="wanted power (default 0.8)")
    pw.set_defaults(func=handle_power)


def add_label(sub: Subcommands) -> None:
    lab = sub.add_parser(
        "label",
        help="label trials against their rubric in the terminal (failing ones, then a sample)",
        description="Walk the failing trials with rubric criteria, then a seeded sample of the others, "
        "and ask pass/fail per criterion; labels are saved after every trial into the labels file beside "
        "the suite. Trials already labelled are skipped.",
    )
    lab.add_argument("run_dirs", nargs="+", help="run directories (traces/<run-id>)")
    lab.add_argument("--labels", help="the labels file (default: labels.json beside the cases)")
    lab.add_argument(
        "--sample", type=NON_NEGATIVE, default=5, help="passing trials to sample besides the failing ones (5)"
    )
    lab.add_argument("--seed", type=SEED, default=0, help="the sample's seed (default 0)")
    lab.add_argument("--labeller", default="", help="who labels (kept with each label)")
    lab.add_argument(
        "--import",
        dest="import_file",
        metavar="FILE",
        help="merge labels made in the HTML report (its download, or its text box saved to a file) instead of asking",
    )
    lab.set_defaults(func=handle_label)


def add_calibrate(sub: Subcommands) -> None:
    cal = sub.add_parser(
        "calibrate",
        help="agreement of a model grader with people's labels: Cohen's kappa, confusion matrix, per criterion",
        description="Without --grader: the agreement of every model grader whose verdicts the labels file "
        "holds. With --grader: re-grade the labelled trials with it (cassettes work as in run) and keep its "
        "verdicts in the labels file. Exit 0 when every grader shown may gate a run (kappa at or above the "
        "suite's min_kappa over enough labels), 1 when one may not, 2 without labels.",
    )
    cal.add_argument("--labels", help="the labels file (default: labels.json beside the cases)")
    cal.add_argument("--grader", choices=["openai", "anthropic"], help="re-grade the labelled trials with it")
    CALIBRATE_FLAGS.add(cal)
    cal.add_argument("--prices", help="YAML/JSON price table for the grader's cost")
    cal.set_defaults(func=handle_calibrate)
