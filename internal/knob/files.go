package knob

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/fpmconf"
)

// systemLevel are settings php-fpm's master reads once (PHP_INI_SYSTEM): a pool cannot set them.
var systemLevel = map[string]bool{
	"opcache.memory_consumption": true, "opcache.interned_strings_buffer": true, "opcache.max_accelerated_files": true,
	"opcache.huge_code_pages": true, "opcache.jit_buffer_size": true, "opcache.preload": true, "opcache.preload_user": true,
	"opcache.file_cache": true, "opcache.file_cache_only": true, "opcache.lockfile_path": true, "opcache.max_wasted_percentage": true,
	"realpath_cache_size": false, "zend_extension": true, "extension": true,
}

// SetSetting puts an ini setting where php-fpm honours it: a pool value, or a master -d for system-level ones.
func (c *Config) SetSetting(key, value string) {
	if systemLevel[key] {
		if c.Defines == nil {
			c.Defines = map[string]string{}
		}
		c.Defines[key] = value
		return
	}
	c.SetINI(key, value)
}

// FromPoolFile reads a php-fpm configuration file (the user's pool file, or php-fpm.conf with its includes) as
// php-fpm reads it, and takes StartPool's pm settings, listen, and php_value/php_admin_value lines over c.
// Other directives are left to the user's file.
func (c *Config) FromPoolFile(path string) error { return c.FromPoolFileAt(path, "") }

// FromPoolFileAt is FromPoolFile with php-fpm's prefix (its -p: relative include= lines are read from it; ""
// for Debian's, /usr).
func (c *Config) FromPoolFileAt(path, prefix string) error {
	conf, err := fpmconf.Read(path, fpmconf.Options{Prefix: prefix})
	if err != nil {
		return exitcode.UsageErrorf("%v", err)
	}
	return c.FromPoolConfig(conf)
}

// FromPoolText is FromPoolFile on the file's text; path names it (its includes are read from disk).
func (c *Config) FromPoolText(path, text string) error {
	conf, err := fpmconf.Parse(path, []byte(text), fpmconf.Options{})
	if err != nil {
		return exitcode.UsageErrorf("%v", err)
	}
	return c.FromPoolConfig(conf)
}

// FromPoolConfig is FromPoolFile on a configuration already read.
func (c *Config) FromPoolConfig(conf *fpmconf.Config) error {
	p, err := StartPool(conf)
	if err != nil {
		return err
	}
	for _, k := range p.Keys {
		d := p.Directives[k]
		if err := c.poolSetting(k, d.Value); err != nil {
			return exitcode.UsageErrorf("%s:%d: %v", d.File, d.Line, err)
		}
	}
	return nil
}

// StartPool is the pool a configuration's tuning starts from: [www] (the stock pool, which images such as
// wodby's keep beside a [ping] pool), else the only pool.
func StartPool(conf *fpmconf.Config) (*fpmconf.Section, error) {
	if p, ok := conf.Pool("www"); ok {
		return p, nil
	}
	switch len(conf.Pools) {
	case 0:
		return nil, exitcode.UsageErrorf("%s: no pool section ([www]) in it: give a pool file, or php-fpm.conf with its include= lines", conf.Path)
	case 1:
		return conf.Pools[0], nil
	}
	return nil, exitcode.UsageErrorf("%s: pools %s and no [www]: give the file of the one pool to start from", conf.Path, strings.Join(conf.PoolNames(), ", "))
}

// poolSetting reads one directive of a pool file.
func (c *Config) poolSetting(k, v string) error {
	switch {
	case k == "pm":
		return PM().Set(c, v)
	case k == "pm.max_children", k == "pm.start_servers", k == "pm.min_spare_servers", k == "pm.max_spare_servers", k == "pm.max_requests",
		k == "listen.backlog":
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 && !(k == "listen.backlog" && n == -1) {
			return fmt.Errorf("%s = %q: want a whole number", k, v)
		}
		switch k {
		case "pm.max_children":
			c.MaxChildren = n
		case "pm.start_servers":
			c.StartServers = n
		case "pm.min_spare_servers":
			c.MinSpare = n
		case "pm.max_spare_servers":
			c.MaxSpare = n
		case "pm.max_requests":
			c.MaxRequests = n
		case "listen.backlog":
			c.Backlog = n
		}
	case k == "listen":
		if strings.Contains(v, "/") {
			c.Listen = "unix"
		} else {
			c.Listen = "tcp"
		}
	case strings.HasPrefix(k, "php_value[") || strings.HasPrefix(k, "php_admin_value[") ||
		strings.HasPrefix(k, "php_flag[") || strings.HasPrefix(k, "php_admin_flag["):
		name := k[strings.IndexByte(k, '[')+1 : len(k)-1]
		c.SetSetting(name, v)
	}
	return nil
}

// FromINIFile reads php.ini-style settings (the user's current ones) over c.
func (c *Config) FromINIFile(path string) error {
	return readKV(path, c.iniSetting)
}

// FromINIText is FromINIFile on a file's text; name names it in errors.
func (c *Config) FromINIText(name, text string) error {
	return scanKV(name, strings.NewReader(text), c.iniSetting)
}

func (c *Config) iniSetting(k, v string) error {
	c.SetSetting(k, v)
	return nil
}

func readKV(path string, set func(k, v string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return exitcode.UsageErrorf("%v", err)
	}
	defer f.Close()
	return scanKV(path, f, set)
}

// scanKV calls set with each KEY = VALUE of an ini-style text, comments and sections skipped.
func scanKV(path string, r io.Reader, set func(k, v string) error) error {
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == ';' || line[0] == '#' || line[0] == '[' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return exitcode.UsageErrorf("%s:%d: want KEY = VALUE, got %q", path, n, line)
		}
		k, v = strings.TrimSpace(k), strings.Trim(strings.TrimSpace(v), `"`)
		if i := strings.Index(v, " ;"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
		if err := set(k, v); err != nil {
			return exitcode.UsageErrorf("%s:%d: %v", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return exitcode.UsageErrorf("read %s: %v", path, err)
	}
	return nil
}
