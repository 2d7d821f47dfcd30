// Package apply turns a recommended configuration into what a Debian server needs to take it: each file as
// the starting configuration's file with the changes made in place (Debian's shipped pool, or the user's
// --from-pool / --from-ini files), where each goes, its unified diff against the start, and the commands that
// check and reload. The pool keeps the start's name and socket; every setting is written in one place.
package apply

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/fpmconf"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stack"
)

// File is a starting configuration file: where it is and its text.
type File struct {
	Path string `json:"path"`
	Text string `json:"-"`
}

// Start is the configuration the recommendation changes.
type Start struct {
	// Pool is the pool's file, or php-fpm.conf with the files it includes (read from disk, as php-fpm reads
	// them): Debian's, or --from-pool's. An empty Text: none was found, and the pool is written whole (to
	// Debian's place for it).
	Pool File
	// Prefix is what php-fpm takes a relative include= from ("": Debian's /usr).
	Prefix string
	// INI is --from-ini's file; none: the settings go to a new file in php-fpm's conf.d.
	INI File
	// Site is the nginx site that serves the app (--from-site, else Debian's default site); none: the plan
	// says which lines its PHP location takes. NginxDir is what its relative include lines are taken from
	// ("": /etc/nginx).
	Site     File
	NginxDir string
}

// Target is the server the files are for.
type Target struct {
	Version string // PHP's major.minor (8.2): /etc/php/8.2/fpm, php-fpm8.2
	User    string // the workers' user (www-data)
	Workers int    // nginx's worker_processes
	Docroot string // the app's docroot there (opcache.preload names a file in it)
	Front   string // its front controller, relative to the docroot ("": index.php)
}

// Plan is what applying the recommendation takes.
type Plan struct {
	Pool   string `json:"pool"`   // the pool's name, the start's
	Listen string `json:"listen"` // where it listens (the start's socket unless the recommendation moves it)
	// Upstream is nginx's name for the pool, which the site's PHP location passes to.
	Upstream string `json:"upstream"`
	Files    []Out  `json:"files"`
	// Changes are the pool's directives the files change, as php-fpm runs them before and after.
	Changes []Change `json:"changes,omitempty"`
	// PoolCheck is the pool after the changes as one section, every directive as php-fpm resolves it: what
	// php-fpm -t checks (the files alone may be fragments of a configuration).
	PoolCheck string `json:"-"`
	// Site are the lines of the nginx site's PHP location that take the place of its fastcgi_pass.
	Site     []string `json:"site"`
	SiteFile string   `json:"site_file"` // Debian's site, where they go unless the user's site is elsewhere
	Check    []string `json:"check"`     // commands that check the files where they are
	Reload   []string `json:"reload"`    // and that make the servers read them
	// Servers names the packages the files are for; Restart says what the check and reload step does.
	Servers string   `json:"servers"`
	Restart string   `json:"restart"`
	Notes   []string `json:"notes,omitempty"`
}

// Out is one file to put on the server.
type Out struct {
	Name string `json:"name"` // in the run dir
	Dest string `json:"dest"` // where it goes
	// From is the file it changes ("" = a new file); Diff the unified diff against it (against nothing for a
	// new file), with the paths as they are on the server.
	From string `json:"from,omitempty"`
	Diff string `json:"diff"`
	What string `json:"what"` // what it holds, for a reader
	Text string `json:"-"`
	// before is the text it changes ("" for a new file).
	before string
}

// Names of the files in the run dir.
const (
	PoolName  = "php-fpm-pool.conf"
	ININame   = "php.ini"
	NginxName = "nginx-upstream.conf"
)

// What the plan's files are for and what its last step does, for nginx + php-fpm (and plans saved before
// Apache's runtimes, which have neither).
const (
	nginxServers = "Debian's php-fpm and nginx"
	nginxRestart = "Check the files where they are, then reload (php-fpm's reload starts a new master that reads php.ini " +
		"and the pools again; requests in flight finish):"
)

// ForServers names the packages the plan's files are for.
func (p *Plan) ForServers() string { return cmp.Or(p.Servers, nginxServers) }

// DebianPool is where Debian's php-fpm package puts its pool for PHP version v.
func DebianPool(v string) string { return "/etc/php/" + v + "/fpm/pool.d/www.conf" }

