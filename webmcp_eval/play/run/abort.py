"""Why a trial cannot go on: it stops and becomes ``not_run`` with a reason and a kind."""

from __future__ import annotations

from webmcp_eval.trace import NotRunKind


class TrialAborted(Exception):
    """The trial cannot go on; it becomes not_run with this reason and kind (webmcp_eval.trace.NotRunKind)."""

    def __init__(self, message: str, kind: NotRunKind) -> None:
        super().__init__(message)
        self.kind: NotRunKind = kind
