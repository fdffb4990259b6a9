"""A case's locator (role and name, label or text, optionally within another) as a Playwright locator."""

from __future__ import annotations

from playwright.async_api import Locator as PwLocator
from playwright.async_api import Page

from webmcp_eval.suite.case import Locator


def locate(page: Page, target: Locator) -> PwLocator:
    root: Page | PwLocator = locate(page, target.within).first if target.within else page
    if target.role:
        # the role is one of Playwright's: checked against the WAI-ARIA list when the case loads
        return root.get_by_role(target.role, name=target.name, exact=target.exact)  # type: ignore[arg-type]
    if target.label:
        return root.get_by_label(target.label, exact=target.exact)
    return root.get_by_text(target.text or "", exact=target.exact)
