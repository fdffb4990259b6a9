"""Command line: ``webmcp-eval``."""

from __future__ import annotations

import argparse
import sys


def _cmd_site(args: argparse.Namespace) -> int:
    from site_under_test.server import run_site

    run_site(host=args.host, port=args.port, test_mode=args.test_mode, data_dir=args.data_dir)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="webmcp-eval", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    site = sub.add_parser("site", help="serve the demo events site")
    site.add_argument("--host", default="127.0.0.1", help="bind address (default: loopback only)")
    site.add_argument("--port", type=int, default=8000, help="port; 0 picks a free one")
    site.add_argument("--test-mode", action="store_true", help="enable worlds and the /__test__ control API")
    site.add_argument("--data-dir", default=None, help="where the SQLite files live (default: a temp dir)")
    site.set_defaults(func=_cmd_site)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
