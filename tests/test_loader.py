"""Loading case files (suite/loader.py): every problem is file:line with the field path, never a traceback."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from webmcp_eval.suite.case import ClickAction, FaultAction, NavigateAction, UserStep, case_json_schema
from webmcp_eval.suite.loader import CaseLoadError, LoadedCase, Problem, case_files, load_cases, parse_case

CASES = Path(__file__).resolve().parent.parent / "cases"

GOOD = textwrap.dedent("""\
    id: SEL-01
    behaviour: selection
    title: 搜尋台北、免費、入門活動
    start_route: /events
    steps:
      - user: 幫我找台北、免費，而且適合入門者的活動。
        plan:
          - call: search_events
            args: {city: taipei, price: free, level: beginner}
        reply: 找到 3 個。
      - action: navigate
        to: /events/evt-webmcp-intro
    expect:
      calls:
        order: exact
        expected:
          - tool: search_events
            args: {city: taipei}
            no_other_args: true
      network:
        writes: {total: 0}
    """)

HEAD = "id: SEL-01\nbehaviour: selection\ntitle: t\nstart_route: /events\n"


def problems_of(text: str, file: str = "x.yaml") -> list[Problem]:
    with pytest.raises(CaseLoadError) as info:
        parse_case(text, file)
    problems = info.value.problems
    assert problems, "a CaseLoadError must carry problems"
    return problems


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line containing needle."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in the text")


def one(problems: list[Problem]) -> Problem:
    assert len(problems) == 1, [str(p) for p in problems]
    return problems[0]


# ---- a good file -------------------------------------------------------------


def test_a_good_case_parses():
    lc = parse_case(GOOD, "cases/SEL-01.yaml")
    assert isinstance(lc, LoadedCase)
    assert lc.file == "cases/SEL-01.yaml"
    case = lc.case
    assert case.id == "SEL-01" and case.start_route == "/events"
    assert isinstance(case.steps[0], UserStep)
    assert isinstance(case.steps[1], NavigateAction)
    assert case.steps[0].plan[0].args == {"city": "taipei", "price": "free", "level": "beginner"}
    assert case.expect.calls.order == "exact"
    assert case.expect.calls.expected[0].no_other_args is True
    assert case.user_messages == ["幫我找台北、免費，而且適合入門者的活動。"]


def test_defaults_of_a_minimal_case():
    case = parse_case(HEAD + "steps:\n  - user: hi\n", "x.yaml").case
    assert case.seed == "default"
    calls = case.expect.calls
    assert calls.order == "sequence" and calls.only_active_catalog and calls.no_stale_tools
    assert calls.max_calls is None
    assert case.expect.network.outbound is None  # requests to other hosts: recorded, asserted only when asked
    assert case.expect.state is None and case.expect.answer is None and case.expect.confirmation is None
    assert not case.writes


def test_writes_marks_cases_about_a_write():
    case = parse_case(GOOD, "x.yaml").case
    assert case.writes  # writes: {total: 0} is a claim about writes
    case = parse_case(HEAD + "steps:\n  - user: hi\nexpect:\n  state: {unchanged: true}\n", "x.yaml").case
    assert case.writes


def test_line_of_maps_field_paths_to_lines():
    lc = parse_case(GOOD, "x.yaml")
    assert lc.line_of("id") == 1
    assert lc.line_of("start_route") == 4
    assert lc.line_of("steps", 0, "plan", 0, "call") == line_of(GOOD, "- call: search_events")
    assert lc.line_of("steps", 1, "to") == line_of(GOOD, "to: /events/evt-webmcp-intro")
    assert lc.line_of("expect", "calls", "expected", 0, "no_other_args") == line_of(GOOD, "no_other_args")
    # a path that is not in the file falls back to its deepest existing part
    assert lc.line_of("expect", "calls", "expected", 0, "result") == line_of(GOOD, "- tool: search_events")


def test_every_real_case_parses():
    loaded, problems = load_cases([CASES])
    assert problems == []
    assert len(loaded) >= 20
    assert all(lc.file.endswith(".yaml") for lc in loaded)


def test_the_json_schema_forbids_unknown_fields():
    schema = case_json_schema()
    assert schema["$schema"].startswith("https://json-schema.org/")
    assert schema.get("additionalProperties") is False
    assert {"id", "behaviour", "title", "start_route"} <= set(schema["required"])
    assert schema["oneOf"] == [{"required": ["steps"]}, {"required": ["user"]}]  # scripted, or a goal case


# ---- malformed YAML ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("id: SEL-01\nbehaviour: selection\ntitle: [unclosed\nstart_route: /events\n", 4),
        ("id: SEL-01\nbehaviour: selection\n  title: bad indent\n", 3),
        ("id: SEL-01\nsteps:\n  - user: a\n\tbad: tab\n", 4),
        ("id: A\n---\nid: B\n", 2),
    ],
)
def test_malformed_yaml_gives_file_and_line(text, line):
    p = one(problems_of(text, "cases/bad.yaml"))
    assert p.file == "cases/bad.yaml"
    assert p.line == line
    assert "not valid YAML" in p.message
    assert str(p).startswith(f"cases/bad.yaml:{line}: not valid YAML")


@pytest.mark.parametrize("text", ["", "# only a comment\n", "- a list\n", "just text\n", "42\n"])
def test_a_file_that_is_not_a_mapping(text):
    p = one(problems_of(text))
    assert p.line == 1 and "mapping" in p.message


# ---- schema problems ---------------------------------------------------------


def test_unknown_top_level_field():
    text = HEAD + "steps:\n  - user: hi\nexpects: {}\n"
    p = one(problems_of(text))
    assert (p.field, p.message, p.line) == ("expects", "unknown field", 7)
    assert str(p) == "x.yaml:7: expects: unknown field"


def test_unknown_nested_field_names_the_path_and_its_line():
    text = GOOD.replace("no_other_args: true", "no_other_arg: true")
    p = one(problems_of(text))
    assert p.field == "expect.calls.expected[0].no_other_arg"
    assert p.message == "unknown field"
    assert p.line == line_of(text, "no_other_arg:")


def test_unknown_field_in_a_user_step_has_no_union_tag_in_its_path():
    text = HEAD + "steps:\n  - user: hi\n    replies: hello\n"
    p = one(problems_of(text))
    assert p.field == "steps[0].replies"
    assert p.line == 7


def test_unknown_field_in_an_action_step_has_no_union_tag_in_its_path():
    text = HEAD + "steps:\n  - user: hi\n  - action: navigate\n    to: /x\n    bogus: 1\n"
    p = one(problems_of(text))
    assert p.field == "steps[1].bogus"
    assert p.line == 9


def test_wrong_type_names_the_field_and_line():
    text = HEAD + "steps:\n  - action: click\n    target: {role: button, name: OK}\n    times: many\n"
    p = one(problems_of(text))
    assert p.field == "steps[0].times"
    assert p.line == 8


def test_missing_required_top_level_field():
    text = "id: SEL-01\ntitle: t\nstart_route: /events\nsteps:\n  - user: x\n"
    p = one(problems_of(text))
    assert p.field == "behaviour"
    assert p.message == "required field is missing"
    assert p.line == 1


def test_missing_required_nested_field_points_at_its_parent():
    text = HEAD + "steps:\n  - user: hi\nexpect:\n  calls:\n    expected:\n      - args: {city: taipei}\n"
    p = one(problems_of(text))
    assert p.field == "expect.calls.expected[0].tool"
    assert p.message == "required field is missing"
    assert p.line == 10


def test_missing_field_of_an_action():
    text = HEAD + "steps:\n  - user: hi\n  - action: navigate\n"
    p = one(problems_of(text))
    assert p.field == "steps[1].to"
    assert p.line == 7


def test_every_problem_of_a_file_is_reported():
    text = "id: ''\nbehaviour: selection\ntitle: t\nstart_route: http://x/events\nsteps: []\nbogus: 1\n"
    fields = {p.field: p.line for p in problems_of(text)}
    assert fields == {"id": 1, "start_route": 4, "steps": 5, "bogus": 6}


def test_a_step_that_is_neither_user_nor_action():
    text = HEAD + "steps:\n  - user: hi\n  - say: hello\n"
    p = one(problems_of(text))
    assert p.field == "steps[1]"
    assert p.line == 7
    assert "'user'" in p.message and "'action'" in p.message


def test_a_step_that_is_not_a_mapping():
    text = HEAD + "steps:\n  - just a string\n"
    p = one(problems_of(text))
    assert p.field == "steps[0]" and p.line == 6


def test_an_unknown_action():
    text = HEAD + "steps:\n  - user: hi\n  - action: jump\n    to: /x\n"
    p = one(problems_of(text))
    assert p.field.startswith("steps[1]")
    assert p.line == 7
    assert "jump" in p.message and "navigate" in p.message


@pytest.mark.parametrize(
    "effects",
    [
        "",  # none
        "    status: 503\n    drop: true\n",  # two
        "    delay_ms: 100\n    duplicate: true\n",
    ],
)
def test_a_fault_needs_exactly_one_effect(effects):
    text = HEAD + "steps:\n  - action: fault\n    path: /api/x\n" + effects
    p = one(problems_of(text))
    assert p.field == "steps[0]"
    assert p.line == 6
    assert "exactly one of status, delay_ms, drop, duplicate or lose_answer" in p.message


@pytest.mark.parametrize(
    "effect", ["status: 503", "delay_ms: 100", "drop: true", "duplicate: true", "lose_answer: true"]
)
def test_a_fault_with_one_effect_parses(effect):
    text = HEAD + f"steps:\n  - action: fault\n    path: /api/x\n    {effect}\n"
    step = parse_case(text, "x.yaml").case.steps[0]
    assert isinstance(step, FaultAction) and step.method == "*" and step.times == 1


def test_a_locator_needs_role_label_or_text():
    text = HEAD + "steps:\n  - user: hi\n  - action: click\n    target: {name: 確認報名}\n"
    p = one(problems_of(text))
    assert p.field == "steps[1].target"
    assert p.line == 8
    assert "role, label or text" in p.message


def test_a_locator_in_an_expectation_needs_role_label_or_text():
    text = HEAD + "steps:\n  - user: hi\nexpect:\n  ui:\n    - target: {exact: false}\n"
    p = one(problems_of(text))
    assert p.field == "expect.ui[0].target"
    assert p.line == 9


@pytest.mark.parametrize("target", ["{role: button, name: OK}", "{label: Email}", "{text: 已收藏, exact: false}"])
def test_a_locator_with_role_label_or_text_parses(target):
    text = HEAD + f"steps:\n  - action: click\n    target: {target}\n"
    step = parse_case(text, "x.yaml").case.steps[0]
    assert isinstance(step, ClickAction)


def test_unchanged_state_cannot_be_combined_with_a_diff():
    text = HEAD + "steps:\n  - user: hi\nexpect:\n  state:\n    unchanged: true\n    changed_only: [saved]\n"
    p = one(problems_of(text))
    assert p.field == "expect.state"
    assert p.line == line_of(text, "state:")


def test_unknown_order():
    text = HEAD + "steps:\n  - user: hi\nexpect:\n  calls:\n    order: any\n"
    p = one(problems_of(text))
    assert p.field == "expect.calls.order" and p.line == 9


def test_a_duplicated_key_is_a_problem():
    text = HEAD + "steps:\n  - user: hi\nexpect:\n  calls:\n    max_calls: 0\nexpect:\n  answer: {contains: [x]}\n"
    p = one(problems_of(text))
    assert p.field == "expect"
    assert p.line == 10


# ---- load_cases --------------------------------------------------------------


def test_load_cases_keeps_the_good_ones_and_reports_the_bad(tmp_path):
    (tmp_path / "A-01.yaml").write_text(GOOD.replace("SEL-01", "A-01"), encoding="utf-8")
    (tmp_path / "B-01.yml").write_text(GOOD.replace("SEL-01", "B-01"), encoding="utf-8")
    (tmp_path / "bad-yaml.yaml").write_text("id: [oops\n", encoding="utf-8")
    (tmp_path / "bad-schema.yaml").write_text(HEAD + "steps: []\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a case", encoding="utf-8")
    loaded, problems = load_cases([tmp_path])
    assert sorted(lc.case.id for lc in loaded) == ["A-01", "B-01"]
    bad = {Path(p.file).name for p in problems}
    assert bad == {"bad-yaml.yaml", "bad-schema.yaml"}
    assert all(p.line >= 1 for p in problems)


def test_load_cases_on_an_unreadable_path(tmp_path):
    missing = tmp_path / "nope.yaml"
    loaded, problems = load_cases([missing])
    assert loaded == []
    p = one(problems)
    assert p.file == str(missing) and p.line == 1
    assert p.message == "no such file"


def test_load_cases_on_a_directory_path_given_as_a_file(tmp_path):
    d = tmp_path / "dir.yaml"
    d.mkdir()
    (d / "A-01.yaml").write_text(GOOD.replace("SEL-01", "A-01"), encoding="utf-8")
    loaded, problems = load_cases([d])
    assert [lc.case.id for lc in loaded] == ["A-01"] and problems == []


def test_load_cases_mixes_files_and_directories(tmp_path):
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "A-01.yaml").write_text(GOOD.replace("SEL-01", "A-01"), encoding="utf-8")
    single = tmp_path / "B-01.yaml"
    single.write_text(GOOD.replace("SEL-01", "B-01"), encoding="utf-8")
    loaded, problems = load_cases([tmp_path / "one", str(single)])
    assert [lc.case.id for lc in loaded] == ["A-01", "B-01"] and problems == []


def test_case_files_sorted_yaml_then_yml(tmp_path):
    for name in ["b.yaml", "a.yaml", "c.yml", "d.json"]:
        (tmp_path / name).write_text("x", encoding="utf-8")
    assert [p.name for p in case_files([tmp_path])] == ["a.yaml", "b.yaml", "c.yml"]


def test_load_cases_on_a_yaml_constructor_error(tmp_path):
    (tmp_path / "evil.yaml").write_text("id: !!python/object/apply:os.system [echo hi]\n", encoding="utf-8")
    loaded, problems = load_cases([tmp_path])
    assert loaded == []
    problem = one(problems)
    assert (problem.line, problem.field) == (1, "id")
    assert problem.message.startswith("YAML tag !!python/object/apply:os.system is not allowed")


@pytest.mark.parametrize(
    ("yaml_text", "line", "field", "message"),
    [
        ("notes: x\n? [a, b]\n: 1\n", 2, "(top level)", "a key must be a plain name, not a list"),
        ("notes: {x: {{a: 1}: 2}}\n", 1, "notes.x", "a key must be a plain name, not a mapping"),
        ("notes: !!binary aGVsbG8=\n", 1, "notes", "YAML tag !!binary is not allowed"),
        ("notes:\n  x: !!set {a, b}\n", 2, "notes.x", "YAML tag !!set is not allowed"),
        ("notes: !!timestamp 2024-01-01\n", 1, "notes", "YAML tag !!timestamp is not allowed"),
        ("notes: !!omap [a: 1]\n", 1, "notes", "YAML tag !!omap is not allowed"),
        ("notes: !custom x\n", 1, "notes", "YAML tag !custom is not allowed"),
    ],
)
def test_yaml_beyond_json_is_refused_at_its_line(tmp_path, yaml_text, line, field, message):
    """Keys that are lists or mappings and YAML's own types crashed the loader or reached the checks."""
    (tmp_path / "A-01.yaml").write_text(yaml_text, encoding="utf-8")
    loaded, problems = load_cases([tmp_path])
    assert loaded == []
    problem = one(problems)
    assert (problem.line, problem.field) == (line, field)
    assert problem.message.startswith(message)


