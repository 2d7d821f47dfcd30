#!/bin/sh
# Tests the install on a fresh Debian bookworm (debootstrap --variant=minbase, cached in /var/cache/phptune), as
# a new user or a server would meet it, then removes every trace. As root; several minutes (make test-deb).
#  1. make demo's install (scripts/install-deps.sh demo, this machine's Go and module cache bound in): it adds
#     tune's packages and their dependencies, none of what only tests or other commands need, and leaves no
#     service enabled or running.
#  2. In another fresh root: apt install ./phptune_VERSION_ARCH.deb pulls what tune needs, phptune tune
#     --budget 1m runs from it and writes its three config files, man phptune-tune is there, apt remove takes it
#     away.
# Usage: sh scripts/test-install.sh phptune_VERSION_ARCH.deb   (PHPTUNE_HEAVY_LOCK=FILE: the tune waits for it)
set -eu
cd "$(dirname "$0")/.."
if [ $# -ne 1 ] || [ ! -f "$1" ]; then
	echo "usage: $0 phptune_VERSION_ARCH.deb (make deb builds it)" >&2
	exit 2
fi
deb=$(realpath "$1")
[ "$(id -u)" = 0 ] || { echo "test-install: run as root (debootstrap, chroot)" >&2; exit 2; }
sh internal/aptinstall/install.sh debootstrap
GO=${GO:-$(sh scripts/find-go.sh)}
goroot=$("$GO" env GOROOT)
modcache=$("$GO" env GOMODCACHE)
cache=/var/cache/phptune/bookworm-minbase.tar.gz
roots=""
fail=0
check() { # check WHAT COMMAND...: runs COMMAND, says ok or FAIL
	what=$1
	shift
	if "$@"; then echo "ok    $what"; else echo "FAIL  $what"; fail=1; fi
}
undo() {
	for r in $roots; do
		for p in /proc/[0-9]*; do
			[ "$(readlink "$p/root" 2>/dev/null)" = "$r" ] && kill -9 "${p#/proc/}" 2>/dev/null
		done
		for m in dev/pts dev sys proc usr/local/go hostmod; do
			if mountpoint -q "$r/$m" 2>/dev/null; then umount "$r/$m" || umount -l "$r/$m"; fi
		done
		# Never rm -rf through a mount (the host's /dev, its Go).
		if grep -q " $r/" /proc/mounts; then
			echo "test-install: $r still has mounts; left in place: $(grep " $r/" /proc/mounts | cut -d' ' -f2 | tr '\n' ' ')" >&2
		else
			rm -rf "$r"
		fi
	done
}
trap undo EXIT
trap 'exit 130' INT TERM HUP
fresh() { # fresh: r becomes a new root from the cached minbase, mounted for use
	r=$(mktemp -d /var/tmp/phptune-root-XXXXXX)
	roots="$roots $r"
	if [ ! -f "$cache" ]; then
		echo "test-install: debootstrap bookworm minbase into $cache (once; a few minutes)" >&2
		debootstrap --variant=minbase bookworm "$r" http://deb.debian.org/debian >/dev/null
		mkdir -p "$(dirname "$cache")"
		tar -C "$r" -czf "$cache.tmp" . && mv "$cache.tmp" "$cache"
	else
		tar -C "$r" -xzf "$cache"
	fi
	cp /etc/resolv.conf "$r/etc/resolv.conf"
	mount --bind /proc "$r/proc"
	mount --bind /sys "$r/sys"
	mount --bind /dev "$r/dev"
	mount --bind /dev/pts "$r/dev/pts"
}
installed() { chroot "$1" dpkg-query -W -f='${Package} ${Status}\n' | awk '$NF == "installed" {print $1}' | sort; }
# The services, timers and sockets enabled for a boot (systemd's wants links, sysv start links). systemd's own
# template and target links (getty@tty1, remote-fs.target), made when a package pulls systemd itself into a root
# without it, start no service of a package's: the installer leaves them, and so does this check.
enabled() {
	(cd "$1" && find etc/systemd/system -path '*.wants/*' \( -name '*.service' -o -name '*.timer' -o -name '*.socket' \) \
		! -name '*@*' 2>/dev/null; for l in etc/rc[2-5].d/S*; do [ -e "$l" ] && echo "$l"; done) | sort
}
running() { for p in /proc/[0-9]*; do [ "$(readlink "$p/root" 2>/dev/null)" = "$1" ] && cat "$p/comm"; done; true; }

echo "== 1. make demo's install in a fresh bookworm"
fresh
mkdir -p "$r/src" "$r/usr/local/go" "$r/hostmod"
git ls-files | tar -cf - -T - | tar -xf - -C "$r/src"
# This machine's Go and its module cache, read-only: the cache serves as the Go module proxy in the root.
mount --bind "$goroot" "$r/usr/local/go" && mount -o remount,bind,ro "$r/usr/local/go"
mount --bind "$modcache" "$r/hostmod" && mount -o remount,bind,ro "$r/hostmod"
installed "$r" >"$r/before"
enabled "$r" >"$r/enabled-before"
chroot "$r" env GOPROXY=file:///hostmod/cache/download GOSUMDB=off GOFLAGS=-modcacherw \
	sh -c 'cd /src && GO=/usr/local/go/bin/go sh scripts/install-deps.sh demo' 2>&1 | sed 's/^/  /'
installed "$r" | comm -13 "$r/before" - >"$r/added"
echo "  added $(wc -l <"$r/added") packages: $(tr '\n' ' ' <"$r/added")"
check "tune's packages are installed (nginx, php8.2-fpm)" grep -qx php8.2-fpm "$r/added"
only_tests=$(grep -xE 'chromium|tarantool|redis-server|valgrind|strace|dokuwiki|build-essential|php8.2-cgi|wrk|apache2-utils|php8.2-redis|php8.2-msgpack|php-excimer' "$r/added" || true)
check "none of what only tests or other commands need${only_tests:+ (installed: $only_tests)}" [ -z "$only_tests" ]
newly=$(enabled "$r" | comm -13 "$r/enabled-before" -)
check "no service newly enabled${newly:+ (enabled: $newly)}" [ -z "$newly" ]
procs=$(running "$r")
check "no service running${procs:+ (running: $procs)}" [ -z "$procs" ]

echo "== 2. apt install ./$(basename "$deb") in a fresh bookworm, then phptune tune --budget 1m"
fresh
cp "$deb" "$r/tmp/"
# As a container image has it: no service starts in the test root (none could run there anyway).
printf '#!/bin/sh\nexit 101\n' >"$r/usr/sbin/policy-rc.d" && chmod 755 "$r/usr/sbin/policy-rc.d"
chroot "$r" sh -c 'apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q ./tmp/'"$(basename "$deb")"' >/tmp/apt.log 2>&1' ||
	{ tail -5 "$r/tmp/apt.log"; }
check "the package installs with apt" sh -c "chroot '$r' dpkg-query -W -f='\${Status}' phptune | grep -q 'ok installed'"
check "it pulls php-fpm and nginx" sh -c "chroot '$r' dpkg-query -W php8.2-fpm nginx >/dev/null"
check "its man page" test -f "$r/usr/share/man/man1/phptune-tune.1.gz"
start=$(date +%s)
code=0
# PHPTUNE_HEAVY_LOCK=FILE: the tune waits for that lock (a shared machine's rule for runs that measure).
${PHPTUNE_HEAVY_LOCK:+flock "$PHPTUNE_HEAVY_LOCK"} chroot "$r" phptune tune --budget 1m --out /tmp/run \
	>"$r/tmp/tune.out" 2>"$r/tmp/tune.err" || code=$?
echo "  phptune tune --budget 1m: exit $code in $(($(date +%s) - start)) s; $(grep -c . "$r/tmp/tune.out") lines of output"
check "phptune tune --budget 1m exits 0" [ "$code" = 0 ]
[ "$code" = 0 ] || tail -5 "$r/tmp/tune.err"
check "it wrote php-fpm-pool.conf, php.ini, nginx-upstream.conf" test -s "$r/tmp/run/php-fpm-pool.conf" -a -s "$r/tmp/run/php.ini" -a -s "$r/tmp/run/nginx-upstream.conf"
procs=$(running "$r")
check "nothing left running${procs:+ (running: $procs)}" [ -z "$procs" ]
chroot "$r" sh -c 'DEBIAN_FRONTEND=noninteractive apt-get remove -y -q phptune >/dev/null 2>&1'
check "apt remove takes it away" test ! -e "$r/usr/bin/phptune"
[ "$fail" = 0 ] && echo "test-install: all ok" || echo "test-install: FAILED"
exit "$fail"
