package apply

import (
	"strings"
	"testing"
)

// TestStatusPage: the pool keeps its own status path; one without gets /fpm-status, and the plan says why.
func TestStatusPage(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"[www]\nlisten = /run/php/x.sock\npm.status_path = /st\n", "/st"},
		{"[www]\nlisten = /run/php/x.sock\n;pm.status_path = /status\npm = dynamic\n", "/fpm-status"},
	} {
		start := Start{}
		start.Pool.Path, start.Pool.Text = "/etc/php/8.2/fpm/pool.d/www.conf", c.text
		pool, _, err := startPool(start, Target{Version: "8.2"})
		if err != nil {
			t.Fatal(err)
		}
		statusPage(pool)
		added := strings.Contains(strings.Join(pool.notes, "\n"), "pm.status_path = /fpm-status added")
		if added != (c.want == "/fpm-status") {
			t.Errorf("%q: notes %q", c.text, pool.notes)
		}
		if !strings.Contains(pool.render(), `pm.status_path = "`+c.want+`"`) {
			t.Errorf("%q: the pool as written lacks its status path:\n%s", c.text, pool.render())
		}
	}
}

// TestINIGoesWherePHPReadsIt: the master's ini file goes to Debian's conf.d, or, for a PHP built with another
// prefix (the official Docker image's /usr/local), to that prefix's etc/php/conf.d.
func TestINIGoesWherePHPReadsIt(t *testing.T) {
	for prefix, want := range map[string]string{"": "/etc/php/8.2/fpm/conf.d/99-phptune.ini",
		"/usr": "/etc/php/8.2/fpm/conf.d/99-phptune.ini", "/usr/local": "/usr/local/etc/php/conf.d/99-phptune.ini"} {
		out := iniOut(iniConf(""), Start{Prefix: prefix}, Target{Version: "8.2"}, nil)
		if out.Dest != want {
			t.Errorf("prefix %q: the ini file goes to %s, want %s", prefix, out.Dest, want)
		}
	}
}
