#!/usr/bin/env bash
# Installs the real agent CLIs the tests drive, at pinned versions, into a cache that survives
# between runs on the same machine (RELAY_AGENT_CLIS, default ~/.cache/relay-mesh/agent-clis).
# Already installed at the pinned version: nothing is downloaded. Prints the cache path.
# A new version is a deliberate change here, so a release that changes its output or protocol
# shows up as a failing test instead of silent misparsing.
set -euo pipefail

CACHE="${RELAY_AGENT_CLIS:-$HOME/.cache/relay-mesh/agent-clis}"
PINS=(
  "claude @anthropic-ai/claude-code 2.1.197"
  "codex @openai/codex 0.169.0"
  "gemini @google/gemini-cli 0.61.0"
)

for pin in "${PINS[@]}"; do
  read -r name package version <<<"$pin"
  dir="$CACHE/$name-$version"
  if [ -x "$dir/node_modules/.bin/$name" ] && [ -f "$dir/.installed" ]; then
    continue
  fi
  echo "install-agent-clis: installing $package@$version into $dir" >&2
  rm -rf "$dir"
  mkdir -p "$dir"
  # --ignore-scripts is not used: claude's postinstall links its native binary.
  nice npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$package@$version" >&2
  "$dir/node_modules/.bin/$name" --version >&2
  touch "$dir/.installed"
done
echo "$CACHE"
