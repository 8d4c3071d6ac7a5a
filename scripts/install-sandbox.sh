#!/usr/bin/env bash
# Debian's bubblewrap, the per-agent sandbox (`spawner.sandbox = "bwrap"`) its containment test
# runs agents in; installed with apt only when missing.
set -euo pipefail

if ! command -v bwrap >/dev/null 2>&1; then
  echo "install-sandbox: installing bubblewrap with apt" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends bubblewrap >&2
fi
bwrap --version >&2
