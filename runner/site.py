"""The site under test as the runner sees it: a base URL plus optional hooks.

The embedded demo site gives every hook (reset a world to a seed, dump its
state, expire its session, change data). A deployed site may give none: then
the checks that need a hook are ``not_run``, never ``passed``. A small YAML
site config (``--site-config``) names the hooks a deployment has.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import yaml
from pydantic import BaseModel, ConfigDict, Field


class Hooks(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reset: str | None = Field(default=None, description="POST {world, seed, breaks}")
    state: str | None = Field(default=None, description="GET ?world=W -> canonical JSON")
    expire_session: str | None = Field(default=None, description="POST {world}")
    change: str | None = Field(default=None, description="POST {world, op, ...}")


class SiteConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    base_url: str = ""
    world_cookie: str | None = Field(default=None, description="cookie that picks an isolated world")
    version_path: str | None = "/api/version"
    hooks: Hooks = Field(default_factory=Hooks)
    mutation_methods: list[str] = Field(default_factory=lambda: ["POST", "PUT", "PATCH", "DELETE"])
    ignore_paths: list[str] = Field(default_factory=list, description="requests never counted as mutations")
    allow_hosts: list[str] = Field(default_factory=list, description="other hosts the browser may reach")


def demo_site_config(base_url: str) -> SiteConfig:
    """The embedded demo site in test mode: every hook there."""
    return SiteConfig(
        base_url=base_url,
        world_cookie="wmcp_world",
        hooks=Hooks(
            reset="/__test__/reset",
            state="/__test__/state",
            expire_session="/__test__/expire-session",
            change="/__test__/change",
        ),
        ignore_paths=["/__test__/"],
    )


def load_site_config(path: Path, base_url: str | None) -> SiteConfig:
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    config = SiteConfig.model_validate(data)
    if base_url:
        config.base_url = base_url
    return config


class HookMissing(Exception):
    """The site has no hook for this; the checks that need it are not_run."""


class SiteClient:
    """Calls the site's hooks directly (not through the proxy: it is the runner's own traffic)."""

    def __init__(self, config: SiteConfig):
        self.config = config
        self.http = httpx.AsyncClient(base_url=config.base_url.rstrip("/"), timeout=15, trust_env=False)

    async def aclose(self) -> None:
        await self.http.aclose()

    def has(self, hook: str) -> bool:
        return getattr(self.config.hooks, hook) is not None

    async def _post(self, hook: str, body: dict[str, Any]) -> Any:
        path = getattr(self.config.hooks, hook)
        if path is None:
            raise HookMissing(hook)
        response = await self.http.post(path, json=body)
        response.raise_for_status()
        return response.json() if response.content else None

    async def reset(self, world: str, seed: str, breaks: list[str]) -> None:
        await self._post("reset", {"world": world, "seed": seed, "breaks": breaks})

    async def state(self, world: str) -> Any:
        if self.config.hooks.state is None:
            raise HookMissing("state")
        response = await self.http.get(self.config.hooks.state, params={"world": world})
        response.raise_for_status()
        return response.json()

    async def expire_session(self, world: str) -> None:
        await self._post("expire_session", {"world": world})

    async def change(self, world: str, op: str, params: dict[str, Any]) -> Any:
        return await self._post("change", {"world": world, "op": op, **params})

    async def version(self) -> dict[str, Any]:
        if not self.config.version_path:
            return {}
        try:
            response = await self.http.get(self.config.version_path)
            return response.json() if response.status_code == 200 else {}
        except (httpx.HTTPError, ValueError):
            return {}
