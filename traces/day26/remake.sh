#!/usr/bin/env bash
# Remakes the Day 26 recordings: the demo site started as a deployment would
# be (no --test-mode, so no control API), SEL-01 and SEL-02 recorded through
# the proxy into fixtures/, traces into trials/. Run from the repository root.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
log=$(mktemp)
.venv/bin/webmcp-eval site --port 0 >"$log" 2>&1 &
site=$!
trap 'kill $site 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 50); do grep -q "http://" "$log" && break; sleep 0.2; done
url=$(grep -o 'http://[0-9.:]*' "$log" | head -1)
rm -rf traces/day26/trials traces/day26/screenshots
.venv/bin/webmcp-eval record traces/day26/cases --base-url "$url" \
  --fixtures traces/day26/fixtures --out traces --run-id day26
