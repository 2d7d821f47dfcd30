package measure

// php-fpm's configuration as its master reads it: the main file, the files its include= lines pull in (glob
// patterns, in order), a [global] section and a section per pool, where a later section of the same name adds to
// and overrides an earlier one. Read-only: nothing here writes or signals anything.

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// FPMConfig is a php-fpm configuration: the main file and every file it includes.
type FPMConfig struct {
	Path   string            `json:"path"`
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
	File string `json:"file"` // the file its section was last written in
	// Listen as written; Network ("unix" or "tcp") and Address (a socket path or HOST:PORT to connect to) say
	// where a client reaches it: "9000" (every address) is 127.0.0.1:9000, "[::]:9000" is [::1]:9000.
	Listen      string `json:"listen"`
	Network     string `json:"network"`
	Address     string `json:"address"`
	PM          string `json:"pm"`
	MaxChildren int    `json:"max_children"`
	MaxRequests int    `json:"max_requests"` // 0: never recycled
	StatusPath  string `json:"status_path,omitempty"`
	// Settings are the section's directives, key as written (php_admin_value[memory_limit], pm.start_servers...).
	Settings map[string]string `json:"settings"`
}

// fpmIncludePrefix is where php-fpm resolves a relative include= when the master was not given -p (its
// build's prefix; /usr for Debian's packages). The master's title does not show -p.
const fpmIncludePrefix = "/usr"

// ReadFPMConfig reads a php-fpm configuration file (the main php-fpm.conf or a pool file) with its includes.
// env expands ${VAR} as php-fpm's ini scanner does (nil: this process's environment).
func ReadFPMConfig(path string, env func(string) string) (*FPMConfig, error) {
	if env == nil {
		env = os.Getenv
	}
	c := &FPMConfig{Path: path, Global: map[string]string{}}
	r := fpmReader{c: c, env: env, pools: map[string]int{}}
	if err := r.file(path, 0); err != nil {
		return nil, err
	}
	for i := range c.Pools {
		c.Pools[i].typed()
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

type fpmReader struct {
	c       *FPMConfig
	env     func(string) string
	pools   map[string]int // name -> index in c.Pools
	section string         // "" before any section, "global", or a pool's name
}

// maxIncludeDepth stops a file that includes itself.
const maxIncludeDepth = 8

func (r *fpmReader) file(path string, depth int) error {
	if depth > maxIncludeDepth {
		return fmt.Errorf("php-fpm config %s: includes nested deeper than %d (a file that includes itself?)", path, maxIncludeDepth)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read php-fpm config: %w", err)
	}
	r.c.Files = append(r.c.Files, path)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == ';' || line[0] == '#' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return fmt.Errorf("%s:%d: section %q has no closing ]", path, n, line)
			}
			r.startSection(strings.TrimSpace(line[1:end]), path)
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return fmt.Errorf("%s:%d: want KEY = VALUE, got %q", path, n, line)
		}
		k, v = strings.TrimSpace(k), iniValue(v, r.env)
		if strings.EqualFold(k, "include") {
			if err := r.include(path, v, depth); err != nil {
				return err
			}
			continue
		}
		r.set(k, v, path)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read php-fpm config %s: %w", path, err)
	}
	return nil
}

func (r *fpmReader) startSection(name, path string) {
	r.section = name
	if strings.EqualFold(name, "global") {
		r.section = "global"
		return
	}
	if i, ok := r.pools[name]; ok {
		r.c.Pools[i].File = path
		return
	}
	r.pools[name] = len(r.c.Pools)
	r.c.Pools = append(r.c.Pools, FPMPoolConfig{Name: name, File: path, Settings: map[string]string{}})
}

func (r *fpmReader) set(k, v, path string) {
	switch r.section {
	case "global":
		r.c.Global[k] = v
	case "":
		r.c.Warnings = append(r.c.Warnings, fmt.Sprintf("%s: %s outside any section is ignored", path, k))
	default:
		p := &r.c.Pools[r.pools[r.section]]
		p.Settings[k] = strings.ReplaceAll(v, "$pool", p.Name)
	}
}

// include reads the files a pattern matches, in glob's (sorted) order, as php-fpm does.
func (r *fpmReader) include(from, pattern string, depth int) error {
	if !filepath.IsAbs(pattern) {
		pattern = filepath.Join(fpmIncludePrefix, pattern)
	}
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return fmt.Errorf("%s: include %q: %w", from, pattern, err)
	}
	if len(matches) == 0 {
		r.c.Warnings = append(r.c.Warnings, fmt.Sprintf("%s: nothing matches include %s", from, pattern))
	}
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.IsDir() {
			continue
		}
		if err := r.file(m, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// iniValue is a value as php-fpm reads it: quotes removed, a trailing ; comment dropped, ${VAR} expanded.
func iniValue(v string, env func(string) string) string {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
		if end := strings.IndexByte(v[1:], v[0]); end >= 0 {
			return expandEnv(v[1:end+1], env)
		}
	}
	if i := strings.IndexByte(v, ';'); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return expandEnv(v, env)
}

func expandEnv(v string, env func(string) string) string {
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			return v
		}
		j := strings.IndexByte(v[i:], '}')
		if j < 0 {
			return v
		}
		v = v[:i] + env(v[i+2:i+j]) + v[i+j+1:]
	}
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
