"""python -m webmcp_eval.cli: the same command line as webmcp-eval."""

import sys

from webmcp_eval.cli import main

sys.exit(main())
