# shellcheck shell=sh
# What the provider programs share (docs/PROVIDERS.md, the exec contract,
# version 1). Each program sources it from its own directory, sets prog
# and calls provider_main "$@" after defining do_launch, do_terminate and
# do_list.
#
# It reads the message into $tmp/msg, checks its version and call, loads
# the program's settings file, and gives the calls a private temporary
# directory ($tmp, mode 700) for what must not go on a command line.
#
# The program sets prog, settings_var (the variable naming its settings
# file), and no_capacity and not_found, extended regular expressions that
# match its CLI's errors.
# shellcheck disable=SC2154,SC2034

set -eu

dry_run=
tmp=
cleanup() { [ -z "$tmp" ] || rm -rf "$tmp"; }
trap cleanup EXIT
# ebb kills the process group at its timeout: leave no temporary files.
trap 'exit 143' TERM
trap 'exit 130' INT HUP

say() { printf '%s: %s\n' "$prog" "$*" >&2; }
# A broken setup or an answer that makes no sense: exit 1.
die() {
	say "$*"
	exit 1
}
# A bad message or bad arguments: exit 2.
usage() {
	say "$*"
	exit 2
}

# need VAR...: each setting must be set.
need() {
	for v; do
		eval "[ -n \"\${$v:-}\" ]" || die "$v is not set (see the header of $prog)"
	done
}

# msg FILTER [jq options]: a value of the message, raw.
msg() {
	f=$1
	shift
	jq -r "$@" "$f" "$tmp/msg"
}

# json FILTER FILE [jq options]: a value of a CLI's answer; an answer that
# is not JSON, or lacks what FILTER selects (null), is a clear error, not
# an empty value.
json() {
	f=$1 file=$2
	shift 2
	jq -e "$@" "$f" "$file" 2>/dev/null ||
		die "$what: the answer is not what the API documents: $(head -c 200 "$file" | tr '\n' ' ')"
}

# quote ARG: ARG as a shell word, for what --dry-run prints.
quote() {
	case $1 in
	'' | *[!A-Za-z0-9_./:=,@%+-]*) printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")" ;;
	*) printf '%s' "$1" ;;
	esac
}

# run CMD...: runs a CLI with the file $input (if set) on its standard
# input, its answer in $tmp/out and its errors in $tmp/err; its status.
# With --dry-run it prints the command line instead and answers $dry, a
# plausible answer, so that the rest runs as it would.
run() {
	: >"$tmp/err"
	if [ -n "$dry_run" ]; then
		printf '%s' "$1" >&2
		shift
		for a; do printf ' %s' "$(quote "$a")" >&2; done
		printf '\n' >&2
		printf '%s\n' "${dry:-}" >"$tmp/out"
		return 0
	fi
	"$@" <"${input:-/dev/null}" >"$tmp/out" 2>"$tmp/err"
}

# show NAME FILE: with --dry-run, what a file holds (user data, a
# manifest), as the call would send it.
show() {
	[ -z "$dry_run" ] || {
		printf -- '--- %s\n' "$1"
		cat "$2"
		printf -- '---\n'
	} >&2
}

# The CLI's errors as they came, but their last message (from the last
# line that starts one to the end) on one line: ebb logs the last line.
cli_errors() {
	awk '
	{ line[NR] = $0 }
	/^(ERROR|[Ee]rror|An error occurred)/ { start = NR }
	END {
		if (!start)
			for (start = NR; start > 1 && line[start] ~ /^[[:space:]]*$/; start--)
				;
		for (i = 1; i < start; i++)
			if (line[i] !~ /^[[:space:]]*$/)
				print line[i]
		s = ""
		for (i = start; i <= NR; i++) {
			t = line[i]
			gsub(/^[[:space:]-]+|[[:space:]]+$/, "", t)
			if (t != "")
				s = s (s == "" ? "" : " ") t
		}
		print s
	}' "$tmp/err" >&2
}

