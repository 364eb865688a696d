#!/bin/sh
# The Debian package, checked as a user gets it: built with `make deb`,
# linted, its binary checked for Ubuntu 22.04 and 24.04, installed with
# dpkg -i, its units verified, the installed ebb run, its manual page
# formatted and README.Debian held to what was installed, serve started
# on the packaged configuration as its unit starts it, and purged,
# leaving the machine as it was. One pass or fail per check (the lines of
# tests/checks.sh); ends with "N passed, M failed". dpkg needs root: sudo
# when not root.
set -u
cd "$(dirname "$0")/.." || exit 1

if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
else
	SUDO=
fi
# shellcheck source=../tests/checks.sh
. tests/checks.sh

tmp=$(mktemp -d)
serve=
installed=
made_user=
# Whatever happens, the machine is left as it was: no serve, no package,
# no ebb user unless it was there before.
cleanup() {
	[ -z "$serve" ] || $SUDO kill -KILL "$serve" 2>/dev/null
	if [ -n "$installed" ]; then
		$SUDO dpkg --purge ebb > /dev/null 2>&1
		installed=
	fi
	if [ -n "$made_user" ]; then
		$SUDO userdel ebb 2>/dev/null
		! getent group ebb > /dev/null || $SUDO groupdel ebb
		made_user=
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

deb=
if make -s -j2 deb > "$tmp/make.log" 2>&1; then
	deb=$(tail -n 1 "$tmp/make.log")
fi
if [ -n "$deb" ] && [ -f "$deb" ]; then
	pass "make deb built $deb"
else
	cat "$tmp/make.log"
	fail "make deb built no package"
fi

# Errors fail; warnings are printed. initial-upload-closes-no-bugs is
# suppressed: ebb is not uploaded to Debian, so it has no ITP bug to close.
if [ -n "$deb" ] && lintian --fail-on error --suppress-tags initial-upload-closes-no-bugs "$deb"; then
	pass "lintian: no errors"
else
	fail "lintian: errors above"
fi

# The build takes every file of the providers folder, which another branch
# fills: an executable keeps its mode, a sourced library gets 0644, a
# folder is left out, and a missing providers folder is no error.
mkdir -p "$tmp/providers/tests"
printf '#!/bin/sh\nexit 0\n' > "$tmp/providers/cloud"
chmod 0755 "$tmp/providers/cloud"
printf '# sourced\n' > "$tmp/providers/lib.sh"
if ./packaging/build-deb.sh build/deb/ebb "$tmp/with" "$tmp/providers" > /dev/null &&
	./packaging/build-deb.sh build/deb/ebb "$tmp/without" "$tmp/missing" > /dev/null &&
	dpkg-deb -c "$tmp"/with/*.deb | awk '$6 ~ /providers\// {print $1, $6}' > "$tmp/with.txt" &&
	printf '%s\n' 'drwxr-xr-x ./usr/lib/ebb/providers/' '-rwxr-xr-x ./usr/lib/ebb/providers/cloud' \
		'-rw-r--r-- ./usr/lib/ebb/providers/lib.sh' | diff - "$tmp/with.txt" &&
	! dpkg-deb -c "$tmp"/without/*.deb | grep -q providers; then
	pass "the provider programs are packaged by glob, and none is needed"
else
	fail "the provider programs are not packaged as expected"
fi

# The packaged ebb, carried into an Ubuntu 22.04 or 24.04 CUDA image
# (docs/DEPLOY.md section 6), finds its libraries there and what it asks
# of them: scripts/check-ubuntu.sh says how this is checked.
mkdir -p "$tmp/x"
if [ -n "$deb" ] && dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp/x" ./usr/bin/ebb &&
	./scripts/check-ubuntu.sh "$tmp/x/usr/bin/ebb" > "$tmp/ubuntu.txt"; then
	pass "the packaged ebb's libraries, symbol versions and functions are all in Ubuntu 22.04 and 24.04; $(tail -n 1 "$tmp/ubuntu.txt" | sed 's/^ok: //')"
else
	sed 's/^/    /' "$tmp/ubuntu.txt" 2> /dev/null
	fail "the packaged ebb on Ubuntu 22.04 and 24.04: scripts/check-ubuntu.sh (above)"
fi

if dpkg-query -W -f='${Status}' ebb 2>/dev/null | grep -q "install ok installed"; then
	fail "dpkg -i: ebb is already installed here, and this check installs and purges its own (dpkg --purge ebb)"
elif [ -z "$deb" ]; then
	fail "dpkg -i: no package to install"
else
	getent passwd ebb > /dev/null || made_user=yes
	if $SUDO dpkg -i "$deb"; then
		installed=yes
	fi
	conf=$(stat -c '%U:%G %a' /etc/ebb/ebb.conf 2>/dev/null)
	if [ -n "$installed" ] && getent passwd ebb > /dev/null && [ "$conf" = "root:ebb 640" ]; then
		pass "dpkg -i installed it, made the ebb user, and /etc/ebb/ebb.conf is root:ebb 0640"
	else
		fail "dpkg -i: installed=${installed:-no}, /etc/ebb/ebb.conf is '$conf'"
	fi
fi

# systemd-analyze verify loads the units offline: it needs no systemd as
# PID 1, so it runs in a container too. It only warns, with status 0,
# about an unknown key or a key in the wrong section: any output fails.
for unit in ebb-serve ebb-worker; do
	if out=$(systemd-analyze verify "/lib/systemd/system/$unit.service" 2>&1) && [ -z "$out" ]; then
		pass "systemd-analyze verify $unit.service"
	else
		printf '%s\n' "$out"
		fail "systemd-analyze verify $unit.service"
	fi
done

want="ebb $(dpkg-deb -f "$deb" Version 2>/dev/null | sed 's/-[^-]*$//')"
got=$(/usr/bin/ebb version 2>&1)
if [ "$got" = "$want" ]; then
	pass "/usr/bin/ebb version prints '$got'"
else
	fail "/usr/bin/ebb version prints '$got', not '$want'"
fi

# ebb(1): man formats it with every groff warning on (-ww, where lintian
# enables some), and prints none; it has a section for every command
# that the installed ebb's help lists, so a new command cannot be left out.
man1=/usr/share/man/man1/ebb.1.gz
if [ -f "$man1" ] &&
	warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings=w -E UTF-8 -l "$man1" 2>&1 > "$tmp/man.txt"); then
	missing=
	commands=$(/usr/bin/ebb help | awk '/^  [a-z]/ { print $1 }')
	for c in $commands; do
		grep -qx "   ebb $c" "$tmp/man.txt" || missing="$missing $c"
	done
	if [ -z "$warn" ] && [ -n "$commands" ] && [ -z "$missing" ]; then
		pass "man ebb: $man1 formats without a warning and has a section for each of the $(printf "%s\n" "$commands" | wc -l) commands"
	else
		printf '%s\n' "$warn"
		why=
		[ -z "$warn" ] || why="groff warned (above)"
		[ -n "$commands" ] || why="${why:+$why; }ebb help lists no command"
		[ -z "$missing" ] || why="${why:+$why; }no section for:$missing"
		fail "man ebb: $why"
	fi
else
	fail "man ebb: $man1 is missing or man cannot format it"
fi

# README.Debian is the package's inventory: every path it lists exists
# once installed, and every file the package installed is under one of
# them (but the standard files of /usr/share/doc/ebb/ itself).
readme=/usr/share/doc/ebb/README.Debian
if [ -f "$readme" ]; then
	awk '/^  \// { print $1 }' "$readme" > "$tmp/listed"
	unlisted=
	gone=
	while read -r p; do
		[ -e "$p" ] || gone="$gone $p"
	done < "$tmp/listed"
	for f in $(dpkg -L ebb); do
		[ -d "$f" ] && continue
		case $f in /usr/share/doc/ebb/*/*) ;; /usr/share/doc/ebb/*) continue ;; esac
		covered=
		while read -r p; do
			case $f in "$p" | "${p%/}"/*) covered=yes ;; esac
		done < "$tmp/listed"
		[ -n "$covered" ] || unlisted="$unlisted $f"
	done
	if [ -s "$tmp/listed" ] && [ -z "$gone" ] && [ -z "$unlisted" ]; then
		pass "README.Debian lists what the package installed, $(wc -l < "$tmp/listed") paths, each there"
	else
		why=
		[ -s "$tmp/listed" ] || why="lists no path"
		[ -z "$gone" ] || why="${why:+$why; }lists what is not installed:$gone"
		[ -z "$unlisted" ] || why="${why:+$why; }does not list:$unlisted"
		fail "README.Debian: $why"
	fi
else
	fail "README.Debian: $readme is not installed"
fi

# serve as ebb-serve.service runs it: the ebb user, in /var/lib/ebb, on
# the packaged file unchanged (it takes 127.0.0.1:7070). It must answer,
# keep a job in its data_dir, and stop cleanly on SIGTERM. The sandbox
# options need systemd and are left out.
if [ -n "$installed" ]; then
	(cd /var/lib/ebb && exec $SUDO setpriv --reuid=ebb --regid=ebb --init-groups \
		/usr/bin/ebb serve -c /etc/ebb/ebb.conf) 2> "$tmp/serve.log" &
	serve=$!
	up=
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		if EBB_SERVER=http://127.0.0.1:7070 /usr/bin/ebb jobs > /dev/null 2>&1; then
			up=yes
			break
		fi
		sleep 0.5
	done
	job=$(EBB_SERVER=http://127.0.0.1:7070 /usr/bin/ebb submit -- true 2>&1)
	listed=$(EBB_SERVER=http://127.0.0.1:7070 /usr/bin/ebb jobs 2>&1)
	$SUDO kill -TERM "$serve"
	wait "$serve"
	rc=$?
	serve=
	db=$(stat -c %U /var/lib/ebb/ebb.db 2>/dev/null)
	if [ -n "$up" ] && [ "$job" = 1 ] && echo "$listed" | grep -q '^1 *queued' && [ "$rc" -eq 0 ] &&
		grep -q 'msg="shutting down" signal=TERM' "$tmp/serve.log" && [ "$db" = ebb ]; then
		pass "serve runs as ebb on the packaged configuration, keeps a job in /var/lib/ebb, stops on SIGTERM"
	else
		cat "$tmp/serve.log"
		fail "serve on the packaged configuration: answered=${up:-no} job='$job' exit=$rc ebb.db owner='$db'"
	fi
else
	fail "serve on the packaged configuration: the package is not installed"
fi

if [ -n "$installed" ] && $SUDO dpkg --purge ebb > /dev/null; then
	installed=
	left=
	for f in /usr/bin/ebb /etc/ebb /var/lib/ebb /lib/systemd/system/ebb-serve.service \
		/lib/systemd/system/ebb-worker.service /usr/share/doc/ebb /usr/lib/ebb; do
		[ ! -e "$f" ] || left="$left $f"
	done
	! $SUDO dpkg-statoverride --list /etc/ebb/ebb.conf > /dev/null || left="$left (its statoverride)"
	if [ -z "$left" ]; then
		pass "dpkg --purge removed it all"
	else
		fail "dpkg --purge left$left"
	fi
else
	fail "dpkg --purge ebb"
fi

cleanup
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
