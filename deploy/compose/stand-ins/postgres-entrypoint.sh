#!/bin/sh
# The part of the official postgres image's entrypoint the compose file relies on: a cluster
# made on first start (trust or the given auth method, database POSTGRES_DB), then postgres in
# the foreground as the postgres user.
set -eu
: "${PGDATA:=/var/lib/postgresql/data}"
auth="${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}"
mkdir -p "$PGDATA" /var/run/postgresql
chown postgres:postgres "$PGDATA" /var/run/postgresql
chmod 700 "$PGDATA"
as_pg() { runuser -u postgres -- "$@"; }
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  as_pg initdb -D "$PGDATA" -U "${POSTGRES_USER:-postgres}" --auth="$auth" >/dev/null
  echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
  echo "host all all all $auth" >> "$PGDATA/pg_hba.conf"
  if [ -n "${POSTGRES_DB:-}" ] && [ "$POSTGRES_DB" != postgres ]; then
    as_pg pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    as_pg createdb -U "${POSTGRES_USER:-postgres}" "$POSTGRES_DB"
    as_pg pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  fi
  echo "postgres stand-in: cluster initialised in $PGDATA"
fi
[ "${1:-postgres}" = postgres ] && shift || true
exec runuser -u postgres -- postgres -D "$PGDATA" "$@"
