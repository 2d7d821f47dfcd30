package knob

import (
	"fmt"
	"maps"

	"github.com/phptune/phptune/internal/stack"
)

// The server knob's values: what serves HTTP and how it runs PHP.
const (
	NginxFPM     = "nginx-fpm"              // nginx in front of php-fpm (Config.Server "")
	ApacheFPM    = stack.ServerApacheFPM    // Apache's event MPM in front of php-fpm (mod_proxy_fcgi)
	ApacheModPHP = stack.ServerApacheModPHP // Apache's prefork MPM running PHP with mod_php
)

// ServerName is the server knob's name.
const ServerName = "server"

// Server is the runtime: nginx + php-fpm, Apache event + php-fpm, or Apache prefork + mod_php. Each runtime
// runs MaxChildren PHP workers (php-fpm's children, or prefork's MaxRequestWorkers); tune sizes each by its own
// memory before the race. missing, when not "", says why Apache cannot run here: the knob is then skipped with
// that reason, unless its values are named (--knob server=...), when starting the stack says what to install.
func Server(missing string) Knob {
	return Knob{
		Name:       ServerName,
		Doc:        "the runtime: nginx + php-fpm, Apache's event MPM + php-fpm (mod_proxy_fcgi), or Apache's prefork MPM + mod_php",
		Candidates: func(Config) []string { return []string{NginxFPM, ApacheFPM, ApacheModPHP} },
		Get:        func(c Config) string { return c.ServerName() },
		Tail:       true, // prefork holds a process for a connection's keep-alive: the others wait
		Set: func(c *Config, v string) error {
			switch v {
			case NginxFPM:
				c.Server = ""
			case ApacheFPM, ApacheModPHP:
				c.Server = v
			default:
				return fmt.Errorf("server %q: want %s, %s or %s", v, NginxFPM, ApacheFPM, ApacheModPHP)
			}
			return nil
		},
		// Every runtime's race must be able to fill the largest's workers (prefork's processes each hold a
		// connection).
		Load: func(conc int, c Config) int { return max(conc, c.MaxChildren) },
		Skip: func(Facts, Config) string { return missing },
	}
}

// ServerName is c's runtime as the server knob names it.
func (c Config) ServerName() string {
	if c.Server == "" {
		return NginxFPM
	}
	return c.Server
}

// UnderServer wraps each knob's Skip with what the runtime rules out: php-fpm's pool settings under mod_php,
// nginx's directives under Apache. A knob whose values are named (--knob) is skipped too when its runtime does
// not have it: there is nothing to set.
func UnderServer(ks []Knob) []Knob {
	out := make([]Knob, len(ks))
	for i, k := range ks {
		skip, name := k.Skip, k.Name
		k.Skip = func(f Facts, c Config) string {
			if why := serverRulesOut(name, c); why != "" {
				return why
			}
			if skip != nil {
				return skip(f, c)
			}
			return ""
		}
		out[i] = k
	}
	return out
}

// serverRulesOut says why knob name means nothing under c's runtime ("" = it does).
func serverRulesOut(name string, c Config) string {
	switch c.Server {
	case ApacheModPHP:
		switch name {
		case "listen", "backlog", "keepalive", "fastcgi_buffers", "max_requests":
			return "apache-modphp runs PHP in Apache's processes: no php-fpm pool, no FastCGI"
		}
	case ApacheFPM:
		switch name {
		case "keepalive", "fastcgi_buffers":
			return "an nginx directive; apache-fpm passes requests to php-fpm with mod_proxy_fcgi"
		}
	}
	return ""
}

// applyServer sets sc's server from c: Apache in front of the pool, or prefork with mod_php in place of it
// (the pool's size, spares and ini settings as prefork's and mod_php's).
func (c Config) applyServer(sc *stack.Config) {
	sc.Server = c.Server
	if c.Server == "" {
		sc.Server = stack.ServerNginx
		return
	}
	sc.NginxKeepalive, sc.NginxPHP = 0, nil
	sc.MPM = c.MPM()
	if c.Server == ApacheModPHP {
		sc.Pools, sc.NginxPool = nil, ""
		sc.PHPValues = maps.Clone(c.INI)
	}
}

// MPM is Apache's MPM for c: prefork sized as c's pool under mod_php (MaxRequestWorkers = max_children; static
// keeps them all, dynamic Debian's spares, ondemand one spare), Debian's event MPM in front of php-fpm. The
// starting point's own settings (--from-apache) are kept where the pool does not set them.
func (c Config) MPM() stack.MPM {
	want := stack.MPMEvent
	if c.Server == ApacheModPHP {
		want = stack.MPMPrefork
	}
	var m stack.MPM
	if c.Apache != nil && (c.Apache.Name == want || c.Apache.Name == "") {
		m = *c.Apache
	}
	m.Name = want
	if c.Server != ApacheModPHP {
		return m.WithDefaults(c.Server)
	}
	m.MaxRequestWorkers = c.MaxChildren
	switch c.PM {
	case "static":
		m.StartServers, m.MinSpareServers, m.MaxSpareServers = c.MaxChildren, c.MaxChildren, c.MaxChildren
	case "ondemand":
		m.StartServers, m.MinSpareServers, m.MaxSpareServers = 1, 1, 1
	}
	return m.WithDefaults(c.Server)
}

// serverString is the runtime's part of String: the server, and for prefork its sizes in Apache's words.
func (c Config) serverString() []string {
	switch c.Server {
	case "":
		return nil
	case ApacheModPHP:
		m := c.MPM()
		return []string{"server=" + c.Server, fmt.Sprintf("MaxRequestWorkers=%d", m.MaxRequestWorkers),
			fmt.Sprintf("spare=%d-%d", m.MinSpareServers, m.MaxSpareServers)}
	}
	return []string{"server=" + c.Server}
}
