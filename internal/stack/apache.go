package stack

// The Apache part of a stack: a whole config that Apache reads alone (-f, with -d the run dir as its root), its
// modules loaded by path from Debian's module directory, no file of /etc/apache2 read. Two shapes: the event MPM
// passing PHP to a pool through mod_proxy_fcgi (as Debian's php8.2-fpm.conf does), and the prefork MPM running
// PHP itself with mod_php, which reads the same php.ini baseline as php-fpm (package phpini).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/phpini"
)

// ApacheModules is where Debian's apache2 keeps its modules, mod_php's libphpX.Y.so among them.
const ApacheModules = "/usr/lib/apache2/modules"

// MPMs: Apache's multi-processing modules.
const (
	MPMEvent   = "event"   // threads hold the connections; PHP runs in php-fpm
	MPMPrefork = "prefork" // one process a connection, each running PHP with mod_php
)

// MPM is Apache's multi-processing module and its sizes. Zero values are Debian's defaults (mpm_event.conf,
// mpm_prefork.conf).
type MPM struct {
	Name            string `json:"name"` // MPMEvent or MPMPrefork; "" = the server's
	StartServers    int    `json:"start_servers,omitempty"`
	MinSpareServers int    `json:"min_spare_servers,omitempty"` // prefork
	MaxSpareServers int    `json:"max_spare_servers,omitempty"` // prefork
	MinSpareThreads int    `json:"min_spare_threads,omitempty"` // event
	MaxSpareThreads int    `json:"max_spare_threads,omitempty"` // event
	ThreadsPerChild int    `json:"threads_per_child,omitempty"` // event
	// MaxRequestWorkers is the most connections served at once: prefork's processes, event's threads.
	MaxRequestWorkers      int `json:"max_request_workers,omitempty"`
	MaxConnectionsPerChild int `json:"max_connections_per_child,omitempty"`
}

// WithDefaults fills in Debian's defaults for m's MPM (name, when empty, for server), each bounded by
// MaxRequestWorkers as Apache would bound it.
func (m MPM) WithDefaults(server string) MPM {
	if m.Name == "" {
		m.Name = MPMEvent
		if server == ServerApacheModPHP {
			m.Name = MPMPrefork
		}
	}
	or := func(v, d int) int {
		if v > 0 {
			return v
		}
		return d
	}
	m.MaxRequestWorkers = or(m.MaxRequestWorkers, 150)
	if m.Name == MPMPrefork {
		m.StartServers = min(or(m.StartServers, 5), m.MaxRequestWorkers)
		m.MinSpareServers = min(or(m.MinSpareServers, 5), m.MaxRequestWorkers)
		m.MaxSpareServers = max(min(or(m.MaxSpareServers, 10), m.MaxRequestWorkers), m.MinSpareServers)
		return m
	}
	m.StartServers = or(m.StartServers, 2)
	m.ThreadsPerChild = or(m.ThreadsPerChild, 25)
	m.MinSpareThreads = or(m.MinSpareThreads, 25)
	m.MaxSpareThreads = or(m.MaxSpareThreads, 75)
	return m
}

// Directives are m's lines of an Apache config: the one rendering of its sizes, for the Apache phptune starts
// and the snippet tune writes for a real installation. m must have its defaults (WithDefaults).
func (m MPM) Directives() []string {
	d := []string{fmt.Sprintf("StartServers %d", m.StartServers)}
	switch m.Name {
	case MPMPrefork:
		d = append(d, fmt.Sprintf("MinSpareServers %d", m.MinSpareServers), fmt.Sprintf("MaxSpareServers %d", m.MaxSpareServers))
		if m.MaxRequestWorkers > 256 { // prefork's default ServerLimit
			d = append(d, fmt.Sprintf("ServerLimit %d", m.MaxRequestWorkers))
		}
	default:
		d = append(d, fmt.Sprintf("MinSpareThreads %d", m.MinSpareThreads), fmt.Sprintf("MaxSpareThreads %d", m.MaxSpareThreads))
		if m.ThreadsPerChild > 64 { // event's default ThreadLimit
			d = append(d, fmt.Sprintf("ThreadLimit %d", m.ThreadsPerChild))
		}
		d = append(d, fmt.Sprintf("ThreadsPerChild %d", m.ThreadsPerChild))
		if n := (m.MaxRequestWorkers + m.ThreadsPerChild - 1) / m.ThreadsPerChild; n > 16 { // event's default ServerLimit
			d = append(d, fmt.Sprintf("ServerLimit %d", n))
		}
	}
	return append(d, fmt.Sprintf("MaxRequestWorkers %d", m.MaxRequestWorkers),
		fmt.Sprintf("MaxConnectionsPerChild %d", m.MaxConnectionsPerChild))
}

