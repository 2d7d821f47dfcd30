package knob

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFromPoolFileReadsAsPHPFPM: --from-pool starts from what php-fpm would run: [www] of all its sections, in
// every included file, the last value set winning.
func TestFromPoolFileReadsAsPHPFPM(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// wodby's zz-www.conf: a [ping] pool before [www].
	wodby := write("zz-www.conf", "[global]\nerror_log = /proc/self/fd/2\n[ping]\nlisten = 127.0.0.1:9001\npm = static\npm.max_children = 1\n"+
		"[www]\nlisten = [::]:9000\npm = dynamic\npm.max_children = 8\npm.start_servers = 3\nlisten.backlog = -1\n")
	c := Debian()
	if err := c.FromPoolFile(wodby); err != nil {
		t.Fatal(err)
	}
	if c.PM != "dynamic" || c.MaxChildren != 8 || c.StartServers != 3 || c.Backlog != -1 || c.Listen != "tcp" {
		t.Errorf("wodby: %+v, want [www]'s values", c)
	}
	if d := c.Pool("www").Directives(); d[0] != "listen.backlog = -1" {
		t.Errorf("listen.backlog = -1 written as %q", d[0])
	}
	// laradock: a later file of php-fpm.d overrides pm; a value appended twice: the last wins.
	write("php-fpm.d/www.conf", "[www]\nlisten = 127.0.0.1:9000\npm = dynamic\npm.max_children = 5\n")
	write("php-fpm.d/xlaravel.pool.conf", "[www]\npm = ondemand\npm.max_children = 20\npm.max_children = 24\n")
	main := write("php-fpm.conf", "[global]\ninclude="+dir+"/php-fpm.d/*.conf\n")
	c = Debian()
	if err := c.FromPoolFile(main); err != nil {
		t.Fatal(err)
	}
	if c.PM != "ondemand" || c.MaxChildren != 24 {
		t.Errorf("laradock: pm %s max_children %d, want ondemand 24", c.PM, c.MaxChildren)
	}
	for name, want := range map[string]string{
		"hash.conf":  "hash.conf:3: php-fpm 8.2 refuses",
		"pools.conf": "pools a, b and no [www]",
	} {
		text := map[string]string{"hash.conf": "[www]\npm = static\n# pm.max_children = 4\n",
			"pools.conf": "[a]\npm = static\n[b]\npm = static\n"}[name]
		c := Debian()
		if err := c.FromPoolFile(write(name, text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
}
