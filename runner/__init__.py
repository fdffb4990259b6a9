"""webmcp-eval: an eval runner for websites that expose tools to AI agents through WebMCP.

The package's version, and where the data it ships beside its code lies: ``HOME`` is the folder
that holds ``runner/`` and the seed suite (``cases/``), the checkout in a clone or, installed from
the wheel, the ``webmcp_eval`` package folder (docs/packaging.md).
"""

from pathlib import Path

__version__ = "0.1.0"

HOME = Path(__file__).resolve().parent.parent
SEED_SUITE = HOME / "cases"