// Validate says what is wrong with m's values, as a --from-apache file or a knob would give them.
func (m MPM) Validate() error {
	switch m.Name {
	case "", MPMEvent, MPMPrefork:
	default:
		return fmt.Errorf("MPM %q: want event or prefork", m.Name)
	}
	for name, v := range map[string]int{"StartServers": m.StartServers, "MinSpareServers": m.MinSpareServers,
		"MaxSpareServers": m.MaxSpareServers, "MinSpareThreads": m.MinSpareThreads, "MaxSpareThreads": m.MaxSpareThreads,
		"ThreadsPerChild": m.ThreadsPerChild, "MaxRequestWorkers": m.MaxRequestWorkers, "MaxConnectionsPerChild": m.MaxConnectionsPerChild} {
		if v < 0 || v > 100000 {
			return fmt.Errorf("%s %d: want a whole number from 0 to 100000", name, v)
		}
	}
	return nil
}

// PHPHandler are the lines that hand .php files to PHP: mod_php's handler, or mod_proxy_fcgi to a pool's address
// ("unix:/run/php/php8.2-fpm.sock" or "127.0.0.1:9000"), as Debian's php8.2.conf and php8.2-fpm.conf do.
func PHPHandler(modPHP bool, pool string) []string {
	handler := "application/x-httpd-php"
	if !modPHP {
		if strings.HasPrefix(pool, "unix:") {
			handler = "proxy:" + pool + "|fcgi://localhost"
		} else {
			handler = "proxy:fcgi://" + pool
		}
	}
	return []string{`<FilesMatch "\.php$">`, `    SetHandler "` + handler + `"`, `</FilesMatch>`}
}

// PHPValueLines are mod_php's php_admin_value lines for values, sorted by name.
func PHPValueLines(values map[string]string) []string {
	var d []string
	for _, k := range sortedKeys(values) {
		d = append(d, fmt.Sprintf("php_admin_value %s %s", k, apacheQuote(values[k])))
	}
	return d
}

