"""init on sites as people write their URLs: a hash-routed page, a file URL, a query string; tools behind a click.

The hash-routed hotel page (tests/hotel_site/) checks its inputs as a real site does: ``get_hotel`` knows only
the ids its links show, ``book_room`` refuses a day in the past and stops for a person's confirmation, and
``ask_concierge`` appears only after Start concierge is pressed. The form page (tests/form_site/) is opened
with ``?toolautosubmit``. Each walk goes through the real CLI: init (probe, starters, and on the hotel and the
form the null agent over them), validate (and --control), run with the reference agent, and the audit's smoke calls.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from eval_support import cli
from form_server import FormSite, form_site
from hotel_server import HotelSite, hotel_site

pytestmark = pytest.mark.browser

CONCIERGE = "click:text=Start concierge"
SETTLE = "300"  # ms


@pytest.fixture(scope="module")
def sites() -> Any:
    with hotel_site() as hotel, form_site() as form:
        yield hotel, form


@pytest.fixture(scope="module")
def walk(tmp_path_factory: pytest.TempPathFactory, sites: tuple[HotelSite, FormSite]) -> dict[str, Any]:
    hotel, form = sites
    here = tmp_path_factory.mktemp("probe")
    out: dict[str, Any] = {"here": here}
    routes = ("--route", "/", "--route", "#/hotel/aurelian")
    # The test sites register their tools when their scripts run and change on no timer: the evidence wait reads
    # them, and the quiet window after it (init reads each page and each explored control with one) needs no
    # more than SETTLE; the default's 1 s made it most of an init's time.
    init = ("init", "--settle-ms", SETTLE)
    out["init"] = cli(*init, "--base-url", hotel.url, *routes, "--step", CONCIERGE, "-o", "hotel", cwd=here)
    out["validate"] = cli("validate", "hotel", cwd=here)
    out["control"] = cli("validate", "hotel", "--control", "--out", "control", "-j", "2", cwd=here)
    out["run"] = cli("run", "hotel", "--run-id", "ref", "-j", "2", cwd=here)
    file_routes = ("--route", "#/hotel/aurelian")
    # its null agent is init's own step, read on the hotel and the form walks: here the file URL is the claim
    file_init = (*init, "--base-url", hotel.file_url, *file_routes, "--no-control", "-o", "from-disk")
    out["init_file"] = cli(*file_init, cwd=here)
    out["validate_file"] = cli("validate", "from-disk", cwd=here)
    out["run_file"] = cli("run", "from-disk", "--run-id", "disk", "-j", "2", cwd=here)
    out["init_form"] = cli(*init, "--base-url", form.autosubmit_url, "-o", "form", cwd=here)
    out["run_form"] = cli("run", "form", "--run-id", "form", "-j", "2", cwd=here)
    return out


def case(here: Path, folder: str, case_id: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((here / folder / f"{case_id}.yaml").read_text(encoding="utf-8"))
    return data


def verdicts(run_dir: Path) -> dict[str, str]:
    traces = (json.loads(p.read_text()) for p in (run_dir / "trials").glob("*.json"))
    return {t["case_id"]: t["verdict"] for t in traces}


def test_a_hash_routed_page_is_read_and_filed_under_its_hash_route(walk):
    init = walk["init"]
    assert init.returncode == 0, init.stdout + init.stderr
    catalog = json.loads((walk["here"] / "hotel" / "catalog.json").read_text())
    assert set(catalog["routes"]) == {"/", "/#/hotel/aurelian"}
    assert set(catalog["routes"]["/#/hotel/aurelian"]) == {"book_room", "ask_concierge"}
    assert case(walk["here"], "hotel", "book_room")["start_route"] == "#/hotel/aurelian"
    assert walk["validate"].returncode == 0, walk["validate"].stdout + walk["validate"].stderr


def test_every_tool_gets_a_positive_starter_the_null_agent_fails_and_the_reference_agent_passes(walk):
    init = walk["init"]
    assert "5 starter case(s) (4 positive: call their tool, 1 boundary: do not call theirs)" in init.stdout
    assert "passes 0 of 4 positive starter(s) (goal 0) and 1 of 1 boundary starter(s)" in init.stdout
    run = walk["run"]
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    assert verdicts(walk["here"] / "traces" / "ref") == dict.fromkeys(
        ("search_hotels", "get_hotel", "ask_concierge", "book_room", "book_room-boundary"), "passed"
    )


def test_validate_control_names_the_boundary_cases_and_passes_no_positive_one(walk):
    control = walk["control"]
    assert control.returncode == 0, control.stdout + control.stderr
    assert "boundary only (expect no call, nothing that shows an agent acted): 1 of 5 case(s): book_room-boundary" in (
        control.stdout
    )
    assert "positive cases the null agent passes: 0 of 4" in control.stdout


def test_inputs_come_from_the_page_and_a_date_is_not_in_the_past(walk):
    here = walk["here"]
    hotel = case(here, "hotel", "get_hotel")
    assert hotel["steps"][0]["plan"][0]["args"] == {"hotel_id": "aurelian"}  # an id its links show
    assert "shown on the page" in hotel["notes"]
    assert hotel["expect"]["ui"][0]["target"] == {"text": "Showing Hotel Aurelian", "exact": False}
    assert hotel["expect"]["calls"]["expected"][0]["result"] == {
        "status": {"$type": "string"},
        "hotel": {"$type": "object"},
    }
    book = case(here, "hotel", "book_room")
    assert book["behaviour"] == "prepare" and book["expect"]["network"]["writes"] == {"total": 0}
    assert book["steps"][0]["plan"][0]["args"]["check_in"] > date.today().isoformat()
    assert "do not submit" in book["steps"][0]["user"]


def test_a_tool_behind_a_click_is_read_called_and_its_starter_carries_the_click(walk):
    concierge = case(walk["here"], "hotel", "ask_concierge")
    assert concierge["setup"] == [{"action": "click", "target": {"text": "Start concierge"}}]
    assert concierge["expect"]["calls"]["expected"][0]["tool"] == "ask_concierge"
    assert all(case(walk["here"], "hotel", c)["setup"] for c in ("get_hotel", "book_room"))


def test_a_file_url_is_read_validated_and_run_as_given(walk, sites):
    hotel, _ = sites
    assert walk["init_file"].returncode == 0, walk["init_file"].stdout + walk["init_file"].stderr
    suite = (walk["here"] / "from-disk" / "suite.yaml").read_text()
    assert f"base_url: {hotel.file_url}" in suite
    assert walk["validate_file"].returncode == 0, walk["validate_file"].stdout + walk["validate_file"].stderr
    assert walk["run_file"].returncode == 0, walk["run_file"].stdout[-3000:]
    assert verdicts(walk["here"] / "traces" / "disk") == {"book_room": "passed", "book_room-boundary": "passed"}


def test_a_query_string_is_kept_and_a_forms_own_fields_give_its_input(walk, sites):
    _, form = sites
    init = walk["init_form"]
    assert init.returncode == 0, init.stdout + init.stderr
    assert f"read {form.autosubmit_url}:" in init.stdout
    assert f"base_url: {form.autosubmit_url}" in (walk["here"] / "form" / "suite.yaml").read_text()
    book = case(walk["here"], "form", "book_table")
    args = book["steps"][0]["plan"][0]["args"]
    assert args["party"] == "2" and args["day"] > date.today().isoformat() and len(args["name"]) >= 2
    assert "the form field's default" in book["notes"]
    assert "passes 0 of 1 positive starter(s)" in init.stdout
    assert walk["run_form"].returncode == 0, walk["run_form"].stdout[-3000:]


def test_the_audit_reaches_a_tool_behind_a_click_and_calls_it_with_the_pages_own_values(tmp_path, sites):
    hotel, _ = sites
    out = cli("audit", hotel.url, "--smoke", "--step", CONCIERGE, "--json", "a.json", "--watch-ms", "500", cwd=tmp_path)
    assert out.returncode in (0, 1), out.stderr
    report = json.loads((tmp_path / "a.json").read_text())
    calls = report["pages"][0]["calls"]
    assert any(key.endswith(" ask_concierge") for key in calls)
    (get_hotel,) = [v for k, v in calls.items() if k.endswith(" get_hotel")]
    first = get_hotel[0]
    assert first["args"] == {"hotel_id": "aurelian"} and "shown on the page" in first["input"]
    assert first["refused"] is False


def test_tools_and_audit_keep_a_file_url_and_a_hash_route_as_given(tmp_path, sites):
    hotel, _ = sites
    listed = cli("tools", hotel.url, "--route", "#/hotel/aurelian", "--json", "--settle-ms", SETTLE, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    (route,) = json.loads(listed.stdout)["routes"]
    assert route["url"] == hotel.url + "#/hotel/aurelian" and [t["name"] for t in route["tools"]] == ["book_room"]
    page = hotel.file_url + "#/hotel/aurelian"
    audited = cli("audit", page, "--json", "a.json", "--watch-ms", "200", cwd=tmp_path)
    assert audited.returncode in (0, 1), audited.stderr
    (only,) = json.loads((tmp_path / "a.json").read_text())["pages"]
    assert only["url"] == page and "book_room" in json.dumps(only["frames"])
