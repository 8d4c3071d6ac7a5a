#!/usr/bin/env bash
# The npm packages the interop tests and the TypeScript SDKs need, installed only when missing:
# each directory below with a package-lock.json gets `npm ci` into a cache keyed by its lock file
# (RELAY_NPM_CACHE, default ~/.cache/relay-mesh/npm) that survives between runs, and a
# `node_modules` symlink to it (git-ignored), so ESM imports resolve as in any npm project.
# Also protoc (PyPI's grpcio-tools) for the proto test, below.
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

# protoc, from PyPI's grpcio-tools (pinned), for crates/proto/tests/protoc.rs: the venv
# relay_testkit::python_venv would make, built aside and renamed into place, only when missing.
PY_CACHE="$HOME/.cache/relay-mesh/py"
GRPCIO_TOOLS=1.85.1
venv="$PY_CACHE/grpcio-tools-$GRPCIO_TOOLS"
if [ ! -x "$venv/bin/python" ]; then
  echo "install-interop-deps: grpcio-tools $GRPCIO_TOOLS into $venv" >&2
  mkdir -p "$PY_CACHE"
  building="$venv.building-$$"
  rm -rf "$building"
  python3 -m venv "$building"
  "$building/bin/pip" install -q "grpcio-tools==$GRPCIO_TOOLS" >&2
  mv -T "$building" "$venv" 2>/dev/null || rm -rf "$building" # another run made it first
fi
