#!/usr/bin/env bash
# The compose cluster (docker-compose.yml) without Docker: against the local Postgres (database
# `relay`), runs `relayctl migrate` once, then every service from target/debug (or $CARGO_TARGET_DIR/debug) with
# RELAY_DATABASE__MIGRATE=false until Ctrl-C. Traces are exported only when
# RELAY_TELEMETRY__OTLP_ENDPOINT is set. Needs `cargo build --workspace --bins`.
#
# Agents: the real Claude Code, Codex and Gemini CLI where they are installed — in
# $RELAY_AGENT_CLIS (a directory of programs, or scripts/install-agent-clis.sh's installs) or on
# PATH — on their structured paths (`cli` claude, codex, gemini), every other `cli` (the -tui
# ones, aider, goose) and a CLI not found as the scripted fake-agent; it says which at start.
# A CLI whose key is set (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY; base URLs from
# ANTHROPIC_BASE_URL, OPENAI_BASE_URL, GOOGLE_GEMINI_BASE_URL) runs in a home the harness
# prepares per workspace (<data_dir>/homes/<workspace>/<cli>); without a key, in your own HOME
# with its login. RELAY_FAKE_AGENTS=1: the fake for everything (deploy/compose/spawner.toml).
# RELAY_SPAWNER_CONFIG=my-spawner.toml: your own spawner config instead of either.
#
# Auth is on: the first run writes NATS identities into .relay/auth (`relayctl auth init`), and a
# private nats-server with them listens on 127.0.0.1:${RELAY_RUN_NATS_PORT:-4322}; each service
# connects with its own .creds. RELAY_AUTH=off uses the machine's NATS (RELAY_NATS__URL) as is.
set -euo pipefail
cd "$(dirname "$0")/.."
# Where cargo built them (CARGO_TARGET_DIR, relative to here, or ./target).
bin="$(realpath -m "${CARGO_TARGET_DIR:-target}")/debug"
services=(session-registry event-ingest delivery-runner permission-manager cost-aggregator coordination automation agent-spawner gateway)
for b in relayctl agent-harness fake-agent "${services[@]}"; do
  [ -x "$bin/$b" ] || { echo "run-local: $bin/$b is missing: cargo build --workspace --bins" >&2; exit 1; }
done
export PATH="$bin:$PATH"    # spawner.toml runs a bare `fake-agent`
mkdir -p .relay
if [ -n "${RELAY_SPAWNER_CONFIG:-}" ]; then
  spawner_config="$RELAY_SPAWNER_CONFIG"
elif [ "${RELAY_FAKE_AGENTS:-0}" = 1 ]; then
  spawner_config="$PWD/deploy/compose/spawner.toml"
else
  spawner_config="$PWD/.relay/spawner.toml"
  ./scripts/agents-config.sh > "$spawner_config"
fi
[ -r "$spawner_config" ] || { echo "run-local: cannot read the spawner config $spawner_config" >&2; exit 1; }
spawner_config="$(cd "$(dirname "$spawner_config")" && pwd)/$(basename "$spawner_config")"
echo "run-local: agent-spawner config: $spawner_config"
export RELAY_TELEMETRY__LOG_FORMAT="${RELAY_TELEMETRY__LOG_FORMAT:-pretty}"
[ -n "${RELAY_TELEMETRY__OTLP_ENDPOINT:-}" ] || unset RELAY_TELEMETRY__OTLP_ENDPOINT

RELAY_DATABASE__MIGRATE=true "$bin/relayctl" migrate
export RELAY_DATABASE__MIGRATE=false
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait' EXIT INT TERM

auth="$PWD/.relay/auth"
if [ "${RELAY_AUTH:-on}" != off ]; then
  [ -f "$auth/nats-auth.conf" ] || "$bin/relayctl" auth init "$auth" >/dev/null
  port="${RELAY_RUN_NATS_PORT:-4322}"
  printf 'listen: "127.0.0.1:%s"\njetstream { store_dir: "%s" }\ninclude "auth/nats-auth.conf"\n' \
    "$port" "$PWD/.relay/js" > .relay/nats.conf
  nats-server -c .relay/nats.conf &
  pids+=($!)
  export RELAY_NATS__URL="nats://127.0.0.1:$port"
  export RELAY_SPAWNER__HARNESS_SIGNER="$auth/harness-signer.nk"
  echo "run-local: NATS with auth at $RELAY_NATS__URL; relayctl needs RELAY_NATS__URL=$RELAY_NATS__URL RELAY_NATS__CREDS_FILE=$auth/admin.creds"
fi
for svc in "${services[@]}"; do
  creds=()
  [ "${RELAY_AUTH:-on}" = off ] || creds=(env "RELAY_NATS__CREDS_FILE=$auth/$svc.creds")
  if [ "$svc" = agent-spawner ]; then
    RELAY_CONFIG="$spawner_config" "${creds[@]}" "$bin/$svc" &
  else
    "${creds[@]}" "$bin/$svc" &
  fi
  pids+=($!)
done
echo "run-local: started ${services[*]}"
# The gateway serves no one without a key (gateway.open is for a loopback-only dev gateway):
# one admin key of `default` per run, made over NATS as the operator, printed here.
ctl=(env)
[ "${RELAY_AUTH:-on}" = off ] || ctl=(env "RELAY_NATS__CREDS_FILE=$auth/admin.creds")
token=""
for _ in $(seq 1 120); do
  token=$("${ctl[@]}" "$bin/relayctl" keys create "make-run" --role admin 2>/dev/null) && [ -n "$token" ] && break
  sleep 0.5   # the registry is still starting
done
[ -n "$token" ] || { echo "run-local: could not create an admin key (is session-registry up?)" >&2; exit 1; }
# Ready means a session can be made: the spawner's host has registered (its first heartbeat may
# come a few seconds after the registry is up), so `POST /sessions` does not meet "no agent host".
for _ in $(seq 1 120); do
  "${ctl[@]}" "$bin/relayctl" --json hosts --status online 2>/dev/null | grep -q '"hostId"' && break
  sleep 0.5
done
printf '%s\n' "$token" > .relay/admin-token && chmod 600 .relay/admin-token
echo "run-local: admin key of workspace default (also in .relay/admin-token): $token"
echo "run-local: gateway at http://${RELAY_GATEWAY__LISTEN:-127.0.0.1:8080}: curl -H \"Authorization: Bearer $token\" …  (Ctrl-C stops everything)"
wait -n
