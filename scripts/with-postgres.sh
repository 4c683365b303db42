#!/usr/bin/env bash
# Runs a command with a PostgreSQL server for ObjectGraphPostgres's tests and benchmarks:
#
#   bash scripts/with-postgres.sh swift test --filter Postgres
#
# With OBJECTGRAPH_POSTGRES_URL already set (postgres://user:password@host:port/database), the command runs against
# that server. Otherwise Debian's `postgresql` package is installed when missing, a cluster is created in a temporary
# folder and started on 127.0.0.1 on a free port as the `postgres` user (PostgreSQL refuses to run as root), the
# URL is exported, and the cluster is stopped and removed when the command ends, whether it passed or failed.
#
# A second cluster serves TLS only, with a certificate authority and a server certificate (for the name
# `localhost`) made here with openssl: OBJECTGRAPH_POSTGRES_TLS_URL and OBJECTGRAPH_POSTGRES_TLS_CA (the
# authority's PEM file) point the TLS tests at it. With OBJECTGRAPH_POSTGRES_URL set, set those two as well.
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

if ! command -v openssl >/dev/null; then
    echo "with-postgres: installing openssl (for the TLS cluster's certificates)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 && apt-get install -y -qq openssl >&2
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

tls_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"

stop_cluster() {
    for data in "$cluster/data" "$cluster/tls-data"; do
        run_as_postgres "$bin/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1 || true
    done
    rm -rf "$cluster"
}
trap stop_cluster EXIT

# Starts a cluster in folder $1 on port $2, with any further server settings.
start_cluster() {
    local data="$1" port="$2"
    shift 2
    run_as_postgres "$bin/initdb" -D "$data" -U objectgraph --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
    # A TLS cluster refuses connections without TLS: the tests cannot pass over plain TCP by mistake.
    [[ "$*" == *ssl=on* ]] && sed -i 's/^host /hostssl /' "$data/pg_hba.conf"
    # Enough connections for the many-host tests and the suites running at once (each test's stores keep a pool
    # until the test ends); fsync off: the cluster is thrown away after the run.
    run_as_postgres "$bin/pg_ctl" -D "$data" -l "$data.log" -w \
        -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$cluster -c max_connections=400 -c fsync=off $*" start >/dev/null
    run_as_postgres "$bin/createdb" -h 127.0.0.1 -p "$port" -U objectgraph objectgraph
}

start_cluster "$cluster/data" "$port"

# The TLS cluster's certificates: an authority, and a server certificate it signed for `localhost` only (so that
# connecting as 127.0.0.1 is a wrong host name).
tls="$cluster/tls"
mkdir "$tls"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=ObjectGraph test authority" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$tls/ca.key" -out "$tls/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > "$tls/server.ext"
openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial -days 2 \
    -extfile "$tls/server.ext" -out "$tls/server.crt" 2>/dev/null
chmod 600 "$tls/server.key"
chmod 644 "$tls/ca.crt"
[[ "$(id -u)" == 0 ]] && chown -R postgres: "$tls"
start_cluster "$cluster/tls-data" "$tls_port" "-c ssl=on -c ssl_cert_file=$tls/server.crt -c ssl_key_file=$tls/server.key"

export OBJECTGRAPH_POSTGRES_URL="postgres://objectgraph@127.0.0.1:$port/objectgraph"
export OBJECTGRAPH_POSTGRES_TLS_URL="postgres://objectgraph@localhost:$tls_port/objectgraph"
export OBJECTGRAPH_POSTGRES_TLS_CA="$tls/ca.crt"
echo "with-postgres: server at $OBJECTGRAPH_POSTGRES_URL, TLS server at $OBJECTGRAPH_POSTGRES_TLS_URL" >&2
"$@"
