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

// CheckApacheSite runs `apache2 -t` on a site and an MPM snippet (a real installation's files, as tune writes
// them) inside a throw-away config that loads the modules they need from ApacheModules.
func CheckApacheSite(ctx context.Context, apacheBin string, modPHP bool, site, mpm string) error {
	dir, err := os.MkdirTemp("", "phptune-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	m := MPM{Name: MPMEvent}
	libphp := ""
	if modPHP {
		m.Name, libphp = MPMPrefork, "libphp8.2.so"
		if found, _ := filepath.Glob(filepath.Join(ApacheModules, "libphp*.so")); len(found) > 0 {
			libphp = filepath.Base(found[len(found)-1])
		}
	}
	conf := renderApache(apacheVars{RunDir: dir, RuntimeDir: dir, Docroot: dir, Front: "index.php", Port: 1, MPM: m.WithDefaults(""),
		Modules: apacheModules(m, libphp)})
	// The snippets' own MPM block and site replace the throw-away config's.
	conf = conf[:strings.Index(conf, "StartServers")] + mpm + "\n" + site
	path := filepath.Join(dir, "apache.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, apacheBin, "-t", "-f", path, "-d", dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("apache2 -t rejects the site: %s", lastLines(string(out), 3))
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

// CheckNginxSite runs `nginx -t` on the user's site as changed and the upstream it passes to, in an http block
// of their own: what nginx reads of them on the server. The site's relative include lines are taken from
// confDir (/etc/nginx), whose files the check's directory links to.
func CheckNginxSite(ctx context.Context, nginxBin, confDir, upstream, site string) error {
	dir, err := os.MkdirTemp("", "phptune-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	entries, err := os.ReadDir(confDir)
	if err != nil {
		return fmt.Errorf("nginx's configuration directory: %w", err)
	}
	for _, e := range entries {
		if e.Name() != "nginx.conf" {
			if err := os.Symlink(filepath.Join(confDir, e.Name()), filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	conf := fmt.Sprintf("pid %s/nginx.pid;\nerror_log %s/error.log;\nevents {}\nhttp {\ninclude %s/phptune-upstream.conf;\ninclude %s/phptune-site.conf;\n}\n",
		dir, dir, dir, dir)
	for name, text := range map[string]string{"nginx.conf": conf, "phptune-upstream.conf": upstream, "phptune-site.conf": site} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	out, err := exec.CommandContext(ctx, nginxBin, "-t", "-q", "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", filepath.Join(dir, "nginx.conf")).CombinedOutput()
	if err != nil {
		return fmt.Errorf("nginx -t rejects the site with its upstream: %s", lastLines(string(out), 3))
	}
	return nil
}
