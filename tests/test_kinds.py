"""The expectation kinds (webmcp_eval/kinds/, webmcp_eval/judge/checks.py KINDS): every block of a case's expect: is one
kind, and each kind names its model, its checker, the trace fields it reads and what a stored trace lacks for
it. The checks, rejudge and mutate take their lists from the kinds, so a kind missing a part fails here."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from webmcp_eval.judge import checks, rejudge
from webmcp_eval.kinds import FIRST, FRAME, Evidence, Kind, answerable, module_kinds
from webmcp_eval.kinds.state import STATE
from webmcp_eval.mutation import evidence
from webmcp_eval.rundir.reading import read_traces
from webmcp_eval.suite.case import Case, Expectations
from webmcp_eval.suite.loader import load_cases
from webmcp_eval.trace import ConfirmationRecord, Trace, UiObservation, UiRecord, UntrustedText

ROOT = Path(__file__).resolve().parent.parent


def _models_in(annotation: Any) -> set[Any]:
    """The classes an annotation names (``list[UiExpectation]``, ``StateExpectation | None``...)."""
    args = typing.get_args(annotation)
    return {annotation} if not args else set().union(*(_models_in(a) for a in args))


def test_every_expect_field_is_one_kind_and_every_kind_one_expect_field() -> None:
    names = [k.name for k in checks.KINDS]
    assert len(names) == len(set(names)), names
    assert names == list(Expectations.model_fields), "the kinds judge in the order the case model lists them"
    for kind in checks.KINDS:
        assert kind.model in _models_in(Expectations.model_fields[kind.name].annotation), kind.name


def test_every_kind_names_its_model_checker_evidence_and_what_a_stored_trace_lacks() -> None:
    for kind in checks.KINDS:
        assert issubclass(kind.model, BaseModel) and callable(kind.check) and callable(kind.unanswerable), kind.name
        assert kind.reads and all(part.fields for part in kind.reads), f"{kind.name} names no trace field it reads"
        assert kind.fields <= set(Trace.model_fields), kind.name


def test_a_kind_without_a_part_is_refused_where_it_is_written() -> None:
    whole = next(k for k in checks.KINDS if k.name == "answer")
    with pytest.raises(ValueError, match="names no evidence"):
        dataclasses.replace(whole, reads=())
    with pytest.raises(ValueError, match="fields the trace lacks"):
        dataclasses.replace(whole, reads=(Evidence("answer", ("reply",), lambda t: None),))
    with pytest.raises(ValueError, match="names no trace field"):
        dataclasses.replace(whole, reads=(Evidence("answer", (), lambda t: None),))
    with pytest.raises(ValueError, match="pydantic class"):
        dataclasses.replace(whole, model=dict)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="field of expect"):
        dataclasses.replace(whole, name="the answer")


def test_one_evidence_name_is_one_reading_of_the_trace() -> None:
    by_name: dict[str, Evidence] = {}
    for kind in checks.KINDS:
        for part in kind.reads:
            assert by_name.setdefault(part.name, part) is part, f"two readings named {part.name}"
    assert "verdict" not in by_name  # mutate's own


# ---- each kind reads only the trace fields it names ------------------------------------------------------

READ: set[str] = set()


class _Spy(Trace):
    """A trace that notes each of its fields a checker reads."""

    def __getattribute__(self, name: str) -> Any:
        if name in Trace.model_fields:
            READ.add(name)
        return super().__getattribute__(name)


def _rich(trace: Trace) -> Trace:
    """The trace with evidence for every kind: the deeper branches of each checker run too."""
    rich = trace.model_copy(deep=True)
    rich.confirmation = ConfirmationRecord(control="button '送出'", found=True, visible=True)
    rich.untrusted_rendering = [UntrustedText(text="<b>x</b>", elements=[], shown_as_text=True)]
    rich.ai_result = "done"
    rich.stopped = "the page crashed"
    return rich


def _samples() -> list[tuple[Case, Trace]]:
    cases = [lc.case for lc in load_cases(sorted((ROOT / "cases").glob("*.yaml")))[0]]
    traces = read_traces(ROOT / "traces" / "day26")
    traces += [_rich(t) for t in traces]
    return [(c, t) for c in cases for t in traces]


def test_each_kind_reads_only_the_trace_fields_it_names() -> None:
    """So mutate, which compares each kind's evidence between a clean run and a mutant, sees all it reads."""
    samples = _samples()
    judged: set[str] = set()
    for case, trace in samples:
        spy = _Spy.model_validate(trace.model_dump())
        for kind, value in checks.blocks(case):
            judged.add(kind.name)
            READ.clear()
            kind.check(value, spy, {})
            kind.unanswerable(value, spy)
            assert not READ - kind.fields - FRAME, f"{kind.name} reads {sorted(READ - kind.fields - FRAME)}"
    assert set(FIRST) <= judged  # the seed cases use every one of the kinds judged first


