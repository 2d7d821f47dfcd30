# Sourced by bench scripts: busyrun NAME ARGS... builds ./bench/NAME into a private temp dir and runs it with ARGS,
# beside a busy loop on core 0 when BUSY=1; the binary and the loop are gone when the script exits.
busyrun() {
	name=$1
	shift
	GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
	dir=$(mktemp -d)
	busy=
	trap 'rm -rf "$dir"; [ -z "$busy" ] || kill $busy' EXIT
	"$GO" build -o "$dir/$name" "./bench/$name"
	if [ "${BUSY:-0}" = 1 ]; then
		taskset -c 0 sh -c 'while :; do :; done' &
		busy=$!
	fi
	"$dir/$name" "$@"
}
