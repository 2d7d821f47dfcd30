package stack

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/workloads"
)

var apacheServers = []string{ServerApacheFPM, ServerApacheModPHP}

// TestApacheServesTheDemo: each Apache shape serves the demo's routes as nginx does, from a config that names no
// system file, with the MPM it is meant to run; Stop leaves no process, socket or directory.
func TestApacheServesTheDemo(t *testing.T) {
	for _, server := range apacheServers {
		t.Run(server, func(t *testing.T) {
			runDir := filepath.Join(t.TempDir(), "run")
			cfg := Config{Server: server, RunDir: runDir}
			if server == ServerApacheFPM {
				cfg.Pools = []Pool{{Name: "p", Listen: ListenUnix}}
			}
			s := startDemo(t, cfg)
			if s.Server != server || s.HTTPServer() != "apache" {
				t.Fatalf("server %q (%q), want %s", s.Server, s.HTTPServer(), server)
			}
			checkDemoRoutes(t, s)
			conf, err := os.ReadFile(filepath.Join(runDir, "apache.conf"))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(conf), "/etc/") || !strings.Contains(string(conf), "LoadModule mpm_"+s.MPM.Name+"_module "+ApacheModules) {
				t.Errorf("apache.conf reads a system file or loads no %s MPM by path:\n%s", s.MPM.Name, conf)
			}
			noSystemConfig(t, runDir)
			wantMPM, wantPHP := MPMEvent, "php-fpm"
			if server == ServerApacheModPHP {
				wantMPM, wantPHP = MPMPrefork, "apache"
				if s.PID("php-fpm") != 0 || len(s.Pools) != 0 {
					t.Errorf("mod_php stack runs php-fpm (pid %d, pools %v)", s.PID("php-fpm"), s.Pools)
				}
			}
			if s.MPM.Name != wantMPM || s.PHP() != wantPHP {
				t.Errorf("MPM %s, PHP in %s: want %s, %s", s.MPM.Name, s.PHP(), wantMPM, wantPHP)
			}
			groups := s.Groups()
			sock := ""
			if len(s.Pools) > 0 {
				sock = s.Pools[0].Address
			}
			if err := s.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			for name, pg := range groups {
				if left := groupPIDs(t, pg); len(left) > 0 {
					t.Errorf("%s: processes left after Stop: %v", name, left)
				}
			}
			for _, p := range []string{sock, s.PrivDir} {
				if _, err := os.Stat(p); p != "" && !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s still there after Stop (%v)", p, err)
				}
			}
		})
	}
}

// noSystemConfig reads Apache's config as the stack's Apache reads it (apache2 -t under strace): no file of
// /etc/apache2 is opened.
func noSystemConfig(t *testing.T, runDir string) {
	t.Helper()
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Fatalf("strace: %v (make deps installs it)", err)
	}
	bin, err := FindApache("")
	if err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(t.TempDir(), "trace")
	out, err := exec.Command(strace, "-f", "-e", "trace=open,openat,stat,newfstatat", "-o", trace, bin, "-t",
		"-f", filepath.Join(runDir, "apache.conf"), "-d", runDir).CombinedOutput()
	if err != nil {
		t.Fatalf("apache2 -t: %v\n%s", err, out)
	}
	data, _ := os.ReadFile(trace)
	if n := strings.Count(string(data), "\n"); n < 10 || !strings.Contains(string(data), ApacheModules) {
		t.Fatalf("the trace of apache2 -t holds %d lines and no module: not a trace", n)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, "/etc/apache2") {
			t.Errorf("Apache reads its system config: %s", l)
		}
	}
}

// iniProbe prints what PHP runs with: the settings that differ between PHP's built-in defaults and Debian's
// production php.ini, the extensions and where the ini files came from.
const iniProbe = `<?php
$keys = ["memory_limit", "output_buffering", "zend.assertions", "variables_order", "error_reporting", "display_errors",
    "max_execution_time", "post_max_size", "opcache.enable", "opcache.memory_consumption", "session.gc_probability",
    "short_open_tag", "realpath_cache_size", "opcache.jit"];
$ini = [];
foreach ($keys as $k) { $ini[$k] = ini_get($k); }
$ext = get_loaded_extensions(); sort($ext);
echo json_encode(["sapi" => PHP_SAPI, "ini" => $ini, "ext" => $ext, "file" => php_ini_loaded_file(),
    "scanned" => php_ini_scanned_files()]);`

