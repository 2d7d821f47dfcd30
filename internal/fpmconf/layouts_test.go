package fpmconf

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/fpmconf/fpmtest"
)

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
func layouts(t *testing.T) map[string]fpmtest.Layout {
	docker := fpmtest.Docker(t)
	return map[string]fpmtest.Layout{
		"docker": docker,
		// A value appended twice to the last file: the last wins.
		"docker appended twice": docker.With(map[string]string{"etc/php-fpm.d/zz-docker.conf": "pm.max_children = 9\npm.max_children = 11\n" +
			"php_admin_value[memory_limit] = 64M\nphp_admin_value[memory_limit] = 128M\n"}),
		"wodby":                   docker.With(map[string]string{"etc/php-fpm.d/zz-www.conf": fpmtest.WodbyWWW}),
		"laradock":                docker.With(map[string]string{"etc/php-fpm.d/xlaravel.pool.conf": fpmtest.LaradockPool}),
		"two pools, global after": fpmtest.Single(twoPools),
		"debian": {Main: "php-fpm.conf", Files: map[string]string{
			"php-fpm.conf":     strings.Replace(fpmtest.ReadFile(t, fpmtest.DebianMain), "/etc/php/8.2/fpm/pool.d/", "@DIR@/pool.d/", 1),
			"pool.d/www.conf":  fpmtest.ReadFile(t, fpmtest.DebianPool),
			"pool.d/www.conf~": "[www]\npm.max_children = 99\n", // not *.conf: not read
		}},
		// A file without a section goes on in its includer's, and its includer in the one it ended in.
		"sections across files": {Main: "main.conf", Prefixed: true, Files: map[string]string{
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
			main, prefix := l.Lay(t)
			c, err := Read(main, Options{Prefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			compareDump(t, c, fpmDump(t, main, prefix))
		})
	}
}
