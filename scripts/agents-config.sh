#!/usr/bin/env bash
# Prints the spawner config `make up`/`make run` start agents with (scripts/run-local.sh), and
# on stderr which program each `cli` runs:
#   claude, codex, gemini  the real CLI on its structured path where it is installed — in
#                          $RELAY_AGENT_CLIS (a directory of programs, or the <name>-<version>
#                          installs of scripts/install-agent-clis.sh, newest first) or on PATH;
#                          with its key in the environment, in a home the harness prepares per
#                          workspace (onboarding, the cwd trusted, telemetry off); without, in
#                          your own HOME and its login.
#                          RELAY_AGENTS_NEED_KEYS=1 (the agents image): without its key, the fake.
#   everything else        the scripted fake-agent (the -tui variants too: a TUI needs a person
#                          or a prepared home; configure it yourself with RELAY_SPAWNER_CONFIG).
set -euo pipefail

# name → the program, or nothing.
find_cli() {
  local name=$1 dir="${RELAY_AGENT_CLIS:-}" candidate
  if [ -n "$dir" ]; then
    for candidate in "$dir/$name" $(ls -d "$dir/$name"-*/node_modules/.bin/"$name" 2>/dev/null | sort -V -r); do
      if [ -x "$candidate" ]; then echo "$candidate"; return; fi
    done
  fi
  command -v "$name" 2>/dev/null || true
}

say() { echo "agents: $*" >&2; }

echo "# Written by scripts/agents-config.sh at $(date -u +%FT%TZ); see config/relay.example.toml."
fakes=()
# name protocol extra-args key
for entry in "claude claude-stream-json - ANTHROPIC_API_KEY" "codex codex-app-server - OPENAI_API_KEY" "gemini acp --acp GEMINI_API_KEY"; do
  read -r name protocol extra key <<<"$entry"
  program=$(find_cli "$name")
  if [ -n "$program" ] && [ "${RELAY_AGENTS_NEED_KEYS:-0}" = 1 ] && [ -z "${!key:-}" ]; then
    say "$name → fake-agent (no $key)"
    fakes+=("$name")
    continue
  fi
  if [ -z "$program" ]; then
    say "$name → fake-agent (no $name on PATH${RELAY_AGENT_CLIS:+ or in $RELAY_AGENT_CLIS})"
    fakes+=("$name")
    continue
  fi
  command="[\"$program\"]"
  [ "$extra" = - ] || command="[\"$program\", \"$extra\"]"
  printf '\n[spawner.agents.%s]\ncommand = %s\nprotocol = "%s"\npatterns = "%s"\n' "$name" "$command" "$protocol" "$name"
  if [ -n "${!key:-}" ]; then
    printf 'home = "{data_dir}/homes/{workspace}/%s"\n' "$name"
    say "$name → $program ($protocol; key from $key, in a home the harness prepares: <data_dir>/homes/<workspace>/$name)"
  else
    say "$name → $program ($protocol; no $key: in your own HOME, with its login)"
  fi
done
fakes+=(claude-tui codex-tui gemini-tui aider goose)
say "${fakes[*]} → fake-agent"
printf '\n[spawner.commands]\n'
for name in "${fakes[@]}"; do
  style=${name%-tui}
  case "$style" in claude|codex|gemini) ;; *) style=generic ;; esac
  printf '%s = ["fake-agent", "--style", "%s"]\n' "$name" "$style"
done
