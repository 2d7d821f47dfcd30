package k6

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/procgroup"
)

// sshdRoot is where make k6 unpacks Debian's openssh-server (not installed: no service, no host keys).
const sshdRoot = "/var/cache/phptune/sshd"

// sshHost is a throwaway user with its own sshd on loopback, the user's k6 in its home; all of it removed at the
// test's end. It returns the ssh command for it and the host's name in that command's config.
func sshHost(t *testing.T, k6bin string) (ssh []string, host, remoteK6 string) {
	t.Helper()
	sshd := filepath.Join(sshdRoot, "usr/sbin/sshd")
	if _, err := os.Stat(sshd); err != nil {
		t.Fatalf("%s missing: make k6 unpacks Debian's sshd there (as root)", sshd)
	}
	if os.Geteuid() != 0 {
		t.Fatal("the ssh test makes a throwaway user: run it as root")
	}
	suffix := make([]byte, 3)
	rand.Read(suffix)
	name := "phptune-k6-" + hex.EncodeToString(suffix)
	home, err := os.MkdirTemp("", "phptune-k6-ssh-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	run(t, "useradd", "--system", "--home-dir", home, "--no-create-home", "--shell", "/bin/sh", name)
	t.Cleanup(func() {
		run(t, "userdel", name)
		if _, err := user.Lookup(name); err == nil {
			t.Errorf("user %s left behind", name)
		}
	})
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)

	client := t.TempDir() // root's: the client key and config
	run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(client, "id"))
	run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(home, "hostkey"))
	pub, err := os.ReadFile(filepath.Join(client, "id.pub"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(home, "authorized_keys"), pub, 0o600)
	k6data, err := os.ReadFile(k6bin)
	if err != nil {
		t.Fatal(err)
	}
	remoteK6 = filepath.Join(home, "k6")
	write(t, remoteK6, k6data, 0o755)
	port := freePort(t)
	write(t, filepath.Join(home, "sshd_config"), []byte(fmt.Sprintf(`ListenAddress 127.0.0.1:%d
HostKey %s/hostkey
AuthorizedKeysFile %s/authorized_keys
PidFile %s/sshd.pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
`, port, home, home, home)), 0o600)
	run(t, "chown", "-R", u.Uid+":"+u.Gid, home)

	// sshd run as the user itself needs neither root nor the sshd privilege-separation user.
	cmd := exec.Command(sshd, "-D", "-e", "-f", filepath.Join(home, "sshd_config"))
	cmd.Env = []string{"LD_LIBRARY_PATH=" + filepath.Join(sshdRoot, "usr/lib/x86_64-linux-gnu")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, Setpgid: true}
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		procgroup.Kill(cmd.Process.Pid)
		cmd.Wait()
	})
	waitListening(t, port, &log)

	cfg := filepath.Join(client, "ssh_config")
	write(t, cfg, []byte(fmt.Sprintf(`Host k6test
	HostName 127.0.0.1
	Port %d
	User %s
	IdentityFile %s/id
	IdentitiesOnly yes
	UserKnownHostsFile %s/known_hosts
	StrictHostKeyChecking no
	LogLevel ERROR
`, port, name, client, client)), 0o600)
	return []string{"ssh", "-F", cfg}, "k6test", remoteK6
}

// Two instances on an ssh host (loopback, a throwaway user): both run there, their points come back over ssh
// and merge into the test's exact count.
func TestInstancesOverSSH(t *testing.T) {
	bin := k6Binary(t)
	tg := startNginx(t)
	ssh, host, remote := sshHost(t, bin)
	o := load.Options{Target: tg, Connections: 4, Requests: 300, Warmup: 100 * time.Millisecond, Timeout: 5 * time.Second,
		Request: load.Request{Method: "GET", KeepAlive: true}, Engine: &Engine{Instances: 2, Hosts: []string{host}, SSH: ssh, RemoteBinary: remote}}
	res, err := checked(t, o).Trial(context.Background(), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 300 || res.Errors != 0 {
		t.Fatalf("requests %d errors %d %v, want 300 without error", res.Requests, res.Errors, res.ErrorSamples)
	}
	// A host without k6: the instance's failure names it and what ssh said.
	o.Engine = &Engine{Instances: 1, Hosts: []string{host}, SSH: ssh, RemoteBinary: "/nonexistent/k6"}
	if _, err := checked(t, o).Trial(context.Background(), 1, 1); err == nil || !bytes.Contains([]byte(err.Error()), []byte("on k6test failed")) {
		t.Errorf("missing remote k6: %v", err)
	}
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v: %s", name, args, err, out)
	}
}

func write(t *testing.T, p string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, data, mode); err != nil {
		t.Fatal(err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitListening(t *testing.T, port int, log *bytes.Buffer) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("sshd did not listen on %d: %s", port, log.String())
}
