#!/bin/bash
# A throwaway PostgreSQL on loopback for shelvefix's placement server.
#
#   postgresql.sh install   install Debian's postgresql if missing
#   postgresql.sh start     install if needed, then start the cluster
#                           and print its SQLAlchemy URL on stdout
#   postgresql.sh stop      stop the cluster (its data is kept)
#   postgresql.sh status    exit 0 and print the URL if it runs,
#                           exit 3 if it does not
#   postgresql.sh url       print the URL, started or not
#   postgresql.sh data      print the data directory, started or not
#   postgresql.sh purge     stop the cluster and delete its data
#
# It ships inside the shelvefix package (shelvefix/backends/), so an
# installed shelvefix finds it; run it with bash from either place.
#
# The cluster is our own, not the one Debian's package creates: a data
# directory of its own ($SHELVEFIX_PG_DATA, default /tmp/shelvefix-pg),
# listening on 127.0.0.1 only, on $SHELVEFIX_PG_PORT (default 5433, so that
# a packaged cluster on 5432 does not clash; without the variable, the first
# free port above 5433 when something else listens there), with its socket
# inside the data
# directory. The superuser "postgres" can only come in through that socket
# (trust; the directory is private to the server's owner); everyone else,
# the role "placement" included, logs in over TCP with a password. The role
# "placement" (password "placement") owns the database "placement" and may
# create more, which PlacementServer uses to give each server an empty
# database of its own.
#
# Durability is off by default (fsync, synchronous_commit,
# full_page_writes), because the data is disposable and a commit then costs
# no disk flush on a 2-core CI machine; SHELVEFIX_PG_DURABLE=1 turns it back
# on, for timings that look like a real deployment's.
#
# As root, the server runs as the "postgres" user (PostgreSQL refuses to run
# as root); otherwise as the calling user. Every command is idempotent, and
# concurrent calls (parallel test workers) are serialised with flock.

set -eu

# runuser lives in sbin, which a CI or tox environment may leave out.
PATH=$PATH:/usr/sbin:/sbin

# Absolute and without a trailing slash: is_running looks for it verbatim
# on the server's command line.
DATA=$(realpath -m "${SHELVEFIX_PG_DATA:-/tmp/shelvefix-pg}")
PORT=${SHELVEFIX_PG_PORT:-5433}
# A port the user named is used or refused; the default gives way.
PORT_GIVEN=${SHELVEFIX_PG_PORT:+yes}
# How many ports above 5433 the default tries before it gives up.
PORT_TRIES=100
DURABLE=${SHELVEFIX_PG_DURABLE:-0}
HOST=127.0.0.1
ROLE=placement
PASSWORD=placement
DATABASE=placement
SERVER_LOG=$DATA/server.log
# Beside the data directory, not in it: it must exist before initdb does.
LOCK=$DATA.lock

log() {
    echo "postgresql.sh: $*" >&2
}

die() {
    log "$*"
    exit 1
}

url() {
    echo "postgresql+psycopg2://$ROLE:$PASSWORD@$HOST:$1/$DATABASE"
}

