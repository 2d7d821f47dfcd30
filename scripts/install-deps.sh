#!/bin/sh
# Installs the Debian packages phptune and its tests need, only those missing; asks nothing.
# Needs root (apt-get). Go comes from bookworm-backports when no Go new enough for go.mod is found.
# With the argument k6 also: Grafana k6 built from its Go module at the version tools/k6/go.mod pins, into bin/k6
# (--engine k6), and Debian's sshd unpacked (not installed: no service, no host keys) into
# /var/cache/phptune/sshd for the k6 tests' loopback ssh host.
set -eu
PKGS="nginx-light php8.2-fpm php8.2-cgi php8.2-cli wrk apache2-utils strace valgrind php-excimer procps ca-certificates chromium tarantool redis-server php8.2-msgpack php8.2-redis dokuwiki php8.2-xml build-essential pkg-config xz-utils util-linux"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
# nginx-light satisfies the need for nginx; another nginx flavour already installed is fine too.
if [ -x /usr/sbin/nginx ]; then
	missing=$(echo "$missing" | sed 's/ nginx-light//')
fi
if [ -n "$(echo "$missing" | tr -d ' ')" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "install-deps: missing Debian packages:$missing; run as root or: sudo apt-get install -y$missing" >&2
		exit 2
	fi
	echo "install-deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	# Debian starts the packages' own services on install; phptune never uses them: it starts private instances.
	apt-get install -y -q --no-install-recommends $missing >/dev/null
fi
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
	apt-get $opts update -q >/dev/null
	apt-get $opts install -y -q --no-install-recommends -t bookworm-backports golang-1.23-go >/dev/null
	GO=$(sh scripts/find-go.sh)
	echo "install-deps: using $GO"
fi
"$GO" mod download
[ "${1:-}" = k6 ] || exit 0
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
