#!/usr/bin/env bash
# The npm packages the interop tests and the TypeScript SDKs need, installed only when missing:
# each directory below with a package-lock.json gets `npm ci` into a cache keyed by its lock file
# (RELAY_NPM_CACHE, default ~/.cache/relay-mesh/npm) that survives between runs, and a
# `node_modules` symlink to it (git-ignored), so ESM imports resolve as in any npm project.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE="${RELAY_NPM_CACHE:-$HOME/.cache/relay-mesh/npm}"
DIRS=(crates/interop/js sdks/typescript sdks/harness-typescript)

for d in "${DIRS[@]}"; do
  [ -f "$d/package-lock.json" ] || continue
  key="$(cat "$d/package.json" "$d/package-lock.json" | sha256sum | cut -c1-16)"
  target="$CACHE/$(echo "$d" | tr '/' '_')-$key"
  if [ ! -f "$target/.installed" ]; then
    echo "install-interop-deps: npm ci for $d into $target" >&2
    rm -rf "$target"
    mkdir -p "$target"
    cp "$d/package.json" "$d/package-lock.json" "$target/"
    # No install scripts: nothing here needs one, and none may download a binary.
    nice npm ci --prefix "$target" --no-audit --no-fund --ignore-scripts --loglevel=error >&2
    touch "$target/.installed"
  fi
  ln -sfn "$target/node_modules" "$d/node_modules"
done
