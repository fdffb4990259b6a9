#!/usr/bin/env bash
# Sets up everything webmcp-eval needs, idempotently: a virtual environment in
# .venv with the package (and its dev tools), and a Chromium with WebMCP.
# Sourced by scripts/eval.sh and scripts/test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

pick_python() {
  for py in "${PYTHON:-}" python3.11 python3.12 python3.13 python3; do
    [ -n "$py" ] || continue
    if command -v "$py" >/dev/null 2>&1 &&
       "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$py"; return 0
    fi
  done
  echo "webmcp-eval needs Python 3.11 or newer; none found (set PYTHON=/path/to/python3.11)." >&2
  return 1
}

if [ ! -x .venv/bin/python ]; then
  py=$(pick_python)
  echo "==> creating .venv with $py"
  "$py" -m venv .venv
fi
if [ ! -f .venv/.installed ] || [ pyproject.toml -nt .venv/.installed ]; then
  echo "==> installing webmcp-eval and its dev tools into .venv"
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".[dev]"
  touch .venv/.installed
fi

if ! .venv/bin/python -m webmcp_eval.play.browser.browser >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> no Chromium found; installing Debian's chromium"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null
  fi
  if ! .venv/bin/python -m webmcp_eval.play.browser.browser; then
    echo "Cannot continue without Chromium (see above)." >&2
    exit 1
  fi
fi
# Headless runs take Debian's chromium-headless-shell when it is there: the same version, native WebMCP
# and its DevTools domain, less CPU per trial (docs/speed.md); --headed keeps the full chromium.
if [ -x /usr/bin/chromium ] && ! command -v chromium-headless-shell >/dev/null 2>&1 &&
   [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "==> installing chromium-headless-shell (headless runs; --headed keeps chromium)"
  install_shell() { DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium-headless-shell >/dev/null 2>&1; }
  install_shell || { apt-get update -q >/dev/null 2>&1 && install_shell; } ||
    echo "    (could not install chromium-headless-shell: headless runs use chromium)"
fi
echo "==> Chromium: $(.venv/bin/python -m webmcp_eval.play.browser.browser)"

# The headed tests need a virtual screen on a machine without one.
if ! command -v xvfb-run >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "==> installing xvfb (a virtual screen for the headed tests)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q xvfb >/dev/null 2>&1 ||
    echo "    (could not install xvfb: the headed test will be skipped)"
fi

# Screenshots in traces and reports show Traditional Chinese only with a CJK font.
if command -v fc-list >/dev/null 2>&1 && [ -z "$(fc-list :lang=zh-tw 2>/dev/null | head -1)" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> installing a CJK font for readable screenshots (fonts-noto-cjk)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q fonts-noto-cjk >/dev/null 2>&1 ||
      echo "    (could not install fonts-noto-cjk: screenshots will show boxes for Chinese text)"
  else
    echo "==> note: no CJK font; screenshots will show boxes for Chinese text (install fonts-noto-cjk)"
  fi
fi
