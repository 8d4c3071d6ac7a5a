#!/usr/bin/env bash
# Checks the local-cluster files without a Docker engine: docker-compose.yml is valid compose
# (`config --quiet`: docker compose v2 when present, else docker-compose 1.29, installed from
# Debian or PyPI when missing), and the Dockerfile, compose file, deploy/compose/* and
# scripts/run-local.sh agree with each other and with the workspace. Exits non-zero on failure.
set -euo pipefail
cd "$(dirname "$0")/.."

if docker compose version >/dev/null 2>&1; then
  compose=(docker compose)
else
  if ! command -v docker-compose >/dev/null 2>&1; then
    echo "compose-check: installing docker-compose (the validator; no engine needed)"
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker-compose) >/dev/null
    else
      python3 -m pip install --quiet --user docker-compose
    fi
  fi
  compose=(docker-compose)
fi
echo "compose-check: ${compose[*]} -f docker-compose.yml config --quiet"
"${compose[@]}" -f docker-compose.yml config --quiet
echo "compose-check: ${compose[*]} -f docker-compose.yml -f deploy/compose/agents.yml config --quiet"
"${compose[@]}" -f docker-compose.yml -f deploy/compose/agents.yml config --quiet

# The agents image's spawner without keys refuses, naming them; with one, that CLI runs for real
# (a stand-in program on PATH) and the others are the fake.
echo "compose-check: deploy/compose/agents-spawner.sh and scripts/agents-config.sh"
shim=$(mktemp -d); trap 'rm -rf "$shim"' EXIT
ln -s "$PWD/scripts/agents-config.sh" "$shim/agents-config"
for cli in claude codex gemini; do printf '#!/bin/sh\n' > "$shim/$cli"; chmod +x "$shim/$cli"; done
if out=$(env -i PATH="$shim:/usr/bin:/bin" ANTHROPIC_API_KEY= bash deploy/compose/agents-spawner.sh 2>&1); then
  echo "  FAIL agents-spawner started without keys"; exit 1
fi
for key in ANTHROPIC_API_KEY OPENAI_API_KEY GEMINI_API_KEY; do
  case "$out" in *"$key"*) ;; *) echo "  FAIL the refusal does not name $key: $out"; exit 1 ;; esac
done
echo "  ok  without keys agents-spawner refuses, naming ANTHROPIC_API_KEY OPENAI_API_KEY GEMINI_API_KEY"
config=$(env -i PATH="$shim:/usr/bin:/bin" RELAY_AGENTS_NEED_KEYS=1 OPENAI_API_KEY=sk-x "$shim/agents-config" 2>/dev/null)
grep -q "^command = \[\"$shim/codex\"\]" <<<"$config" && grep -q '^claude = \["fake-agent"' <<<"$config" \
  && grep -q '^gemini = \["fake-agent"' <<<"$config" && grep -q '^home = "{data_dir}/homes/{workspace}/codex"' <<<"$config" \
  || { echo "  FAIL with OPENAI_API_KEY alone, codex is not the only real CLI: $config"; exit 1; }
echo "  ok  with OPENAI_API_KEY alone codex runs for real in a prepared home, claude and gemini the fake"

# PyYAML and tomllib (3.11+): the pyenv python or Debian's (docker-compose brings python3-yaml).
py=python3
"$py" -c 'import yaml, tomllib' 2>/dev/null || py=/usr/bin/python3
exec "$py" - <<'EOF'
import fnmatch, glob, os, re, shlex, sys, tomllib, yaml

failures = []
def check(ok, what, detail=""):
    print(f"  {'ok ' if ok else 'FAIL'} {what}" + (f": {detail}" if detail and not ok else ""))
    if not ok:
        failures.append(what)

# Binaries the workspace builds: [[bin]] entries, src/main.rs, src/bin/*.rs, src/bin/*/main.rs.
root = tomllib.load(open("Cargo.toml", "rb"))
workspace_bins = set()
for pattern in root["workspace"]["members"]:
    for member in sorted(glob.glob(pattern)):
        manifest = os.path.join(member, "Cargo.toml")
        if not os.path.isfile(manifest):
            continue
        pkg = tomllib.load(open(manifest, "rb"))
        workspace_bins.update(b["name"] for b in pkg.get("bin", []))
        if os.path.isfile(os.path.join(member, "src/main.rs")):
            workspace_bins.add(pkg["package"]["name"])
        workspace_bins.update(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(member, "src/bin/*.rs")))
        workspace_bins.update(os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(member, "src/bin/*/main.rs")))
print(f"compose-check: workspace binaries: {' '.join(sorted(workspace_bins))}")

print("compose-check: Dockerfile")
dockerfile = open("Dockerfile").read()
image_bins = set(re.findall(r"target/release/([A-Za-z0-9_-]+)", dockerfile))
check(bool(image_bins), "the Dockerfile copies binaries from target/release")
for b in sorted(image_bins):
    check(b in workspace_bins, f"copied binary {b} is built by the workspace", "no [[bin]], src/main.rs or src/bin/*.rs")
for b in sorted(workspace_bins - image_bins):
    print(f"  note: workspace binary {b} is not in the image")
# What the build context holds: .dockerignore's patterns in order, the last that matches a path
# (or a directory above it) wins, `!` taking it back in.
rules = [l.strip() for l in open(".dockerignore") if l.strip() and not l.startswith("#")]
def ignored_by(path):
    verdict = None
    for rule in rules:
        keep = rule.startswith("!")
        pattern = rule.removeprefix("!").rstrip("/").removeprefix("**/")
        parts = path.split("/")
        if any(fnmatch.fnmatch("/".join(parts[:i]), pattern) for i in range(1, len(parts) + 1)):
            verdict = None if keep else rule
    return verdict
