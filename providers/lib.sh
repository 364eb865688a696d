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

# worker_argv NOTICE ON_EXIT: the worker's command line as a JSON array,
# with the cloud's notice (aws, gcp) in place of serve's, and ON_EXIT, what
# stops this cloud's bill, in place of the config's on_exit; "" keeps
# what ebb asked.
worker_argv() {
	msg '.worker.argv
		| (index("--notice-url")) as $n
		| (if $notice != "" and $n != null then .[$n + 1] = $notice else . end)
		| (index("--on-exit")) as $o
		| (if $on_exit != "" then (if $o != null then del(.[$o, $o + 1]) else . end) + ["--on-exit", $on_exit]
		   else . end)' \
		-c --arg notice "$1" --arg on_exit "$2"
}

# worker_script NOTICE ON_EXIT: a boot script (user data, a startup
# script) that writes the worker's environment, its token with it, to a
# file only root reads and starts the worker as a systemd unit: the token
# is on no command line.
worker_script() {
	argv=$(worker_argv "$1" "$2")
	cat <<EOF
#!/bin/sh
# ebb worker of instance $instance, written by $prog.
umask 077
mkdir -p /etc/ebb
cat >/etc/ebb/worker.env <<'EBB_WORKER_ENV'
$(msg '.worker.env | to_entries[] | "\(.key)=\(.value)"')
EBB_WORKER_ENV
exec systemd-run --unit=ebb-worker --property=EnvironmentFile=/etc/ebb/worker.env \\
	$(printf '%s' "$argv" | jq -r 'map(@sh) | join(" ")')
EOF
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
