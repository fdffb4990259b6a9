"""The public API of the pytest plugin (``webmcp_eval.pytest``) holds: its names and their public attributes are
the checked-in list tests/public_api.txt, so that a change to them is deliberate (a new name goes into the
list; a renamed one stays as a deprecated alias for one release).

    python tests/test_public_api.py    # writes the list anew from the code, for a change that is meant
"""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LISTED = Path(__file__).with_name("public_api.txt")
BASES = (object, Exception, BaseException, list, UserWarning, Warning, RuntimeError)


def _members(cls: type) -> list[str]:
    """A class's public attributes: its fields (dataclass or pydantic) and what its own classes define."""
    import pydantic

    lines: list[str] = []
    if dataclasses.is_dataclass(cls):
        lines += [f"{cls.__name__}.{f.name}" for f in dataclasses.fields(cls) if not f.name.startswith("_")]
    if issubclass(cls, pydantic.BaseModel):
        lines += [f"{cls.__name__}.{name}" for name in cls.model_fields]
    skip = {*dir(pydantic.BaseModel)} if issubclass(cls, pydantic.BaseModel) else set()
    for klass in cls.__mro__:
        if klass in BASES or klass is pydantic.BaseModel:
            continue
        for name, value in vars(klass).items():
            if name.startswith("_") or name in skip or f"{cls.__name__}.{name}" in lines:
                continue
            if isinstance(value, property):
                lines.append(f"{cls.__name__}.{name} (property)")
            elif callable(value) or isinstance(value, (staticmethod, classmethod)):
                func = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
                lines.append(f"{cls.__name__}.{name}{inspect.signature(func)}")
    return sorted(set(lines))


def public_api() -> list[str]:
    """One line per public name of webmcp_eval.pytest and per public attribute of each class among them."""
    import webmcp_eval.pytest as api

    lines = []
    for name in sorted(api.__all__):
        value = getattr(api, name)
        if inspect.isclass(value):
            lines += [f"{name} (class)", *_members(value)]
        else:
            lines.append(f"{name} ({type(value).__name__})")
    return lines


def test_the_public_names_and_their_attributes_are_the_checked_in_list() -> None:
    listed = LISTED.read_text(encoding="utf-8").splitlines()
    now = public_api()
    added, gone = sorted(set(now) - set(listed)), sorted(set(listed) - set(now))
    said = [f"+ {line}" for line in added] + [f"- {line}" for line in gone]
    assert not said, (
        "webmcp_eval.pytest's public API differs from tests/public_api.txt (keep a renamed attribute as a "
        "deprecated alias; if the change is meant, run python tests/test_public_api.py):\n" + "\n".join(said)
    )


def test_the_list_holds_what_a_users_test_reads() -> None:
    """It must fail when something a test reads goes: these lines are in it, as in the code."""
    listed = set(LISTED.read_text(encoding="utf-8").splitlines())
    for line in ("expect (Expect)", "ToolCallError (class)", "Tool.name", "Tool.path (property)", "ToolCall.error"):
        assert line in listed and line in public_api(), line


def test_every_public_name_is_importable_and_nothing_else_is_exported() -> None:
    import webmcp_eval.pytest as api

    for name in api.__all__:
        assert getattr(api, name) is not None, name
    star: dict[str, object] = {}
    exec("from webmcp_eval.pytest import *", star)  # noqa: S102 - what a star import gives
    assert sorted(k for k in star if not k.startswith("__")) == sorted(api.__all__)


def test_a_module_named_pytest_in_the_package_does_not_stand_in_for_pytest() -> None:
    code = "import webmcp_eval.pytest, pytest; print(pytest.__file__); print(pytest.fixture)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "webmcp_eval" not in out.splitlines()[0] and "function fixture" in out


def test_tool_path_is_a_deprecated_alias_of_its_frames_path() -> None:
    from webmcp_eval.pytest import Tool

    tool = Tool("t", "", {})
    with pytest.warns(DeprecationWarning, match=r"Tool\.path is deprecated: .*its frame's path") as said:
        assert tool.path == "native"
    assert len(said) == 1 and said[0].filename == __file__  # at the user's line, not the plugin's
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tool.name == "t"  # the rest warns of nothing


if __name__ == "__main__":
    LISTED.write_text("\n".join(public_api()) + "\n", encoding="utf-8")
    print(f"wrote {LISTED.relative_to(ROOT)}")
