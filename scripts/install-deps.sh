#!/bin/sh
# Installs what phptune needs, only what is missing, asking nothing; a service a package would start is left
# stopped and disabled (internal/aptinstall/install.sh says which). Needs root (apt-get).
# Usage: scripts/install-deps.sh [demo|test|k6]
#   demo   what `phptune tune` needs (make demo): nginx-light and php8.2-fpm, ca-certificates for Go's modules,
#          and Go when none new enough is found.
#   test   (the default; make test) demo's, and what the tests and the other commands need: php8.2-cgi, strace and
#          valgrind (tune's screening, profile), php-excimer (profile --wall), wrk and apache2-utils (bench/),
#          chromium (the HTML report's browser test), tarantool, redis-server, php8.2-msgpack and php8.2-redis
#          (clients), dokuwiki and php8.2-xml (the workload tests), build-essential, pkg-config and xz-utils
#          (build), procps and util-linux.
#   k6     test's, and Grafana k6 built from its Go module at the version tools/k6/go.mod pins, into bin/k6
#          (--engine k6), and Debian's sshd unpacked (not installed: no service, no host keys) into
#          /var/cache/phptune/sshd for the k6 tests' loopback ssh host.
# Go comes from bookworm-backports when no Go new enough for go.mod is found.
set -eu
cd "$(dirname "$0")/.."
set_=${1:-test}
DEMO="nginx-light php8.2-fpm ca-certificates"
TEST="php8.2-cgi php8.2-cli strace valgrind php-excimer wrk apache2-utils chromium tarantool redis-server php8.2-msgpack
php8.2-redis dokuwiki php8.2-xml build-essential pkg-config xz-utils procps util-linux"
case "$set_" in
demo) PKGS=$DEMO ;;
test | k6) PKGS="$DEMO $TEST" ;;
*)
	echo "install-deps: want demo, test or k6, not $set_" >&2
	exit 2
	;;
esac
# nginx-light satisfies the need for nginx; another nginx flavour already installed is fine too.
if [ -x /usr/sbin/nginx ]; then
	PKGS=$(echo "$PKGS" | sed 's/nginx-light//')
fi
# shellcheck disable=SC2086
sh internal/aptinstall/install.sh $PKGS
# Go: one new enough for go.mod as found (scripts/find-go.sh), else Debian's golang-1.23-go from
# bookworm-backports through a private apt configuration (its own sources and lists; /etc/apt untouched).
if ! GO=$(sh scripts/find-go.sh); then
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
		echo "install-deps: run as root on Debian to install golang-1.23-go from bookworm-backports, or install Go 1.23 or newer (https://go.dev/dl) into /usr/local/go, or set GO=/path/to/go" >&2
		exit 2
	fi
	echo "install-deps: installing golang-1.23-go from bookworm-backports (private apt lists in /var/cache/phptune/apt)"
	apt=/var/cache/phptune/apt
	mkdir -p "$apt/lists/partial"
	printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' >"$apt/phptune.sources"
	opts="-o Dir::Etc::sourcelist=$apt/phptune.sources -o Dir::Etc::sourceparts=- -o Dir::State::Lists=$apt/lists"
	export DEBIAN_FRONTEND=noninteractive
	# shellcheck disable=SC2086
	apt-get $opts update -q >/dev/null
	# shellcheck disable=SC2086
	apt-get $opts install -y -q --no-install-recommends -t bookworm-backports golang-1.23-go >/dev/null
	GO=$(sh scripts/find-go.sh)
	echo "install-deps: using $GO"
fi
"$GO" mod download
[ "$set_" = k6 ] || exit 0
if [ ! -x bin/k6 ] || [ tools/k6/go.mod -nt bin/k6 ] || [ tools/k6/go.sum -nt bin/k6 ]; then
	echo "install-deps: building k6 $(sed -n 's/^require go.k6.io\/k6 //p' tools/k6/go.mod) from its Go module (tools/k6; a few minutes)"
	mkdir -p bin
	(cd tools/k6 && "$GO" build -trimpath -o ../../bin/k6.tmp . && mv ../../bin/k6.tmp ../../bin/k6)
fi
sshd=/var/cache/phptune/sshd
if [ ! -x "$sshd/usr/sbin/sshd" ] && [ "$(id -u)" = 0 ]; then
	echo "install-deps: unpacking Debian's sshd into $sshd (for the k6 ssh test; nothing installed or started)"
	tmp=$(mktemp -d)
	chmod 755 "$tmp" # apt downloads as _apt
	(cd "$tmp" && apt-get download -q openssh-server libwrap0 >/dev/null 2>&1) ||
		{ apt-get update -q >/dev/null && (cd "$tmp" && apt-get download -q openssh-server libwrap0 >/dev/null); }
	mkdir -p "$sshd.tmp"
	for d in "$tmp"/*.deb; do dpkg-deb -x "$d" "$sshd.tmp"; done
	rm -rf "$tmp" "$sshd" && mv "$sshd.tmp" "$sshd"
fi
