"""The declarative-form test site (tests/form_site/): one page whose only tool is a ``<form toolname>``.

``index.html`` waits for a person to press Book; ``index.html?toolautosubmit`` submits itself when
an agent calls it. Either way the form checks its own fields and answers an agent's call with the
list of problems (bad input) or the booking (good input).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from static_server import ServedFolder, served

SOURCE = Path(__file__).resolve().parent / "form_site"


@dataclass
class FormSite(ServedFolder):
    @property
    def url(self) -> str:
        """The page whose form waits for a person."""
        return f"http://127.0.0.1:{self.port}/index.html"

    @property
    def autosubmit_url(self) -> str:
        return self.url + "?toolautosubmit"


def form_site() -> AbstractContextManager[FormSite]:
    return served(SOURCE, FormSite())
