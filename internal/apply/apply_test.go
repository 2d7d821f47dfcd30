package apply

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stack"
)

const version = "8.2"

// debianRoot copies Debian's shipped configuration of php-fpm and nginx (/etc/php/8.2, /etc/nginx) into a
// temporary root, its absolute paths (includes, symlinks, php-fpm's pid and log) pointing into the copy. The
// package's conffiles are first checked against dpkg's checksums: the test is about Debian's files as shipped.
func debianRoot(t *testing.T) string {
	t.Helper()
	for _, bin := range []string{"php-fpm" + version, "nginx", "dpkg-query", "patch"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s not found: install Debian's php%s-fpm, nginx and patch (make deps does)", bin, version)
		}
	}
	shipped(t, "php"+version+"-fpm", "/etc/php/"+version+"/fpm/")
	shipped(t, "nginx-common", "/etc/nginx/")
	root := t.TempDir()
	for _, dir := range []string{"/etc/php/" + version, "/etc/nginx"} {
		copyTree(t, dir, root)
	}
	rewrite(t, filepath.Join(root, "etc/php", version, "fpm/php-fpm.conf"), map[string]string{
		"include=/etc/": "include=" + root + "/etc/",
		"pid = /run/":   "pid = " + root + "/",
		"error_log = /var/log/php" + version + "-fpm.log": "error_log = " + root + "/php-fpm.log",
	})
	rewrite(t, filepath.Join(root, "etc/nginx/nginx.conf"), map[string]string{"/etc/nginx/": root + "/etc/nginx/"})
	return root
}

// shipped fails unless the package's conffiles under dir are as the package installed them.
func shipped(t *testing.T, pkg, dir string) {
	t.Helper()
	out, err := exec.Command("dpkg-query", "-W", "-f=${Conffiles}", pkg).Output()
	if err != nil {
		t.Fatalf("dpkg-query %s: %v", pkg, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[0], dir) {
			continue
		}
		b, err := os.ReadFile(f[0])
		if err != nil {
			t.Fatal(err)
		}
		if sum := md5.Sum(b); hex.EncodeToString(sum[:]) != f[1] {
			t.Fatalf("%s differs from what %s shipped: the test needs Debian's files (apt-get install --reinstall -o Dpkg::Options::=--force-confask %s)", f[0], pkg, pkg)
		}
	}
}