# Where pg_ctl and initdb are. Debian keeps the server programs out of PATH,
# in /usr/lib/postgresql/VERSION/bin; other installs put them on PATH.
find_bindir() {
    local dir
    if [ -n "${SHELVEFIX_PG_BINDIR:-}" ]; then
        echo "$SHELVEFIX_PG_BINDIR"
        return 0
    fi
    if command -v pg_ctl >/dev/null && command -v initdb >/dev/null; then
        # Resolved, so that a symlink on PATH leads to psql too.
        dirname "$(readlink -f "$(command -v pg_ctl)")"
        return 0
    fi
    for dir in $(printf "%s\n" /usr/lib/postgresql/*/bin | sort -V -r); do
        if [ -x "$dir/pg_ctl" ] && [ -x "$dir/initdb" ]; then
            echo "$dir"
            return 0
        fi
    done
    return 1
}

# Run a command as the owner of the cluster.
as_owner() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

apt_install() {
    # Another apt run (unattended upgrades, a parallel job) may hold the
    # dpkg lock for a while: wait for it rather than fail.
    apt-get -o DPkg::Lock::Timeout=300 update -qq &&
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 \
            install -y -qq postgresql
}

# A SHELVEFIX_PG_BINDIR that cannot be used is said as such, before
# anything else fails on it ("initdb failed" said nothing of why).
check_bindir() {
    local dir=${SHELVEFIX_PG_BINDIR:-} program
    [ -n "$dir" ] || return 0
    [ -d "$dir" ] || die "SHELVEFIX_PG_BINDIR=$dir: no such directory"
    for program in initdb pg_ctl; do
        [ -x "$dir/$program" ] ||
            die "SHELVEFIX_PG_BINDIR=$dir: no $program there"
    done
}

do_install() {
    local started apt_log
    check_bindir
    if find_bindir >/dev/null; then
        return 0
    fi
    [ "$(id -u)" = 0 ] ||
        die "PostgreSQL is not installed and only root can install it"
    command -v apt-get >/dev/null ||
        die "PostgreSQL is not installed and there is no apt-get here"
    log "installing Debian's postgresql package"
    started=$(date +%s)
    apt_log=$(mktemp)
    if ! apt_install >"$apt_log" 2>&1; then
        tail -n 20 "$apt_log" >&2
        rm -f "$apt_log"
        die "apt-get install postgresql failed"
    fi
    rm -f "$apt_log"
    log "installed in $(($(date +%s) - started)) s"
    # The package may have created and started its own cluster (on 5432).
    # We never use it, and CI must leave no server behind: stop it.
    if command -v pg_lsclusters >/dev/null; then
        pg_lsclusters --no-header 2>/dev/null |
            while read -r version cluster _port status _rest; do
                if [ "$status" = online ]; then
                    log "stopping the packaged cluster $version/$cluster"
                    pg_ctlcluster "$version" "$cluster" stop || true
                fi
            done
    fi
    find_bindir >/dev/null ||
        die "postgresql installed, but no pg_ctl/initdb found"
}

# The port of the running cluster, from its lock file (line 4), which may
# differ from $PORT if the cluster was started with another setting.
running_port() {
    sed -n 4p "$DATA/postmaster.pid" 2>/dev/null
}

# Running means: the pid in the lock file is a postgres serving $DATA. Not
# pg_ctl status, which only asks whether that pid is alive: after a reboot
# the stale lock file may name an unrelated process.
is_running() {
    local pid
    pid=$(sed -n 1p "$DATA/postmaster.pid" 2>/dev/null) || return 1
    [ -n "$pid" ] &&
        tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" |
            grep -q -F -- "postgres -D $DATA "
}

init_cluster() {
    local bindir=$1
    log "creating a cluster in $DATA"
    rm -rf "$DATA"
    mkdir -p "$DATA"
    if [ "$(id -u)" = 0 ]; then
        id postgres >/dev/null 2>&1 ||
            die "no postgres user to run PostgreSQL as (root cannot)"
        chown postgres: "$DATA"
    fi
    chmod 700 "$DATA"
    # --no-sync: the cluster is disposable, a crash just means purge.
    if ! as_owner "$bindir/initdb" -D "$DATA" -U postgres -E UTF8 \
            --no-locale --no-sync --auth-local=trust \
            --auth-host=scram-sha-256 >"$DATA.initdb.log" 2>&1; then
        cat "$DATA.initdb.log" >&2
        die "initdb failed"
    fi
    rm -f "$DATA.initdb.log"
    echo "include_if_exists = 'shelvefix.conf'" >>"$DATA/postgresql.conf"
}

# Our settings, rewritten at every start so that $SHELVEFIX_PG_PORT and
# $SHELVEFIX_PG_DURABLE take effect on the next start.
write_settings() {
    local durable=off
    if [ "$DURABLE" = 1 ]; then
        durable=on
    fi
    as_owner tee "$DATA/shelvefix.conf" >/dev/null <<EOF
# Written by shelvefix's tools/postgresql.sh at every start.
listen_addresses = '$HOST'
port = $PORT
unix_socket_directories = '$DATA'
password_encryption = 'scram-sha-256'
# Room for several multi-worker placement servers and their pools.
max_connections = 300
fsync = $durable
synchronous_commit = $durable
full_page_writes = $durable
EOF
}

psql_super() {
    local bindir=$1 port=$2 psql
    shift 2
    psql=$bindir/psql
    if [ ! -x "$psql" ]; then
        psql=$(command -v psql) || die "no psql found"
    fi
    as_owner "$psql" -X -q -v ON_ERROR_STOP=1 -h "$DATA" -p "$port" \
        -U postgres -d postgres "$@"
}

ensure_role_and_database() {
    local bindir=$1 port=$2
    psql_super "$bindir" "$port" <<EOF
DO \$\$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$ROLE') THEN
        CREATE ROLE $ROLE LOGIN CREATEDB PASSWORD '$PASSWORD';
    END IF;
END
\$\$;
EOF
    if [ -z "$(psql_super "$bindir" "$port" -tA -c \
            "SELECT 1 FROM pg_database WHERE datname = '$DATABASE'")" ]; then
        psql_super "$bindir" "$port" -c \
            "CREATE DATABASE $DATABASE OWNER $ROLE"
    fi
}

# Something answers on 127.0.0.1:$1 (a connect succeeds).
port_in_use() {
    (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null
}

# The default port, or the first free one above it when something else
# (another PostgreSQL, any server) listens there: a machine whose 5433 is
# taken still gets a cluster. A port given in $SHELVEFIX_PG_PORT is kept.
choose_port() {
    local candidate=$PORT last=$((PORT + PORT_TRIES))
    [ -z "$PORT_GIVEN" ] || return 0
    while port_in_use "$candidate"; do
        candidate=$((candidate + 1))
        if [ "$candidate" -gt "$last" ]; then
            die "ports $PORT to $last on $HOST are all taken (set SHELVEFIX_PG_PORT)"
        fi
    done
    if [ "$candidate" != "$PORT" ]; then
        log "$HOST:$PORT is taken by another server: using $candidate"
        PORT=$candidate
    fi
}

do_start() {
    local bindir port
    do_install
    bindir=$(find_bindir)
    if is_running; then
        port=$(running_port)
        if [ "$port" != "$PORT" ]; then
            log "already running on port $port, not $PORT"
        fi
    else
        if [ ! -f "$DATA/PG_VERSION" ]; then
            init_cluster "$bindir"
        elif [ -f "$DATA/postmaster.pid" ]; then
            # Stale (see is_running); postgres itself would refuse to start
            # if its pid now belongs to another process.
            log "removing the stale $DATA/postmaster.pid"
            rm -f "$DATA/postmaster.pid"
        fi
        choose_port
        write_settings
        # 9>&-: the server must not inherit the lock, or it would hold it
        # for as long as it runs and every later call would wait for ever.
        if ! as_owner "$bindir/pg_ctl" start -D "$DATA" -l "$SERVER_LOG" \
                -w -t 60 >/dev/null 9>&-; then
            tail -n 20 "$SERVER_LOG" >&2 || true
            die "PostgreSQL did not start (is 127.0.0.1:$PORT taken?)"
        fi
        port=$PORT
        log "started on $HOST:$port (data $DATA)"
    fi
    ensure_role_and_database "$bindir" "$port"
    url "$port"
}

do_stop() {
    local bindir
    bindir=$(find_bindir) || return 0
    if is_running; then
        as_owner "$bindir/pg_ctl" stop -D "$DATA" -m fast -w >/dev/null
        log "stopped"
    fi
}

do_status() {
    if is_running; then
        url "$(running_port)"
        return 0
    fi
    log "not running (data $DATA)"
    return 3
}

usage() {
    echo "usage: $0 {install|start|stop|status|url|data|purge}" >&2
    exit 2
}

[ $# = 1 ] || usage
case $PORT in
    ''|*[!0-9]*) die "SHELVEFIX_PG_PORT must be a port number" ;;
esac

# Serialise everything but the read-only commands: two test workers may
# start the cluster at the same moment.
case $1 in
    install|start|stop|purge)
        exec 9>"$LOCK"
        flock 9
        ;;
esac

case $1 in
    install) do_install ;;
    start) do_start ;;
    stop) do_stop ;;
    status) do_status ;;
    url) url "$PORT" ;;
    data) echo "$DATA" ;;
    purge)
        do_stop
        rm -rf "$DATA"
        ;;
    *) usage ;;
esac