# Every source of a COPY from the context (not --from a stage), in every stage.
sources = []
for line in re.sub(r"\\\n", " ", dockerfile).splitlines():
    words = line.split()
    if words[:1] == ["COPY"] and not any(w.startswith("--from") for w in words):
        sources += [w for w in words[1:-1] if not w.startswith("--") and w != "."]
for needed in sorted(set(sources)):
    hit = ignored_by(needed)
    check(not hit and os.path.exists(needed), f"build context has {needed}", f"excluded by .dockerignore {hit}" if hit else "missing")

print("compose-check: docker-compose.yml")
compose = yaml.safe_load(open("docker-compose.yml"))
services = compose["services"]
built = [n for n, s in services.items() if "build" in s]
check(len(built) == 1, "exactly one service builds the relay image", str(built))
image = services[built[0]].get("image") if built else None
check(bool(image), "the building service names the image", "no image:")
relay = {n: s for n, s in services.items() if s.get("image") == image}
long_running = []
for name, svc in relay.items():
    cmd = svc.get("command")
    argv = shlex.split(cmd) if isinstance(cmd, str) else (cmd or [])
    check(bool(argv) and argv[0] in image_bins, f"{name} runs a binary of the image", f"command {argv}")
    env = svc.get("environment") or {}
    if svc.get("restart") != "no":
        long_running.append(argv[0] if argv else name)
        check(svc.get("restart") == "unless-stopped", f"{name} restarts unless-stopped")
        check("test" in (svc.get("healthcheck") or {}), f"{name} has a healthcheck")
        otlp = env.get("RELAY_TELEMETRY__OTLP_ENDPOINT", "")
        host = re.sub(r"^\w+://", "", otlp).split(":")[0]
        check(host in services, f"{name} exports traces to a compose service", repr(otlp))
        check(str(env.get("RELAY_DATABASE__MIGRATE")).lower() == "false", f"{name} leaves migrations to `migrate`")
        dep = (svc.get("depends_on") or {}).get("migrate", {}) if isinstance(svc.get("depends_on"), dict) else {}
        check(dep.get("condition") == "service_completed_successfully", f"{name} waits for migrate")
        # Auth: each service connects to NATS as itself (relayctl auth init names the files).
        creds = env.get("RELAY_NATS__CREDS_FILE", "")
        check(creds == f"/auth/{argv[0] if argv else name}.creds", f"{name} connects with its own NATS identity", repr(creds))
        check(any(str(v).startswith("nats-auth:/auth") for v in svc.get("volumes", [])), f"{name} mounts the identities")
    if "RELAY_CONFIG" in env:
        target = env["RELAY_CONFIG"]
        mounts = {v.split(":")[1]: v.split(":")[0] for v in svc.get("volumes", []) if v.startswith("./")}
        check(target.endswith(".toml") and target in mounts, f"{name}: RELAY_CONFIG {target} is a mounted .toml file")
        if target in mounts and os.path.isfile(mounts[target]):
            cfg = tomllib.load(open(mounts[target], "rb"))
            for cli, argv in cfg.get("spawner", {}).get("commands", {}).items():
                check(bool(argv) and argv[0] in image_bins, f"{mounts[target]}: cli {cli} runs a binary of the image", str(argv))
for name, svc in services.items():
    for v in svc.get("volumes", []):
        if v.startswith("./"):
            check(os.path.exists(v.split(":")[0]), f"{name} mounts existing {v.split(':')[0]}")

print("compose-check: NATS auth")
init = services.get("auth-init", {})
init_cmd = " ".join(init.get("command") or [])
check(init_cmd.startswith("relayctl auth init") and init_cmd.endswith(" /auth"), "auth-init writes the identities with relayctl", init_cmd)
nats_conf = open("deploy/compose/nats.conf").read()
check('include "auth/nats-auth.conf"' in nats_conf, "deploy/compose/nats.conf includes the identities")
check(any(str(v).startswith("nats-auth:/etc/nats/auth") for v in services["nats"].get("volumes", [])), "nats mounts them beside its config")

print("compose-check: deploy/compose/otel-collector.yaml")
try:
    otel = yaml.safe_load(open("deploy/compose/otel-collector.yaml"))
    check(True, "parses as YAML")
    check("grpc" in otel["receivers"]["otlp"]["protocols"], "receives OTLP/gRPC")
    for pipeline in otel["service"]["pipelines"].values():
        for kind in ("receivers", "processors", "exporters"):
            for part in pipeline.get(kind, []):
                check(part in otel.get(kind, {}), f"pipeline {kind[:-1]} {part} is defined")
    check(any("jaeger" in str(e.get("endpoint", "")) for e in otel["exporters"].values()), "exports to jaeger")
except (OSError, yaml.YAMLError, KeyError, TypeError) as e:
    check(False, "otel-collector.yaml is a valid collector config", repr(e))

print("compose-check: scripts/run-local.sh")
m = re.search(r"^services=\(([^)]*)\)", open("scripts/run-local.sh").read(), re.M)
local = m.group(1).split() if m else []
check(sorted(local) == sorted(long_running), "runs the same services as compose", f"{local} vs {long_running}")

if failures:
    print(f"compose-check: {len(failures)} failed")
    sys.exit(1)
print("compose-check: all checks passed")
EOF
