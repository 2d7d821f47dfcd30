package stack

import (
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// asUser runs a PHP one-liner as another user and returns what it printed.
func asUser(t *testing.T, u *user.User, code string, args ...string) string {
	t.Helper()
	cmd := exec.Command("php", append([]string{"-n", "-r", code}, args...)...)
	if u != nil {
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("php -r as %v: %v\n%s (php8.2-cli: make deps)", u, err, out)
	}
	return strings.TrimSpace(string(out))
}

const (
	tryRead    = `echo @file_get_contents($argv[1]) === false ? "denied" : "read";`
	tryConnect = `echo @stream_socket_client("unix://" . $argv[1]) ? "connected" : "denied";`
)

// TestOtherUsersAreLockedOut: another local user can read neither the served copy of the app nor the configs, and
// cannot speak FastCGI to the pool's socket; we (the positive control) can. Under every HTTP server.
func TestOtherUsersAreLockedOut(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user; CI runs as root")
	}
	other, err := user.Lookup("nobody")
	if err != nil {
		t.Fatalf("no user nobody: %v", err)
	}
	app := t.TempDir()
	os.WriteFile(filepath.Join(app, "index.php"), []byte("<?php echo 'front';"), 0o644)
	os.WriteFile(filepath.Join(app, ".env"), []byte("DB_PASSWORD=secret"), 0o644)
	// Apache in front of php-fpm locks its files and the pool's socket as mod_php's Apache and nginx do (the same
	// private dir, the same pool): two servers cover the three.
	for _, server := range []string{ServerNginx, ServerApacheModPHP} {
		t.Run(server, func(t *testing.T) { lockedOut(t, startDemo(t, Config{App: app, Server: server}), other) })
	}
}

func lockedOut(t *testing.T, s *Stack, other *user.User) {
	secrets := []string{filepath.Join(s.Docroot, ".env"), filepath.Join(s.Docroot, "index.php")}
	for _, conf := range []string{"php-fpm.conf", "nginx.conf", "apache.conf", "php.ini"} {
		if _, err := os.Stat(filepath.Join(s.RunDir, conf)); err == nil {
			secrets = append(secrets, filepath.Join(s.RunDir, conf))
		}
	}
	for _, f := range secrets {
		if got := asUser(t, nil, tryRead, f); got != "read" {
			t.Fatalf("control: root cannot read %s: %s", f, got)
		}
		if got := asUser(t, other, tryRead, f); got != "denied" {
			t.Errorf("user nobody can read %s", f)
		}
	}
	for _, ep := range s.Pools {
		if ep.Network != ListenUnix {
			continue
		}
		if got := asUser(t, nil, tryConnect, ep.Address); got != "connected" {
			t.Fatalf("control: root cannot connect to %s: %s", ep.Address, got)
		}
		if got := asUser(t, other, tryConnect, ep.Address); got != "denied" {
			t.Errorf("user nobody can connect to the pool's socket %s", ep.Address)
		}
	}
	for _, dir := range []string{s.PrivDir, s.RunDir} {
		st, err := os.Stat(dir)
		if err != nil || st.Mode().Perm()&0o007 != 0 {
			t.Errorf("%s: mode %v (%v), want nothing for others", dir, st.Mode(), err)
		}
	}
}

// TestDotfilesAreNotServed: .env and .git stay private over HTTP; /.well-known and the app do not. Under nginx and
// Apache: Apache's rule (mod_alias, before any handler) is one line of every MPM's config, so prefork with mod_php
// covers the event MPM in front of php-fpm too.
func TestDotfilesAreNotServed(t *testing.T) {
	app := t.TempDir()
	os.WriteFile(filepath.Join(app, "index.php"), []byte("<?php echo 'front';"), 0o644)
	os.WriteFile(filepath.Join(app, ".env"), []byte("DB_PASSWORD=secret"), 0o644)
	os.MkdirAll(filepath.Join(app, ".git"), 0o755)
	os.WriteFile(filepath.Join(app, ".git", "config"), []byte("[core]"), 0o644)
	os.WriteFile(filepath.Join(app, ".hidden.php"), []byte("<?php echo 'ran';"), 0o644)
	os.MkdirAll(filepath.Join(app, ".well-known"), 0o755)
	os.WriteFile(filepath.Join(app, ".well-known", "security.txt"), []byte("Contact: x"), 0o644)
	for _, server := range []string{ServerNginx, ServerApacheModPHP} {
		t.Run(server, func(t *testing.T) { dotfiles(t, startDemo(t, Config{App: app, Server: server})) })
	}
}

func dotfiles(t *testing.T, s *Stack) {
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	for path, want := range map[string]int{".env": 404, ".git/config": 404, ".hidden.php": 404, "sub/.env": 404,
		".well-known/security.txt": 200, "": 200} {
		resp, err := client.Get(s.HTTPURL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET /%s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}
