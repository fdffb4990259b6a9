"""python -m runner.cli: the same command line as webmcp-eval."""

import sys

from runner.cli import main

sys.exit(main())