# fail STATUS: the CLI's errors, then exit: 75 when they match
# $no_capacity (an extended regular expression, case-insensitive), 1 else.
fail() {
	if [ ! -s "$tmp/err" ]; then
		die "$what: exit $1 with nothing on standard error"
	fi
	cli_errors
	if [ -n "${no_capacity:-}" ] && grep -Eqi -- "$no_capacity" "$tmp/err"; then
		exit 75
	fi
	exit 1
}

# gone: do the CLI's errors say that what it was asked to remove is gone?
gone() { grep -Eqi -- "$not_found" "$tmp/err"; }

# worker_env NOTICE: the worker's environment as a JSON object, into
# $tmp/env.json: the message's worker.env (EBB_SERVER, EBB_TOKEN) and
# EBB_WORKER_ARGS, the worker's options (worker.argv after "ebb worker")
# with the cloud's notice NOTICE (aws, gcp; "" keeps serve's) and without
# --on-exit: on a machine ebb-worker.service powers it off, and a
# container's end is its pod's. systemd and the container's entrypoint
# split EBB_WORKER_ARGS at spaces, with no quoting: an option with a
# space or a quote cannot be carried, nor a value with a newline, and
# either is an error, not a worker started with other options.
worker_env() {
	msg '. as $m
		| .worker.argv[2:]
		| (index("--notice-url")) as $n
		| (if $notice != "" and $n != null then .[$n + 1] = $notice else . end)
		| (index("--on-exit")) as $o
		| (if $o != null then del(.[$o, $o + 1]) else . end)
		| ([.[] | select(test("^[A-Za-z0-9_./:=,@%+~-]+$") | not)][0]) as $bad
		| ($m.worker.env + {EBB_WORKER_ARGS: join(" ")}) as $env
		| ([$env | to_entries[] | select(.value | tostring | test("[\n\r\"\\\\$`]")) | .key][0]) as $odd
		| if $bad then error("the worker option \($bad | @json) has a character that EBB_WORKER_ARGS cannot carry")
		  elif $odd then error("worker.env.\($odd) has a newline, a quote, a backslash, a dollar or a backquote")
		  else $env end' -c --arg notice "$1" >"$tmp/env.json" 2>"$tmp/jq.err" ||
		die "$(sed -n 's/^jq: error (at [^)]*): //p' "$tmp/jq.err")"
}

# machine_script NOTICE: the boot script of a machine whose image holds
# ebb's package (EC2 user data; GCE user-data and startup-script): it
# writes the worker's environment (worker_env), the token with it, to
# /etc/ebb/worker.env, root's alone, the message's CA, if any, to
# /etc/ebb/ca.pem for EBB_CACERT, and starts ebb-worker.service, which
# runs the worker as the ebb user and powers the machine off when it
# exits (docs/DEPLOY.md, sections 6 and 9). Run twice, it does the same
# twice: the second start is of a unit already running.
machine_script() {
	worker_env "$1"
	cat <<EOF
#!/bin/sh
# ebb worker of instance $instance, written by $prog (docs/DEPLOY.md, section 6).
set -eu
umask 077
mkdir -p /etc/ebb
EOF
	if msg '.worker.cacert_pem | strings' -e >/dev/null; then
		printf "cat >/etc/ebb/ca.pem <<'EBB_CA_PEM'\n"
		msg '.worker.cacert_pem | rtrimstr("\n")'
		printf 'EBB_CA_PEM\nchmod 0644 /etc/ebb/ca.pem\n'
		jq -c '. + {EBB_CACERT: "/etc/ebb/ca.pem"}' "$tmp/env.json" >"$tmp/env.tmp"
		mv "$tmp/env.tmp" "$tmp/env.json"
	fi
	printf "cat >/etc/ebb/worker.env <<'EBB_WORKER_ENV'\n"
	jq -r 'to_entries[] | "\(.key)=\"\(.value)\""' "$tmp/env.json"
	printf 'EBB_WORKER_ENV\nsystemctl start --no-block ebb-worker.service\n'
}

