package knob

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/stack"
)

// TestServerSetsTheRuntime: each value runs the configuration's pool as its runtime's workers: php-fpm's behind
// nginx or Apache's event MPM, prefork's MaxRequestWorkers under mod_php with the pool's ini as php_admin_value.
func TestServerSetsTheRuntime(t *testing.T) {
	k := Server("")
	c := Debian()
	c.MaxChildren, c.PM = 6, "static"
	c.SetINI("memory_limit", "256M")
	for _, v := range []string{ApacheModPHP, ApacheFPM, NginxFPM} {
		cfg := c.Clone()
		if err := k.Set(&cfg, v); err != nil {
			t.Fatal(err)
		}
		if k.Get(cfg) != v {
			t.Errorf("set %s, get %s", v, k.Get(cfg))
		}
		var sc stack.Config
		cfg.Apply(&sc, "tune")
		switch v {
		case ApacheModPHP:
			m := sc.MPM
			if sc.Server != v || len(sc.Pools) != 0 || m.Name != stack.MPMPrefork || m.MaxRequestWorkers != 6 || m.StartServers != 6 ||
				m.MinSpareServers != 6 || sc.PHPValues["memory_limit"] != "256M" {
				t.Errorf("%s: stack %+v", v, sc)
			}
			if !strings.Contains(cfg.String(), "MaxRequestWorkers=6") || strings.Contains(cfg.String(), "listen=") {
				t.Errorf("%s: %s", v, cfg)
			}
		case ApacheFPM:
			if sc.Server != v || len(sc.Pools) != 1 || sc.Pools[0].MaxChildren != 6 || sc.MPM.Name != stack.MPMEvent || sc.NginxKeepalive != 0 {
				t.Errorf("%s: stack %+v", v, sc)
			}
		case NginxFPM:
			if sc.Server != stack.ServerNginx || len(sc.Pools) != 1 || cfg.Key() != c.Key() {
				t.Errorf("%s: stack %+v, key %s", v, sc, cfg.Key())
			}
		}
	}
	if err := k.Set(&c, "lighttpd"); err == nil {
		t.Error("server=lighttpd was taken")
	}
	if why := Server("apache2 not found").Skip(Facts{}, c); why == "" {
		t.Error("Apache missing, yet the knob is tried")
	}
}

// TestMPMFromThePool: prefork's spares follow pm (static all, dynamic Debian's within the size, ondemand one);
// the starting point's own settings stay where the pool does not set them.
func TestMPMFromThePool(t *testing.T) {
	c := Config{Server: ApacheModPHP, MaxChildren: 150, PM: "dynamic", Apache: &stack.MPM{Name: stack.MPMPrefork, MaxConnectionsPerChild: 1000}}
	if m := c.MPM(); m.MaxRequestWorkers != 150 || m.StartServers != 5 || m.MaxSpareServers != 10 || m.MaxConnectionsPerChild != 1000 {
		t.Errorf("dynamic 150: %+v", m)
	}
	c.MaxChildren, c.PM = 3, "ondemand"
	if m := c.MPM(); m.MaxRequestWorkers != 3 || m.StartServers != 1 || m.MaxSpareServers != 1 {
		t.Errorf("ondemand 3: %+v", m)
	}
	c.Server = ApacheFPM
	if m := c.MPM(); m.Name != stack.MPMEvent || m.MaxConnectionsPerChild != 0 {
		t.Errorf("apache-fpm keeps prefork's settings: %+v", m)
	}
}

// TestUnderServer: php-fpm's and nginx's knobs are not tried where the runtime has no such thing.
func TestUnderServer(t *testing.T) {
	ks := UnderServer(All("", nil))
	for _, c := range []struct {
		server string
		skip   []string
		tried  []string
	}{
		{ApacheModPHP, []string{"listen", "keepalive", "fastcgi_buffers", "max_requests", "backlog"}, []string{"opcache", "jit", "pm"}},
		{ApacheFPM, []string{"keepalive", "fastcgi_buffers"}, []string{"listen", "pm", "max_requests"}},
		{"", nil, []string{"keepalive", "listen"}},
	} {
		cfg := Debian()
		cfg.Server, cfg.MaxChildren = c.server, 16
		for _, k := range ks {
			why := k.Skip(Facts{NginxWorkers: 2, MaxResponse: 1 << 20, Concurrency: 1000}, cfg)
			for _, n := range c.skip {
				if k.Name == n && why == "" {
					t.Errorf("%s under %q: tried", n, c.server)
				}
			}
			for _, n := range c.tried {
				if k.Name == n && why != "" {
					t.Errorf("%s under %q: skipped (%s)", n, c.server, why)
				}
			}
		}
	}
}
