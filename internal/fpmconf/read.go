package fpmconf

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/phptune/phptune/internal/suggest"
)

// Prefixes php-fpm resolves a relative include= against when run without -p: the one it was built with.
const (
	DefaultPrefix = "/usr"       // Debian's php-fpmX.Y
	DockerPrefix  = "/usr/local" // the official Docker image's php-fpm
)

// maxNesting is how many files php-fpm 8.2 reads one inside another, the main one counted.
const maxNesting = 5

// Options say how the php-fpm that reads the configuration runs.
type Options struct {
	// Prefix is php-fpm's -p, or the prefix it was built with; "" is DefaultPrefix.
	Prefix string
	// Env gives ${VAR} in values its value from php-fpm's environment; nil is this process's.
	Env func(string) string
}

// Read reads a php-fpm configuration file (php-fpm.conf, or a pool file) and the files it includes, as
// `php-fpm -y path` would, and refuses what php-fpm refuses when it loads a file, saying file:line.
func Read(path string, o Options) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read php-fpm configuration: %w", err)
	}
	return Parse(path, data, o)
}

// Parse is Read on the main file's text; path names it and is where it is (includes are still read from disk).
func Parse(path string, text []byte, o Options) (*Config, error) {
	c := &Config{Path: path, Prefix: cmp.Or(o.Prefix, DefaultPrefix), Global: newSection("global")}
	r := &reader{c: c, env: o.Env, cur: c.Global}
	if r.env == nil {
		r.env = os.Getenv
	}
	if err := r.text(path, text, 1); err != nil {
		return nil, err
	}
	return c, nil
}

// reader reads the files in php-fpm's order. The section lines go to carries across files, as in php-fpm: a
// file without a [section] line adds to the section its includer was in, and the includer goes on in the
// section the included file ended in.
type reader struct {
	c   *Config
	env func(string) string
	cur *Section // [global] until a pool's section starts
}

func (r *reader) file(path string, depth int) error {
	if depth > maxNesting {
		return fmt.Errorf("%s: more than %d files included one in another, which php-fpm refuses: does a file include itself?", path, maxNesting)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read php-fpm configuration: %w", err)
	}
	return r.text(path, data, depth)
}

func (r *reader) text(path string, data []byte, depth int) error {
	r.c.Files = append(r.c.Files, File{Path: path, Managed: managed(path, data)})
	for i, line := range strings.Split(string(data), "\n") {
		if err := r.line(Place{path, i + 1}, strings.TrimSpace(line), depth); err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) line(at Place, line string, depth int) error {
	switch {
	case line == "" || line[0] == ';':
		return nil
	case line[0] == '#':
		return fmt.Errorf("%s:%d: php-fpm 8.2 refuses this line: # does not start a comment in its configuration, ; does", at.File, at.Line)
	case line[0] == '[':
		return r.header(at, line)
	}
	k, raw, ok := strings.Cut(line, "=")
	if !ok {
		return fmt.Errorf("%s:%d: %q is not KEY = VALUE, which php-fpm refuses: fix it or start it with ;", at.File, at.Line, line)
	}
	k = strings.TrimSpace(k)
	if k == "include" { // with case: php-fpm refuses INCLUDE as an unknown entry
		return r.include(at, value(raw, r.env), depth)
	}
	return r.set(at, k, raw)
}

// header starts a section: [global] (any case) or a pool, which a later [name] of it (any case) adds to.
func (r *reader) header(at Place, line string) error {
	end := strings.IndexByte(line, ']')
	if end < 0 {
		return fmt.Errorf("%s:%d: section %s has no closing ], which php-fpm refuses", at.File, at.Line, line)
	}
	if rest := strings.TrimSpace(line[end+1:]); rest != "" && rest[0] != ';' {
		return fmt.Errorf("%s:%d: %q after the section's ], which php-fpm refuses: put it on a line of its own", at.File, at.Line, rest)
	}
	name := line[1:end]
	p, ok := r.c.Pool(name)
	switch {
	case strings.EqualFold(name, "global"):
		p = r.c.Global
	case !ok:
		p = newSection(name)
		r.c.Pools = append(r.c.Pools, p)
	}
	p.Headers = append(p.Headers, at)
	r.cur = p
	return nil
}

// set keeps a directive's last value, refusing a directive or value php-fpm refuses.
func (r *reader) set(at Place, k, raw string) error {
	key := canonicalKey(k)
	global := r.cur == r.c.Global
	kd, err := checkKey(key, global)
	if err != nil {
		return fmt.Errorf("%s:%d: %v, which php-fpm refuses%s", at.File, at.Line, err, wrongSection(key, global))
	}
	v := value(raw, r.env)
	if !global {
		v = expandPool(v, r.cur.Name)
	}
	if v, err = checkValue(kd, v); err != nil {
		return fmt.Errorf("%s:%d: %s: %v, which php-fpm refuses", at.File, at.Line, key, err)
	}
	r.cur.set(Directive{Key: key, Value: v, Raw: strings.TrimSpace(raw), Place: at})
	return nil
}

// wrongSection says where a directive of the other kind of section goes.
func wrongSection(key string, global bool) string {
	if _, ok := poolKeys[key]; global && ok {
		return ": it goes in a pool's section ([www])"
	}
	if _, ok := globalKeys[key]; !global && ok {
		return ": it goes in [global]"
	}
	keys := poolKeys
	if global {
		keys = globalKeys
	}
	return suggest.Phrase(key, slices.Sorted(maps.Keys(keys)))
}
