#!/usr/bin/env bash
# Runs a command with a PostgreSQL server for ObjectGraphPostgres's tests and benchmarks:
#
#   bash scripts/with-postgres.sh swift test --filter Postgres
#
# With OBJECTGRAPH_POSTGRES_URL already set (postgres://user:password@host:port/database), the command runs against
# that server. Otherwise Debian's `postgresql` package is installed when missing, a cluster is created in a temporary
# folder and started on 127.0.0.1 on a free port as the `postgres` user (PostgreSQL refuses to run as root), the
# URL is exported, and the cluster is stopped and removed when the command ends, whether it passed or failed.
set -euo pipefail

if [[ -n "${OBJECTGRAPH_POSTGRES_URL:-}" ]]; then
    exec "$@"
fi

find_bin() {
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

bin="$(find_bin)"
if [[ -z "$bin" || ! -x "$bin/initdb" ]]; then
    echo "with-postgres: installing Debian's postgresql package" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 && apt-get install -y -qq postgresql >&2
    bin="$(find_bin)"
fi

run_as_postgres() {
    if [[ "$(id -u)" == 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

cluster="$(mktemp -d /tmp/objectgraph-postgres.XXXXXX)"
chmod 755 "$cluster"
[[ "$(id -u)" == 0 ]] && chown postgres: "$cluster"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"

stop_cluster() {
    run_as_postgres "$bin/pg_ctl" -D "$cluster/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$cluster"
}
trap stop_cluster EXIT

run_as_postgres "$bin/initdb" -D "$cluster/data" -U objectgraph --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
# Enough connections for the many-host tests; fsync off: the cluster is thrown away after the run.
run_as_postgres "$bin/pg_ctl" -D "$cluster/data" -l "$cluster/server.log" -w \
    -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$cluster -c max_connections=200 -c fsync=off" start >/dev/null
run_as_postgres "$bin/createdb" -h 127.0.0.1 -p "$port" -U objectgraph objectgraph

export OBJECTGRAPH_POSTGRES_URL="postgres://objectgraph@127.0.0.1:$port/objectgraph"
echo "with-postgres: server at $OBJECTGRAPH_POSTGRES_URL" >&2
"$@"
