"""What a trial's built-in surface checks are handed, built here once for every front end that plays a suite
(``run``, ``validate --control``, ``mutate``, the pytest plugin's suite items): the suite catalog's hints, which each
trial holds the live tools to (``calls.annotations``), its input schemas (``tools.schemas``), and the audit's rule
for a description that gives the agent orders (``tools.descriptions``). The play layer cannot import the audit,
so the rule is handed down.
"""

from __future__ import annotations

from typing import Any

from webmcp_eval.audit.trust import instructions_in


def surface_checks(hints: dict[str, Any] | None, schemas: dict[str, Any] | None = None) -> dict[str, Any]:
    """RunSettings' ``catalog_hints``, ``catalog_schemas`` and ``instructions_in`` from the catalog's hints
    (``SuiteCatalog.annotations``; None: no catalog, or one without hints) and its input schemas with what the
    server enforces (``SuiteCatalog.schema_surface``; None: no catalog)."""
    return {"catalog_hints": hints, "catalog_schemas": schemas, "instructions_in": instructions_in}
