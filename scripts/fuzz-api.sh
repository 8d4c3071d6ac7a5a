#!/usr/bin/env bash
# Property-based fuzz of the HTTP API from its OpenAPI document (make fuzz).
# Starts a private nats-server and a fresh database on loopback, the services and the gateway,
# validates docs/api/openapi.json, then runs schemathesis against the live gateway with every
# check (a valid request refused or an invalid one accepted, a 5xx, a response, status or content
# type the document does not describe) and the stateful phase. The checks left out, and the one
# left out for three operations, are in scripts/fuzz-schemathesis.toml with the reasons. Fails on
# any of them, or on an invalid document.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# Where cargo built the binaries (CARGO_TARGET_DIR, relative to here, or ./target).
BIN="$(realpath -m "${CARGO_TARGET_DIR:-target}")/debug"
EXAMPLES="${FUZZ_EXAMPLES:-40}"
# CI runs one fixed seed so that it is deterministic; `make fuzz-random` picks a fresh one.
SEED="${FUZZ_SEED:-1}"
VENV="$ROOT/target/fuzz-venv"
work=$(mktemp -d)
db="relay_fuzz_$$"
pids=()
cleanup() {
  kill "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  psql -q -h 127.0.0.1 -U postgres -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

if [ ! -x "$VENV/bin/schemathesis" ]; then
  echo "installing schemathesis and openapi-spec-validator into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "schemathesis==4.*" "openapi-spec-validator==0.7.*"
fi

echo "validating docs/api/openapi.json"
"$VENV/bin/openapi-spec-validator" docs/api/openapi.json

nats_port=$(free_port)
http_port=$(free_port)
# NATS with auth on, as everywhere: each service connects with its own identity.
"$BIN"/relayctl auth init "$work/auth" >/dev/null
printf 'listen: "127.0.0.1:%s"\njetstream { store_dir: "%s" }\ninclude "auth/nats-auth.conf"\n' \
  "$nats_port" "$work/js" > "$work/nats.conf"
nats-server -c "$work/nats.conf" >"$work/nats.log" 2>&1 &
pids+=($!)
psql -q -h 127.0.0.1 -U postgres -d postgres -c "CREATE DATABASE $db" >/dev/null
export RELAY_NATS__URL="nats://127.0.0.1:$nats_port"
export RELAY_DATABASE__URL="postgres://postgres@127.0.0.1:5432/$db"
export RELAY_GATEWAY__LISTEN="127.0.0.1:$http_port"
export RELAY_API_TOKEN="fuzz-token"
export RELAY_GATEWAY__REQUEST_TIMEOUT_MS=10000
unset RELAY_CONFIG
# Webhooks and schedules are stored but never sent: the fuzzer makes up URLs, and nothing here
# may reach past loopback.
export RELAY_WEBHOOKS__ENABLED=false RELAY_SCHEDULES__ENABLED=false
for svc in session-registry event-ingest delivery-runner permission-manager cost-aggregator coordination automation gateway; do
  RELAY_NATS__CREDS_FILE="$work/auth/$svc.creds" "$BIN/$svc" >"$work/$svc.log" 2>&1 &
  pids+=($!)
done
# An agent-spawner that knows one agent, the fake one: any other `cli` the fuzzer makes up is the
# spawner's not_found (404), as a client would see it.
cat >"$work/spawner.toml" <<TOML
[spawner]
max_agents = 64
[spawner.agents.fake]
command = ["$BIN/fake-agent", "--style", "generic"]
protocol = "pty"
patterns = "generic"
TOML
RELAY_CONFIG="$work/spawner.toml" RELAY_NATS__CREDS_FILE="$work/auth/agent-spawner.creds" \
  RELAY_SPAWNER__HARNESS_SIGNER="$work/auth/harness-signer.nk" \
  "$BIN"/agent-spawner >"$work/agent-spawner.log" 2>&1 &
pids+=($!)

base="http://127.0.0.1:$http_port"
for _ in $(seq 1 120); do
  if curl -fsS "$base/readyz" >/dev/null 2>&1 \
     && curl -fsS -H "Authorization: Bearer fuzz-token" "$base/api/v1/sessions" >/dev/null 2>&1; then
    break
  fi
  sleep 0.5
done
curl -fsS "$base/readyz"; echo

# SSE routes stream forever; they are covered by the integration tests instead.
set +e
"$VENV/bin/schemathesis" --config-file "$ROOT/scripts/fuzz-schemathesis.toml" run "$ROOT/docs/api/openapi.json" \
  --url "$base/api/v1" \
  --header "Authorization: Bearer fuzz-token" \
  --exclude-path-regex '/events/sse$' \
  --max-examples "$EXAMPLES" \
  --seed "$SEED" \
  --no-color
rc=$?
echo "fuzz seed: $SEED, examples per operation: $EXAMPLES"
set -e
if [ $rc -ne 0 ]; then
  echo "schemathesis failed; gateway log tail:"; tail -n 40 "$work/gateway.log"
fi
exit $rc