// apacheQuote quotes a value for Apache's config when it needs quotes.
func apacheQuote(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\"'\\#") {
		return v
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

type apacheVars struct {
	RunDir, RuntimeDir, Docroot, Front, User, Group string
	Port                                            int
	MPM                                             MPM
	Modules                                         []string // module name = file, loaded in this order
	Handler                                         []string
	PHPValues                                       []string
}

// apacheModules are the modules a stack's Apache loads, by name and file under ApacheModules: the MPM, access
// control, the front controller and index (mod_dir), types, the health check and dotfiles (mod_alias), and
// PHP's (mod_proxy_fcgi, or mod_php's libphp).
func apacheModules(mpm MPM, libphp string) []string {
	mods := []string{"mpm_" + mpm.Name + "_module=mod_mpm_" + mpm.Name + ".so", "authz_core_module=mod_authz_core.so",
		"dir_module=mod_dir.so", "mime_module=mod_mime.so", "alias_module=mod_alias.so"}
	if libphp != "" {
		return append(mods, "php_module="+libphp)
	}
	return append(mods, "proxy_module=mod_proxy.so", "proxy_fcgi_module=mod_proxy_fcgi.so")
}

// renderApache renders a whole Apache config that reads no system file: Debian's apache2.conf defaults where a
// server's behaviour depends on them (timeouts, keep-alive), the MPM's sizes, the app as nginx serves it (a
// front controller for paths that are no file, no dotfile served, the same health check).
func renderApache(v apacheVars) string {
	var b strings.Builder
	b.WriteString("# written by phptune; Apache reads only this file (-f) and the modules it names\n")
	for _, m := range v.Modules {
		name, file, _ := strings.Cut(m, "=")
		if !filepath.IsAbs(file) {
			file = filepath.Join(ApacheModules, file)
		}
		fmt.Fprintf(&b, "LoadModule %s %s\n", name, file)
	}
	fmt.Fprintf(&b, "ServerName localhost\nListen 127.0.0.1:%d\nPidFile %s/apache.pid\nDefaultRuntimeDir %s\n", v.Port, v.RunDir, v.RuntimeDir)
	fmt.Fprintf(&b, "ErrorLog %s/apache-error.log\nLogLevel warn\n", v.RunDir)
	if v.User != "" {
		fmt.Fprintf(&b, "User %s\nGroup %s\n", v.User, v.Group)
	}
	// Debian's apache2.conf and security.conf.
	b.WriteString("Timeout 300\nKeepAlive On\nMaxKeepAliveRequests 100\nKeepAliveTimeout 5\nServerTokens Prod\nServerSignature Off\n")
	b.WriteString("HostnameLookups Off\nAccessFileName .htaccess\nGracefulShutdownTimeout 5\n")
	b.WriteString("TypesConfig /dev/null\nAddType text/html .html .htm\nAddType text/css .css\nAddType application/javascript .js\n" +
		"AddType application/json .json\nAddType image/png .png\nAddType image/jpeg .jpg .jpeg\nAddType image/gif .gif\n" +
		"AddType image/svg+xml .svg\nAddType text/plain .txt\n")
	for _, d := range v.MPM.Directives() {
		b.WriteString(d + "\n")
	}
	fmt.Fprintf(&b, "\nDocumentRoot %s\n<Directory />\n    AllowOverride None\n    Require all denied\n</Directory>\n", v.Docroot)
	fmt.Fprintf(&b, "<Directory %s>\n    AllowOverride None\n    Require all granted\n    DirectoryIndex %s\n    FallbackResource /%s\n</Directory>\n",
		v.Docroot, v.Front, v.Front)
	// Answered by Apache itself (the health check must not wait on the app); dotfiles never served, as by nginx.
	b.WriteString("Redirect 204 /phptune-health-check\nRedirectMatch 404 \"/\\.(?!well-known/)\"\n")
	for _, d := range append(v.Handler, v.PHPValues...) {
		b.WriteString(d + "\n")
	}
	return b.String()
}

// startApache renders the Apache config for cfg's server and starts Apache on port: in front of the stack's
// first pool (or cfg.NginxPool) for ServerApacheFPM, running PHP itself for ServerApacheModPHP.
func (s *Stack) startApache(cfg Config, w workers, bin string, port int) error {
	mpm := cfg.MPM.WithDefaults(cfg.Server)
	s.MPM = mpm
	var libphp, pool string
	var env []string
	if cfg.modPHP() {
		var err error
		if libphp, err = ModPHP(s.FPMBin); err != nil {
			return err
		}
		if env, err = s.modPHPINI(cfg, w); err != nil {
			return err
		}
	} else {
		upstream := s.Pools[0]
		if cfg.NginxPool != "" {
			var ok bool
			if upstream, ok = s.Pool(cfg.NginxPool); !ok {
				return exitcode.UsageErrorf("pool %q for Apache: no such pool", cfg.NginxPool)
			}
		}
		pool = upstream.Address
		if upstream.Network == ListenUnix {
			pool = "unix:" + pool
		}
	}
	runtime := filepath.Join(s.PrivDir, "apache")
	if err := os.MkdirAll(runtime, 0o700); err != nil {
		return fmt.Errorf("apache runtime dir: %w", err)
	}
	conf := renderApache(apacheVars{RunDir: s.RunDir, RuntimeDir: runtime, Docroot: s.Docroot, Front: cfg.Front, User: w.user,
		Group: w.group, Port: port, MPM: mpm, Modules: apacheModules(mpm, libphp), Handler: PHPHandler(cfg.modPHP(), pool),
		PHPValues: PHPValueLines(cfg.PHPValues)})
	path := filepath.Join(s.RunDir, "apache.conf")
	if err := writeFileAtomic(path, []byte(conf)); err != nil {
		return err
	}
	return s.spawn("apache", env, bin, "-f", path, "-d", s.RunDir, "-DFOREGROUND")
}

// modPHPINI writes the php.ini baseline mod_php reads (the same as php-fpm's, see package phpini) with cfg's
// defines as one more file of its scan dir, and returns the environment that points mod_php at them: a
// mod_php left to itself reads the host's /etc/php/X.Y/apache2.
func (s *Stack) modPHPINI(cfg Config, w workers) ([]string, error) {
	var err error
	if s.PHPINI, err = phpini.Baseline(s.FPMBin, s.RunDir); err != nil {
		return nil, err
	}
	if s.PHPINI.INI == "" {
		return nil, exitcode.UsageErrorf("%s is not Debian's php-fpm: mod_php runs Debian's PHP, so apache-modphp cannot run this build", s.FPMBin)
	}
	var b strings.Builder
	b.WriteString("; written by phptune: what php-fpm would get with -d\n")
	for _, k := range sortedKeys(cfg.Defines) {
		fmt.Fprintf(&b, "%s = %s\n", k, strings.ReplaceAll(cfg.Defines[k], DocrootVar, s.Docroot))
	}
	if cfg.Defines["opcache.preload"] != "" && cfg.Defines["opcache.preload_user"] == "" && w.user != "" {
		// Apache's parent runs as root and preloads before its children drop to the workers' user.
		fmt.Fprintf(&b, "opcache.preload_user = %s\n", w.user)
	}
	if err := writeFileAtomic(filepath.Join(s.PHPINI.ScanDir, "99-phptune.ini"), []byte(b.String())); err != nil {
		return nil, err
	}
	// PHPRC names php.ini's directory for mod_php as -c does for php-fpm.
	return append(s.PHPINI.Env(), "PHPRC="+filepath.Dir(s.PHPINI.INI)), nil
}

// ModPHP is mod_php's module for the PHP of a Debian php-fpm binary (libphp8.2.so for php-fpm8.2).
func ModPHP(fpmBin string) (string, error) {
	ver := phpini.Version(fpmBin)
	if ver == "" {
		return "", exitcode.UsageErrorf("%s is not Debian's php-fpm: mod_php runs Debian's PHP, so apache-modphp cannot run this build", fpmBin)
	}
	lib := filepath.Join(ApacheModules, "libphp"+ver+".so")
	if _, err := os.Stat(lib); err != nil {
		return "", exitcode.MissingErrorf("mod_php for PHP %s not found (%s): apt-get install libapache2-mod-php%s", ver, lib, ver)
	}
	return lib, nil
}

// apacheHealthy waits until a prefork Apache has forked its StartServers processes: every run starts from the
// same state, as a static pool does.
func (s *Stack) apacheHealthy(ctx context.Context, deadline time.Time) error {
	if s.MPM.Name != MPMPrefork {
		return nil
	}
	pgid := s.PID("apache")
	return s.poll(ctx, deadline, func(context.Context) error {
		pids, err := measure.ProcessGroup(pgid)
		if err != nil {
			return err
		}
		if len(pids)-1 < s.MPM.StartServers {
			return fmt.Errorf("%d of %d processes started", len(pids)-1, s.MPM.StartServers)
		}
		return nil
	})
}
