"""The second test site: the example tea shop that ships in the package (webmcp_eval/examples/shop/, served by
webmcp_eval/examples/shop_server.py as ``webmcp-eval serve-example shop`` serves it), with the test material
that stays here (tests/static_site/: its cases, site.yaml, evals.json files)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import yaml

from webmcp_eval.examples.shop_server import SHOP, ShopServer, served_shop
from webmcp_eval.examples.shop_server import serve_directory as _serve
from webmcp_eval.suite.site import SiteConfig

SOURCE = Path(__file__).resolve().parent / "static_site"
CASES = SOURCE / "cases"
__all__ = ["CASES", "SHOP", "SOURCE", "ServedFolder", "StaticSite", "_serve", "served", "static_site"]


@dataclass
class StaticSite(ShopServer):
    def config(self, **changes: object) -> SiteConfig:
        """The shop's site config (tests/static_site/site.yaml) with this server's base URL."""
        data = yaml.safe_load((SOURCE / "site.yaml").read_text(encoding="utf-8"))
        return SiteConfig.model_validate({**data, "base_url": self.url, **changes})


@contextmanager
def static_site(tmp: Path, port: int = 0) -> Iterator[StaticSite]:
    """The shop copied into tmp and served on loopback (port 0: a free one); its CDN on a free port."""
    with served_shop(tmp, port, StaticSite(root=tmp)) as shop:
        assert isinstance(shop, StaticSite)
        yield shop


@dataclass
class ServedFolder:
    """A folder of test pages served as it is on a free loopback port; ``seen``: every (method, path) asked."""

    port: int = 0
    seen: list[tuple[str, str]] = field(default_factory=list)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def fetched(self, path: str) -> bool:
        """The page asked for path (its query aside)."""
        return any(p.split("?")[0] == path for _, p in self.seen)


Site = TypeVar("Site", bound=ServedFolder)


@contextmanager
def served(source: Path, site: Site) -> Iterator[Site]:
    """source served on loopback for as long as the block runs; site learns its port."""
    server = _serve(source, site.seen)
    site.port = server.server_address[1]
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()
