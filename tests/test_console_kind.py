"""``expect.console`` (webmcp_eval/kinds/console.py): at most N errors of the page's own during the trial.

Judged on traces built from the pydantic models, with cases read from YAML through the real loader; the
trial's collection of the page's errors is tested on a real page in tests/test_page_errors.py.
"""

from __future__ import annotations

import textwrap

import pytest

from webmcp_eval.judge import checks, rejudge
from webmcp_eval.kinds import console
from webmcp_eval.mutation.evidence import differences, observable
from webmcp_eval.suite.case import Case, case_json_schema
from webmcp_eval.suite.loader import CaseLoadError, parse_case
from webmcp_eval.trace import PageError, Trace

HEAD = "id: X-01\nbehaviour: selection\ntitle: t\nstart_route: /events\nsteps:\n  - user: hi\n"
BOOM = PageError(source="exception", text="TypeError: Cannot read properties of undefined (reading 'id')")
LOGGED = PageError(source="console", text="failed to render the list")


def case(expect: str) -> Case:
    return parse_case(HEAD + "expect:\n" + textwrap.indent(textwrap.dedent(expect), "  "), "x.yaml").case


def trace(errors: list[PageError] | None, **kw: object) -> Trace:
    played = {"start_route": "/events", "steps": [{"user": "hi"}]}
    return Trace.model_validate(
        {"run_id": "r", "trial_id": "X-01.t1", "case_id": "X-01", "behaviour": "selection", "start_route": "/events"}
        | {"case": played, "page_errors": errors}
        | kw
    )


def judged(expect: str, errors: list[PageError] | None, **kw: object) -> tuple[str, str, str]:
    (only,) = [a for a in checks.evaluate(case(expect), trace(errors, **kw)) if a.kind == "console"]
    return only.status, only.why, only.description


def test_a_page_that_throws_fails_errors_0() -> None:
    status, why, desc = judged("console: {errors: 0}", [BOOM])
    assert (status, desc) == ("failed", "no error on the page")
    assert why == "1 error(s): exception: TypeError: Cannot read properties of undefined (reading 'id')"


def test_a_page_that_runs_clean_passes_errors_0() -> None:
    assert judged("console: {errors: 0}", []) == ("passed", "no error", "no error on the page")


def test_errors_n_allows_at_most_n_of_either_source() -> None:
    assert judged("console: {errors: 1}", [LOGGED])[:2] == ("passed", "1 error(s): console: failed to render the list")
    status, why, desc = judged("console: {errors: 1}", [LOGGED, BOOM])
    assert (status, desc) == ("failed", "at most 1 error(s) on the page") and why.startswith("2 error(s): console:")
    many = [PageError(source="exception", text=f"e{i}") for i in range(8)]
    assert judged("console: {errors: 0}", many)[1].endswith("exception: e4; … and 3 more")


def test_without_the_block_nothing_is_checked() -> None:
    assert not [a for a in checks.evaluate(case("answer: {contains: [x]}"), trace([BOOM])) if a.kind == "console"]


def test_errors_not_recorded_or_a_trial_cut_short_never_pass() -> None:
    assert judged("console: {errors: 0}", None)[:2] == ("not_run", "the page's errors were not recorded")
    status, why, _ = judged("console: {errors: 1}", [BOOM], stopped="the page crashed")
    assert (status, why) == ("not_run", "not reached: the trial stopped first (the page crashed)")
    # more than allowed before it stopped: the rest of the trial cannot undo them
    assert judged("console: {errors: 0}", [BOOM], stopped="the page crashed")[0] == "failed"


@pytest.mark.parametrize(
    ("block", "field", "message"),
    [
        ("console: {errors: -1}", "expect.console.errors", "greater than or equal to 0"),
        ("console: {errors: some}", "expect.console.errors", "integer"),
        ("console: {}", "expect.console.errors", "required field is missing"),
        ("console: {errors: 0, warnings: 0}", "expect.console.warnings", "unknown field"),
    ],
)
def test_a_wrong_block_is_one_problem_at_its_line(block: str, field: str, message: str) -> None:
    with pytest.raises(CaseLoadError) as info:
        case(block)
    (problem,) = info.value.problems
    assert (problem.file, problem.line, problem.field) == ("x.yaml", 8, field) and message in problem.message


def test_the_schema_and_the_kinds_have_it() -> None:
    prop = case_json_schema()["$defs"]["Expectations"]["properties"]["console"]
    assert "console.error()" in prop["description"]
    assert console.KIND in checks.KINDS  # the registry holds the kind's own object


def test_rejudge_judges_the_block_on_the_stored_errors() -> None:
    played = trace([BOOM]).model_copy(update={"verdict": "passed"})  # judged before the case asked
    strict = case("console: {errors: 0}")
    assert rejudge.unanswerable(strict, played) == ""
    again = rejudge.rejudge(played, strict, "x.yaml", "new")
    assert again.verdict == "failed" and again.page_errors == [BOOM]
    assert rejudge.rejudge(played, case("console: {errors: 1}"), "x.yaml", "new").verdict == "passed"


def test_rejudge_will_not_read_a_trace_without_recorded_errors_as_clean() -> None:
    old = trace(None).model_copy(update={"verdict": "passed"})
    why = rejudge.unanswerable(case("console: {errors: 0}"), old)
    assert why == "the page's errors were not recorded in this trial (a trace made before they were kept)"
    assert rejudge.rejudge(old, case("console: {errors: 0}"), "x.yaml", "new", why).verdict == "not_run"
    assert rejudge.unanswerable(case("answer: {contains: [x]}"), old) == ""  # a case that does not ask


def test_mutate_compares_the_pages_errors() -> None:
    clean, broken = observable(trace([])), observable(trace([BOOM]))
    assert clean["console"] == [] and broken["console"] == [BOOM.model_dump()]
    assert differences(clean, broken, set()) == ["console"]
    assert differences(clean, broken, {"console"}) == []  # errors that differ between clean runs: noise
