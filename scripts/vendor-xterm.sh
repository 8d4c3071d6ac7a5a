#!/usr/bin/env bash
# Refreshes the console's copy of xterm.js (the terminal emulator of the agents page) from npm
# at the pinned version: `npm pack` checks the tarball against the registry's integrity hash,
# and this script checks that hash against the one pinned here. The files are committed, so
# `cargo build` (which embeds them) and the Docker image need no npm and no network.
set -euo pipefail
VERSION=6.0.0
INTEGRITY="sha512-TQwDdQGtwwDt+2cgKDLn0IRaSxYu1tSUjgKarSDkUM0ZNiSRXFpjxEsvc/Zgc5kq5omJ+V0a8/kIM2WD3sMOYg=="
OUT="$(cd "$(dirname "$0")/.." && pwd)/services/gateway/console/vendor"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
got="$(npm view "@xterm/xterm@$VERSION" dist.integrity 2>/dev/null)"
[ "$got" = "$INTEGRITY" ] || { echo "vendor-xterm: integrity $got is not the pinned $INTEGRITY" >&2; exit 1; }
npm pack "@xterm/xterm@$VERSION" --silent >/dev/null
tar xzf "xterm-xterm-$VERSION.tgz"
mkdir -p "$OUT"
# The source map is left out (it is not shipped), and so is the line that points at it.
grep -v '^//# sourceMappingURL=' package/lib/xterm.mjs > "$OUT/xterm.mjs"
cp package/css/xterm.css "$OUT/xterm.css"
cp package/LICENSE "$OUT/LICENSE.xterm"
echo "vendor-xterm: @xterm/xterm $VERSION in $OUT" >&2
