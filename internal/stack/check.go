package stack

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// CheckFPMPool runs `php-fpm -t` on a pool section (a real installation's file, as tune writes it), inside a
// throw-away global configuration.
func CheckFPMPool(ctx context.Context, fpmBin, pool string) error {
	dir, err := os.MkdirTemp("", "phptune-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	conf := filepath.Join(dir, "php-fpm.conf")
	global := fmt.Sprintf("[global]\npid = %s/fpm.pid\nerror_log = %s/fpm.log\n\n", dir, dir)
	if err := os.WriteFile(conf, []byte(global+pool), 0o644); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, fpmBin, "-t", "-y", conf, "-p", dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("php-fpm -t rejects the pool: %s", lastLines(string(out), 3))
	}
	return nil
}

// CheckNginxUpstream runs `nginx -t` on an upstream snippet placed in a minimal configuration that passes PHP
// requests to it with the given location directives (fastcgi_keep_conn on, fastcgi_buffers 16 16k...).
func CheckNginxUpstream(ctx context.Context, nginxBin, upstream string, location []string) error {
	dir, err := os.MkdirTemp("", "phptune-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	keep := ""
	for _, d := range location {
		keep += d + "; "
	}
	name := "php" // the location passes to the snippet's upstream
	if m := upstreamName.FindStringSubmatch(upstream); m != nil {
		name = m[1]
	}
	conf := fmt.Sprintf("pid %s/nginx.pid;\nerror_log %s/error.log;\nevents {}\nhttp {\n%s\nserver { listen 127.0.0.1:1; location ~ \\.php$ { fastcgi_pass %s; %s} }\n}\n",
		dir, dir, upstream, name, keep)
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, nginxBin, "-t", "-q", "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("nginx -t rejects the upstream: %s", lastLines(string(out), 3))
	}
	return nil
}

var upstreamName = regexp.MustCompile(`(?m)^\s*upstream\s+([A-Za-z0-9_.-]+)\s*\{`)

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}
