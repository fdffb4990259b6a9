#!/usr/bin/env bash
# Sets up (see bootstrap.sh) and runs the main job: the whole case suite against
# the embedded demo site, headless, with a readable report. Extra arguments go
# to `webmcp-eval run`, e.g. `scripts/eval.sh --headed CONF-01`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
exec .venv/bin/webmcp-eval run "$@"