# container_env ON_EXIT: the environment of a container of ebb's worker
# image (images/), as a JSON object: worker_env with serve's notice, the
# CA's PEM text as EBB_CACERT_PEM (the entrypoint writes it to a file for
# EBB_CACERT), and ON_EXIT, what ends the container's bill when the
# worker leaves by itself, as EBB_ON_EXIT (a shell command; "": none).
container_env() {
	worker_env ""
	msg '$env[0] + ({EBB_CACERT_PEM: (.worker.cacert_pem | strings)} // {})
		+ (if $on_exit != "" then {EBB_ON_EXIT: $on_exit} else {} end)' \
		-c --slurpfile env "$tmp/env.json" --arg on_exit "$1"
}

# instance_name: ebb-TAG-INSTANCE, the name people see.
instance_name() { printf 'ebb-%s-%s' "$tag" "$instance"; }

# machine: offer.machine, the cloud's name for what to launch.
machine() {
	msg '.offer.machine | strings | select(. != "")' -e ||
		die "offer \"$(msg .offer.name)\" has no machine: set [offer.NAME] machine to this cloud's name for it"
}

# spot: is the launch on the spot market?
spot() {
	case $market in
	spot) return 0 ;;
	on-demand) return 1 ;;
	*) usage "\"market\" must be \"spot\" or \"on-demand\"" ;;
	esac
}

# An instance id parsed from a tag or a label: an integer, else null (ebb
# then sees an instance it does not know, a leak, and terminates it).
jq_id='def id: (tonumber? | select(. == floor and . >= 0)) // null;'

provider_main() {
	[ "${1:-}" != --dry-run ] || {
		dry_run=1
		shift
	}
	[ $# -eq 1 ] || usage "usage: $prog [--dry-run] launch|terminate|list < message.json"
	case $1 in
	launch | terminate | list) ;;
	*) usage "unknown call '$1': expected launch, terminate or list" ;;
	esac
	what=$1
	command -v jq >/dev/null || die "jq is not installed (apt-get install jq)"
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/ebb-$prog.XXXXXX")
	cat >"$tmp/msg"
	# One jq for every check, and the fields each call uses as shell
	# assignments (tag, instance, market): a jq costs a process, and a
	# program runs one per call.
	fields=$(jq -r --arg call "$1" '
		if type != "object" then "usage standard input is not a JSON object"
		elif .version != 1 then "usage message version \(.version): this program speaks version 1 of the contract"
		elif (.call // $call) != $call then "usage the message is a \u0027\(.call)\u0027 call, the argument says \u0027\($call)\u0027"
		elif (.tag | strings | test("^[A-Za-z0-9_.-]+$")) != true
		then "usage \"tag\" must be a name of letters, digits, \u0027_\u0027, \u0027.\u0027 or \u0027-\u0027"
		elif $call != "list" and (.instance | numbers | . == floor and . > 0) != true
		then "usage \"instance\" must be ebb\u0027s id of the instance, a positive integer"
		else "tag=\(.tag | @sh) instance=\(.instance // "" | tostring | @sh) market=\(.market // "" | tostring | @sh)"
		end' "$tmp/msg" 2>/dev/null) || usage "standard input is not a JSON object"
	case $fields in
	"usage "*) usage "${fields#usage }" ;;
	esac
	eval "$fields"
	# The settings file: shell assignments, read after the environment.
	settings=$(eval "printf '%s' \"\${${settings_var}:-/etc/ebb/$prog.env}\"")
	if [ -f "$settings" ]; then
		# shellcheck disable=SC1090
		. "$settings"
	fi
	if [ -n "$dry_run" ]; then
		# What --dry-run shows holds no secret.
		jq '(.worker.env.EBB_TOKEN | strings) |= "(token)"' "$tmp/msg" >"$tmp/m" && mv "$tmp/m" "$tmp/msg"
	fi
	"do_$1"
}
