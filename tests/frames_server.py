"""The frames test site (tests/frames_site/): a top page whose frames register tools of their own.

Static files, served as they are on one loopback port. The page reaches the
port by two origins: the top page at 127.0.0.1 embeds a widget from localhost
(and the other way round), so a cross-origin frame needs no second server.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from static_server import _serve

from webmcp_eval.suite.site import SiteConfig

SOURCE = Path(__file__).resolve().parent / "frames_site"
CASES = SOURCE / "cases"


@dataclass
class FramesSite:
    port: int = 0
    seen: list[tuple[str, str]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def other_origin(self) -> str:
        """The cross-origin widget's origin (same server, another host name)."""
        return f"http://localhost:{self.port}"

    def config(self, **changes: object) -> SiteConfig:
        data = yaml.safe_load((SOURCE / "site.yaml").read_text(encoding="utf-8"))
        return SiteConfig.model_validate({**data, "base_url": self.url, **changes})


@contextmanager
def frames_site() -> Iterator[FramesSite]:
    site = FramesSite()
    server = _serve(SOURCE, site.seen)
    site.port = server.server_address[1]
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()