def test_the_spy_sees_a_field_a_kind_does_not_name() -> None:
    blind = dataclasses.replace(next(k for k in checks.KINDS if k.name == "answer"), reads=(STATE,))
    case, trace = next((c, t) for c, t in _samples() if c.expect.answer is not None)
    READ.clear()
    blind.check(case.expect.answer, _Spy.model_validate(trace.model_dump()), {})
    assert READ - blind.fields - FRAME == {"ai_result"}


# ---- rejudge and mutate take their lists from the kinds --------------------------------------------------


def _case(expect: dict[str, Any]) -> Case:
    head = {"id": "X-01", "behaviour": "selection", "title": "t", "start_route": "/events"}
    return Case.model_validate({**head, "steps": [{"user": "hi"}], "expect": expect})


def _trace(**kw: Any) -> Trace:
    """A trace of a trial of ``_case`` (its start route and steps)."""
    played = kw.pop("case", {"start_route": "/events", "steps": [{"user": "hi"}]})
    return Trace(
        run_id="r", trial_id="X-01.t1", case_id="X-01", behaviour="selection", start_route="/events", case=played, **kw
    )


def test_rejudge_asks_each_block_of_the_case_what_the_trace_lacks(monkeypatch: pytest.MonkeyPatch) -> None:
    case, trace = _case({"answer": {"contains": ["x"]}}), _trace(ai_result="x")
    assert rejudge.unanswerable(case, trace) == ""
    lacking = [dataclasses.replace(k, unanswerable=lambda v, t: "no answer kept") if k.name == "answer" else k
               for k in checks.KINDS]  # fmt: skip
    monkeypatch.setattr(checks, "KINDS", tuple(lacking))
    assert rejudge.unanswerable(case, trace) == "no answer kept"
    assert rejudge.unanswerable(_case({}), trace) == ""  # a case without the block never asks it


def test_the_kinds_that_gather_evidence_of_their_own_say_when_it_was_never_gathered() -> None:
    ui = _case({"ui": [{"target": {"role": "button", "name": "送出"}}]})
    assert "ui[0] button '送出' was never observed" in rejudge.unanswerable(ui, _trace())
    seen = _trace(ui=UiRecord(observations=[UiObservation(target="button '送出'", count=1, visible=True)]))
    assert rejudge.unanswerable(ui, seen) == ""
    conf = _case({"confirmation": {"control": {"role": "button", "name": "送出"}}})
    assert "was never observed" in rejudge.unanswerable(conf, _trace())
    assert rejudge.unanswerable(conf, _trace(confirmation=ConfirmationRecord(control="button '送出'"))) == ""
    untrusted = _case({"untrusted": {"as_text": True}})
    assert rejudge.unanswerable(untrusted, _trace()) == "untrusted rendering was never observed in this trial"
    assert rejudge.unanswerable(untrusted, _trace(untrusted_rendering=[])) == ""
    assert rejudge.unanswerable(_case({"untrusted": {"as_text": False}}), _trace()) == ""
    assert answerable(None, _trace()) == ""


def test_two_expectations_of_one_target_are_judged_again_each_on_its_own_observation() -> None:
    """A case that reads one dialog twice (its text, then its summary) keeps its verdict when judged again."""
    dialog = {"role": "dialog", "name": "確認"}
    case = _case({"ui": [{"target": dialog, "text": "確認"}, {"target": dialog, "summary": {"活動": "A"}}]})
    plain = UiObservation(target="dialog '確認'", count=1, visible=True, text="確認")
    summed = plain.model_copy(update={"pairs": [["活動", "A"]]})
    trace = _trace(ui=UiRecord(observations=[plain, summed]), case=case.model_dump(mode="json", exclude_defaults=True))
    assert checks.verdict(checks.evaluate(case, trace))[0] == "passed"
    again = rejudge.rejudge(trace.model_copy(update={"verdict": "passed"}), case, "x.yaml", "new")
    assert again.verdict == "passed", again.verdict_reason
    reordered = _case({"ui": list(reversed(case.model_dump(mode="json")["expect"]["ui"]))})
    assert rejudge.rejudge(trace, reordered, "x.yaml", "new").verdict == "passed"


