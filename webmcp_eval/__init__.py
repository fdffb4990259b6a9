"""webmcp-eval: an eval runner for websites that expose tools to AI agents through WebMCP.

The package's version, and where the data it ships beside its code lies: ``HOME`` is the folder that
holds the seed suite (``cases/``) and the recorded demo run (``traces/day26/``): the checkout in a clone
or an editable install, the package folder itself once installed from the wheel (docs/packaging.md).
"""

from pathlib import Path

__version__ = "0.1.0"

_PACKAGE = Path(__file__).resolve().parent
HOME = _PACKAGE if (_PACKAGE / "cases").is_dir() else _PACKAGE.parent
SEED_SUITE = HOME / "cases"


def as_user_knows(path: str) -> str:
    """A file as its user knows it, for what a person reads (the console, reports, JUnit): a file of the shipped
    seed suite as ``<seed suite>/SEL-01.yaml`` (not its folder in site-packages), a file under the working
    folder relative to it, any other as it was given. Traces and plans keep the path itself: replay reads it."""
    if not path or not Path(path).is_absolute():
        return path
    given = Path(path)
    for root, shown in ((SEED_SUITE, "<seed suite>"), (Path.cwd(), "")):
        for candidate in (given, given.resolve()):
            try:
                inside = candidate.relative_to(root).as_posix()
            except ValueError:
                continue
            return f"{shown}/{inside}" if shown else inside
    return path
