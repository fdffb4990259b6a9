"""Every browser context gets the suite's time zone and locale (suite.yaml), and every trace records them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_support import in_thread, play

from tests.test_cli import cli
from webmcp_eval.play.run.settings import RunState, TrialHook, TrialHooks
from webmcp_eval.suite.browser_context import (
    DEFAULT_LOCALE,
    DEFAULT_TIMEZONE,
    BrowserContextSettings,
    check_locale,
    check_timezone,
)
from webmcp_eval.suite.folder import SuiteError, find_suite, read_suite_config

ROOT = Path(__file__).resolve().parent.parent

# What the page itself reads of its clock and language, shown where the trace's ARIA snapshot sees it.
SHOW_CLOCK = """
document.addEventListener('DOMContentLoaded', () => {
  const p = document.createElement('p');
  const hour = new Date('2027-01-05T11:00:00Z').getHours();
  p.textContent = `clock ${Intl.DateTimeFormat().resolvedOptions().timeZone} ${navigator.language} ${hour}h`;
  document.body.append(p);
});
"""


def test_the_seed_suite_pins_taipei_and_zh_tw_and_a_silent_suite_gets_utc_en_us(tmp_path: Path):
    seed = read_suite_config(ROOT / "cases" / "suite.yaml")
    assert seed.browser_context() == BrowserContextSettings("Asia/Taipei", "zh-TW")
    (tmp_path / "suite.yaml").write_text("min_cases_per_behaviour: 0\n", encoding="utf-8")
    assert read_suite_config(tmp_path / "suite.yaml").browser_context() == BrowserContextSettings("UTC", "en-US")
    assert find_suite([]).config.browser_context() == BrowserContextSettings()  # no suite.yaml at all
    assert (DEFAULT_TIMEZONE, DEFAULT_LOCALE) == ("UTC", "en-US")


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("timezone_id: Mars/Olympus_Mons", "timezone_id: 'Mars/Olympus_Mons' is not an IANA time zone"),
        ("timezone_id: ../../etc/passwd", "timezone_id: '../../etc/passwd' is not an IANA time zone"),
        ("locale: zh_TW", "locale: 'zh_TW' is not a BCP 47 language tag; give one such as zh-TW or en-US"),
        ("locale: 8", "locale: Input should be a valid string"),
        # names the zone files hold that the browser refuses ("Invalid timezone ID"): every trial would be not_run
        ("timezone_id: posix/Asia/Taipei", "timezone_id: 'posix/Asia/Taipei' is not an IANA time zone"),
        ("timezone_id: right/UTC", "timezone_id: 'right/UTC' is not an IANA time zone"),
        ("timezone_id: localtime", "timezone_id: 'localtime' is not an IANA time zone"),
        ("timezone_id: asia/taipei", "timezone_id: 'asia/taipei' is not an IANA time zone"),
        ('locale: "zh-TW\\n"', "locale: 'zh-TW\\n' is not a BCP 47 language tag"),
        ('locale: "zh-TW "', "locale: 'zh-TW ' is not a BCP 47 language tag"),
    ],
)
def test_a_bad_time_zone_or_locale_is_file_line_field(tmp_path: Path, entry: str, message: str):
    (tmp_path / "suite.yaml").write_text(f"min_cases_per_behaviour: 0\n\n{entry}\n", encoding="utf-8")
    with pytest.raises(SuiteError) as err:
        read_suite_config(tmp_path / "suite.yaml")
    assert str(err.value).startswith(f"{tmp_path / 'suite.yaml'}:3: {message}"), str(err.value)


@pytest.mark.parametrize("zone", ["Asia/Taipei", "UTC", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "US/Eastern"])
def test_a_zone_the_browser_takes_is_accepted(zone: str):
    assert check_timezone(zone) == zone


@pytest.mark.parametrize(
    "tag", ["zh-TW", "en", "zh-Hant-TW", "de-DE-1996", "es-419", "en-US-u-ca-buddhist", "en-x-pirate"]
)
def test_a_well_formed_language_tag_is_accepted(tag: str):
    assert check_locale(tag) == tag


def test_validate_refuses_a_bad_time_zone_in_one_line(tmp_path: Path):
    (tmp_path / "suite.yaml").write_text("timezone_id: Taipei\n", encoding="utf-8")
    (tmp_path / "NO-01.yaml").write_text((ROOT / "cases" / "NO-01.yaml").read_text(encoding="utf-8"))
    out = cli("validate", str(tmp_path))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "suite.yaml:1: timezone_id: 'Taipei' is not an IANA time zone" in out.stdout + out.stderr


@pytest.mark.browser
def test_the_context_runs_on_the_suites_clock_and_the_trace_says_so(tmp_path: Path):
    pinned = BrowserContextSettings("Asia/Taipei", "zh-TW")
    seam = TrialHooks(by_case={"NO-01": TrialHook(init_script=SHOW_CLOCK)})
    (trace,) = play(tmp_path, ("NO-01",), browser_context=pinned, state=RunState(trial_hooks=seam))
    assert trace.verdict == "passed", trace.verdict_reason
    # 11:00 UTC is 19:00 in Taipei, whatever zone the machine running the suite is in
    assert "clock Asia/Taipei zh-TW 19h" in (trace.ui.aria_snapshot or "")
    assert (trace.timezone_id, trace.locale) == ("Asia/Taipei", "zh-TW")
    run = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert (run["timezone_id"], run["locale"]) == ("Asia/Taipei", "zh-TW")


def test_the_null_agents_control_plays_on_the_suites_clock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """validate --control opens its contexts as every other run of the suite does."""
    import webmcp_eval.play.run.run as run_module
    from webmcp_eval import cli as cli_module

    seen = []

    async def fake_run_suite(cases, options, state):  # noqa: ANN001, ANN202 - stands in for the browser run
        assert state.demo_site is not None  # the suite's site is the demo: validate hands the run its starter
        seen.append(options.site.browser_context)
        return run_module.RunResult(options.output.run_id or "r", tmp_path, [], {})

    monkeypatch.setattr(run_module, "run_suite", fake_run_suite)
    code = in_thread(cli_module.main, ["validate", str(ROOT / "cases"), "--control", "--out", str(tmp_path)])
    assert code == 0 and seen == [BrowserContextSettings("Asia/Taipei", "zh-TW")]