def test_an_unquoted_date_is_the_text_it_shows(tmp_path):
    """A tool's dates are JSON text: an unquoted date in a case compares as that text (no checker TypeError)."""
    text = GOOD.replace("SEL-01", "A-01") + "notes: 2024-01-01\n"
    (tmp_path / "A-01.yaml").write_text(text, encoding="utf-8")
    (lc,), problems = load_cases([tmp_path])
    assert problems == []
    assert lc.case.notes == "2024-01-01"


def test_load_cases_never_raises_on_a_file_that_is_not_utf8(tmp_path):
    (tmp_path / "A-01.yaml").write_text(GOOD.replace("SEL-01", "A-01"), encoding="utf-8")
    (tmp_path / "latin1.yaml").write_bytes("id: SEL-01\ntitle: caf\xe9\n".encode("latin-1"))
    loaded, problems = load_cases([tmp_path])
    assert [lc.case.id for lc in loaded] == ["A-01"]
    assert Path(one(problems).file).name == "latin1.yaml"


# ---- bounded input and exact positions -------------------------------------------

LAUGHS = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9) if prev else ', '.join(['lol'] * 9)}]\n"
    for prev, name in zip(["", "a", "b", "c", "d", "e", "f", "g", "h"], "abcdefghi", strict=True)
)


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        (HEAD + "steps: &L [*L]\n", 5, "recursive alias *L"),
        (HEAD + "steps: &L [{user: hi, plan: [{call: x, args: {a: *L}}]}]\n", 5, "recursive alias *L"),
        (HEAD + "steps: " + "[" * 500 + "]" * 500 + "\n", 5, "nested deeper than 100 levels"),
        (HEAD + "steps:\n" + "".join("  " * i + "- \n" for i in range(1, 200)), 5 + 100, "nested deeper"),
        (HEAD + LAUGHS, 5 + 4, "more than 20000 values once aliases are expanded"),
    ],
    ids=["recursive-alias", "recursive-alias-deep", "500-levels", "block-nesting", "billion-laughs"],
)
def test_alias_bombs_recursion_and_deep_nesting_are_refused_at_their_line(text, line, words):
    p = one(problems_of(text, "cases/bomb.yaml"))
    assert p.line == line, str(p)
    assert words in p.message and p.message.startswith("refused:")
    assert str(p).startswith(f"cases/bomb.yaml:{line}: refused:")


