"""``expect.answer``: what the agent's final answer says (``contains``, ``contains_any``, ``not_contains``).

Its ``rubric`` is criteria in words that code cannot check: the model grader and people judge them
(webmcp_eval/judge/grader.py), never this checker.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from webmcp_eval.kinds import Captures, Evidence, Kind, RuleProblem, answerable
from webmcp_eval.kinds import assertion as _a
from webmcp_eval.kinds._locator import Strict
from webmcp_eval.matchers import short
from webmcp_eval.trace import Assertion, Trace


class RubricCriterion(Strict):
    """One criterion in words, judged per trial by a grader (a model, checked against people's labels)."""

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="stable name, e.g. says_cannot_know")
    criterion: str = Field(min_length=1, description="what a passing trial does, in words a person can judge")


class AnswerExpectation(Strict):
    contains: list[str] = Field(default_factory=list)
    contains_any: list[list[str]] = Field(
        default_factory=list, description="each inner list: at least one of these must appear"
    )
    not_contains: list[str] = Field(default_factory=list)
    rubric: list[RubricCriterion] = Field(
        default_factory=list,
        description="criteria in words for what code cannot check; judged by a model grader (run --grader) "
        "that sees the whole trace, and by people (webmcp-eval label)",
    )

    @field_validator("rubric")
    @classmethod
    def _unique_ids(cls, value: list[RubricCriterion]) -> list[RubricCriterion]:
        ids = [c.id for c in value]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"rubric criterion id(s) used twice: {', '.join(dupes)}")
        return value


def check_answer(exp: AnswerExpectation, trace: Trace) -> list[Assertion]:
    text = trace.ai_result or ""
    out = []
    for i, needle in enumerate(exp.contains):
        out.append(
            _a(
                f"answer.contains[{i}]",
                "answer",
                f"the answer mentions {needle!r}",
                needle in text,
                "found" if needle in text else f"not in the answer {short(text, 80)}",
            )
        )
    for i, options in enumerate(exp.contains_any):
        found = [o for o in options if o in text]
        out.append(
            _a(
                f"answer.contains_any[{i}]",
                "answer",
                "the answer mentions one of " + " / ".join(options),
                bool(found),
                f"found {found[0]!r}" if found else f"none in {short(text, 80)}",
            )
        )
    for i, needle in enumerate(exp.not_contains):
        out.append(
            _a(
                f"answer.not_contains[{i}]",
                "answer",
                f"the answer does not say {needle!r}",
                needle not in text,
                "absent" if needle not in text else "it does",
            )
        )
    return out


def _answer(exp: AnswerExpectation, trace: Trace, captures: Captures) -> list[Assertion]:
    return check_answer(exp, trace)


def empty_texts(exp: AnswerExpectation, facts: object) -> list[RuleProblem]:
    """An empty text (or list) matches every answer, or none: it says nothing about the answer."""
    empty = [("contains", i) for i, s in enumerate(exp.contains) if not s]
    empty += [("not_contains", i) for i, s in enumerate(exp.not_contains) if not s]
    empty += [("contains_any", i) for i, opts in enumerate(exp.contains_any) if not opts or "" in opts]
    return [
        (("expect", "answer", field, i), "an empty text (or list) says nothing about the answer") for field, i in empty
    ]


ANSWER = Evidence("answer", ("ai_result",), lambda t: t.ai_result)

KIND = Kind("answer", AnswerExpectation, _answer, (ANSWER,), answerable, validate=empty_texts)
