#!/bin/sh
# The main job until `phptune tune` lands: serve the demo app, bench it over HTTP and FastCGI, print both summaries.
set -eu
BIN="${1:-bin/phptune}"
tmp=$(mktemp -d)
env="$tmp/serve.env"
"$BIN" serve --env-file "$env" --for 10m >"$tmp/serve.log" 2>&1 &
pid=$!
cleanup() { kill -INT "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
i=0
while [ ! -s "$env" ]; do
	if ! kill -0 "$pid" 2>/dev/null; then cat "$tmp/serve.log" >&2; exit 1; fi
	i=$((i + 1)); [ $i -lt 300 ] || { echo "demo: serve did not come up" >&2; cat "$tmp/serve.log" >&2; exit 1; }
	sleep 0.1
done
. "$env"
echo "== The demo app served by nginx + php-fpm (run dir $PHPTUNE_RUNDIR)"
echo
echo "== HTTP through nginx: the article listing"
"$BIN" bench "${PHPTUNE_HTTP}articles" -c 8 -d 10s --expect-body 'phptune-demo:list'
echo
echo "== FastCGI straight to php-fpm over TCP: the same page"
"$BIN" bench "$PHPTUNE_FCGI" --request-uri /articles -c 4 -d 10s --expect-body 'phptune-demo:list' --fpm-status /fpm-status
