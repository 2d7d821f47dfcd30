#!/bin/sh
# Installs the Debian packages phptune and its tests need, only those missing; asks nothing.
# Needs root (apt-get). Go itself is not a Debian package here: see README.
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
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
if ! [ -x "$GO" ]; then
	echo "install-deps: Go not found: install Go 1.23 or newer (https://go.dev/dl) into /usr/local/go, or set GO=/path/to/go" >&2
	exit 2
fi
"$GO" mod download
