"""CLI probes a new user might type: each is one line and exit 2 for a usage mistake, never an internal error.

Every probe runs the real command in its own process (runner_support.cli). A probe's output must not say
``internal error`` nor ``Traceback``, and a usage error is one line that says what to do.
"""

from __future__ import annotations

from runner_support import cli


def test_validate_help_names_live_and_route():
    out = cli("validate", "--help")
    assert out.returncode == 0
    assert "--live URL" in out.stdout and "--route R" in out.stdout


def test_validate_route_without_live_and_live_with_catalog_are_usage_errors(tmp_path):
    for args, words in (
        (("validate", "--route", "/cart"), "--route names a route whose tools --live reads"),
        (("validate", "--live", "http://127.0.0.1:9/", "--catalog", "x.json"), "not both"),
        (("validate", "--live", "not-a-url"), "--live not-a-url: not a URL"),
    ):
        out = cli(*args)
        assert out.returncode == 2, (args, out.stderr)
        assert words in out.stderr and len(out.stderr.strip().splitlines()) == 1, (args, out.stderr)
