#!/bin/sh
# install.sh PKG...: installs the Debian packages among PKG that are missing, asking nothing, and leaves the host's
# services as they were: no service starts during the install (a policy-rc.d that denies every start, the
# host's own put back after), and a service, timer or socket that a newly installed package enabled or started
# is disabled and stopped again, each said on stderr. phptune never uses a package's own service: it starts
# private instances. Exit 2 when packages are missing and this cannot install them (not root, no apt-get).
# The one implementation: scripts/install-deps.sh runs it, and phptune embeds it (internal/aptinstall).
set -eu
# PHPTUNE_APT_ROOT: where /usr/sbin, /etc and /run are (tests; the host's / otherwise).
R=${PHPTUNE_APT_ROOT:-}
say() { echo "install: $*" >&2; }
installed() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q "ok installed"; }
missing=""
for p in "$@"; do
	installed "$p" || missing="$missing $p"
done
[ -n "$missing" ] || exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	echo "missing Debian packages:$missing; run as root on Debian, or: sudo apt-get install --no-install-recommends$missing" >&2
	exit 2
fi
# One install at a time: the policy-rc.d below is the host's for the while.
mkdir -p "$R/run/lock"
exec 9>"$R/run/lock/phptune-apt.lock"
flock 9
policy=$R/usr/sbin/policy-rc.d
saved=$policy.phptune-saved
ours="# phptune: no service starts while it installs packages; removed after"
# A run killed before it put the host's policy back: do it now (none, when the host had none).
if [ -e "$saved" ] && ! [ -e "$policy" ]; then
	mv -f "$saved" "$policy"
elif grep -qF "$ours" "$policy" 2>/dev/null; then
	if [ -e "$saved" ]; then mv -f "$saved" "$policy"; else rm -f "$policy"; fi
fi
tmp=$(mktemp -d)
had=""
restored=""
restore() {
	[ -z "$restored" ] || return 0
	rm -f "$policy"
	if [ -n "$had" ]; then mv -f "$saved" "$policy"; fi
	restored=1
}
trap 'restore; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP
if [ -e "$policy" ] || [ -L "$policy" ]; then
	had=1
	mv "$policy" "$saved"
fi
printf '#!/bin/sh\n%s\nexit 101\n' "$ours" >"$policy"
chmod 755 "$policy"

packages() { dpkg-query -W -f='${Package} ${Status}\n' 2>/dev/null | awk '$NF == "installed" {print $1}' | sort; }
packages >"$tmp/before"
say "installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
restore
packages >"$tmp/after"
new=$(comm -13 "$tmp/before" "$tmp/after")
systemd=""
[ -d "$R/run/systemd/system" ] && systemd=1
for p in $new; do
	for f in $(dpkg -L "$p" 2>/dev/null); do
		case "$f" in
		/lib/systemd/system/*.service | /lib/systemd/system/*.timer | /lib/systemd/system/*.socket | \
			/usr/lib/systemd/system/*.service | /usr/lib/systemd/system/*.timer | /usr/lib/systemd/system/*.socket)
			u=${f##*/}
			case "$u" in *@.*) continue ;; esac
			if [ -n "$(find "$R/etc/systemd/system" -path '*.wants/*' -name "$u" 2>/dev/null)" ]; then
				if command -v deb-systemd-helper >/dev/null 2>&1; then
					deb-systemd-helper disable "$u" >/dev/null 2>&1 || true
				fi
				find "$R/etc/systemd/system" -path '*.wants/*' -name "$u" -exec rm -f {} + 2>/dev/null || true
				say "$u: enabled by the install of $p; disabled again (to have it: systemctl enable $u)"
			fi
			if [ -n "$systemd" ] && systemctl is-active --quiet "$u" 2>/dev/null; then
				systemctl stop "$u" >/dev/null 2>&1 || true
				say "$u: started by the install of $p; stopped again"
			fi
			;;
		/etc/init.d/*)
			n=${f##*/}
			on=""
			for l in "$R"/etc/rc[2345].d/S[0-9][0-9]"$n"; do
				[ -e "$l" ] && on=1
			done
			if [ -n "$on" ]; then
				update-rc.d "$n" disable >/dev/null 2>&1 || true
				say "$n: its init script enabled by the install of $p; disabled again (to have it: update-rc.d $n enable)"
			fi
			# A daemon's script (started in runlevels 2-5; not procps' and other boot-time scripts).
			if [ -n "$on" ] && [ -z "$systemd" ] && "$R$f" status >/dev/null 2>&1; then
				"$R$f" stop >/dev/null 2>&1 || true
				say "$n: started by the install of $p; stopped again"
			fi
			;;
		esac
	done
done
