#!/usr/bin/env bash
# The README's "Run your own agents", run as written: its first block (but the `npm install`
# line: the pinned installs of scripts/install-agent-clis.sh stand in, through RELAY_AGENT_CLIS)
# with `make up` in the background, then its second block, which must succeed, and the file it
# says the agent made. The vendors are the scripted model server (fake-model, from CARGO_TARGET_DIR or target/) at
# ANTHROPIC_BASE_URL, OPENAI_BASE_URL and GOOGLE_GEMINI_BASE_URL; the keys are the guide's
# placeholders (the fake takes any). Its own database and data directory; the gateway on the
# guide's 127.0.0.1:8080 and `make run`'s NATS port, both of which must be free.
# Needs `cargo build --workspace --bins` (make test builds them) and jq.
set -euo pipefail
cd "$(dirname "$0")/.."
export RELAY_AGENT_CLIS="${RELAY_AGENT_CLIS:-$HOME/.cache/relay-mesh/agent-clis}"
./scripts/install-agent-clis.sh >/dev/null
command -v jq >/dev/null || { echo "test-guide: installing jq (Debian)"; apt-get install -y -qq jq >/dev/null; }

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for port in 8080 "${RELAY_RUN_NATS_PORT:-4322}"; do
  if listening "$port"; then echo "test-guide: 127.0.0.1:$port is taken; the guide needs it" >&2; exit 1; fi
done

scratch=$(mktemp -d)
db="relay_guide_$(date +%s)_$$"
up_pid=""
model_pid=""
cleanup() {
  [ -z "$up_pid" ] || { kill -TERM -- "-$up_pid" 2>/dev/null || true; wait "$up_pid" 2>/dev/null || true; }
  [ -z "$model_pid" ] || kill "$model_pid" 2>/dev/null || true
  psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" 2>/dev/null || true
  rm -rf "$scratch"
}
trap cleanup EXIT

# The section's ```sh blocks, in order, one file each.
awk -v dir="$scratch" '
  /^## Run your own agents/ { on = 1; next }
  on && /^## / { exit }
  on && /^```sh$/ { n++; out = dir "/block" n ".sh"; inside = 1; next }
  inside && /^```$/ { inside = 0; next }
  inside { print > out }
' README.md
[ -s "$scratch/block1.sh" ] && [ -s "$scratch/block2.sh" ] || { echo "test-guide: the README's guide has no two sh blocks" >&2; exit 1; }

# The model the CLIs talk to: the guide's task asks for a shell command, then it is done.
cat > "$scratch/script.json" <<'JSON'
{"rules": [{"when": "Create hello.txt", "steps": [
  {"shell": "echo hi > hello.txt", "usage": {"input": 1200, "output": 40}},
  {"text": "Created hello.txt. DONE.", "usage": {"input": 1300, "output": 12}}]}]}
JSON
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$(realpath -m "${CARGO_TARGET_DIR:-target}")/debug/fake-model" --listen "127.0.0.1:$port" --script "$scratch/script.json" > "$scratch/model.log" 2>&1 &
model_pid=$!
export ANTHROPIC_BASE_URL="http://127.0.0.1:$port" OPENAI_BASE_URL="http://127.0.0.1:$port/v1" GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$port"
export XDG_DATA_HOME="$scratch/data" RELAY_DATABASE__URL="postgres://postgres@127.0.0.1:5432/$db"
./scripts/ensure-services.sh >/dev/null
psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $db"

# Block 1, but the install line; `make up` stays in the foreground there: here in the background.
grep -v '^npm install' "$scratch/block1.sh" > "$scratch/first.sh"
rm -f .relay/admin-token
setsid bash -euo pipefail "$scratch/first.sh" > "$scratch/up.log" 2>&1 &
up_pid=$!
for _ in $(seq 1 600); do
  [ -s .relay/admin-token ] && listening 8080 && break
  kill -0 "$up_pid" 2>/dev/null || { cat "$scratch/up.log"; echo "test-guide: make up ended" >&2; exit 1; }
  sleep 0.5
done
[ -s .relay/admin-token ] || { cat "$scratch/up.log"; echo "test-guide: no admin key after 300 s" >&2; exit 1; }
grep '^agents: ' "$scratch/up.log"
grep -q '^agents: claude → .*claude (claude-stream-json; key from ANTHROPIC_API_KEY' "$scratch/up.log" \
  || { echo "test-guide: make up did not say it runs the real claude" >&2; exit 1; }

# The second block as written, then with `"cli":"gemini"` for its "goes the same way". (Codex's
# default model speaks a tool protocol the fake model does not; tests/real_clis.rs covers it.)
for cli in claude gemini; do
  echo "test-guide: the second block with \"cli\":\"$cli\""
  rm -f "$XDG_DATA_HOME/relay-mesh/workspaces/default/hello.txt"
  sed "s/\"cli\":\"claude\"/\"cli\":\"$cli\"/" "$scratch/block2.sh" > "$scratch/second.sh"
  if ! timeout 300 bash -euo pipefail "$scratch/second.sh" > "$scratch/second.log" 2>&1; then
    cat "$scratch/second.log"; tail -40 "$scratch/up.log"
    echo "test-guide: the guide's second block failed for $cli" >&2; exit 1
  fi
  cat "$scratch/second.log"
  [ "$(tail -n1 "$scratch/second.log")" = hi ] || { echo "test-guide: $cli: hello.txt does not say hi" >&2; exit 1; }
  grep -q '"command":"echo hi > hello.txt"' "$scratch/second.log" \
    || { echo "test-guide: $cli: the permission request did not name the command" >&2; exit 1; }
done
echo "test-guide: passed"
