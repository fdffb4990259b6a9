"""The second test site: the example tea shop that ships in the package (webmcp_eval/examples/shop/, served by
webmcp_eval/examples/shop_server.py as ``webmcp-eval serve-example shop`` serves it), with the test material
that stays here (tests/static_site/: its cases, site.yaml, evals.json files)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml

from webmcp_eval.examples.shop_server import SHOP, ShopServer, served_shop
from webmcp_eval.examples.shop_server import serve_directory as _serve
from webmcp_eval.suite.site import SiteConfig

SOURCE = Path(__file__).resolve().parent / "static_site"
CASES = SOURCE / "cases"
__all__ = ["CASES", "SHOP", "SOURCE", "StaticSite", "_serve", "static_site"]


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
