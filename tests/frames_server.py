"""The frames test site (tests/frames_site/): a top page whose frames register tools of their own.

Static files, served as they are on one loopback port. The page reaches the
port by two origins: the top page at 127.0.0.1 embeds a widget from localhost
(and the other way round), so a cross-origin frame needs no second server.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

import yaml
from static_server import ServedFolder, served

from webmcp_eval.suite.site import SiteConfig

SOURCE = Path(__file__).resolve().parent / "frames_site"
CASES = SOURCE / "cases"


@dataclass
class FramesSite(ServedFolder):
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


def frames_site() -> AbstractContextManager[FramesSite]:
    return served(SOURCE, FramesSite())
