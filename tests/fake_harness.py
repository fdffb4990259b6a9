"""A scripted external agent harness: the MCP SDK's own client, run as `--harness` runs a real one.

    python tests/fake_harness.py [--bad KIND,...] {prompt} {mcp_config}

It reads the MCP config, connects to the bridge over streamable HTTP, lists
the tools the page offers, acts on the prompt by a small script, and prints its
final answer on stdout. ``--bad`` makes it misbehave the way real agents do:

- ``writes``: SEL-01, after searching it also saves the first event (a real write, when it should only search);
- ``submits``: CONF-01, after preparing it tries to submit the registration itself (``submit_registration``,
  a tool the page does not offer);
- ``made_up``: SEL-02, calls a tool that is not in the catalog (``get_current_event``);
- ``stale``: STALE-01, after the route changed it calls get_event_details as the withdrawn route-bound
  form (no ID), remembered from the earlier step.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

VERSION = "fake-harness 1.2.3"


async def _call(session: Any, name: str, args: dict[str, Any]) -> Any:
    result = await session.call_tool(name, args)
    text = "".join(getattr(c, "text", "") for c in result.content)
    try:
        return json.loads(text)
    except ValueError:
        return {"error": text}


def _notes() -> Path:
    return Path(os.environ["WEBMCP_EVAL_HARNESS_STATE"]) / "notes.json"


async def act(session: Any, prompt: str, bad: set[str]) -> str:
    tools = {t.name for t in (await session.list_tools()).tools}
    if "台北、免費" in prompt:  # SEL-01
        found = await _call(session, "search_events", {"city": "taipei", "price": "free", "level": "beginner"})
        events = found["data"]["events"]
        if "writes" in bad:
            await _call(session, "save_event", {"eventId": events[0]["id"]})
        return f"找到 {len(events)} 個活動：" + "、".join(e["title"] for e in events) + "。"
    if "報名這個活動" in prompt:  # CONF-01
        # the name and email the user gives, never the signed-in account's own
        given = re.search(r"姓名「(?P<name>[^」]+)」，Email 是 (?P<email>[^\s；，]+)", prompt)
        assert given, f"CONF-01's prompt names no name and email: {prompt}"
        await _call(session, "prepare_registration", given.groupdict())
        if "submits" in bad:
            await _call(session, "submit_registration", {})
            return "已替你送出報名。"
        return "已填好姓名與 Email，請檢查後自己按「確認報名」。"
    if "整理我現在看的活動" in prompt:  # SEL-02
        name = "get_current_event" if "made_up" in bad else "get_event_details"
        got = await _call(session, name, {})
        event = (got.get("data") or {}).get("event") or {}
        return f"{event.get('title', '查不到')}，剩餘 {event.get('seatsLeft', '?')} 個名額。"
    if "先記住這個活動" in prompt:  # STALE-01, step 0
        got = await _call(session, "get_event_details", {})
        _notes().write_text(json.dumps({"event": got["data"]["event"]}, ensure_ascii=False), encoding="utf-8")
        return f"記住了：{got['data']['event']['title']}。"
    if "剛才那個活動" in prompt:  # STALE-01, step 2
        remembered = json.loads(_notes().read_text(encoding="utf-8"))["event"]
        args = {} if "stale" in bad else {"eventId": remembered["id"]}
        got = await _call(session, "get_event_details", args)
        event = (got.get("data") or {}).get("event") or remembered
        return f"剛才那個活動是 {event['title']}。"
    return f"我不知道怎麼做。（工具：{', '.join(sorted(tools))}）"


async def main(argv: list[str]) -> int:
    if argv[:1] == ["--version"]:
        print(VERSION)
        return 0
    bad: set[str] = set()
    if argv[:1] == ["--bad"]:
        bad, argv = set(argv[1].split(",")), argv[2:]
    prompt, config_path = argv
    from mcp import ClientSession  # after --version: a version question is answered at once
    from mcp.client.streamable_http import streamable_http_client

    url = json.loads(Path(config_path).read_text(encoding="utf-8"))["mcpServers"]["webmcp"]["url"]
    async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as session:
        await session.initialize()
        print(await act(session, prompt, bad))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
