#!/usr/bin/env bash
# Starts nats-1.conf, nats-2.conf and nats-3.conf as a cluster on this machine and checks it:
# every node has 2 routes, JetStream is up with one meta leader of 3 peers, and a request sent
# to node 3 is answered by a queue-group member on node 1 (across a route). Then stops them.
#
# The files are rendered to loopback with other ports, so a NATS already on 4222 is untouched:
#   clients 127.0.0.1:1422N, routes 127.0.0.1:1622N, monitoring 127.0.0.1:1822N (N = 1..3).
# Needs nats-server (PATH or /usr/sbin), curl, jq, python3.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
nats_server="$(command -v nats-server || echo /usr/sbin/nats-server)"
tmp="$(mktemp -d)"
pids=()

cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; for n in 1 2 3; do echo "--- nats-$n.log" >&2; tail -20 "$tmp/nats-$n.log" >&2 2>/dev/null || true; done; exit 1; }

for n in 1 2 3; do
  mkdir -p "$tmp/$n"
  sed -e "s#0\.0\.0\.0:4222#127.0.0.1:1422$n#" \
      -e "s#0\.0\.0\.0:6222#127.0.0.1:1622$n#" \
      -e "s#0\.0\.0\.0:8222#127.0.0.1:1822$n#" \
      -e "s#0\.0\.0\.0:7422#127.0.0.1:1742$n#" \
      -e "s#nats-route://nats-\([123]\):6222#nats-route://127.0.0.1:1622\1#" \
      -e "s#store_dir: \"/var/lib/nats\"#store_dir: \"$tmp/$n\"#" \
      -e "s#max_memory_store: .*#max_memory_store: 64MB#" \
      -e "s#max_file_store: .*#max_file_store: 256MB#" \
      "$here/nats-$n.conf" > "$tmp/nats-$n.conf"
  "$nats_server" -t -c "$tmp/nats-$n.conf" >/dev/null 2>&1 || fail "nats-$n.conf does not render to a valid config"
done

for n in 1 2 3; do
  "$nats_server" -c "$tmp/nats-$n.conf" -l "$tmp/nats-$n.log" &
  pids+=("$!")
done

# Wait (at most 30 s) for full routes and a healthy JetStream on every node.
for _ in $(seq 60); do
  ok=1
  for n in 1 2 3; do
    routes="$(curl -fsS "127.0.0.1:1822$n/routez" 2>/dev/null | jq -r '.num_routes' 2>/dev/null || echo 0)"
    health="$(curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:1822$n/healthz" 2>/dev/null || true)"
    [[ "$routes" == 2 && "$health" == 200 ]] || ok=0
  done
  [[ $ok == 1 ]] && break
  sleep 0.5
done
[[ $ok == 1 ]] || fail "cluster did not form within 30 s"

for n in 1 2 3; do
  routes="$(curl -fsS "127.0.0.1:1822$n/routez" | jq -r '.num_routes')"
  names="$(curl -fsS "127.0.0.1:1822$n/routez" | jq -r '[.routes[].remote_id] | length')"
  cluster="$(curl -fsS "127.0.0.1:1822$n/varz" | jq -r '.cluster.name')"
  for q in "" "?js-enabled-only=true" "?js-server-only=true"; do
    code="$(curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:1822$n/healthz$q")"
    [[ "$code" == 200 ]] || fail "nats-$n /healthz$q answered $code"
  done
  jsz="$(curl -fsS "127.0.0.1:1822$n/jsz")"
  size="$(jq -r '.meta_cluster.cluster_size' <<<"$jsz")"
  leader="$(jq -r '.meta_cluster.leader // ""' <<<"$jsz")"
  [[ "$routes" == 2 && "$names" == 2 && "$cluster" == relay && "$size" == 3 && -n "$leader" ]] \
    || fail "nats-$n: routes=$routes cluster=$cluster meta size=$size leader=$leader"
  echo "nats-$n: cluster=$cluster routes=$routes healthz(all three)=200 jetstream meta size=$size leader=$leader"
done

# An agent host's leaf node (leaf.conf), connected out to the hub's leaf ports.
sed -e "s#127\.0\.0\.1:4222#127.0.0.1:14224#" -e "s#127\.0\.0\.1:8222#127.0.0.1:18224#" \
    -e "s#nats-leaf://nats-\([123]\):7422#nats-leaf://127.0.0.1:1742\1#" \
    "$here/leaf.conf" > "$tmp/leaf.conf"
"$nats_server" -t -c "$tmp/leaf.conf" >/dev/null 2>&1 || fail "leaf.conf does not render to a valid config"
"$nats_server" -c "$tmp/leaf.conf" -l "$tmp/leaf.log" &
pids+=("$!")
for _ in $(seq 60); do
  leafs="$(curl -fsS 127.0.0.1:18224/leafz 2>/dev/null | jq -r '.leafnodes' 2>/dev/null || echo 0)"
  [[ "$leafs" == 1 ]] && break
  sleep 0.5
done
[[ "$leafs" == 1 ]] || fail "the leaf node did not connect to the hub within 30 s"
echo "leaf: connected to the hub"

# Request/reply across the mesh: a queue subscriber on the first port answers a request sent
# to the second (nats-1 from nats-3 over a route; the leaf from nats-2 and nats-2 from the leaf
# over the leaf connection: an agent host's spawner answering, and calling the mesh).
echo_check() {
RESPONDER_PORT="$1" REQUESTER_PORT="$2" WHAT="$3" python3 - <<'EOF'
import os, socket, time

def conn(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    f = s.makefile("rb")
    assert f.readline().startswith(b"INFO ")
    s.sendall(b'CONNECT {"verbose":false,"pedantic":false,"protocol":1}\r\nPING\r\n')
    assert f.readline() == b"PONG\r\n"
    return s, f

def read_msg(f):
    while True:
        line = f.readline()
        if line == b"PING\r\n":
            continue
        if line.startswith(b"MSG "):
            parts = line.split()
            body = f.read(int(parts[-1]) + 2)[:-2]
            reply = parts[3] if len(parts) == 5 else None
            return parts[1], reply, body
        raise AssertionError(f"unexpected {line!r}")

responder, rf = conn(int(os.environ["RESPONDER_PORT"]))
responder.sendall(b"SUB relay.test.echo workers 1\r\nPING\r\n")
assert rf.readline() == b"PONG\r\n"
requester, qf = conn(int(os.environ["REQUESTER_PORT"]))
requester.sendall(b"SUB _INBOX.test 1\r\nPING\r\n")
assert qf.readline() == b"PONG\r\n"

deadline = time.time() + 10
while True:  # the subscription reaches node 3 over the route shortly after SUB
    requester.sendall(b"PUB relay.test.echo _INBOX.test 5\r\nhello\r\n")
    responder.settimeout(0.5)
    try:
        subject, reply, body = read_msg(rf)
        break
    except (socket.timeout, TimeoutError):
        if time.time() > deadline:
            raise SystemExit(f"FAIL: {os.environ['WHAT']}: the request never reached the queue subscriber")
responder.settimeout(5)
responder.sendall(b"PUB " + reply + b" " + str(len(body)).encode() + b"\r\n" + body + b"\r\n")
_, _, answer = read_msg(qf)
assert answer == b"hello", answer
print(f"{os.environ['WHAT']}: answered by queue group 'workers': ok")
EOF
}
echo_check 14221 14223 "request on nats-3, responder on nats-1"
echo_check 14224 14222 "request on nats-2, responder on the leaf"
echo_check 14222 14224 "request on the leaf, responder on nats-2"

echo "nats cluster check: ok"
