"""How a person finds an element of the page: by role and accessible name, label or text (``Locator``).

The case's steps press and wait for elements by it, and the kinds that read the page (``expect.ui``,
``expect.confirmation``) name their element with it.
"""

from __future__ import annotations

import difflib

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# The WAI-ARIA roles Playwright's get_by_role takes (a test compares them with Playwright's own list):
# a locator by any other role finds nothing, so "absent" would always hold.
ARIA_ROLES = frozenset(
    """alert alertdialog application article banner blockquote button caption cell checkbox code columnheader
    combobox complementary contentinfo definition deletion dialog directory document emphasis feed figure form
    generic grid gridcell group heading img insertion link list listbox listitem log main marquee math menu
    menubar menuitem menuitemcheckbox menuitemradio meter navigation none note option paragraph presentation
    progressbar radio radiogroup region row rowgroup rowheader scrollbar search searchbox separator slider
    spinbutton status strong subscript superscript switch tab table tablist tabpanel term textbox time timer
    toolbar tooltip tree treegrid treeitem""".split()  # noqa: SIM905 - a list of 82 words reads better as text
)


class Locator(Strict):
    """How a person finds a control: by role and accessible name, label or text.

    ``within`` scopes it to another element (a dialog, a form, a result region),
    so an assertion speaks of that element and not of the text anywhere on the page.
    """

    role: str | None = None
    name: str | None = None
    label: str | None = None
    text: str | None = None
    exact: bool = True
    within: Locator | None = Field(default=None, description="only inside this element (e.g. {role: dialog})")

    @model_validator(mode="after")
    def _one_way(self) -> Locator:
        if not (self.role or self.label or self.text):
            raise ValueError("a locator needs one of role, label or text")
        return self

    @field_validator("role")
    @classmethod
    def _aria_role(cls, value: str | None) -> str | None:
        if value is not None and value not in ARIA_ROLES:
            near = difflib.get_close_matches(value, sorted(ARIA_ROLES), n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise ValueError(f"{value!r} is not a WAI-ARIA role{hint}: no element has it, so the locator finds nothing")
        return value

    def describe(self) -> str:
        inside = f" within {self.within.describe()}" if self.within else ""
        if self.role:
            return (f"{self.role} {self.name!r}" if self.name else self.role) + inside
        if self.label:
            return f"label {self.label!r}{inside}"
        return f"text {self.text!r}{inside}"

    @property
    def page_wide_text(self) -> bool:
        """A text search over the whole page: it passes wherever the text appears."""
        return self.text is not None and self.within is None
