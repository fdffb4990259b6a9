"""init clicks through a page's controls, and calls its tools, and says which ones change the tools it registers.

The card table (tests/controls_site/) registers read_board and begin_round (a call does what Begin round
does); Begin round registers play_card, Leave table withdraws read_board, Shuffle deck changes only the text,
the Scores link goes to the #/scores hash route (read_scores); Rules links to another document, Card table
reloads this one and Send score posts a form: none may be clicked. Shuffle deck also posts to /shuffles
(refused while exploring) and shows a card back from another origin (?cards=): an image a click explored asks
another host for is refused. Calling go_to_lobby loads another page (lobby.html, its own list_tables): not a
change of the tools.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from eval_support import cli
from static_server import ServedFolder, served

from webmcp_eval.play.page.surface.controls import ControlEffect, ControlsRead, click_step
from webmcp_eval.play.page.surface.discover import RouteTools
from webmcp_eval.play.page.surface.model import Frame
from webmcp_eval.suite.init import SiteUnreadable, plan_suite, step_from_text

SOURCE = Path(__file__).resolve().parent / "controls_site"
BEGIN = "click:text=Begin round"


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Any:
    here = tmp_path_factory.mktemp("controls")
    with served(SOURCE, ServedFolder()) as site, served(SOURCE, ServedFolder()) as cards:
        url = f"{site.origin}/index.html"
        # the table registers its tools when its script runs, on no timer: the evidence wait reads them, and the
        # quiet window after each read (the page's and every control's it explores) needs no more than 300 ms
        init = ("init", "--settle-ms", "300", "--no-control")
        first = cli(*init, "--base-url", f"{url}?cards={cards.origin}", "-o", "table", cwd=here)
        clicked = list(site.seen) + list(cards.seen)
        again = cli(*init, "--base-url", url, "--step", BEGIN, "--no-probe", "-o", "round", cwd=here)
        called = cli(*init, "--base-url", url, "--step", "call:begin_round", "--no-probe", "-o", "called", cwd=here)
        yield {"here": here, "first": first, "again": again, "called": called, "seen": clicked}


@pytest.mark.browser
def test_controls_that_change_the_tools_are_noted_and_the_others_are_not(table):
    out = table["first"].stdout
    assert table["first"].returncode == 0, out + table["first"].stderr
    began = "adds play_card and removes begin_round"
    assert f"clicking `text=Begin round` {began}: rerun with --step '{BEGIN}' for their starters" in out
    assert "clicking `text=Leave table` removes read_board" in out
    scores = "clicking `text=Scores` adds read_scores: rerun with --step 'click:text=Scores' (or --route '#/scores')"
    assert scores in out
    assert "Shuffle deck" not in out  # clicked, changes nothing: not noted
    assert "calling go_to_lobby" not in out  # another page's tools are not a change of this page's
    assert "list_tables" not in out  # the lobby's: neither added by the call nor given a starter
    assert "go_to_lobby.yaml: go_to_lobby: called with inputs the site accepted" in out
    assert f"calling begin_round {began}: rerun with --step 'call:begin_round' for their starters" in out
    skipped = "not clicked: 1 a link to another document; 1 a link that reloads the page; 1 submits a form (a write)"
    assert skipped in out
    catalog = json.loads((table["here"] / "table" / "catalog.json").read_text())
    begin = {"click": {"text": "Begin round"}, "adds": ["play_card"], "removes": ["begin_round"]}
    assert catalog["controls"]["/"][0] == begin
    assert cli("validate", "table", cwd=table["here"]).returncode == 0  # the catalog's controls are no problem


@pytest.mark.browser
def test_a_link_to_another_document_and_a_posted_form_are_never_clicked(table):
    paths = {path.split("?")[0] for _, path in table["seen"]}
    assert "/rules.html" not in paths
    assert "/back.png" not in paths  # another host's image, after a click explored: refused
    assert all(method == "GET" for method, _ in table["seen"])  # Shuffle deck's POST is refused too


@pytest.mark.browser
def test_the_suggested_step_reaches_the_tool_and_its_starter_carries_the_click(table):
    assert table["again"].returncode == 0, table["again"].stdout + table["again"].stderr
    case = yaml.safe_load((table["here"] / "round" / "play_card.yaml").read_text())
    assert case["setup"] == [{"action": "click", "target": {"text": "Begin round"}}]


@pytest.mark.browser
def test_a_suite_read_after_a_call_step_validates_with_the_called_tool_in_its_catalog(table):
    assert table["called"].returncode == 0, table["called"].stdout + table["called"].stderr
    catalog = json.loads((table["here"] / "called" / "catalog.json").read_text())
    assert {"begin_round", "play_card"} <= set(catalog["routes"]["/"])
    validated = cli("validate", "called", cwd=table["here"])
    assert validated.returncode == 0, validated.stdout + validated.stderr


@pytest.mark.browser
def test_the_audit_takes_a_tool_a_call_step_brings_as_coming_after_the_step_not_late(tmp_path):
    with served(SOURCE, ServedFolder()) as site:
        url = f"{site.origin}/index.html"
        # the step comes after the watch: 2.5 s after the load, later than late-tool's 2 s (measured from the load,
        # play_card would be late)
        step = ("--step", "call:begin_round", "--watch-ms", "2500")
        run = cli("audit", url, *step, "--json", "audit.json", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads((tmp_path / "audit.json").read_text())
    assert "play_card" in report["pages"][0]["frames"][0]["tools"]  # read after the step
    assert not [f for f in report["pages"][0]["findings"] if f["rule"] == "late-tool"]


def test_a_click_step_is_written_as_the_step_option_reads_it():
    assert click_step({"text": "Begin round"}) == BEGIN
    assert click_step({"role": "button", "name": "Go"}) == "click:role=button,name=Go"
    odd = click_step({"text": "Red, green"})  # a comma ends a short step's value: the YAML form instead
    assert step_from_text(odd).model_dump(exclude_defaults=True)["target"] == {"text": "Red, green"}


def test_a_page_without_tools_says_which_control_registers_them():
    effect = ControlEffect({"text": "Start"}, "click:text=Start", adds=["move"])
    page = RouteTools("/", "http://h/", "native", [Frame("http://h/", "")], controls=ControlsRead([effect], 1))
    with pytest.raises(SiteUnreadable, match="clicking `text=Start` adds move: rerun with --step 'click:text=Start'"):
        plan_suite("http://h/", [page], 1000)
