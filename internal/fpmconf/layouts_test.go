package fpmconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Debian's files, as php8.2-fpm installs them.
const (
	debianMain = "/etc/php/8.2/fpm/php-fpm.conf"
	debianPool = "/etc/php/8.2/fpm/pool.d/www.conf"
)

// layout is a php-fpm configuration laid out in a directory: files by path relative to it, the main file,
// and whether php-fpm runs with -p DIR (relative includes taken from it).
type layout struct {
	files    map[string]string
	main     string
	prefixed bool
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("(needs php8.2-fpm: make deps) %v", err)
	}
	return string(b)
}

// dockerLayout is the official image's: php-fpm.conf (upstream's, which Debian's is too) including
// etc/php-fpm.d/*.conf relative to the prefix; www.conf, docker.conf and zz-docker.conf as its Dockerfile
// writes them.
func dockerLayout(t *testing.T) layout {
	main := strings.Replace(readFile(t, debianMain), "include=/etc/php/8.2/fpm/pool.d/*.conf", "include=etc/php-fpm.d/*.conf", 1)
	main = strings.Replace(main, "pid = /run/php/php8.2-fpm.pid", ";pid = run/php-fpm.pid", 1)
	www := strings.Replace(readFile(t, debianPool), "listen = /run/php/php8.2-fpm.sock", "listen = 127.0.0.1:9000", 1)
	return layout{main: "etc/php-fpm.conf", prefixed: true, files: map[string]string{
		"etc/php-fpm.conf":       main,
		"etc/php-fpm.d/www.conf": www,
		"etc/php-fpm.d/docker.conf": "[global]\nerror_log = /proc/self/fd/2\n\n; https://github.com/docker-library/php/pull/725#issuecomment-443540114\n" +
			"log_limit = 8192\n\n[www]\n; php-fpm closes STDOUT on startup, so sending logs to /proc/self/fd/1 does not work.\n" +
			"access.log = /proc/self/fd/2\n\nclear_env = no\n\n; Ensure worker stdout and stderr are sent to the main error log.\n" +
			"catch_workers_output = yes\ndecorate_workers_output = no\n",
		"etc/php-fpm.d/zz-docker.conf": "[global]\ndaemonize = no\n\n[www]\nlisten = 9000\n",
	}}
}

// with adds files to a layout (a copy).
func (l layout) with(files map[string]string) layout {
	out := l
	out.files = map[string]string{}
	for k, v := range l.files {
		out.files[k] = v
	}
	for k, v := range files {
		out.files[k] += v // a file already there is appended to, as echo >> does
	}
	return out
}

// single is a layout of one file.
func single(text string) layout {
	return layout{main: "php-fpm.conf", files: map[string]string{"php-fpm.conf": text}}
}

// lay writes the layout into a new directory: its main file and the prefix to read it with ("" for none).
func (l layout) lay(t *testing.T) (main, prefix string) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range l.files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(text, "@DIR@", dir)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if l.prefixed {
		prefix = dir
	}
	return filepath.Join(dir, l.main), prefix
}

const wodbyWWW = `[global]
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

const laradockPool = `[www]
listen = 0.0.0.0:9000
pm = ondemand
pm.max_children = 20
pm.process_idle_timeout = 10s
pm.max_requests = 500
`

const twoPools = `[global]
error_log = @DIR@/error.log
[www]
user = nobody
listen = @DIR@/www.sock
pm = static
pm.max_children = 4
[api]
user = nobody
listen = 127.0.0.1:9100
pm = ondemand
pm.max_children = 16
pm.process_idle_timeout = 30s
listen.backlog = -1
env[POOL] = $pool
php_flag[display_errors] = off
php_admin_flag[log_errors] = On
php_value[include_path] = ".:/usr/share/php"
php_value[date.timezone] = 'Europe/Paris'
php_value[date.timezone] = UTC
env[POOL] = again
[global]
log_level = debug
emergency_restart_interval = 1m
rlimit_core = unlimited
`

// layouts are the configurations the reader is checked on against php-fpm.
func layouts(t *testing.T) map[string]layout {
	docker := dockerLayout(t)
	return map[string]layout{
		"docker": docker,
		// A value appended twice to the last file: the last wins.
		"docker appended twice": docker.with(map[string]string{"etc/php-fpm.d/zz-docker.conf": "pm.max_children = 9\npm.max_children = 11\n" +
			"php_admin_value[memory_limit] = 64M\nphp_admin_value[memory_limit] = 128M\n"}),
		"wodby":                   docker.with(map[string]string{"etc/php-fpm.d/zz-www.conf": wodbyWWW}),
		"laradock":                docker.with(map[string]string{"etc/php-fpm.d/xlaravel.pool.conf": laradockPool}),
		"two pools, global after": single(twoPools),
		"debian": {main: "php-fpm.conf", files: map[string]string{
			"php-fpm.conf":     strings.Replace(readFile(t, debianMain), "/etc/php/8.2/fpm/pool.d/", "@DIR@/pool.d/", 1),
			"pool.d/www.conf":  readFile(t, debianPool),
			"pool.d/www.conf~": "[www]\npm.max_children = 99\n", // not *.conf: not read
		}},
		// A file without a section goes on in its includer's, and its includer in the one it ended in.
		"sections across files": {main: "main.conf", prefixed: true, files: map[string]string{
			"main.conf": "[global]\nerror_log = @DIR@/error.log\n[www]\nuser = nobody\nlisten = @DIR@/www.sock\npm = static\npm.max_children = 2\n" +
				"include = d/*.conf\npm.max_requests = 11\n",
			"d/a.conf": "pm.max_requests = 5\npm.max_children = 3\n",
			"d/b.conf": "[other]\nuser = nobody\nlisten = @DIR@/o.sock\npm = static\npm.max_children = 3\n",
		}},
	}
}

func TestReaderAgreesWithPHPFPM(t *testing.T) {
	for name, l := range layouts(t) {
		t.Run(name, func(t *testing.T) {
			main, prefix := l.lay(t)
			c, err := Read(main, Options{Prefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			compareDump(t, c, fpmDump(t, main, prefix))
		})
	}
}
