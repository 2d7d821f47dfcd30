package apply

import (
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stack"
)

// Names of Apache's files in the run dir, where an Apache runtime is recommended.
const (
	SiteName = "apache-site.conf"
	MPMName  = "apache-mpm.conf"
)

// SiteDest is where the site goes on a Debian server: a site of its own, enabled with a2ensite.
const SiteDest = "/etc/apache2/sites-available/phptune.conf"

// debianMPM is Debian's apache2 package's mods-available/mpm_NAME.conf as shipped: the MPM file is that one
// with the values changed in place.
var debianMPM = map[string]string{
	stack.MPMPrefork: `# prefork MPM
# StartServers: number of server processes to start
# MinSpareServers: minimum number of server processes which are kept spare
# MaxSpareServers: maximum number of server processes which are kept spare
# MaxRequestWorkers: maximum number of server processes allowed to start
# MaxConnectionsPerChild: maximum number of requests a server process serves

StartServers            5
MinSpareServers         5
MaxSpareServers         10
MaxRequestWorkers       150
MaxConnectionsPerChild  0
`,
	stack.MPMEvent: `# event MPM
# StartServers: initial number of server processes to start
# MinSpareThreads: minimum number of worker threads which are kept spare
# MaxSpareThreads: maximum number of worker threads which are kept spare
# ThreadsPerChild: constant number of worker threads in each server process
# MaxRequestWorkers: maximum number of worker threads
# MaxConnectionsPerChild: maximum number of requests a server process serves
StartServers            2
MinSpareThreads         25
MaxSpareThreads         75
ThreadLimit             64
ThreadsPerChild         25
MaxRequestWorkers       150
MaxConnectionsPerChild  0
`,
}

// apache turns p into what rec's Apache runtime takes on a Debian server: Apache's site in place of nginx's
// upstream, the MPM's sizes in its mods-available file, and under mod_php no pool (its settings go to the
// site as php_admin_value, what only the master reads to mod_php's conf.d).
func (p *Plan) apache(rec knob.Config, t Target, header []string) {
	if rec.Server == "" {
		return
	}
	modPHP := rec.Server == knob.ApacheModPHP
	var files []Out
	for _, f := range p.Files {
		switch {
		case f.Name == NginxName, f.Name == NginxSiteName, f.Name == PoolName && modPHP:
			continue // Apache serves the app: nginx's files stay as they are, and mod_php has no pool
		case f.Name == ININame && modPHP && f.From == "":
			f.Dest = "/etc/php/" + t.Version + "/apache2/conf.d/99-phptune.ini"
			f.What = "the settings mod_php reads as Apache starts (what php-fpm's master reads otherwise)"
			f.Diff = unified("", f.Text, "", f.Dest)
		}
		files = append(files, f)
	}
	p.Files = append(files, p.apacheSite(rec, t, header), apacheMPM(rec, header))
	p.Site, p.SiteFile, p.Upstream = nil, SiteDest, ""
	if modPHP {
		p.Changes = nil // the pool's directives: under mod_php, the site's php_admin_value lines and the MPM's say it
	}
	mods := "a2dismod -q mpm_prefork php" + t.Version + " && a2enmod -q mpm_event proxy_fcgi"
	check := []string{"php-fpm" + t.Version + " -t"}
	if modPHP {
		mods, check = "a2dismod -q mpm_event && a2enmod -q mpm_prefork php"+t.Version, nil
	}
	// The modules and the site are enabled first: apache2ctl -t checks the config Apache will run.
	p.Check = append(check, mods, "a2ensite -q phptune", "apache2ctl -t")
	p.Reload = []string{"systemctl restart apache2"} // a new MPM needs a restart, not a reload
	p.Servers = "Debian's apache2 with libapache2-mod-php" + t.Version
	p.Restart = "Enable the MPM, the modules and the site, check the config Apache will run, then restart it (a new MPM " +
		"needs a restart; requests in flight are cut):"
	if !modPHP {
		p.Reload = []string{"systemctl reload php" + t.Version + "-fpm", "systemctl restart apache2"}
		p.Servers = "Debian's apache2 and php" + t.Version + "-fpm"
		p.Restart = "Check the pool, enable the MPM, the modules and the site, check the config Apache will run, then reload " +
			"php-fpm and restart Apache (a new MPM needs a restart; requests in flight are cut):"
	}
	p.Notes = append(p.Notes, "the site answers for *:80 without a ServerName: Apache serves it where it is the first site "+
		"(a2dissite 000-default) or once you add your ServerName")
}

// apacheSite is the site: the docroot as phptune served it (the front controller for what is no file, no
// dotfile served), PHP's handler, and under mod_php the pool's settings as php_admin_value.
func (p *Plan) apacheSite(rec knob.Config, t Target, header []string) Out {
	docroot, front := t.Docroot, "index.php"
	if docroot == "" {
		docroot = "/var/www/app"
	}
	modPHP := rec.Server == knob.ApacheModPHP
	var b strings.Builder
	for _, l := range comment("#", header) {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, "<VirtualHost *:80>\n    DocumentRoot %s\n    <Directory %s>\n        AllowOverride None\n        Require all granted\n", docroot, docroot)
	fmt.Fprintf(&b, "        DirectoryIndex %s\n        FallbackResource /%s\n    </Directory>\n", front, front)
	b.WriteString("    RedirectMatch 404 \"/\\.(?!well-known/)\"\n")
	what := "Apache's site: the app, handed to php-fpm's pool " + p.Pool + " at " + p.Listen + " through mod_proxy_fcgi"
	lines := stack.PHPHandler(false, upstreamAddr(p.Listen, p.Pool))
	if modPHP {
		what = "Apache's site: the app, run by mod_php, with the settings a pool would have as php_admin_value"
		val := func(v string) string { return strings.ReplaceAll(v, stack.DocrootVar, docroot) }
		values := map[string]string{}
		for k, v := range rec.INI {
			values[k] = val(v)
		}
		lines = append(stack.PHPHandler(true, ""), stack.PHPValueLines(values)...)
	}
	for _, l := range lines {
		b.WriteString("    " + l + "\n")
	}
	b.WriteString("</VirtualHost>\n")
	return Out{Name: SiteName, Dest: SiteDest, What: what, Text: b.String(), Diff: unified("", b.String(), "", SiteDest)}
}

// apacheMPM is the MPM's mods-available file: Debian's as shipped, its values changed in place to rec's
// sizes, a directive it lacks added at its end.
func apacheMPM(rec knob.Config, header []string) Out {
	m := rec.MPM()
	shipped := debianMPM[m.Name]
	dest := "/etc/apache2/mods-available/mpm_" + m.Name + ".conf"
	lines := strings.Split(strings.TrimSuffix(shipped, "\n"), "\n")
	for _, d := range m.Directives() {
		name, value, _ := strings.Cut(d, " ")
		found := false
		for i, l := range lines {
			if f := strings.Fields(l); len(f) == 2 && f[0] == name {
				found = true
				if f[1] != value {
					lines[i] = strings.TrimSuffix(l, f[1]) + value
				}
			}
		}
		if !found {
			lines = append(lines, fmt.Sprintf("%-24s%s", name, value))
		}
	}
	what := "the " + m.Name + " MPM's sizes"
	if m.Name == stack.MPMPrefork {
		what += ": MaxRequestWorkers is PHP's workers under mod_php, each process holding a connection and PHP's memory"
	}
	text := strings.Join(append(comment("#", header), lines...), "\n") + "\n"
	return Out{Name: MPMName, Dest: dest, From: dest, What: what, Text: text, Diff: unified(shipped, text, dest, dest)}
}
