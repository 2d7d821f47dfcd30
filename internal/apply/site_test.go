package apply

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/knob"
)

// debianStart is the starting configuration of a copy of Debian's files (debianRoot): php-fpm.conf with its
// pools, and the default site.
func debianStart(t *testing.T, root string) Start {
	t.Helper()
	main := filepath.Join(root, "etc/php", version, "fpm/php-fpm.conf")
	site := filepath.Join(root, DebianSite)
	return Start{Pool: File{Path: main, Text: read(t, main)}, Site: File{Path: site, Text: read(t, site)}, NginxDir: filepath.Join(root, "etc/nginx")}
}

// patchRoot applies the plan's diff to the copy in root: the files in it by their paths, the new ones tune
// places (/etc/...) under root. It fails when patch leaves a FILE.orig.
func patchRoot(t *testing.T, root string, p *Plan) {
	t.Helper()
	diff := strings.ReplaceAll(p.Diffs(), "+++ b/etc/", "+++ b"+root+"/etc/")
	patchIn(t, diff)
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".orig") {
			t.Errorf("patch left %s", path)
		}
		return nil
	})
}

// nginxAccepts runs nginx -t on the copy's nginx.conf, which reads the site and conf.d from the copy.
func nginxAccepts(t *testing.T, root string) {
	t.Helper()
	ngx := exec.Command("nginx", "-t", "-p", "/usr/share/nginx/", "-c", filepath.Join(root, "etc/nginx/nginx.conf"), "-e", filepath.Join(root, "nginx-error.log"))
	if out, err := ngx.CombinedOutput(); err != nil || !strings.Contains(string(out), "test is successful") {
		t.Errorf("nginx -t: %v\n%s", err, out)
	}
}

// Debian's default site has no PHP location: the plan writes one for the app, with the front controller's
// try_files, and says so; nginx -t takes the site as patched.
func TestSiteWithoutPHPLocation(t *testing.T) {
	root := debianRoot(t)
	rec := knob.Debian()
	rec.Keepalive, rec.FastCGIBuffers = true, "16 16k"
	p, err := Make(rec, debianStart(t, root), Target{Version: version, Workers: 2, Docroot: "/srv/app", Front: "index.php"}, []string{"phptune test"})
	if err != nil {
		t.Fatal(err)
	}
	site := fileNamed(t, p, NginxSiteName).Text
	for _, want := range []string{"root /srv/app;", "try_files $uri /index.php$is_args$args;", "include snippets/fastcgi-php.conf;",
		"fastcgi_pass php_fpm_www;", "fastcgi_keep_conn on;", "fastcgi_buffers 16 16k;", "fastcgi_buffer_size 16k;"} {
		if n := activeLines(site, want); n != 1 {
			t.Errorf("the site has %q %d times:\n%s", want, n, site)
		}
	}
	if !strings.Contains(strings.Join(p.Notes, "\n"), "had no PHP location") {
		t.Errorf("no note says the site had no PHP location: %q", p.Notes)
	}
	patchRoot(t, root, p)
	nginxAccepts(t, root)
}

// A site whose PHP location sets some of the directives already: those get the new value in place, the others
// are added, its fastcgi_pass passes to the upstream, nothing is set twice; nginx -t takes it.
func TestSiteWithPHPLocation(t *testing.T) {
	root := debianRoot(t)
	site := enablePHP(t, root, DebianSocket(version))
	s := strings.Replace(read(t, site), "fastcgi_pass unix:", "fastcgi_buffers 8 8k;\n\t\tfastcgi_pass unix:", 1)
	if err := os.WriteFile(site, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := knob.Debian()
	rec.Keepalive, rec.FastCGIBuffers = true, "16 16k"
	p, err := Make(rec, debianStart(t, root), Target{Version: version, Workers: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := fileNamed(t, p, NginxSiteName).Text
	for _, d := range []string{"fastcgi_pass", "fastcgi_buffers", "fastcgi_buffer_size", "fastcgi_keep_conn"} {
		if n := len(regexp.MustCompile(`(?m)^\s*`+d+`\s`).FindAllString(out, -1)); n != 1 {
			t.Errorf("%s set %d times:\n%s", d, n, out)
		}
	}
	if !strings.Contains(out, "fastcgi_buffers 16 16k;") || !strings.Contains(out, "fastcgi_pass php_fpm_www;") || strings.Contains(out, "root /srv") {
		t.Errorf("the site:\n%s", out)
	}
	patchRoot(t, root, p)
	nginxAccepts(t, root)
}

func fileNamed(t *testing.T, p *Plan, name string) Out {
	t.Helper()
	for _, f := range p.Files {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("the plan has no %s: %v", name, p.Files)
	return Out{}
}

// activeLines counts the lines that are line, white space aside: comments do not count.
func activeLines(text, line string) int {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == line {
			n++
		}
	}
	return n
}

// TestSiteServing: of the files nginx -T prints, the one with a server whose root is the docroot serves the app;
// quotes and a trailing slash do not matter, a location's root in another site does not count for it.
func TestSiteServing(t *testing.T) {
	dump := `nginx: the configuration file /etc/nginx/nginx.conf syntax is ok
# configuration file /etc/nginx/nginx.conf:
events {}
http { include /etc/nginx/sites-enabled/*; }

# configuration file /etc/nginx/sites-enabled/default:
server { listen 80 default_server; root /var/www/html; index index.html; }

# configuration file /etc/nginx/sites-enabled/shop:
server {
	listen 8080;
	root "/srv/shop/public/";
	location / { try_files $uri /index.php$is_args$args; }
}
`
	for docroot, want := range map[string]string{"/srv/shop/public": "/etc/nginx/sites-enabled/shop",
		"/var/www/html/": "/etc/nginx/sites-enabled/default", "/srv/other": ""} {
		if got := SiteServing(dump, docroot); got != want {
			t.Errorf("docroot %s: site %q, want %q", docroot, got, want)
		}
	}
}
