package aptinstall

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakes stand in for dpkg and apt-get under a fake root: installing the package "svc" ships a service and an init
// script, enables both, and starts the service unless the policy-rc.d in place denies it (as invoke-rc.d does).
const fakes = `
#!/bin/sh
# dpkg-query -W -f=FORMAT [PKG]
db=$PHPTUNE_APT_ROOT/var/lib/dpkg-fake
case "$3" in
"") while read -r p; do echo "$p install ok installed"; done <"$db/installed" ;;
*) grep -qx "$3" "$db/installed" && echo "install ok installed" || exit 1 ;;
esac
---dpkg
#!/bin/sh
# dpkg -L PKG
cat "$PHPTUNE_APT_ROOT/var/lib/dpkg-fake/$2.list" 2>/dev/null
---apt-get
#!/bin/sh
R=$PHPTUNE_APT_ROOT
[ "$1" = update ] && exit 0
shift 4 # install -y -q --no-install-recommends
for p in "$@"; do
	echo "$p" >>"$R/var/lib/dpkg-fake/installed"
	[ "$p" = svc ] || continue
	echo "svc-dep" >>"$R/var/lib/dpkg-fake/installed"
	mkdir -p "$R/lib/systemd/system" "$R/etc/systemd/system/multi-user.target.wants" "$R/etc/init.d" "$R/etc/rc2.d"
	printf '/lib/systemd/system/svc.service\n/etc/init.d/svc\n' >"$R/var/lib/dpkg-fake/svc.list"
	touch "$R/lib/systemd/system/svc.service"
	ln -s /lib/systemd/system/svc.service "$R/etc/systemd/system/multi-user.target.wants/svc.service"
	printf '#!/bin/sh\ncase "$1" in status) [ -e %s/running ] ;; stop) rm -f %s/running ;; esac\n' "$R" "$R" >"$R/etc/init.d/svc"
	chmod +x "$R/etc/init.d/svc"
	ln -s ../init.d/svc "$R/etc/rc2.d/S01svc"
	if "$R/usr/sbin/policy-rc.d" svc start; then touch "$R/running"; else echo denied >"$R/policy-said"; fi
done
---deb-systemd-helper
#!/bin/sh
echo "$@" >>"$PHPTUNE_APT_ROOT/helper-calls"
---update-rc.d
#!/bin/sh
[ "$2" = disable ] && rm -f "$PHPTUNE_APT_ROOT"/etc/rc2.d/S01"$1"
---systemctl
#!/bin/sh
exit 1
`

func fakeRoot(t *testing.T) (root string, env []string) {
	t.Helper()
	root = t.TempDir()
	bin := filepath.Join(root, "fakebin")
	for _, d := range []string{"fakebin", "usr/sbin", "var/lib/dpkg-fake", "etc/systemd/system"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i, part := range strings.Split(fakes, "\n---") {
		name, body, _ := strings.Cut(part, "\n")
		if i == 0 {
			name = "dpkg-query"
		}
		if err := os.WriteFile(filepath.Join(bin, strings.TrimSpace(name)), []byte(strings.TrimLeft(body, "\n")), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "var/lib/dpkg-fake/installed"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, append(os.Environ(), "PHPTUNE_APT_ROOT="+root, "PATH="+bin+":"+os.Getenv("PATH"))
}

func runScript(t *testing.T, env []string, pkgs ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"install.sh"}, pkgs...)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// A package installed for phptune starts no service, its enabled service and init script are disabled again
// and said so, and the host's own policy-rc.d is back afterwards.
func TestInstallLeavesNoServiceBehind(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("install.sh installs as root only; make test runs as root")
	}
	root, env := fakeRoot(t)
	policy := filepath.Join(root, "usr/sbin/policy-rc.d")
	host := "#!/bin/sh\n# the host's own\nexit 0\n"
	if err := os.WriteFile(policy, []byte(host), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := runScript(t, env, "base", "svc")
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(root, "running")); err == nil {
		t.Errorf("the service started during the install")
	}
	if said, _ := os.ReadFile(filepath.Join(root, "policy-said")); string(said) != "denied\n" {
		t.Errorf("policy-rc.d during the install did not deny the start")
	}
	if links, _ := filepath.Glob(filepath.Join(root, "etc/systemd/system/*.wants/svc.service")); len(links) > 0 {
		t.Errorf("svc.service still enabled: %v", links)
	}
	if _, err := os.Lstat(filepath.Join(root, "etc/rc2.d/S01svc")); err == nil {
		t.Errorf("the init script is still enabled")
	}
	if got, _ := os.ReadFile(policy); string(got) != host {
		t.Errorf("the host's policy-rc.d was not put back: %q", got)
	}
	for _, want := range []string{"installing svc", "svc.service: enabled by the install of svc; disabled again", "svc: its init script"} {
		if !strings.Contains(out, want) {
			t.Errorf("the install did not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "installing base") {
		t.Errorf("an installed package was installed again:\n%s", out)
	}
	// Installed now: nothing to do, nothing said.
	if out, err := runScript(t, env, "svc"); err != nil || out != "" {
		t.Errorf("a second install: %v, %q", err, out)
	}
}

// A run killed while its policy-rc.d was in place: the next one puts the host's back first; where the host had
// none, none is left.
func TestInstallRepairsAKilledRun(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("install.sh installs as root only; make test runs as root")
	}
	root, env := fakeRoot(t)
	policy := filepath.Join(root, "usr/sbin/policy-rc.d")
	host := "#!/bin/sh\nexit 0\n"
	os.WriteFile(policy+".phptune-saved", []byte(host), 0o755)
	os.WriteFile(policy, []byte("#!/bin/sh\n# phptune: no service starts while it installs packages; removed after\nexit 101\n"), 0o755)
	if out, err := runScript(t, env, "other"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got, _ := os.ReadFile(policy); string(got) != host {
		t.Errorf("policy-rc.d after a killed run: %q", got)
	}
	os.Remove(policy)
	os.WriteFile(policy, []byte("#!/bin/sh\n# phptune: no service starts while it installs packages; removed after\nexit 101\n"), 0o755)
	if out, err := runScript(t, env, "third"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if _, err := os.Lstat(policy); err == nil {
		t.Errorf("a policy-rc.d left where the host had none")
	}
}

func TestMissingAndInstalled(t *testing.T) {
	if _, err := exec.LookPath("dpkg-query"); err != nil {
		t.Skip("not Debian")
	}
	if got := Missing([]string{"dpkg", "phptune-no-such-package"}); len(got) != 1 || got[0] != "phptune-no-such-package" {
		t.Errorf("Missing = %q", got)
	}
	if err := Install(context.Background(), []string{"dpkg"}, os.Stderr); err != nil {
		t.Errorf("installing an installed package: %v", err)
	}
}