def test_mutate_compares_the_evidence_of_every_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    trace = _trace(ai_result="x")
    assert list(evidence.observable(trace)) == ["verdict"] + [e.name for e in checks.evidence()]
    extra = Evidence("the_answer_twice", ("ai_result",), lambda t: (t.ai_result or "") * 2)
    grown: list[Kind[Any]] = [dataclasses.replace(k, reads=(*k.reads, extra)) if k.name == "answer" else k
                              for k in checks.KINDS]  # fmt: skip
    monkeypatch.setattr(checks, "KINDS", tuple(grown))
    assert evidence.observable(trace)["the_answer_twice"] == "xx"
    other = trace.model_copy(update={"ai_result": "y"})
    assert "the_answer_twice" in evidence.differences(evidence.observable(trace), evidence.observable(other), set())


def test_the_kinds_judged_first_come_first_then_every_other_by_module_name() -> None:
    names = [k.name for k in module_kinds()]
    assert names[: len(FIRST)] == list(FIRST)
    assert names[len(FIRST) :] == sorted(names[len(FIRST) :]) and len(names) > len(FIRST)
    assert [k.name for k in checks.KINDS] == names == list(Expectations.model_fields)  # one order everywhere


def test_validate_holds_each_block_to_its_kinds_rules_at_the_blocks_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """validate asks every kind with rules (its ``validate``) through the registry, with what the case says."""
    from webmcp_eval.kinds import CaseFacts
    from webmcp_eval.suite import validate
    from webmcp_eval.suite.loader import parse_case

    text = (
        "id: X-01\nbehaviour: selection\ntitle: t\nstart_route: /events\nsteps:\n"
        "  - user: hi\n    plan: [{call: search_events}]\n  - action: reload\n"
        "expect:\n  answer:\n    contains: [x]\n"
    )
    seen: list[CaseFacts] = []

    def rules(value: Any, facts: CaseFacts) -> list[tuple[tuple[str | int, ...], str]]:
        seen.append(facts)
        return [(("expect", "answer", "contains", 0), "said by the kind")]

    kinds = [dataclasses.replace(k, validate=rules) if k.name == "answer" else k for k in module_kinds()]
    monkeypatch.setattr(validate, "blocks", lambda expect: [(k, v) for k in kinds if (v := getattr(expect, k.name))])
    problems = validate.validate_suite([parse_case(text, "x.yaml")], None, whole_suite=False)
    assert [(p.line, p.field, p.message) for p in problems] == [(11, "expect.answer.contains[0]", "said by the kind")]
    (facts,) = seen
    assert facts.user_steps == [0] and facts.planned == [(0, "search_events")] and facts.catalog is None
    monkeypatch.undo()
    assert validate.validate_suite([parse_case(text, "x.yaml")], None, whole_suite=False) == []


@pytest.mark.parametrize(
    ("answer", "found"),
    [
        ("{contains: [x], not_contains: [y], contains_any: [[a, b]]}", []),
        ("{contains: ['']}", ["expect.answer.contains[0]"]),
        ("{contains_any: [[a, ''], []]}", ["expect.answer.contains_any[0]", "expect.answer.contains_any[1]"]),
        ("{not_contains: [y, '']}", ["expect.answer.not_contains[1]"]),
    ],
)
def test_an_empty_text_of_the_answer_is_refused_by_its_kinds_rules(answer: str, found: list[str]) -> None:
    from webmcp_eval.suite.loader import parse_case
    from webmcp_eval.suite.validate import validate_suite

    head = "id: X-01\nbehaviour: selection\ntitle: t\nstart_route: /events\nsteps: [{user: hi}]\n"
    text = f"{head}expect:\n  answer: {answer}\n"
    problems = validate_suite([parse_case(text, "x.yaml")], None, whole_suite=False)
    assert [p.field for p in problems] == found
    assert all(p.line == 7 and "says nothing about the answer" in p.message for p in problems)


def _kind_reads(path: Path) -> list[str]:
    """Where code reads a block of expect: by its kind's name (``x.expect.confirmation``, ``getattr(e, "ui")``)."""
    import ast

    names = {k.name for k in module_kinds()}
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in names:
            if isinstance(node.value, ast.Attribute) and node.value.attr == "expect":
                found.append(f"{path.name}:{node.lineno}: expect.{node.attr}")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "getattr" and len(node.args) > 1:
            name = node.args[1]
            if isinstance(name, ast.Constant) and name.value in names:
                found.append(f"{path.name}:{node.lineno}: getattr {name.value}")
    return found


def test_validate_and_the_case_model_read_no_block_by_its_kinds_name_nor_the_trial_consistency(
    tmp_path: Path,
) -> None:
    """They loop over the kinds' hooks (validate, validate_absent, warn, about_writes, watch_calls)."""
    package = ROOT / "webmcp_eval"
    assert _kind_reads(package / "suite" / "validate.py") == []
    assert _kind_reads(package / "suite" / "case.py") == []
    assert [r for r in _kind_reads(package / "play" / "run" / "trial.py") if "consistency" in r] == []
    wrong = tmp_path / "wrong.py"
    wrong.write_text("def f(case):\n    return case.expect.confirmation or getattr(case.expect, 'consistency')\n")
    assert _kind_reads(wrong) == ["wrong.py:2: expect.confirmation", "wrong.py:2: getattr consistency"]


