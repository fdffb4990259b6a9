"""`webmcp-eval run --agent openai` as a user types it: a scripted model on loopback, then its cassette offline."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

import pytest

from tests.eval_support import cli
from tests.fake_llm import FAKE_KEY, FakeLLM, Say
from tests.test_model_agent import by_case, sel01_good

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not importlib.util.find_spec("openai"), reason="the openai SDK is not installed"),
]


def _run(api_base: str, cassette: str, cassettes: Path, out: Path, run_id: str) -> subprocess.CompletedProcess[str]:
    """`webmcp-eval run SEL-01` with the scripted model, a cassette mode and a run directory of its own."""
    return cli(
        "run",
        "SEL-01",
        "--agent",
        "openai",
        "--model",
        "scripted-good",
        "--api-key-env",
        "WEBMCP_EVAL_CLI_TEST_KEY",
        *("--api-base", api_base, "--model-cassette", cassette, "--cassette-dir", str(cassettes)),
        *("--out", str(out), "--run-id", run_id),
    )


def test_a_model_agent_from_the_command_line_records_then_replays_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("WEBMCP_EVAL_CLI_TEST_KEY", FAKE_KEY)  # the key is read from the environment, as a user gives it
    cassettes = tmp_path / "cassettes"
    with FakeLLM({"scripted-good": by_case({"台北、免費": sel01_good})}) as llm:
        live = _run(llm.openai_base, "record", cassettes, tmp_path, "live")
        assert llm.count() >= 2  # the search, then the answer
    assert live.returncode == 0, live.stdout + live.stderr
    trace = json.loads((tmp_path / "live" / "trials" / "SEL-01.t1.json").read_text(encoding="utf-8"))
    assert trace["evidence_kind"] == "agent" and trace["agent"] == "openai" and trace["model"] == "scripted-good"
    assert trace["calls"][0]["args"] == {"city": "taipei", "price": "free", "level": "beginner"}
    assert trace["tokens"] and trace["agent_log"]
    # The model server is gone: the cassette answers, strictly.
    replay = _run("http://127.0.0.1:9/v1", "replay", cassettes, tmp_path, "replay")
    assert replay.returncode == 0, replay.stdout + replay.stderr
    again = json.loads((tmp_path / "replay" / "trials" / "SEL-01.t1.json").read_text(encoding="utf-8"))
    assert [c["result"] for c in again["calls"]] == [c["result"] for c in trace["calls"]]
    assert again["ai_result"] == trace["ai_result"]
    for path in cassettes.rglob("*"):
        if path.is_file():
            assert FAKE_KEY not in path.read_text(encoding="utf-8")
    for path in (tmp_path / "live").rglob("*.json"):
        assert FAKE_KEY not in path.read_text(encoding="utf-8")

    # Re-recorded with a model that words its answer differently: the run says what changed.
    def reworded(conv) -> Say:
        said = sel01_good(conv)
        return Say(f"台北免費新手活動：{said.text}") if said.text else said

    with FakeLLM({"scripted-good": by_case({"台北、免費": reworded})}) as llm:
        rerun = _run(llm.openai_base, "record", cassettes, tmp_path, "rerecord")
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "model cassette re-recorded, 1 of 2 unchanged: 0 request(s) changed, 1 answer(s) changed" in rerun.stdout
    assert "model cassette re-recorded" not in live.stdout  # the first recording replaced nothing
