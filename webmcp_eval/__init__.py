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
