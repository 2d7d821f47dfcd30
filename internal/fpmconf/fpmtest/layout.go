// Package fpmtest lays out php-fpm configurations as they are found on servers and in images (Debian's, the
// official Docker image's and images built on it), for the tests of the packages that read and edit them.
package fpmtest

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Debian's files, as php8.2-fpm installs them.
const (
	DebianMain = "/etc/php/8.2/fpm/php-fpm.conf"
	DebianPool = "/etc/php/8.2/fpm/pool.d/www.conf"
)

// Layout is a php-fpm configuration laid out in a directory: files by path relative to it (@DIR@ in a text
// stands for the directory), the main file, and whether php-fpm runs with -p DIR (relative includes taken
// from it).
type Layout struct {
	Files    map[string]string
	Main     string
	Prefixed bool
}

// ReadFile is a file's text; the test fails, saying what installs it, when it is missing.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("(needs php8.2-fpm: make deps) %v", err)
	}
	return string(b)
}

// Docker is the official image's layout: php-fpm.conf (upstream's, which Debian's is too) including
// etc/php-fpm.d/*.conf relative to the prefix; www.conf, docker.conf and zz-docker.conf as its Dockerfile
// writes them.
func Docker(t testing.TB) Layout {
	main := strings.Replace(ReadFile(t, DebianMain), "include=/etc/php/8.2/fpm/pool.d/*.conf", "include=etc/php-fpm.d/*.conf", 1)
	main = strings.Replace(main, "pid = /run/php/php8.2-fpm.pid", ";pid = run/php-fpm.pid", 1)
	www := strings.Replace(ReadFile(t, DebianPool), "listen = /run/php/php8.2-fpm.sock", "listen = 127.0.0.1:9000", 1)
	return Layout{Main: "etc/php-fpm.conf", Prefixed: true, Files: map[string]string{
		"etc/php-fpm.conf":       main,
		"etc/php-fpm.d/www.conf": www,
		"etc/php-fpm.d/docker.conf": "[global]\nerror_log = /proc/self/fd/2\n\n; https://github.com/docker-library/php/pull/725#issuecomment-443540114\n" +
			"log_limit = 8192\n\n[www]\n; php-fpm closes STDOUT on startup, so sending logs to /proc/self/fd/1 does not work.\n" +
			"access.log = /proc/self/fd/2\n\nclear_env = no\n\n; Ensure worker stdout and stderr are sent to the main error log.\n" +
			"catch_workers_output = yes\ndecorate_workers_output = no\n",
		"etc/php-fpm.d/zz-docker.conf": "[global]\ndaemonize = no\n\n[www]\nlisten = 9000\n",
	}}
}

// With adds files to a layout (a copy); a file already there is appended to, as echo >> does.
func (l Layout) With(files map[string]string) Layout {
	out := l
	out.Files = maps.Clone(l.Files)
	for k, v := range files {
		out.Files[k] += v
	}
	return out
}

// Single is a layout of one file.
func Single(text string) Layout {
	return Layout{Main: "php-fpm.conf", Files: map[string]string{"php-fpm.conf": text}}
}

// Lay writes the layout into a new directory: its main file and the prefix to read it with ("" for none).
func (l Layout) Lay(t testing.TB) (main, prefix string) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range l.Files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(text, "@DIR@", dir)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if l.Prefixed {
		prefix = dir
	}
	return filepath.Join(dir, l.Main), prefix
}

// WodbyWWW is wodby's pool file: a [ping] pool before [www], which listens on every address.
const WodbyWWW = `[global]
error_log = /proc/self/fd/2
log_level = notice

[ping]
listen = 127.0.0.1:9001
user = www-data
pm = static
pm.max_children = 1
ping.path = /ping

[www]
listen = [::]:9000
pm = dynamic
pm.max_children = 8
pm.start_servers = 2
pm.min_spare_servers = 1
pm.max_spare_servers = 3
pm.max_requests = 500
listen.backlog = -1
pm.status_path = /status
php_admin_value[memory_limit] = "512M"
php_value[error_log] = /var/log/$pool.log
slowlog = /proc/self/fd/2 ; a comment
request_terminate_timeout = 5m
request_slowlog_timeout = 10s
`

// LaradockPool is laradock's pool file, read after the image's own: it sets pm again.
const LaradockPool = `[www]
listen = 0.0.0.0:9000
pm = ondemand
pm.max_children = 20
pm.process_idle_timeout = 10s
pm.max_requests = 500
`
