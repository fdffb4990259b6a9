"""Tools a site registers once for all its routes (suite.yaml's app_tools) are not stale; a route's own tool
that stays registered after the page left its route still is (tests/app_tools_site/: one document routed by
history.pushState, ?leak keeps the home route's tool registered)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from eval_support import cli
from static_server import ServedFolder, served

from webmcp_eval.suite.init import suite_yaml

SOURCE = Path(__file__).resolve().parent / "app_tools_site"
STALE = "no tool outlives its route; no stale handler runs"


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Any:
    here = tmp_path_factory.mktemp("app-tools")
    with served(SOURCE, ServedFolder()) as site:
        url = f"{site.origin}/index.html"
        out: dict[str, Any] = {"here": here}
        out["init"] = cli("init", "--base-url", url, "-o", "shop", cwd=here)
        out["run"] = cli("run", "shop", "--run-id", "app", cwd=here)
        out["leak"] = cli("run", "shop", "--run-id", "leak", "--base-url", f"{url}?leak", cwd=here)
        suite = here / "shop" / "suite.yaml"
        data = yaml.safe_load(suite.read_text(encoding="utf-8"))
        del data["site"]["app_tools"]  # the same suite, with the app's tool not named as one
        (here / "unnamed").mkdir()
        for f in (here / "shop").iterdir():
            (here / "unnamed" / f.name).write_bytes(f.read_bytes())
        (here / "unnamed" / "suite.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
        out["unnamed"] = cli("run", "unnamed", "--run-id", "unnamed", cwd=here)
        yield out


@pytest.mark.browser
def test_init_names_the_tool_that_stayed_on_every_route_and_its_suite_runs_green(shop):
    init = shop["init"]
    assert init.returncode == 0, init.stdout + init.stderr
    suite = yaml.safe_load((shop["here"] / "shop" / "suite.yaml").read_text(encoding="utf-8"))
    assert suite["site"]["app_tools"] == ["store_policy"]  # open_satchels is withdrawn with its route: not named
    assert "# app_tools: init's probe saw these stay registered" in (shop["here"] / "shop" / "suite.yaml").read_text()
    run = shop["run"]
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    assert "2 passed, 0 failed, 0 not_run" in run.stdout


@pytest.mark.browser
def test_a_routes_tool_left_registered_still_fails_the_stale_check(shop):
    leak = shop["leak"]
    assert leak.returncode == 1, leak.stdout[-3000:] + leak.stderr
    assert f"✗ {STALE}: after step 0 on /satchels: open_satchels (registered on /index.html) is still registered" in (
        leak.stdout
    )
    assert "store_policy (registered" not in leak.stdout


@pytest.mark.browser
def test_without_app_tools_the_apps_own_tool_is_stale(shop):
    unnamed = shop["unnamed"]
    assert unnamed.returncode == 1, unnamed.stdout[-3000:] + unnamed.stderr
    assert "store_policy (registered on /index.html) is still registered" in unnamed.stdout


def test_suite_yaml_names_app_tools_only_when_there_are_some():
    plain = yaml.safe_load(suite_yaml("http://h/", 100, []))
    assert "app_tools" not in plain["site"]
    named = yaml.safe_load(suite_yaml("http://h/", 100, [], app_tools=["store_policy"]))
    assert named["site"]["app_tools"] == ["store_policy"]