// TestModPHPReadsTheSameBaseline: mod_php runs with the php.ini php-fpm gets (Debian's shipped
// php.ini-production and module inis, from the run dir, never /etc/php), the same extensions, and the
// configuration's settings: master-level ones (php-fpm's -d) and per-pool ones (php_admin_value).
func TestModPHPReadsTheSameBaseline(t *testing.T) {
	app := t.TempDir()
	os.WriteFile(filepath.Join(app, "index.php"), []byte(iniProbe), 0o644)
	defines := map[string]string{"opcache.memory_consumption": "96"}
	values := map[string]string{"memory_limit": "96M", "opcache.jit": "off"}
	type probe struct {
		SAPI    string
		INI     map[string]string
		Ext     []string
		File    string
		Scanned string
	}
	read := func(cfg Config) probe {
		cfg.App, cfg.Defines = app, defines
		s := startDemo(t, cfg)
		var p probe
		if err := json.Unmarshal([]byte(get(t, s.HTTPURL)), &p); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(p.File, s.RunDir) || strings.Contains(p.Scanned, "/etc/php") {
			t.Errorf("%s reads %s and %q: want the run dir's php.ini and conf.d", p.SAPI, p.File, p.Scanned)
		}
		s.Stop(context.Background())
		return p
	}
	fpm := read(Config{Pools: []Pool{{Name: "p", Listen: ListenUnix, AdminValues: values}}})
	mod := read(Config{Server: ServerApacheModPHP, PHPValues: values})
	if fpm.SAPI != "fpm-fcgi" || mod.SAPI != "apache2handler" {
		t.Fatalf("SAPIs %s and %s: want fpm-fcgi and apache2handler", fpm.SAPI, mod.SAPI)
	}
	for k, v := range fpm.INI {
		if mod.INI[k] != v {
			t.Errorf("%s: php-fpm %q, mod_php %q", k, v, mod.INI[k])
		}
	}
	if fpm.INI["memory_limit"] != "96M" || fpm.INI["opcache.memory_consumption"] != "96" || fpm.INI["output_buffering"] != "4096" {
		t.Errorf("php-fpm's settings are not Debian's production ones with the configuration's: %v", fpm.INI)
	}
	// Each SAPI lists itself as an extension: cgi-fcgi, apache2handler.
	sapi := func(ext []string) string {
		var out []string
		for _, e := range ext {
			if e != "cgi-fcgi" && e != "apache2handler" {
				out = append(out, e)
			}
		}
		return strings.Join(out, ",")
	}
	if sapi(fpm.Ext) != sapi(mod.Ext) || len(fpm.Ext) < 10 {
		t.Errorf("extensions differ:\nphp-fpm %v\nmod_php %v", fpm.Ext, mod.Ext)
	}
}

// TestApacheBadInput: what Apache cannot run is refused before anything starts, with the exit code that says so.
func TestApacheBadInput(t *testing.T) {
	for name, c := range map[string]struct {
		cfg  Config
		code int
	}{
		"mod_php with pools":    {Config{Server: ServerApacheModPHP, Pools: DefaultPools()}, exitcode.Usage},
		"unknown server":        {Config{Server: "lighttpd"}, exitcode.Usage},
		"mod_php, FastCGI only": {Config{Server: ServerApacheModPHP, NoNginx: true}, exitcode.Usage},
		"bad MPM":               {Config{Server: ServerApacheFPM, MPM: MPM{Name: "worker"}}, exitcode.Usage},
		"apache not found":      {Config{Server: ServerApacheFPM, Apache: "/nonexistent/apache2"}, exitcode.Usage},
	} {
		c.cfg.AppFS = workloads.Demo()
		before := owners()
		_, err := Start(context.Background(), c.cfg)
		if exitcode.Of(err) != c.code {
			t.Errorf("%s: err = %v (code %d), want code %d", name, err, exitcode.Of(err), c.code)
		}
		for d, pid := range owners() {
			if _, old := before[d]; !old && pid == os.Getpid() {
				t.Errorf("%s: private dir %s made for input refused", name, d)
			}
		}
	}
}

// TestApacheSyntaxErrorSaysWhy: a php_admin_value Apache cannot parse fails the start with Apache's own words,
// and leaves nothing running.
func TestApacheSyntaxErrorSaysWhy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := Start(ctx, Config{AppFS: workloads.Demo(), Server: ServerApacheModPHP, MPM: MPM{MaxRequestWorkers: 1},
		PHPValues: map[string]string{"bad name": "1"}})
	if err == nil || !strings.Contains(err.Error(), "apache") {
		t.Fatalf("err = %v, want Apache's complaint", err)
	}
	t.Logf("the error: %v", err)
}

// TestMPMDirectives: Debian's defaults, bounded by MaxRequestWorkers; limits raised where a size needs it.
func TestMPMDirectives(t *testing.T) {
	for _, c := range []struct {
		m    MPM
		want string
	}{
		{MPM{Name: MPMPrefork}, "StartServers 5|MinSpareServers 5|MaxSpareServers 10|MaxRequestWorkers 150|MaxConnectionsPerChild 0"},
		{MPM{Name: MPMPrefork, MaxRequestWorkers: 3}, "StartServers 3|MinSpareServers 3|MaxSpareServers 3|MaxRequestWorkers 3|MaxConnectionsPerChild 0"},
		{MPM{Name: MPMPrefork, MaxRequestWorkers: 300}, "StartServers 5|MinSpareServers 5|MaxSpareServers 10|ServerLimit 300|MaxRequestWorkers 300|MaxConnectionsPerChild 0"},
		{MPM{}, "StartServers 2|MinSpareThreads 25|MaxSpareThreads 75|ThreadsPerChild 25|MaxRequestWorkers 150|MaxConnectionsPerChild 0"},
		{MPM{MaxRequestWorkers: 500}, "StartServers 2|MinSpareThreads 25|MaxSpareThreads 75|ThreadsPerChild 25|ServerLimit 20|MaxRequestWorkers 500|MaxConnectionsPerChild 0"},
	} {
		server := ServerApacheFPM
		if c.m.Name == MPMPrefork {
			server = ServerApacheModPHP
		}
		if got := strings.Join(c.m.WithDefaults(server).Directives(), "|"); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.m, got, c.want)
		}
	}
	if got := PHPValueLines(map[string]string{"error_log": "/var/log/php errors.log", "memory_limit": "256M"}); strings.Join(got, "|") !=
		`php_admin_value error_log "/var/log/php errors.log"|php_admin_value memory_limit 256M` {
		t.Errorf("php_admin_value lines: %q", got)
	}
}
