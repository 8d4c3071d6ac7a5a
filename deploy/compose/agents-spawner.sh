#!/usr/bin/env bash
# agent-spawner of the agents image (deploy/compose/agents.yml): each real CLI whose key is set
# runs on its structured path (claude: stream-json, codex: app-server, gemini: ACP) in a home the
# harness prepares per workspace under RELAY_SPAWNER__DATA_DIR (a volume, so the CLIs' sessions
# survive a restart); a CLI without its key, and every other `cli`, runs the fake agent.
# Without any key it refuses to start, naming them.
set -euo pipefail
# Compose passes a variable .env leaves out as an empty string: empty is not set.
for v in ANTHROPIC_API_KEY OPENAI_API_KEY GEMINI_API_KEY ANTHROPIC_BASE_URL OPENAI_BASE_URL GOOGLE_GEMINI_BASE_URL; do
  [ -n "${!v:-}" ] || unset "$v"
done
missing=()
for key in ANTHROPIC_API_KEY OPENAI_API_KEY GEMINI_API_KEY; do
  [ -n "${!key:-}" ] || missing+=("$key")
done
if [ ${#missing[@]} -eq 3 ]; then
  echo "agents-spawner: refusing to start: ${missing[*]} are not set. Put the keys you have in .env beside docker-compose.yml (ANTHROPIC_API_KEY runs claude, OPENAI_API_KEY codex, GEMINI_API_KEY gemini), or leave deploy/compose/agents.yml out for the fake agents." >&2
  exit 78
fi
[ ${#missing[@]} -eq 0 ] || echo "agents-spawner: ${missing[*]} not set: those CLIs run the fake agent" >&2
RELAY_AGENTS_NEED_KEYS=1 agents-config > /tmp/spawner.toml
export RELAY_CONFIG=/tmp/spawner.toml
exec agent-spawner
