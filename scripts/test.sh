#!/usr/bin/env bash
# Sets up (see bootstrap.sh) and runs the whole test suite: unit tests and
# end-to-end tests with a real Chromium, a real site and a real proxy.
# Extra arguments go to pytest, e.g. `scripts/test.sh -k stats -x`. The 20 slowest tests are
# listed after the summary (docs/speed.md keeps their budget); `--durations=0` lists all.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
exec .venv/bin/python -m pytest --durations=20 "$@"
