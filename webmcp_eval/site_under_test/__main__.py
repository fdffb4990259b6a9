"""``python -m webmcp_eval.site_under_test [--port N] [--host H] [--test-mode] [--data-dir DIR]``."""

import argparse

from .server import run_site

parser = argparse.ArgumentParser(prog="python -m webmcp_eval.site_under_test", description="serve the demo events site")
parser.add_argument("--host", default="127.0.0.1", help="bind address (default: loopback only)")
parser.add_argument("--port", type=int, default=8000, help="port; 0 picks a free one")
parser.add_argument("--test-mode", action="store_true", help="enable worlds and the /__test__ control API")
parser.add_argument("--data-dir", default=None, help="where the SQLite files live (default: a temp dir)")
args = parser.parse_args()
run_site(host=args.host, port=args.port, test_mode=args.test_mode, data_dir=args.data_dir)