// DebianMain is php-fpm's main file in Debian's package for PHP version v, which includes its pools.
func DebianMain(v string) string { return "/etc/php/" + v + "/fpm/php-fpm.conf" }

// DebianSocket is the socket Debian's pool listens on.
func DebianSocket(v string) string { return "/run/php/php" + v + "-fpm.sock" }

// confD is php-fpm's directory of extra ini files for version v under prefix (its -p; "" or /usr: Debian's):
// read after php.ini, in name order. A PHP built from source (the official Docker image, prefix /usr/local)
// reads PREFIX/etc/php/conf.d (its PHP_INI_DIR's).
func confD(v, prefix string) string {
	if prefix == "" || prefix == "/usr" {
		return "/etc/php/" + v + "/fpm/conf.d"
	}
	return strings.TrimSuffix(prefix, "/") + "/etc/php/conf.d"
}

// Make plans rec on the server t, from start; header is put on top of each file (comment lines, no mark).
func Make(rec knob.Config, start Start, t Target, header []string) (*Plan, error) {
	if t.User == "" {
		t.User = "www-data"
	}
	pool, base, err := startPool(start, t)
	if err != nil {
		return nil, err
	}
	if start.INI.Text != "" {
		if err := base.FromINIText(start.INI.Path, start.INI.Text); err != nil {
			return nil, err
		}
	}
	name := pool.pool.Name
	ini := iniConf(start.INI.Text)
	p := &Plan{Pool: name, Upstream: "php_fpm_" + regexp.MustCompile(`[^A-Za-z0-9_]`).ReplaceAllString(name, "_"),
		SiteFile: "/etc/nginx/sites-available/default"}
	p.Listen = listen(pool, name, rec, base, t)
	poolDirectives(pool, rec, base)
	statusPage(pool)
	settings(pool, ini, rec, base, t)
	if rec.PHPFPM != base.PHPFPM && rec.PHPFPM != "" {
		p.Notes = append(p.Notes, "the recommendation runs php-fpm from "+rec.PHPFPM+": the files alone do not change the binary")
	}
	p.Changes, p.Notes = pool.changes, append(p.Notes, pool.notes...)
	p.PoolCheck = pool.render()
	how := "still listening on "
	if base.Listen != rec.Listen {
		how = "now listening on "
	}
	p.Files = pool.outs(header, start.Pool.Text == "", fmt.Sprintf("the pool [%s], %s%s", name, how, orUnset(p.Listen)))
	p.Files = append(p.Files, iniOut(ini, start, t, header))
	p.Site = append([]string{"fastcgi_pass " + p.Upstream}, rec.Location()...)
	for i := range p.Site {
		p.Site[i] += ";"
	}
	if ngx, ok := nginxUpstream(p, rec, t, header); ok {
		p.Files = append(p.Files, ngx)
		if err := p.addSite(rec, start, t, header); err != nil {
			return nil, err
		}
	} else {
		p.Notes = append(p.Notes, fmt.Sprintf("no file read sets the pool [%s]'s listen address: nginx's upstream is not written, and the "+
			"site keeps its fastcgi_pass; give --from-pool the php-fpm.conf that includes the pool's files", name))
	}
	for i := range p.Files {
		f := &p.Files[i]
		f.Diff = unified(f.before, f.Text, f.From, f.Dest)
	}
	fpm := "php-fpm" + t.Version
	p.Check = []string{fpm + " -t", "nginx -t"}
	p.Reload = []string{"systemctl reload php" + t.Version + "-fpm nginx"}
	p.Servers, p.Restart = nginxServers, nginxRestart
	p.apache(rec, t, header)
	return p, nil
}

// addSite adds the site that serves the app, changed, to the plan's files: its lines are then in the file.
func (p *Plan) addSite(rec knob.Config, start Start, t Target, header []string) error {
	if start.Site.Text == "" {
		return nil
	}
	out, err := p.site(rec, start, t, header)
	if err != nil {
		return err
	}
	p.Files = append(p.Files, out)
	p.SiteFile, p.Site = start.Site.Path, nil
	return nil
}

