"""The reports' Jinja2 environment: their templates, autoescaping on, and the filters they share (JSON, paths)."""

from __future__ import annotations

import functools
import json
import shlex
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from pydantic import BaseModel

from webmcp_eval import as_user_knows
from webmcp_eval.results.run_results import interval_text, money, num, pct, pts, seconds

TEMPLATES = Path(__file__).resolve().parent / "templates"


# --------------------------------------------------------------------------- formatting


def _plain(value: object) -> Any:
    """A trace record as it is written in the trace; anything else JSON cannot say, as text."""
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else str(value)


def _json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=_plain)


def _short_json(value: object, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False, default=_plain)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def urlpath(path: str) -> str:
    """A relative path as a URL path: percent-encoded, so no part of it reads as a scheme (``javascript:``)."""
    return quote(path, safe="/")


@functools.cache  # one per process, each template compiled once: a process may write many reports (mutate, pytest)
def environment() -> Environment:
    """The reports' one Jinja2 environment: their templates, autoescaping on, the filters they share."""
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        pct=pct,
        pts=pts,
        secs=seconds,
        num=num,
        money=money,
        interval=lambda rate: interval_text(rate.mean, rate.clustered_se),
        short_json=_short_json,
        urlpath=urlpath,
        user_path=as_user_knows,  # a case file as its user knows it (<seed suite>/SEL-01.yaml)
        json=_json,
        shell=shlex.quote,
    )
    return env
