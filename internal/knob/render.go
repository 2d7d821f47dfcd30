package knob

import (
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/stack"
)

// Files are the recommendation as files to paste into a real installation.
type Files struct {
	Pool  string // php-fpm pool section (php-fpm-pool.conf)
	INI   string // php.ini snippet
	Nginx string // nginx upstream snippet
}

// Target is where the real installation's php-fpm listens.
type Target struct {
	Socket  string // e.g. /run/php/php8.2-fpm.sock
	TCP     string // e.g. 127.0.0.1:9000
	User    string // e.g. www-data
	Workers int    // nginx worker_processes on that host
	Docroot string // the app's docroot there (for opcache.preload)
	Front   string // its front controller, relative to the docroot (Apache's FallbackResource)
}

// withDefaults fills in Debian's paths and user where t leaves them empty.
func (t Target) withDefaults() Target {
	if t.Socket == "" {
		t.Socket = "/run/php/php-fpm.sock"
	}
	if t.TCP == "" {
		t.TCP = "127.0.0.1:9000"
	}
	if t.User == "" {
		t.User = "www-data"
	}
	if t.Docroot == "" {
		t.Docroot = "/var/www/app"
	}
	if t.Front == "" {
		t.Front = "index.php"
	}
	return t
}

// Render writes the configuration for a real installation; header is a comment put on top of each file.
func (c Config) Render(t Target, header []string) Files {
	t = t.withDefaults()
	listen := t.Socket
	if c.Listen == "tcp" {
		listen = t.TCP
	}
	var pool strings.Builder
	comment(&pool, ";", header)
	if c.PHPFPM != "" {
		fmt.Fprintf(&pool, "; for the php-fpm binary %s\n", c.PHPFPM)
	}
	fmt.Fprintf(&pool, "[www]\nuser = %s\ngroup = %s\nlisten = %s\n", t.User, t.User, listen)
	if c.Listen != "tcp" {
		fmt.Fprintf(&pool, "listen.owner = %s\nlisten.group = %s\n", t.User, t.User)
	}
	for _, line := range c.Pool("www").Directives() {
		pool.WriteString(line + "\n")
	}

	var ini strings.Builder
	comment(&ini, ";", header)
	ini.WriteString("; Settings of the pool are in php-fpm-pool.conf as php_admin_value; these are the same as php.ini lines.\n")
	for _, k := range sorted(c.INI) {
		fmt.Fprintf(&ini, "%s = %s\n", k, c.INI[k])
	}
	if len(c.Defines) > 0 {
		ini.WriteString("; Read by php-fpm's master only: put these in php.ini (or php-fpm -d), not in the pool.\n")
		for _, k := range sorted(c.Defines) {
			fmt.Fprintf(&ini, "%s = %s\n", k, strings.ReplaceAll(c.Defines[k], stack.DocrootVar, t.Docroot))
		}
		if c.Defines["opcache.preload"] != "" {
			fmt.Fprintf(&ini, "opcache.preload_user = %s\n", t.User)
		}
	}

	var ngx strings.Builder
	comment(&ngx, "#", header)
	server := "unix:" + t.Socket
	if c.Listen == "tcp" {
		server = t.TCP
	}
	fmt.Fprintf(&ngx, "upstream php {\n    server %s;\n", server)
	if c.Keepalive {
		fmt.Fprintf(&ngx, "    # each kept connection pins a php-fpm worker: keepalive x worker_processes (%d) <= pm.max_children (%d) / 2,\n",
			max(1, t.Workers), c.MaxChildren)
		ngx.WriteString("    # or a burst on one nginx worker waits for workers the others' idle connections hold\n")
		fmt.Fprintf(&ngx, "    keepalive %d;\n", c.KeepaliveConns(t.Workers))
	}
	ngx.WriteString("}\n")
	loc := "fastcgi_pass php;"
	for _, d := range c.Location() {
		loc += " " + d + ";"
	}
	ngx.WriteString("# and in the PHP location: " + loc + "\n")
	return Files{Pool: pool.String(), INI: ini.String(), Nginx: ngx.String()}
}

func comment(b *strings.Builder, mark string, lines []string) {
	for _, l := range lines {
		fmt.Fprintf(b, "%s %s\n", mark, l)
	}
	if len(lines) > 0 {
		b.WriteString("\n")
	}
}