// copyTree copies dir to root+dir; a symlink to an absolute path under /etc/ points into root.
func copyTree(t *testing.T, dir, root string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(root, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if strings.HasPrefix(target, "/etc/") {
				target = filepath.Join(root, target)
			}
			return os.Symlink(target, dst)
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func rewrite(t *testing.T, path string, repl map[string]string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for from, to := range repl {
		if !strings.Contains(s, from) {
			t.Fatalf("%s has no %q", path, from)
		}
		s = strings.ReplaceAll(s, from, to)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// enablePHP turns on the PHP location Debian's default site ships commented out, passing to the starting
// pool's socket: what a server that serves PHP already has before it applies the files.
func enablePHP(t *testing.T, root, socket string) string {
	t.Helper()
	site := filepath.Join(root, "etc/nginx/sites-available/default")
	s := read(t, site)
	block := regexp.MustCompile(`(?s)\n\s*#location ~ \\\.php\$ \{.*?\n\s*#\}`)
	if !block.MatchString(s) {
		t.Fatalf("Debian's default site has no commented PHP location:\n%s", s)
	}
	s = block.ReplaceAllLiteralString(s, "\n\tlocation ~ \\.php$ {\n\t\tinclude snippets/fastcgi-php.conf;\n\t\tfastcgi_pass unix:"+socket+";\n\t}")
	if err := os.WriteFile(site, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return site
}

// applySite does what the plan's site step says: its lines take the place of the location's fastcgi_pass.
func applySite(t *testing.T, site string, p *Plan) {
	t.Helper()
	s := read(t, site)
	pass := regexp.MustCompile(`(?m)^\s*fastcgi_pass [^;]+;`)
	if n := len(pass.FindAllString(s, -1)); n != 1 {
		t.Fatalf("%d fastcgi_pass lines in the site", n)
	}
	s = pass.ReplaceAllLiteralString(s, "\t\t"+strings.Join(p.Site, "\n\t\t"))
	if err := os.WriteFile(site, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// serversAccept runs php-fpm -t and nginx -t on the copy, as the plan's check step does on the server.
func serversAccept(t *testing.T, root string) {
	t.Helper()
	etc := filepath.Join(root, "etc/php", version, "fpm")
	fpm := exec.Command("php-fpm"+version, "-t", "-y", filepath.Join(etc, "php-fpm.conf"), "-c", filepath.Join(etc, "php.ini"))
	fpm.Env = append(os.Environ(), "PHP_INI_SCAN_DIR="+filepath.Join(etc, "conf.d"))
	out, err := fpm.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "test is successful") || regexp.MustCompile(`(?i)warning|error`).Match(out) {
		t.Errorf("php-fpm%s -t: %v\n%s", version, err, out)
	}
	ngx := exec.Command("nginx", "-t", "-p", "/usr/share/nginx/", "-c", filepath.Join(root, "etc/nginx/nginx.conf"), "-e", filepath.Join(root, "nginx-error.log"))
	if out, err := ngx.CombinedOutput(); err != nil || !strings.Contains(string(out), "test is successful") {
		t.Errorf("nginx -t: %v\n%s", err, out)
	}
}

// settingsOf are a file's active settings, key to value (a pool file's php_*value[k] as k).
func settingsOf(text string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		k, v, com, ok := keyOf(l)
		if !ok || com {
			continue
		}
		if i := strings.IndexByte(k, '['); i > 0 && strings.HasPrefix(k, "php_") {
			k = k[i+1 : len(k)-1]
		}
		m[k] = v
	}
	return m
}

// changed are the settings whose value differs from before to after ("" for one no longer set).
func changed(before, after string) map[string]string {
	b, a := settingsOf(before), settingsOf(after)
	out := map[string]string{}
	for k, v := range a {
		if b[k] != v {
			out[k] = v
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out[k] = ""
		}
	}
	return out
}

// diffLines are the lines a diff adds and removes, comments and blank lines aside.
func diffLines(diff string) []string {
	var out []string
	for _, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---") || !(strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) {
			continue
		}
		if s := strings.TrimSpace(l[1:]); s != "" && !strings.HasPrefix(s, ";") && !strings.HasPrefix(s, "#") {
			out = append(out, l)
		}
	}
	return out
}

// Pasting the three files into a copy of Debian's shipped configuration as the plan says: php-fpm -t and
// nginx -t pass, nginx passes to the pool's own socket, the diffs show only what tune changed, and every
// setting is written once. Recommendations that change everything tune decides, by cp and by patch.
func TestApplyOnDebiansFiles(t *testing.T) {
	// The preload script is read by the master as www-data: a docroot it can read, as on a server.
	docroot := t.TempDir()
	for _, d := range []string{filepath.Dir(docroot), docroot} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(docroot, "preload.php"), []byte("<?php\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	everything := knob.Debian()
	for name, v := range map[string]string{"pm": "static", "max_children": "8", "keepalive": "on", "backlog": "4096", "jit": "tracing",
		"preload": "on", "opcache_memory": "256/16/20000", "validate_timestamps": "off", "max_requests": "500", "fastcgi_buffers": "16 16k"} {
		set(t, &everything, name, v)
	}
	tcp := knob.Debian()
	for name, v := range map[string]string{"listen": "tcp", "pm": "ondemand", "max_children": "6"} {
		set(t, &tcp, name, v)
	}
	// The user's own files (--from-pool, --from-ini): a pool of another name on its own socket, settings in both.
	yourPool := "; my pool\n[app]\nuser = www-data\ngroup = www-data\nlisten = /run/php/app.sock\nlisten.owner = www-data\n" +
		"listen.group = www-data\npm = dynamic\npm.max_children = 20\npm.start_servers = 4\npm.min_spare_servers = 2\n" +
		"pm.max_spare_servers = 6\nphp_admin_value[memory_limit] = 256M\nphp_value[opcache.jit] = tracing\n"
	yourINI := "; my settings\nopcache.memory_consumption = 128\nopcache.interned_strings_buffer = 8\nopcache.max_accelerated_files = 10000\n" +
		"opcache.jit_buffer_size = 32M\n"
	yours := knob.Debian()
	if err := yours.FromPoolText("app.conf", yourPool); err != nil {
		t.Fatal(err)
	}
	if err := yours.FromINIText("90-app.ini", yourINI); err != nil {
		t.Fatal(err)
	}
	yoursTuned := yours.Clone()
	for name, v := range map[string]string{"max_children": "8", "jit": "off", "opcache_memory": "256/16/20000"} {
		set(t, &yoursTuned, name, v)
	}
	for _, tc := range []struct {
		name          string
		rec           knob.Config
		pool, ini     string // the user's files ("": Debian's pool, no ini file)
		socket, named string // where the pool listens and its name, kept
		patch         bool
	}{
		{name: "everything by cp", rec: everything, socket: DebianSocket(version), named: "www"},
		{name: "tcp by patch", rec: tcp, socket: "127.0.0.1:9000", named: "www", patch: true},
		{name: "nothing changed", rec: knob.Debian(), socket: DebianSocket(version), named: "www"},
		{name: "your files by patch", rec: yoursTuned, pool: yourPool, ini: yourINI, socket: "/run/php/app.sock", named: "app", patch: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := debianRoot(t)
			start := Start{Pool: File{Path: DebianPool(version)}}
			if tc.pool != "" {
				start.Pool.Path = "/etc/php/" + version + "/fpm/pool.d/app.conf"
				start.INI = File{Path: "/etc/php/" + version + "/fpm/conf.d/90-app.ini", Text: tc.ini}
				for _, f := range []File{{start.Pool.Path, tc.pool}, start.INI} {
					if err := os.WriteFile(filepath.Join(root, f.Path), []byte(f.Text), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			start.Pool.Text = read(t, filepath.Join(root, start.Pool.Path))
			p, err := Make(tc.rec, start, Target{Version: version, Workers: 2, Docroot: docroot}, []string{"phptune test"})
			if err != nil {
				t.Fatal(err)
			}
			if p.Pool != tc.named || p.Listen != tc.socket {
				t.Errorf("pool [%s] on %s, want [%s] on %s", p.Pool, p.Listen, tc.named, tc.socket)
			}
			site := enablePHP(t, root, settingsOf(start.Pool.Text)["listen"])
			if tc.patch {
				diff := filepath.Join(t.TempDir(), DiffName)
				if err := os.WriteFile(diff, []byte(p.Diffs()), 0o644); err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command("patch", "-d", root, "-p1", "-b", "-i", diff)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("patch: %v\n%s", err, out)
				}
			} else {
				for _, f := range p.Files {
					if err := os.WriteFile(filepath.Join(root, f.Dest), []byte(f.Text), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, f := range p.Files {
				if got := read(t, filepath.Join(root, f.Dest)); got != f.Text {
					t.Errorf("%s in place differs from the plan's %s", f.Dest, f.Name)
				}
			}
			applySite(t, site, p)
			serversAccept(t, root)
			checkSocket(t, root, p, tc.socket)
			checkOnlyTunesChanges(t, p, start, tc.rec, docroot)
		})
	}
}

// checkSocket: the pool in place listens on socket (the start's, unless the recommendation moved it), and
// nginx's upstream passes there.
func checkSocket(t *testing.T, root string, p *Plan, socket string) {
	t.Helper()
	listen := settingsOf(read(t, filepath.Join(root, p.Files[0].Dest)))["listen"]
	up := regexp.MustCompile(`server (\S+);`).FindStringSubmatch(read(t, filepath.Join(root, p.Files[2].Dest)))
	want := socket
	if strings.HasPrefix(want, "/") {
		want = "unix:" + want
	}
	if listen != socket || up == nil || up[1] != want {
		t.Errorf("the pool listens on %s and nginx passes to %v; want both on %s", listen, up, socket)
	}
}

// checkOnlyTunesChanges: the settings the files change are exactly those the recommendation changes from the
// start, each in one file, and the diffs have a setting line for each and no other.
func checkOnlyTunesChanges(t *testing.T, p *Plan, start Start, rec knob.Config, docroot string) {
	t.Helper()
	base := knob.Debian()
	if err := base.FromPoolText("start", start.Pool.Text); err != nil {
		t.Fatal(err)
	}
	if err := base.FromINIText("start", start.INI.Text); err != nil {
		t.Fatal(err)
	}
	want := wantChanges(rec, base, p.Files[0].Text, docroot)
	if _, ok := settingsOf(start.Pool.Text)["pm.status_path"]; !ok {
		want["pm.status_path"] = "/fpm-status" // a status page for phptune check, where the start has none
	}
	got := changed(start.Pool.Text, p.Files[0].Text)
	for k, v := range changed(start.INI.Text, p.Files[1].Text) {
		got[k] = v
	}
	if !sameMap(got, want) {
		t.Errorf("the files change %v; tune changed %v", got, want)
	}
	pool, ini := settingsOf(p.Files[0].Text), settingsOf(p.Files[1].Text)
	for k := range ini {
		if _, ok := pool[k]; ok {
			t.Errorf("%s is set in the pool and in the ini file", k)
		}
	}
	// A setting changed in place is a - and a + line; one added or commented out, one line.
	lines := 0
	for k := range want {
		_, was := settingsOf(start.Pool.Text + start.INI.Text)[k]
		lines++
		if was && want[k] != "" {
			lines++
		}
	}
	if n := len(diffLines(p.Diffs())) - len(diffLines(p.Files[2].Diff)); n != lines {
		t.Errorf("the diffs have %d setting lines for %d changes:\n%s", n, len(want), p.Diffs())
	}
}

// wantChanges are what tune changed, from the configurations alone: the pool's directives and PHP's
// settings that differ between rec and base (the docroot as in the pool written), the listen address
// when the transport changed, and the preload's user.
func wantChanges(rec, base knob.Config, pool, docroot string) map[string]string {
	kv := func(c knob.Config) map[string]string {
		m := map[string]string{}
		for _, d := range c.Pool("www").Directives() {
			k, v, _ := strings.Cut(d, " = ")
			if i := strings.IndexByte(k, '['); i > 0 {
				k = k[i+1 : len(k)-1]
			}
			m[k] = v
		}
		for k, v := range c.Defines {
			m[k] = v
		}
		if c.Defines["opcache.preload"] != "" {
			m["opcache.preload_user"] = "www-data"
		}
		return m
	}
	r, b := kv(rec), kv(base)
	out := map[string]string{}
	for k, v := range r {
		if b[k] != v {
			out[k] = v
		}
	}
	for k := range b {
		if _, ok := r[k]; !ok && !strings.HasPrefix(k, "pm.") {
			out[k] = ""
		}
	}
	if v, ok := out["opcache.preload"]; ok {
		out["opcache.preload"] = strings.ReplaceAll(v, "${DOCROOT}", docroot)
	}
	if rec.Listen != base.Listen {
		out["listen"] = settingsOf(pool)["listen"]
	}
	return out
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func set(t *testing.T, c *knob.Config, name, v string) {
	t.Helper()
	k, ok := knob.ByName(name)
	if name == "preload" {
		k, ok = knob.Preload("preload.php"), true
	}
	if !ok {
		t.Fatalf("no knob %s", name)
	}
	if err := k.Set(c, v); err != nil {
		t.Fatal(err)
	}
}

// The files pass the checks tune runs before it writes them (php-fpm -t on the pool, nginx -t on the upstream
// with the location's lines), for configurations that change every part; and the checks can fail.
func TestFilesPassTheServersChecks(t *testing.T) {
	fpm, err := stack.FindPHPFPM("")
	if err != nil {
		t.Fatal(err)
	}
	ngx, err := stack.FindNginx("")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []knob.Config{knob.Debian(), knob.RuleOfThumb(2),
		{PM: "ondemand", MaxChildren: 32, Listen: "tcp", Keepalive: true, MaxRequests: 500, Backlog: 4096, INI: map[string]string{"opcache.enable": "1", "opcache.jit": "tracing"},
			Defines:        map[string]string{"opcache.memory_consumption": "256", "opcache.preload": stack.DocrootVar + "/preload.php"},
			FastCGIBuffers: "16 16k", PHPFPM: "/usr/sbin/php-fpm8.2"}} {
		p, err := Make(c, Start{}, Target{Version: version, Workers: 2}, []string{"phptune test"})
		if err != nil {
			t.Fatal(err)
		}
		pool, ini, ngxConf := p.Files[0].Text, p.Files[1].Text, p.Files[2].Text
		if err := stack.CheckFPMPool(context.Background(), fpm, pool); err != nil {
			t.Errorf("%s: %v\n%s", c, err, pool)
		}
		if err := stack.CheckNginxUpstream(context.Background(), ngx, ngxConf, c.Location()); err != nil {
			t.Errorf("%s: %v\n%s", c, err, ngxConf)
		}
		if !strings.Contains(pool, "pm.max_children = ") || !strings.HasPrefix(ini, "; phptune test") {
			t.Errorf("files:\n%s\n%s", pool, ini)
		}
	}
	if err := stack.CheckFPMPool(context.Background(), fpm, "[www]\npm = lazy\n"); err == nil {
		t.Error("php-fpm -t accepted pm = lazy")
	}
	if err := stack.CheckNginxUpstream(context.Background(), ngx, "upstream php { server; }", nil); err == nil {
		t.Error("nginx -t accepted a broken upstream")
	}
}

// nginx reaches a pool where php-fpm listens: a socket (its $pool named), or a port on every address by loopback.
func TestUpstreamAddr(t *testing.T) {
	for listen, want := range map[string]string{"/run/php/php8.2-fpm.sock": "unix:/run/php/php8.2-fpm.sock",
		"/run/php/php8.2-fpm-$pool.sock": "unix:/run/php/php8.2-fpm-app.sock", "9000": "127.0.0.1:9000",
		"0.0.0.0:9001": "127.0.0.1:9001", "[::]:9002": "[::1]:9002", "127.0.0.1:9003": "127.0.0.1:9003"} {
		if got := upstreamAddr(listen, "app"); got != want {
			t.Errorf("listen = %s: nginx passes to %s, want %s", listen, got, want)
		}
	}
}