// startPool reads the starting configuration as php-fpm does, and the pool tune's run started from in it
// (knob.StartPool's); without one, Debian's pool as its package writes it.
func startPool(start Start, t Target) (*poolEdit, knob.Config, error) {
	path, text := start.Pool.Path, start.Pool.Text
	base := knob.Debian()
	if text == "" {
		path = DebianPool(t.Version)
		text = fmt.Sprintf("[www]\nuser = %s\ngroup = %s\nlisten = %s\nlisten.owner = %s\nlisten.group = %s\n", t.User, t.User,
			DebianSocket(t.Version), t.User, t.User)
		for _, kv := range directives(base) { // Debian's pool, which the changes apply to
			text += kv[0] + " = " + kv[1] + "\n"
		}
	}
	c, err := fpmconf.Parse(path, []byte(text), fpmconf.Options{Prefix: start.Prefix})
	if err != nil {
		return nil, base, exitcode.UsageErrorf("starting configuration: %v", err)
	}
	section, err := knob.StartPool(c)
	if err != nil {
		return nil, base, err
	}
	if start.Pool.Text != "" {
		if err := base.FromPoolConfig(c); err != nil {
			return nil, base, err
		}
	}
	return newPoolEdit(c, section, text), base, nil
}

// iniOut is the ini file: --from-ini's with the changes, else a new one in php-fpm's conf.d.
func iniOut(ini *conf, start Start, t Target, header []string) Out {
	out := Out{Name: ININame, Dest: start.INI.Path, From: start.INI.Path, What: "the settings only php-fpm's master reads", before: start.INI.Text}
	if start.INI.Text == "" {
		out.Dest, out.From = confD(t.Version, start.Prefix)+"/99-phptune.ini", ""
		if len(ini.lines) == 0 {
			ini.lines = []string{"; Nothing php-fpm's master reads was changed: this file sets nothing."}
		}
	}
	ini.top(comment(";", header))
	out.Text = ini.String()
	return out
}

// listen keeps the start's address unless the run raced listen and moved the pool between a unix socket and
// TCP, and returns where the pool listens ("" when no file read sets it). Only a decided move writes listen.
func listen(pool *poolEdit, name string, rec, base knob.Config, t Target) string {
	cur := pool.value("listen")
	switch {
	case rec.Listen == base.Listen || rec.Listen == "":
		return cur
	case rec.Listen == stack.ListenTCP:
		pool.set("listen", "127.0.0.1:9000")
		return "127.0.0.1:9000"
	}
	sock := DebianSocket(t.Version)
	if name != "www" {
		sock = "/run/php/php" + t.Version + "-fpm-" + name + ".sock"
	}
	pool.set("listen", sock)
	// nginx's workers must reach the socket.
	if !pool.has([]string{"listen.owner"}) {
		pool.set("listen.owner", t.User)
		pool.set("listen.group", t.User)
	}
	return sock
}

// poolDirectives writes the pool settings the recommendation changes (pm, its sizes, max_requests, the
// backlog); a setting it no longer has is commented out, except the spare servers a static pool ignores.
func poolDirectives(pool *poolEdit, rec, base knob.Config) {
	rd, bd := directives(rec), directives(base)
	for _, kv := range rd {
		if v, ok := lookup(bd, kv[0]); !ok || v != kv[1] {
			pool.set(kv[0], kv[1])
		}
	}
	for _, kv := range bd {
		if _, ok := lookup(rd, kv[0]); !ok && !strings.HasPrefix(kv[0], "pm.") {
			pool.unset(kv[0])
		}
	}
}

// statusPage keeps the pool's pm.status_path, or gives it one, so that phptune check can read the result.
func statusPage(pool *poolEdit) {
	if pool.value("pm.status_path") != "" {
		return
	}
	if pool.set("pm.status_path", "/fpm-status") {
		pool.notes = append(pool.notes, "pm.status_path = /fpm-status added: phptune check reads the pool there over "+
			"FastCGI (nginx serves it only where a location passes it)")
	}
}

// directives are a configuration's pool directives without its ini settings, as key and value.
func directives(c knob.Config) [][2]string {
	c.INI = nil
	var out [][2]string
	for _, d := range c.Pool("www").Directives() {
		k, v, _ := strings.Cut(d, " = ")
		out = append(out, [2]string{k, v})
	}
	return out
}

func lookup(kv [][2]string, k string) (string, bool) {
	for _, x := range kv {
		if x[0] == k {
			return x[1], true
		}
	}
	return "", false
}

