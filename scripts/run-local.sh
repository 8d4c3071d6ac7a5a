#!/usr/bin/env bash
# The compose cluster (docker-compose.yml) without Docker: against the local NATS and Postgres
# (database `relay`), runs `relayctl migrate` once, then every service from target/debug with
# RELAY_DATABASE__MIGRATE=false until Ctrl-C. agent-spawner reads deploy/compose/spawner.toml, so
# agents are the scripted fake-agent. Traces are exported only when RELAY_TELEMETRY__OTLP_ENDPOINT
# is set. Needs `cargo build --workspace --bins`.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$PWD/target/debug"
services=(session-registry event-ingest delivery-runner permission-manager cost-aggregator agent-spawner gateway)
for b in relayctl agent-harness fake-agent "${services[@]}"; do
  [ -x "$bin/$b" ] || { echo "run-local: $bin/$b is missing: cargo build --workspace --bins" >&2; exit 1; }
done
export PATH="$bin:$PATH"    # spawner.toml runs a bare `fake-agent`
export RELAY_TELEMETRY__LOG_FORMAT="${RELAY_TELEMETRY__LOG_FORMAT:-pretty}"
[ -n "${RELAY_TELEMETRY__OTLP_ENDPOINT:-}" ] || unset RELAY_TELEMETRY__OTLP_ENDPOINT

RELAY_DATABASE__MIGRATE=true "$bin/relayctl" migrate
export RELAY_DATABASE__MIGRATE=false
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait' EXIT INT TERM
for svc in "${services[@]}"; do
  if [ "$svc" = agent-spawner ]; then
    RELAY_CONFIG="$PWD/deploy/compose/spawner.toml" "$bin/$svc" &
  else
    "$bin/$svc" &
  fi
  pids+=($!)
done
echo "run-local: started ${services[*]}"
echo "run-local: gateway at http://${RELAY_GATEWAY__LISTEN:-127.0.0.1:8080} (Ctrl-C stops everything)"
wait -n
