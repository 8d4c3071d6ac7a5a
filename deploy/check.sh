#!/usr/bin/env bash
# Offline checks of deploy/ (no cluster needed):
#   1. every NATS config passes `nats-server -t`;
#   2. every YAML document under kubernetes/ parses, and every file beside a kustomization.yaml is listed in it;
#   3. relay.toml parses and uses only keys that config/relay.example.toml documents;
#   4. `kubectl kustomize` builds deploy/kubernetes, deploy/kubernetes/migrate and
#      deploy/kubernetes/autoscaling (its KEDA objects are not in the schema check, whose schemas
#      lack CRDs; its HorizontalPodAutoscalers are);
#   5. kubernetes-validate (pip install kubernetes-validate) checks the built manifests in strict
#      mode against the Kubernetes version in K8S_VERSION (default 1.30.0), when installed;
#   6. with --nats, deploy/nats/test-local.sh starts the 3-node cluster on loopback and checks it.
set -euo pipefail

deploy="$(cd "$(dirname "$0")" && pwd)"
nats_server="$(command -v nats-server || echo /usr/sbin/nats-server)"
k8s_version="${K8S_VERSION:-1.30.0}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

echo "== nats-server -t"
for f in "$deploy"/nats/nats-*.conf "$deploy"/nats/leaf.conf; do "$nats_server" -t -c "$f"; done
# nats.conf includes the identities the Secret carries: render a throwaway set beside a copy.
relayctl="${RELAYCTL:-$deploy/../target/debug/relayctl}"
[ -n "${RELAYCTL:-}" ] || (cd "$deploy/.." && cargo build -q -p relayctl)
mkdir -p "$out/k8s-nats" && sed "s|/etc/nats/tls/|$out/k8s-nats/tls/|" "$deploy/kubernetes/nats.conf" >"$out/k8s-nats/nats.conf"
"$relayctl" auth init "$out/k8s-nats/auth" >/dev/null
# …and the certificate the Secret relay-tls carries, under the names the Secret gives them.
"$relayctl" tls init "$out/k8s-nats/tls" --host nats --host nats.relay-mesh.svc >/dev/null
mv "$out/k8s-nats/tls/server.pem" "$out/k8s-nats/tls/tls.crt" && mv "$out/k8s-nats/tls/server.key" "$out/k8s-nats/tls/tls.key"
SERVER_NAME=nats-0 "$nats_server" -t -c "$out/k8s-nats/nats.conf"

echo "== YAML, kustomization lists, relay.toml"
python3 - "$deploy" "$deploy/../config/relay.example.toml" <<'EOF'
import pathlib, sys, tomllib, yaml

deploy, example = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
docs = 0
for f in sorted((deploy / "kubernetes").rglob("*.yaml")):
    docs += sum(1 for d in yaml.safe_load_all(f.read_text()) if d is not None)
print(f"{docs} YAML documents parse")

for k in sorted(deploy.rglob("kustomization.yaml")):
    text = k.read_text()
    kust = yaml.safe_load(text)
    listed = set(kust.get("resources", []))
    for gen in kust.get("configMapGenerator", []) + kust.get("secretGenerator", []):
        listed.update(gen.get("files", []))
    # An optional file is listed as a commented-out resource ("# - file.yaml").
    optional = {l.split("-", 1)[1].split("#")[0].strip() for l in text.splitlines()
                if l.strip().startswith("# - ")}
    here = {p.name for p in k.parent.iterdir() if p.is_file() and p.name != "kustomization.yaml"}
    missing, unknown = here - listed - optional, (listed | optional) - here
    assert not missing, f"{k}: not listed: {sorted(missing)}"
    assert not unknown, f"{k}: listed but absent: {sorted(unknown)}"
    print(f"{k.relative_to(deploy)}: lists all {len(here)} files"
          + (f" ({', '.join(sorted(optional))} optional)" if optional else ""))

def keys(d, prefix=""):
    for key, value in d.items():
        if isinstance(value, dict):
            yield from keys(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}"

# A key shown commented out (`# tls_cert_file = "…"`, off by default) is documented too.
import re
section, commented = "", set()
for line in example.read_text().splitlines():
    if m := re.match(r"^\[([a-z_.]+)\]", line):
        section = m.group(1) + "."
    elif m := re.match(r"^# ([a-z_]+) = ", line):
        commented.add(section + m.group(1))
documented = set(keys(tomllib.loads(example.read_text()))) | commented
used = set(keys(tomllib.loads((deploy / "kubernetes/relay.toml").read_text())))
assert used <= documented, f"relay.toml keys not in relay.example.toml: {sorted(used - documented)}"
print(f"relay.toml: {len(used)} keys, all documented in config/relay.example.toml")
EOF

echo "== kubectl kustomize"
kubectl kustomize "$deploy/kubernetes" > "$out/relay.yaml"
kubectl kustomize "$deploy/kubernetes/migrate" > "$out/migrate.yaml"
kubectl kustomize "$deploy/kubernetes/autoscaling" > "$out/autoscaling.yaml"
echo "built: $(grep -c '^kind:' "$out/relay.yaml") objects in deploy/kubernetes, $(grep -c '^kind:' "$out/migrate.yaml") in migrate/"

if command -v kubernetes-validate >/dev/null; then
  echo "== kubernetes-validate -k $k8s_version --strict"
  # Also the optional Ingress, which the kustomization leaves out.
  kubernetes-validate -k "$k8s_version" --strict --quiet \
    "$out/relay.yaml" "$out/migrate.yaml" "$deploy/kubernetes/gateway-ingress.yaml" \
    "$deploy/kubernetes/autoscaling/cpu.yaml"
  echo "all objects valid against Kubernetes $k8s_version"
else
  echo "== kubernetes-validate not installed (pip install kubernetes-validate): schema check skipped"
fi

if [[ "${1:-}" == "--nats" ]]; then
  echo "== NATS cluster on loopback"
  "$deploy/nats/test-local.sh"
fi
echo "deploy check: ok"