// settings writes PHP's settings the recommendation changes, each in one place: where a starting file has it,
// else a pool setting in the pool (php_admin_value) and one only the master reads in the ini file.
func settings(pool *poolEdit, ini *conf, rec, base knob.Config, t Target) {
	docroot := t.Docroot
	if docroot == "" {
		docroot = "/var/www/app"
	}
	val := func(v string) string { return strings.ReplaceAll(v, stack.DocrootVar, docroot) }
	for _, k := range union(rec.INI, base.INI) {
		rv, bv := rec.INI[k], base.INI[k]
		switch {
		case rv == bv:
		case rv == "":
			pool.unset(phpKeys(k)...)
			ini.unset(k)
		case pool.has(phpKeys(k)):
			pool.set(phpKeys(k)[0], val(rv), phpKeys(k)[1:]...)
		case ini.has([]string{k}):
			ini.set(k, val(rv))
		default:
			pool.set(phpKeys(k)[0], val(rv))
		}
	}
	defs := maps.Clone(rec.Defines)
	if defs["opcache.preload"] != "" && defs["opcache.preload_user"] == "" {
		defs["opcache.preload_user"] = t.User // php-fpm's master runs as root, which preloading refuses
	}
	for _, k := range union(defs, base.Defines) {
		rv, bv := defs[k], base.Defines[k]
		if pool.has(phpKeys(k)) {
			pool.unset(phpKeys(k)...) // a pool cannot set what only the master reads
			bv = ""
		}
		switch {
		case rv == bv:
		case rv == "":
			ini.unset(k)
		default:
			ini.set(k, val(rv))
		}
	}
}

func union(a, b map[string]string) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// nginxUpstream is the upstream for nginx's conf.d: the pool's address, and the connections kept to it.
func nginxUpstream(p *Plan, rec knob.Config, t Target, header []string) (Out, bool) {
	if p.Listen == "" {
		return Out{}, false
	}
	var b strings.Builder
	for _, l := range comment("#", header) {
		b.WriteString(l + "\n")
	}
	server := upstreamAddr(p.Listen, p.Pool)
	fmt.Fprintf(&b, "# The pool [%s]; the site's PHP location passes to it: fastcgi_pass %s;\n", p.Pool, p.Upstream)
	fmt.Fprintf(&b, "upstream %s {\n    server %s;\n", p.Upstream, server)
	if rec.Keepalive {
		fmt.Fprintf(&b, "    # each kept connection pins a php-fpm worker: keepalive x worker_processes (%d) <= pm.max_children (%d) / 2,\n",
			max(1, t.Workers), rec.MaxChildren)
		b.WriteString("    # or a burst on one nginx worker waits for workers the others' idle connections hold\n")
		fmt.Fprintf(&b, "    keepalive %d;\n", rec.KeepaliveConns(t.Workers))
	}
	b.WriteString("}\n")
	return Out{Name: NginxName, Dest: "/etc/nginx/conf.d/php-fpm-" + p.Pool + ".conf", Text: b.String(), What: "nginx's upstream " + p.Upstream + ", the pool's address"}, true
}

// upstreamAddr is where nginx reaches a pool that listens on listen: its socket, or its port on loopback when
// php-fpm listens on every address ("9000", "0.0.0.0:9000", "[::]:9000"); $pool stands for the pool's name.
func upstreamAddr(listen, pool string) string {
	listen = strings.ReplaceAll(listen, "$pool", pool)
	switch {
	case strings.Contains(listen, "/"):
		return "unix:" + listen
	case !strings.Contains(listen, ":"):
		return "127.0.0.1:" + listen
	case strings.HasPrefix(listen, "0.0.0.0:"):
		return "127.0.0.1:" + strings.TrimPrefix(listen, "0.0.0.0:")
	case strings.HasPrefix(listen, "[::]:"):
		return "[::1]:" + strings.TrimPrefix(listen, "[::]:")
	}
	return listen
}

// comment makes header lines comments, with a blank line after them.
func comment(mark string, lines []string) []string {
	if len(lines) == 0 {
		return nil
	}
	var out []string
	for _, l := range lines {
		out = append(out, mark+" "+l)
	}
	return append(out, "")
}