def test_an_alias_within_the_limits_is_fine():
    text = GOOD.replace("args: {city: taipei}", "args: &a {city: taipei}").replace(
        "  network:", "    forbidden: [{tool: save_event, args: *a}]\n  network:"
    )
    lc = parse_case(text, "x.yaml")
    assert lc.case.expect.calls.forbidden[0].args == {"city": "taipei"}


def test_a_merge_key_is_not_a_duplicate():
    plan = "    plan:\n      - &c {call: a, args: {x: 1}}\n      - <<: *c\n        call: b\n"
    text = HEAD + "steps:\n  - user: hi\n" + plan
    lc = parse_case(text, "x.yaml")
    assert [p.call for p in lc.case.steps[0].plan] == ["a", "b"]


def test_not_utf8_gives_the_line_of_the_bad_byte(tmp_path):
    (tmp_path / "latin1.yaml").write_bytes("id: SEL-01\nbehaviour: selection\ntitle: caf\xe9\n".encode("latin-1"))
    p = one(load_cases([tmp_path])[1])
    assert p.line == 3 and p.message.startswith("not UTF-8")


def test_a_nul_character_gives_its_own_line():
    p = one(problems_of(HEAD + "steps:\n  - user: h\x00i\n"))
    assert p.line == 6 and "U+0000" in p.message


def test_every_problem_is_one_line_that_starts_with_file_and_line():
    text = HEAD + 'steps:\n  - user: hi\nexpect:\n  "cal\\nls": {}\n  calls: {order: "who\\nknows"}\n'
    for p in problems_of(text, "cases/x.yaml"):
        assert "\n" not in str(p) and str(p).startswith(f"cases/x.yaml:{p.line}: "), str(p)
    p = one(problems_of("id: SEL-01\ntitle: [a,\n  b\nc: d\n"))
    assert "\n" not in str(p)
