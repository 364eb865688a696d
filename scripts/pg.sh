#!/bin/sh
# A throwaway PostgreSQL 15 (Debian's) for the tests, in a temporary
# directory of its own:
#
#   scripts/pg.sh start        prints DIR, the server's directory
#   scripts/pg.sh url DIR      prints its libpq connection string
#   scripts/pg.sh restart DIR  stops it as a crash would (immediate: no
#                              checkpoint, recovery at start) and starts it
#   scripts/pg.sh stop DIR     stops it and removes DIR
#
# The cluster is made with initdb, owned by the `postgres` user when this
# runs as root (PostgreSQL refuses to run as root), listens on 127.0.0.1
# at a port free when it starts and on a unix socket in DIR. It trusts
# every connection through the socket, as the role `ebb`, a superuser
# (the tests make a database each); over TCP a role needs its password
# (scram-sha-256), which the tests of [postgres] password_file check. Its data stays durable (fsync on): the store's contract
# is a durable commit, and the tests check it with the server's own
# settings. EBB_TEST_PG=`scripts/pg.sh url DIR` is what the harness reads.
set -eu

BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}

as_owner() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

start() {
	[ -x "$BIN/initdb" ] || { echo "pg.sh: no $BIN/initdb (scripts/deps.sh installs postgresql)" >&2; exit 1; }
	dir=$(mktemp -d "${TMPDIR:-/tmp}/ebb-pg.XXXXXX")
	chmod 755 "$dir"
	mkdir "$dir/sock"
	[ "$(id -u)" -eq 0 ] && chown -R postgres "$dir"
	as_owner "$BIN/initdb" -D "$dir/data" -U ebb --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; rm -rf "$dir"; exit 1; }
	# A port the kernel leaves free now may be taken before postgres
	# binds it: on a failed start, another (from /dev/urandom: awk's
	# srand() is the second, the same for every try within it).
	tries=0
	while :; do
		port=$((20000 + $(od -An -N2 -tu2 /dev/urandom) % 40000))
		if as_owner "$BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
			-o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir/sock -c max_connections=300" \
			start >/dev/null 2>&1; then
			break
		fi
		tries=$((tries + 1))
		if [ $tries -ge 5 ]; then
			cat "$dir/server.log" >&2
			rm -rf "$dir"
			echo "pg.sh: postgres did not start" >&2
			exit 1
		fi
	done
	echo "host=$dir/sock port=$port user=ebb" >"$dir/url"
	echo "$dir"
}

restart() {
	dir=$1
	[ -f "$dir/url" ] || { echo "pg.sh: $dir is not a server's directory" >&2; exit 1; }
	# pg_ctl restart starts it with the options of the last start.
	as_owner "$BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m immediate -w -t 60 restart >/dev/null
}

stop() {
	dir=$1
	[ -f "$dir/url" ] || { echo "pg.sh: $dir is not a server's directory" >&2; exit 1; }
	as_owner "$BIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
	rm -rf "$dir"
}

case "${1:-}" in
start) start ;;
url) cat "$2/url" ;;
restart) restart "$2" ;;
stop) stop "$2" ;;
*) echo "usage: pg.sh start | url DIR | restart DIR | stop DIR" >&2; exit 2 ;;
esac
