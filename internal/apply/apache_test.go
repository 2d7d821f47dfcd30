package apply

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stack"
)

// TestApacheRuntimeFiles: where an Apache runtime is recommended, the files are Apache's (a site, the MPM's file
// with its values changed in place, checked by apache2 -t) in place of nginx's upstream, and under mod_php no pool,
// the pool's settings in the site and the master's in mod_php's conf.d.
func TestApacheRuntimeFiles(t *testing.T) {
	bin, err := stack.FindApache("")
	if err != nil {
		t.Fatalf("%v (make deps installs apache2 and libapache2-mod-php8.2)", err)
	}
	shipped(t, "apache2", "/etc/apache2/mods-available/mpm_")
	for _, server := range []string{knob.ApacheModPHP, knob.ApacheFPM} {
		rec := knob.Debian()
		rec.Server, rec.PM, rec.MaxChildren = server, "static", 4
		rec.SetINI("memory_limit", "256M")
		rec.SetSetting("opcache.jit_buffer_size", "64M")
		// nginx's default site, which has no PHP location: under Apache, nginx's files stay as they are.
		debian := File{Path: DebianSite, Text: "server {\n\tlisten 80;\n\troot /var/www/html;\n\tlocation / {\n\t\ttry_files $uri $uri/ =404;\n\t}\n}\n"}
		p, err := Make(rec, Start{Site: debian}, Target{Version: version, Docroot: "/srv/app"}, []string{"a header"})
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]Out{}
		var names []string
		for _, f := range p.Files {
			files[f.Name] = f
			names = append(names, f.Name)
		}
		want := "php-fpm-pool.conf php.ini apache-site.conf apache-mpm.conf"
		if server == knob.ApacheModPHP {
			want = "php.ini apache-site.conf apache-mpm.conf"
		}
		if strings.Join(names, " ") != want {
			t.Errorf("%s: files %v, want %s", server, names, want)
		}
		if server == knob.ApacheModPHP && len(p.Changes) > 0 {
			t.Errorf("mod_php: the pool's changes %v, where no pool runs", p.Effective())
		}
		site, mpm, ini := files[SiteName], files[MPMName], files[ININame]
		if err := stack.CheckApacheSite(context.Background(), bin, server == knob.ApacheModPHP, site.Text, mpm.Text); err != nil {
			t.Errorf("%s: %v\n%s\n%s", server, err, site.Text, mpm.Text)
		}
		if !strings.Contains(ini.Text, "opcache.jit_buffer_size = 64M") {
			t.Errorf("%s: php.ini lacks the master's setting:\n%s", server, ini.Text)
		}
		if server == knob.ApacheModPHP {
			if ini.Dest != "/etc/php/8.2/apache2/conf.d/99-phptune.ini" || !strings.Contains(site.Text, "php_admin_value memory_limit 256M") ||
				!strings.Contains(mpm.Text, "MaxRequestWorkers       4\n") || mpm.Dest != "/etc/apache2/mods-available/mpm_prefork.conf" {
				t.Errorf("mod_php: php.ini to %s; site\n%s\nMPM to %s\n%s", ini.Dest, site.Text, mpm.Dest, mpm.Text)
			}
		} else if !strings.Contains(site.Text, `SetHandler "proxy:unix:/run/php/php8.2-fpm.sock|fcgi://localhost"`) ||
			!strings.Contains(files[PoolName].Text, "pm.max_children = 4") {
			t.Errorf("apache-fpm: the site does not pass to the pool's socket, or the pool is not sized:\n%s", site.Text)
		}
		// The MPM's diff applies to Debian's file as shipped and gives the file.
		dir := t.TempDir()
		dst := filepath.Join(dir, strings.TrimPrefix(mpm.Dest, "/"))
		os.MkdirAll(filepath.Dir(dst), 0o755)
		orig, _ := os.ReadFile(mpm.Dest)
		os.WriteFile(dst, orig, 0o644)
		patch := exec.Command("patch", "-d", dir, "-p1")
		patch.Stdin = strings.NewReader(mpm.Diff)
		if out, err := patch.CombinedOutput(); err != nil {
			t.Fatalf("%s: patch: %v\n%s\n%s", server, err, out, mpm.Diff)
		}
		if got, _ := os.ReadFile(dst); string(got) != mpm.Text {
			t.Errorf("%s: the patched MPM file differs from the one written", server)
		}
		if !strings.Contains(strings.Join(p.Check, " && "), "a2ensite -q phptune && apache2ctl -t") || p.Site != nil {
			t.Errorf("%s: check %v, site lines %v", server, p.Check, p.Site)
		}
	}
}
