#!/usr/bin/env bash
# What the console's browser tests need, installed only when missing: Debian's `chromium`
# (with apt; a browser build Playwright downloads will not install here) and `playwright-core`
# at a pinned version in a cache that survives between runs (RELAY_CONSOLE_E2E, default
# ~/.cache/relay-mesh/console-e2e). Prints the cache path.
set -euo pipefail

CACHE="${RELAY_CONSOLE_E2E:-$HOME/.cache/relay-mesh/console-e2e}"
PLAYWRIGHT_CORE=1.65.1

if ! command -v chromium >/dev/null 2>&1; then
  echo "install-console-deps: installing chromium with apt" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >&2
fi
chromium --version >&2

dir="$CACHE/playwright-core-$PLAYWRIGHT_CORE"
if [ ! -f "$dir/.installed" ]; then
  echo "install-console-deps: installing playwright-core@$PLAYWRIGHT_CORE into $dir" >&2
  rm -rf "$dir"
  mkdir -p "$dir"
  # playwright-core downloads no browser; --ignore-scripts keeps it that way.
  nice npm install --prefix "$dir" --no-audit --no-fund --ignore-scripts --loglevel=error "playwright-core@$PLAYWRIGHT_CORE" >&2
  touch "$dir/.installed"
fi
echo "$dir"
