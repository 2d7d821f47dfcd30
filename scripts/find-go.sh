#!/bin/sh
# Prints the path of a Go toolchain new enough for go.mod, or nothing (exit 1) with the reason on stderr.
# Looked for, in order: $GO, go on PATH, /usr/local/go, Debian's /usr/lib/go-1.N (the newest first).
# PHPTUNE_GO_ROOTS replaces the last two places (for tests).
set -eu
cd "$(dirname "$0")/.."
need=$(sed -n 's/^go \([0-9]*\.[0-9]*\).*/\1/p' go.mod)
# version prints "MAJOR MINOR" of a go binary, or nothing.
version() {
	"$1" version 2>/dev/null | sed -n 's/^go version go\([0-9]*\)\.\([0-9]*\).*/\1 \2/p'
}
new_enough() {
	set -- $(version "$1") $(echo "$need" | tr . ' ')
	[ $# -eq 4 ] && { [ "$1" -gt "$3" ] || { [ "$1" -eq "$3" ] && [ "$2" -ge "$4" ]; }; }
}
roots="${PHPTUNE_GO_ROOTS-/usr/local/go $(ls -d /usr/lib/go-1.* 2>/dev/null | sort -t. -k2 -n -r | tr '\n' ' ')}"
cands="${GO:-} $(command -v go 2>/dev/null || true)"
for r in $roots; do
	cands="$cands $r/bin/go"
done
old=""
for g in $cands; do
	[ -x "$g" ] || continue
	if new_enough "$g"; then
		echo "$g"
		exit 0
	fi
	[ -n "$old" ] || old="$g ($("$g" version 2>/dev/null | cut -d' ' -f3))"
done
if [ -n "$old" ]; then
	echo "find-go: $old is older than go $need (go.mod)" >&2
else
	echo "find-go: no Go found (looked at \$GO, PATH, $roots)" >&2
fi
exit 1
