#!/usr/bin/env bash
# Starts NATS (JetStream) and PostgreSQL on loopback when they are not already listening, and
# creates the `relay` database used by `make run` and `make bench`. Tests make their own
# databases and their own nats-server; this only guarantees the machine has both.
set -euo pipefail

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for() { # port name
  for _ in $(seq 1 60); do listening "$1" && return 0; sleep 0.5; done
  echo "ensure-services: $2 did not start listening on 127.0.0.1:$1" >&2; exit 1
}

if ! listening 4222; then
  echo "ensure-services: starting nats-server (JetStream) on 127.0.0.1:4222"
  mkdir -p /var/lib/nats-server
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- \
    -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
  wait_for 4222 nats-server
fi

if ! listening 5432; then
  echo "ensure-services: starting PostgreSQL on 127.0.0.1:5432"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
  wait_for 5432 PostgreSQL
fi

for _ in $(seq 1 60); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.5; done
# `cargo test` runs every test binary's services at once, each with its own pools: Debian's
# default of 100 connections runs out. Raise it once (a restart of the machine's cluster).
if [ "$(psql -h 127.0.0.1 -U postgres -tAc 'SHOW max_connections')" -lt 400 ] 2>/dev/null; then
  echo "ensure-services: raising PostgreSQL max_connections to 400 (restarts the cluster)"
  psql -h 127.0.0.1 -U postgres -qc "ALTER SYSTEM SET max_connections = 400"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main restart
  for _ in $(seq 1 60); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.5; done
fi
psql -h 127.0.0.1 -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'relay'" | grep -q 1 \
  || psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE relay"
echo "ensure-services: NATS and PostgreSQL are up"
