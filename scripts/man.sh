#!/bin/sh
# Writes ebb(1), the manual page, on standard output, from the binary's
# own help: `ebb help` for the commands, then each command's --help, as
# scripts/cli-doc.sh writes docs/CLI.md from the same texts.
#
#   scripts/man.sh BINARY [DATE]
#
# packaging/build-deb.sh runs it on the binary it packages, so the page
# cannot drift from the program. DATE (YYYY-MM-DD) goes in the page's
# header; build-deb.sh passes the changelog's, so the same input gives
# the same page. The help texts are put in no-fill blocks, as printed;
# roff's specials in them are escaped (a line's leading '.' or "'", '\',
# and '-' as '\-', so that options copy as typed). docs/BUILD.md says why
# a script and not help2man.
set -eu

[ $# -ge 1 ] || { echo "usage: $0 BINARY [DATE]" >&2; exit 2; }
ebb=$1
date=${2:-}

help=$("$ebb" help)
version=$("$ebb" version | sed -n 's/^ebb //p')
commands=$(printf '%s\n' "$help" | awk '/^  [a-z]/ { print $1 }')
if [ -z "$version" ] || [ -z "$commands" ]; then
	echo "man.sh: $ebb printed no version or no commands" >&2
	exit 1
fi
# The ENVIRONMENT section below is written here: stop when `ebb help` no
# longer names a variable it describes, or names one more.
vars=$(printf '%s\n' "$help" | grep -o 'EBB_[A-Z_]*' | sort -u | tr '\n' ' ')
[ "$vars" = "EBB_CACERT EBB_SERVER EBB_TOKEN " ] || {
	echo "man.sh: ebb help names the variables '$vars'; update the ENVIRONMENT section of $0" >&2
	exit 1
}

# roff: text as it stands, each input line an output line.
esc() {
	sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/'/\\\\(aq/g" -e 's/`/\\(ga/g' -e 's/^\./\\\&./'
}

cat <<EOF
.\" ebb(1), written by scripts/man.sh from ebb $version's own help: do not edit.
.TH EBB 1 "$date" "ebb $version" "User Commands"
.SH NAME
ebb \- GPU job queue and autoscaler
.SH SYNOPSIS
.B ebb
.I COMMAND
.RI [ OPTIONS ]
.br
.B ebb
.I COMMAND
.B \-\-help
.br
.B ebb help
.RI [ COMMAND ]
.SH DESCRIPTION
.B ebb
keeps GPU spend proportional to work. One program, with a command for
each task:
.B ebb serve
holds a durable job queue, starts GPU instances through a provider
program when work waits and stops them when it does not;
.B ebb worker
runs on each instance, leases and runs its jobs, and exits (powering the
machine off) when it is idle or serve is gone; the client commands
submit, list and manage jobs and the fleet through serve's HTTP API.
.PP
The client commands print tables for people, or the API's JSON with
.BR \-\-json ,
and exit non\-zero with a one\-line reason on any error.
.SH COMMANDS
EOF

for c in $commands; do
	summary=$(printf '%s\n' "$help" | awk -v c="$c" '$1 == c && /^  [a-z]/ { sub(/^  [a-z]+ +/, ""); print; exit }')
	printf '.SS "ebb %s"\n' "$c"
	printf '%s\n' "$summary" | esc
	case $c in
	version | help) continue ;;
	esac
	printf '.PP\n.nf\n'
	"$ebb" "$c" --help | esc
	printf '.fi\n'
done

cat <<'EOF'
.SH EXIT STATUS
0 on success; for the client commands, 1 when the call failed (the
server's message is shown) and 2 for a usage error (the option is named).
.SH ENVIRONMENT
.TP
.B EBB_SERVER
serve's address, for the client commands and
.BR "ebb worker" ;
default http://127.0.0.1:7070.
A list URL,URL,... names serves on one database, tried in turn.
.BR \-s / \-\-server
overrides it.
.TP
.B EBB_TOKEN
the bearer token sent with each call;
.B \-\-token
overrides it.
.TP
.B EBB_CACERT
a file of CA certificates (PEM) to trust for an https:// server, instead
of the system's;
.B \-\-cacert
overrides it.
.SH FILES
.TP
.I /etc/ebb/ebb.conf
the configuration
.B ebb\-serve.service
starts
.B ebb serve
with (INI;
.B ebb config \-\-example
prints every key).
.TP
.I /etc/ebb/worker.env
the environment
.B ebb\-worker.service
starts
.B ebb worker
with: EBB_SERVER, EBB_TOKEN, EBB_CACERT and the worker's options,
EBB_WORKER_ARGS; written at boot on a GPU instance.
.TP
.I /var/lib/ebb
serve's data_dir in the packaged configuration: the SQLite store.
.TP
.I /usr/lib/ebb/providers/
the provider programs that launch and terminate instances on clouds;
each reads its settings from
.IR /etc/ebb/NAME.env ,
NAME being the program's.
.SH SEE ALSO
.I /usr/share/doc/ebb/README.Debian
(what the package holds, and where),
.I /usr/share/doc/ebb/docs/
(DEPLOY.md first; CLI.md, CONFIG.md, API.md, PROVIDERS.md).
EOF
