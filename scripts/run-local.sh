#!/usr/bin/env bash
# Runs every built service against the local NATS and Postgres (database `relay`) as separate
# processes, until Ctrl-C. What `docker compose up` will run, without Docker.
set -euo pipefail
cd "$(dirname "$0")/.."
export RELAY_TELEMETRY__LOG_FORMAT="${RELAY_TELEMETRY__LOG_FORMAT:-pretty}"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait' EXIT INT TERM
for svc in session-registry event-ingest delivery-runner permission-manager cost-aggregator agent-spawner gateway; do
  "./target/debug/$svc" &
  pids+=($!)
done
wait -n
