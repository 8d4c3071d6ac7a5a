#!/usr/bin/env bash
# Debian's HAProxy, the one address in front of a primary and its standby in the Postgres
# failover tests (relay_testkit::PrimaryProxy); installed with apt only when missing.
set -euo pipefail

if ! command -v haproxy >/dev/null 2>&1 && [ ! -x /usr/sbin/haproxy ]; then
  echo "install-pg-proxy: installing haproxy with apt" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends haproxy >&2
  # Only the binary is wanted: the packaged service would listen on nothing useful here.
  $SUDO systemctl disable --now haproxy >/dev/null 2>&1 || true
fi
# No `| head`: under pipefail, haproxy killed by SIGPIPE would fail the script.
version="$(PATH="$PATH:/usr/sbin" haproxy -v)"
echo "${version%%$'\n'*}" >&2
