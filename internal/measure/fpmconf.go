package measure

// php-fpm's configuration as its master reads it (internal/fpmconf reads it), with the settings check and tune
// use typed. Read-only: nothing here writes or signals anything.

import (
	"net"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/fpmconf"
)

// FPMConfig is a php-fpm configuration: the main file and every file it includes.
type FPMConfig struct {
	Path   string            `json:"path"`
	Prefix string            `json:"prefix"` // php-fpm's prefix a relative include= was taken from
	Files  []string          `json:"files"`  // every file read, the main one first
	Global map[string]string `json:"global"` // the [global] section
	Pools  []FPMPoolConfig   `json:"pools"`  // in the order their sections first appear
	// Warnings are what php-fpm would warn of or what could not be read (an include matching nothing).
	Warnings []string `json:"warnings,omitempty"`
}

// FPMPoolConfig is one pool's section with the settings check and tune read typed; Settings holds every
// directive as written ($pool expanded).
type FPMPoolConfig struct {
	Name string `json:"name"`
	File string `json:"file"` // the file its section was last started in
	// Listen as written; Network ("unix" or "tcp") and Address (a socket path or HOST:PORT to connect to) say
	// where a client reaches it: "9000" (every address) is 127.0.0.1:9000, "[::]:9000" is [::1]:9000.
	Listen      string `json:"listen"`
	Network     string `json:"network"`
	Address     string `json:"address"`
	PM          string `json:"pm"`
	MaxChildren int    `json:"max_children"`
	MaxRequests int    `json:"max_requests"` // 0: never recycled
	StatusPath  string `json:"status_path,omitempty"`
	// Settings are the section's directives (php_admin_value[memory_limit], pm.start_servers...), resolved.
	Settings map[string]string `json:"settings"`
	// Conf is the pool as read: where each directive was taken from (file and line).
	Conf *fpmconf.Section `json:"-"`
}

// ReadFPMConfig reads a php-fpm configuration file (the main php-fpm.conf or a pool file) with its includes, as
// fpmconf reads it (relative includes from Debian's prefix; ReadFPMConfigFrom tries others). env expands
// ${VAR} as php-fpm's ini scanner does (nil: this process's environment).
func ReadFPMConfig(path string, env func(string) string) (*FPMConfig, error) {
	return readFPMConfig(path, fpmconf.Options{Env: env})
}

func readFPMConfig(path string, o fpmconf.Options) (*FPMConfig, error) {
	conf, err := fpmconf.Read(path, o)
	if err != nil {
		return nil, err
	}
	c := &FPMConfig{Path: path, Prefix: conf.Prefix, Global: settings(conf.Global), Warnings: conf.Warnings}
	for _, f := range conf.Files {
		c.Files = append(c.Files, f.Path)
	}
	for _, s := range conf.Pools {
		p := FPMPoolConfig{Name: s.Name, File: s.Headers[len(s.Headers)-1].File, Settings: settings(s), Conf: s}
		p.typed()
		c.Pools = append(c.Pools, p)
	}
	return c, nil
}

// Pool finds a pool by name.
func (c *FPMConfig) Pool(name string) (FPMPoolConfig, bool) {
	for _, p := range c.Pools {
		if p.Name == name {
			return p, true
		}
	}
	return FPMPoolConfig{}, false
}

// settings are a section's directives' values by key.
func settings(s *fpmconf.Section) map[string]string {
	m := make(map[string]string, len(s.Keys))
	for k, d := range s.Directives {
		m[k] = d.Value
	}
	return m
}

// typed fills the typed fields from Settings.
func (p *FPMPoolConfig) typed() {
	s := p.Settings
	p.Listen, p.PM, p.StatusPath = s["listen"], s["pm"], s["pm.status_path"]
	p.MaxChildren, _ = strconv.Atoi(s["pm.max_children"])
	p.MaxRequests, _ = strconv.Atoi(s["pm.max_requests"])
	p.Network, p.Address = ListenAddress(p.Listen)
}

// ListenAddress says where a client reaches a pool's listen value: ("unix", PATH) or ("tcp", HOST:PORT). A port
// alone or a wildcard address is reached on the loopback address of its family; "" gives ("", "").
func ListenAddress(listen string) (network, address string) {
	listen = strings.TrimSpace(listen)
	if listen == "" {
		return "", ""
	}
	if _, err := strconv.Atoi(listen); err == nil {
		return "tcp", net.JoinHostPort("127.0.0.1", listen)
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil || strings.Contains(listen, "/") {
		return "unix", listen
	}
	switch host {
	case "", "0.0.0.0", "*":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "tcp", net.JoinHostPort(host, port)
}

// Setting is a pool directive's value, or def when the pool does not set it.
func (p FPMPoolConfig) Setting(key, def string) string {
	if v, ok := p.Settings[key]; ok {
		return v
	}
	return def
}

// INI is a php_value/php_admin_value (or _flag) the pool sets for name, and whether it sets one; admin values
// win over plain ones, as in php-fpm.
func (p FPMPoolConfig) INI(name string) (string, bool) {
	for _, k := range []string{"php_admin_value", "php_admin_flag", "php_value", "php_flag"} {
		if v, ok := p.Settings[k+"["+name+"]"]; ok {
			return v, true
		}
	}
	return "", false
}
