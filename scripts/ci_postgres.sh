#!/usr/bin/env bash
# Start a throwaway PostgreSQL server (Debian's packages) for the checkpointer test.
# On success prints its connection string on stdout; otherwise prints the reason on stderr and exits 1.
# Idempotent: a server already running in $MTRAG_PG_DIR is reused.
set -u
PORT=${MTRAG_PG_PORT:-55432}
DIR=${MTRAG_PG_DIR:-/tmp/mtrag-pg}

find_pg_ctl() { ls /usr/lib/postgresql/*/bin/pg_ctl 2>/dev/null | sort -V | tail -n 1; }
PG_CTL=$(find_pg_ctl)
if [ -z "$PG_CTL" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >&2
  PG_CTL=$(find_pg_ctl)
fi
if [ -z "$PG_CTL" ]; then
  echo "PostgreSQL is not installed and could not be installed (apt-get postgresql)" >&2
  exit 1
fi
BIN=$(dirname "$PG_CTL")
as_owner() {  # initdb and the server refuse to run as root
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
mkdir -p "$DIR"
[ "$(id -u)" = 0 ] && chown postgres "$DIR"
if ! as_owner "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1; then
  if [ ! -f "$DIR/data/PG_VERSION" ]; then
    as_owner "$BIN/initdb" -D "$DIR/data" -A trust -U postgres >&2 || { echo "initdb failed" >&2; exit 1; }
  fi
  as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w \
    -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1" start >&2 \
    || { echo "the PostgreSQL server did not start (see $DIR/server.log)" >&2; exit 1; }
fi
echo "postgresql://postgres@127.0.0.1:$PORT/postgres"