def test_validate_asks_the_kinds_of_absent_blocks_and_warns_through_theirs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kind's ``validate_absent`` is asked for a case without its block (never for one with it); its ``warn``
    gives validate's warnings; its ``about_writes`` makes the case one about a write."""
    from webmcp_eval.suite import case as case_module
    from webmcp_eval.suite import validate
    from webmcp_eval.suite.loader import parse_case

    head = "id: X-01\nbehaviour: selection\ntitle: t\nstart_route: /events\nsteps: [{user: hi}]\n"
    answered = head.replace("X-01", "Y-01") + "expect:\n  answer: {contains: [x]}\n"
    bare, with_answer = parse_case(head, "x.yaml"), parse_case(answered, "y.yaml")
    hooks = {
        "validate_absent": lambda facts: [(("steps", 0), "leans on an answer")],
        "warn": lambda value, facts: [(("expect", "answer", "contains", 0), "likely wrong")],
        "about_writes": lambda value: True,
    }
    kinds = [dataclasses.replace(k, **hooks) if k.name == "answer" else k for k in module_kinds()]
    monkeypatch.setattr(validate, "module_kinds", lambda: kinds)
    present = lambda expect: [(k, v) for k in kinds if (v := getattr(expect, k.name)) is not None]  # noqa: E731
    monkeypatch.setattr(validate, "blocks", present)
    monkeypatch.setattr(case_module, "blocks", present)
    problems = validate.validate_suite([bare, with_answer], None, whole_suite=False)
    assert [(p.file, p.line, p.field, p.message) for p in problems] == [("x.yaml", 5, "steps[0]", "leans on an answer")]
    (warning,) = validate.case_warnings([bare, with_answer])
    assert (warning.file, warning.line, warning.field) == ("y.yaml", 7, "expect.answer.contains[0]")
    assert with_answer.case.writes and not bare.case.writes
    monkeypatch.undo()
    assert validate.validate_suite([bare, with_answer], None, whole_suite=False) == []
    assert validate.case_warnings([bare, with_answer]) == [] and not with_answer.case.writes


def _static_expectations(source: str) -> list[tuple[str, Any, Any]]:
    """(name, type, default) of each field of the ``Expectations`` the type checker reads (under TYPE_CHECKING)."""
    import ast

    from webmcp_eval.suite import case as case_module

    names = {**vars(case_module), **{k.model.__name__: k.model for k in module_kinds()}}
    tree = ast.parse(source)
    (static,) = [
        node
        for top in tree.body
        if isinstance(top, ast.If) and getattr(top.test, "id", "") == "TYPE_CHECKING"
        for node in top.body
        if isinstance(node, ast.ClassDef) and node.name == "Expectations"
    ]
    fields = []
    for item in static.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None:
            value = item.value
            if isinstance(value, ast.Call):  # Field(default_factory=X): a fresh X for each case
                (factory,) = [k.value for k in value.keywords if k.arg == "default_factory"]
                default: Any = ("factory", eval(ast.unparse(factory), names))  # noqa: S307 - our own source
            else:
                default = ("value", ast.literal_eval(value))
            fields.append((item.target.id, eval(ast.unparse(item.annotation), names), default))  # noqa: S307
    return fields


def _runtime_expectations() -> list[tuple[str, Any, Any]]:
    return [
        (name, f.annotation, ("factory", f.default_factory) if f.default_factory else ("value", f.default))
        for name, f in Expectations.model_fields.items()
    ]


def test_the_type_checkers_expectations_are_the_model_the_kinds_build_field_by_field() -> None:
    """The expect: model is built from the kinds at runtime; the type checker reads a declaration of it (suite/case.py,
    under TYPE_CHECKING) that must name the same fields, in order, with the same types and defaults."""
    source = (ROOT / "webmcp_eval" / "suite" / "case.py").read_text(encoding="utf-8")
    assert _static_expectations(source) == _runtime_expectations()
    dropped = source.replace("        console: ConsoleExpectation | None = None\n", "")
    retyped = source.replace("    state: StateExpectation | None = None\n", "    state: StateExpectation = None\n")
    assert dropped != source and retyped != source
    assert _static_expectations(dropped) != _runtime_expectations()  # a kind the declaration forgot
    assert _static_expectations(retyped) != _runtime_expectations()  # a block typed otherwise
