#!/bin/sh
# Builds the Debian package of phptune with dpkg-deb: the binary (static, no cgo), its man pages (phptune man,
# from the commands' help), bash completion, the README and docs, a control file whose Depends: is what tune
# needs (nginx, php-fpm) and whose Recommends:/Suggests: are what other commands use. Writes
# phptune_VERSION_ARCH.deb into the current directory and prints its name.
# Usage: GO=go VERSION=1.2.3 sh scripts/deb.sh   (VERSION default: from git describe, made a Debian version)
set -eu
cd "$(dirname "$0")/.."
GO=${GO:-go}
command -v dpkg-deb >/dev/null || { echo "deb: dpkg-deb not found: apt-get install dpkg" >&2; exit 2; }
v=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
# A Debian version starts with a digit: a bare commit becomes 0~gitDATE.HASH (sorts before any release).
if echo "$v" | grep -Eq '^v?[0-9]+(\.[0-9]+)+'; then
	debv=$(echo "$v" | sed 's/^v//; s/-/+/g')
else
	debv="0~git$(date -u +%Y%m%d).$(echo "$v" | tr -c 'a-zA-Z0-9.+~\n' '.')"
fi
arch=$(dpkg --print-architecture)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
root=$tmp/root
mkdir -p "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/man/man1" "$root/usr/share/doc/phptune/docs" \
	"$root/usr/share/bash-completion/completions"
CGO_ENABLED=0 "$GO" build -trimpath -ldflags "-s -w -X main.version=$v" -o "$root/usr/bin/phptune" ./cmd/phptune
"$root/usr/bin/phptune" man "$root/usr/share/man/man1"
gzip -9n "$root"/usr/share/man/man1/*.1
"$root/usr/bin/phptune" completion bash >"$root/usr/share/bash-completion/completions/phptune"
cp README.md "$root/usr/share/doc/phptune/"
cp docs/*.md "$root/usr/share/doc/phptune/docs/"
cat >"$root/usr/share/doc/phptune/copyright" <<'COPY'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: phptune
Files: *
Copyright: the phptune developers
License: see the source repository
COPY
find "$root" -type d -exec chmod 755 {} +
find "$root/usr/share" -type f -exec chmod 644 {} +
size=$(du -sk "$root/usr" | cut -f1)
cat >"$root/DEBIAN/control" <<CONTROL
Package: phptune
Version: $debv
Architecture: $arch
Maintainer: phptune developers <phptune@localhost>
Installed-Size: $size
Section: web
Priority: optional
Depends: nginx | nginx-light | nginx-full | nginx-extras, php8.2-fpm | php-fpm
Recommends: php8.2-cgi | php-cgi, strace, valgrind
Suggests: php-excimer, tarantool, redis-server, php8.2-cli, php8.2-msgpack, php8.2-redis, build-essential, pkg-config, xz-utils
Homepage: https://github.com/phptune/phptune
Description: measure a PHP stack (nginx + php-fpm) and say what to change
 phptune serves a PHP application for real (nginx + php-fpm in a private run
 directory, never the system's configuration), drives load at it, and decides
 the php-fpm pool's size and the knobs that matter (opcache, JIT, pm, ...) by
 interleaved races with statistical verdicts. Run "phptune tune" on the
 bundled demo app, or "phptune tune /srv/myapp --url /".
 .
 Recommends: php-cgi, strace and valgrind count a request's work (tune's
 screening, phptune profile). Suggests: php-excimer (profile --wall);
 tarantool, redis-server, php-cli, php-msgpack, php-redis (phptune clients);
 build-essential, pkg-config, xz-utils (phptune build).
CONTROL
deb=phptune_${debv}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
