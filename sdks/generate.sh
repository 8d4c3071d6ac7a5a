#!/usr/bin/env bash
# Regenerates the client SDKs from docs/api/openapi.json (`make sdks`):
#   sdks/python/relay_mesh/generated/   openapi-python-client (pinned in sdks/python/generator/)
#   sdks/typescript/src/generated/      openapi-typescript (pinned in sdks/typescript/package.json)
# and gives both packages the API's version (info.version). Those two directories hold nothing
# else; the hand-written layer lives beside them. Both read the document through
# sdks/prepare_spec.py, which smooths over the one schema they cannot take as it is.
#
# `--check` changes nothing: it regenerates into a scratch directory and fails, showing the
# difference, when the checked-in code is stale (crates/interop/tests/sdks_fresh.rs runs it).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SPEC=$ROOT/docs/api/openapi.json
MODE=${1:-write}

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The Python generator in a venv of its own, made once per set of pins (beside the tests'
# venvs) and moved into place only when complete.
req=sdks/python/generator/requirements.txt
venv="$HOME/.cache/relay-mesh/py/sdk-generator-$(sha256sum "$req" | cut -c1-12)"
if [ ! -x "$venv/bin/python" ]; then
  echo "sdks: installing the Python generator into $venv" >&2
  mkdir -p "$(dirname "$venv")"
  building="$venv.building-$$"
  rm -rf "$building"
  python3 -m venv "$building"
  "$building/bin/pip" install -q --disable-pip-version-check -r "$req" >&2
  mv -T "$building" "$venv" 2>/dev/null || rm -rf "$building" # another run made it first
fi
# The TypeScript generator: `npm ci` from sdks/typescript's lock file, when missing.
./scripts/install-interop-deps.sh

version=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["info"]["version"])' "$SPEC")

# The document with the one schema neither generator copes with made plain (see the script).
python3 sdks/prepare_spec.py "$SPEC" >"$scratch/openapi.json"

# Python. The generator runs its ruff hooks (from the venv) in the output directory.
py="$scratch/python/generated"
mkdir -p "$scratch/python"
(cd "$scratch/python" && PATH="$venv/bin:$PATH" "$venv/bin/python" -m openapi_python_client generate \
  --path "$scratch/openapi.json" --meta none --output-path generated --fail-on-warning \
  --config "$ROOT/sdks/python/generator/config.yaml" >/dev/null)
printf '"""The relay-mesh API version this code was generated from."""\n\nAPI_VERSION = "%s"\n' \
  "$version" >"$py/version.py"

# TypeScript: one file of types (paths, components, operations) for openapi-fetch.
ts="$scratch/typescript/generated"
mkdir -p "$ts"
sdks/typescript/node_modules/.bin/openapi-typescript "$scratch/openapi.json" -o "$ts/schema.ts" >/dev/null
printf '// The relay-mesh API version this code was generated from.\nexport const API_VERSION = "%s";\n' \
  "$version" >"$ts/version.ts"

# The version fields of the packages' manifests, as they should read.
set_versions() {
  python3 - "$version" "$@" <<'EOF'
import json, re, sys
version, write = sys.argv[1], sys.argv[2] == "write"
stale = []
def check(path, old, new):
    if old != new:
        stale.append(path)
        if write:
            open(path, "w").write(new)
py = open("sdks/python/pyproject.toml").read()
check("sdks/python/pyproject.toml", py, re.sub(r'(?m)^version = ".*"$', f'version = "{version}"', py, count=1))
for path in ["sdks/typescript/package.json", "sdks/typescript/package-lock.json"]:
    text = open(path).read()
    doc = json.loads(text)
    doc["version"] = version
    if "packages" in doc:
        doc["packages"][""]["version"] = version
    check(path, text, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
if stale and not write:
    print("sdks: version is not", version, "in", ", ".join(stale))
    sys.exit(1)
EOF
}

if [ "$MODE" = --check ]; then
  ok=true
  diff -r -u -x __pycache__ sdks/python/relay_mesh/generated "$py" || ok=false
  diff -r -u sdks/typescript/src/generated "$ts" || ok=false
  set_versions check || ok=false
  if ! $ok; then
    echo "sdks: the generated SDK code is stale: run \`make sdks\`" >&2
    exit 1
  fi
  echo "sdks: the generated code matches docs/api/openapi.json (API $version)"
else
  rm -rf sdks/python/relay_mesh/generated sdks/typescript/src/generated
  cp -r "$py" sdks/python/relay_mesh/generated
  cp -r "$ts" sdks/typescript/src/generated
  set_versions write
  echo "sdks: regenerated from docs/api/openapi.json (API $version)"
fi
