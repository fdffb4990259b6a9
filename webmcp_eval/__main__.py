"""``python -m webmcp_eval``: the ``webmcp-eval`` command."""

import sys

from webmcp_eval.cli import main

sys.exit(main())
