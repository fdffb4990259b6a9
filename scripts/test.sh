#!/usr/bin/env bash
# Sets up (see bootstrap.sh) and runs the whole test suite: unit tests and
# end-to-end tests with a real Chromium, a real site and a real proxy.
# Extra arguments go to pytest, e.g. `scripts/test.sh -k stats -x`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
exec .venv/bin/python -m pytest "$@"
