package knob

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/stack"
)

// TestFromApacheDebian: Debian's apache2.conf read as Apache reads it (its includes, mod_php's own conf with the
// user-dir block that only counts under mod_userdir): prefork + mod_php at Debian's 150 workers, the site's
// php_value lines as the pool's settings.
func TestFromApacheDebian(t *testing.T) {
	c := Debian()
	if err := c.FromApacheFile("testdata/apache/debian/apache2.conf"); err != nil {
		t.Fatal(err)
	}
	m := c.MPM()
	if c.Server != ApacheModPHP || c.MaxChildren != 150 || c.PM != "dynamic" || m.StartServers != 5 || m.MinSpareServers != 5 ||
		m.MaxSpareServers != 10 || m.MaxRequestWorkers != 150 {
		t.Errorf("server %q, max_children %d, pm %s, MPM %+v: want Debian's prefork", c.Server, c.MaxChildren, c.PM, m)
	}
	if c.INI["memory_limit"] != "256M" || c.INI["upload_max_filesize"] != "64M" || c.INI["display_errors"] != "Off" {
		t.Errorf("php values: %v", c.INI)
	}
	if _, ok := c.INI["engine"]; ok {
		t.Errorf("engine set from the user-dir block of a module not loaded: %v", c.INI)
	}
}

// TestFromApacheFiles: one file of a setup is read for what it says; what it cannot tell is an error that says
// which file to give.
func TestFromApacheFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	static := write("static.conf", "<IfModule mpm_prefork_module>\n  StartServers 12\n  MinSpareServers 12\n  MaxSpareServers 12\n"+
		"  MaxClients 12\n  MaxRequestsPerChild 500\n</IfModule>\n<IfModule mpm_event_module>\n  MaxRequestWorkers 400\n</IfModule>\n"+
		"php_admin_value opcache.memory_consumption 256\nphp_value error_log \"/var/log/php errors.log\"\n")
	c := Debian()
	if err := c.FromApacheFile(static); err != nil {
		t.Fatal(err)
	}
	if c.Server != ApacheModPHP || c.PM != "static" || c.MaxChildren != 12 || c.Apache.MaxConnectionsPerChild != 500 ||
		c.Defines["opcache.memory_consumption"] != "256" || c.INI["error_log"] != "/var/log/php errors.log" {
		t.Errorf("static prefork: %+v %+v", c, c.Apache)
	}
	fpm := write("fpm.conf", "LoadModule mpm_event_module x.so\n<IfModule mpm_event_module>\nThreadsPerChild 50\nMaxRequestWorkers 200\n</IfModule>\n"+
		"<FilesMatch \\.php$>\n  SetHandler \"proxy:unix:/run/php/php8.2-fpm.sock|fcgi://localhost\"\n</FilesMatch>\n")
	c = Debian()
	if err := c.FromApacheFile(fpm); err != nil {
		t.Fatal(err)
	}
	if m := c.MPM(); c.Server != ApacheFPM || m.Name != stack.MPMEvent || m.ThreadsPerChild != 50 || m.MaxRequestWorkers != 200 || c.MaxChildren != 5 {
		t.Errorf("event + php-fpm: server %q, MPM %+v, max_children %d (the pool's: --from-pool)", c.Server, m, c.MaxChildren)
	}
	for name, text := range map[string]string{
		"worker.conf":  "LoadModule mpm_worker_module x.so\n",
		"nothing.conf": "ServerName example.org\n",
		"badnum.conf":  "<IfModule mpm_prefork_module>\nMaxRequestWorkers lots\n</IfModule>\n",
		"missing.conf": "Include /nonexistent/apache.conf\n",
		"php.conf":     "php_value memory_limit\n",
	} {
		c := Debian()
		err := c.FromApacheFile(write(name, text))
		if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), name) && !strings.Contains(err.Error(), "nonexistent") {
			t.Errorf("%s: err = %v (code %d), want a usage error naming the file", name, err, exitcode.Of(err))
		}
	}
}

func TestApacheWords(t *testing.T) {
	for in, want := range map[string]string{
		`php_value error_log "/var/log/a b.log"`: "php_value|error_log|/var/log/a b.log",
		`SetHandler 'proxy:fcgi://x'`:            "SetHandler|proxy:fcgi://x",
		`php_value x "say \"hi\""`:               `php_value|x|say "hi"`,
		"StartServers\t 5 ":                      "StartServers|5",
	} {
		if got := strings.Join(apacheWords(in), "|"); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}
