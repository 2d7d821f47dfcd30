package stack

import (
	"io/fs"
	"sort"
)

// Listen kinds for a pool.
const (
	ListenUnix = "unix"
	ListenTCP  = "tcp"
)

// Config describes a stack to start.
type Config struct {
	// The app: a docroot directory, or AppFS (the embedded demo) when App is empty.
	App   string
	AppFS fs.FS
	// Front is the front controller, relative to the docroot; default index.php.
	Front string
	// Writable are paths relative to the docroot that the workers may write (an app's caches and data): in
	// the served copy they are handed to the workers' user.
	Writable []string
	// LinkFiles hard-links the app's world-readable files into the served copy instead of copying them (the
	// writable paths are always copied), when on one filesystem: for large prepared trees that nothing edits.
	LinkFiles bool

	PHPFPM string // php-fpm binary; "" = the newest installed php-fpm8.x
	Nginx  string // nginx binary; "" = /usr/sbin/nginx
	// Server is what serves HTTP: ServerNginx ("" too), nginx passing PHP to a pool; ServerApacheFPM, Apache's
	// event MPM passing it to a pool through mod_proxy_fcgi; ServerApacheModPHP, Apache's prefork MPM running
	// PHP in its own processes with mod_php, and no pools.
	Server string
	// Apache is the apache2 binary; "" = /usr/sbin/apache2.
	Apache string
	// MPM sizes Apache's processes; zero values are Debian's (mpm_event.conf, mpm_prefork.conf).
	MPM MPM
	// PHPValues are mod_php's php_admin_value settings (a pool's AdminValues under php-fpm).
	PHPValues map[string]string
	// NoNginx serves FastCGI only: no HTTP server, whatever Server says.
	NoNginx bool
	// HTTPPort for the HTTP server; 0 = a free port.
	HTTPPort int
	// NginxWorkers is worker_processes; 0 = auto.
	NginxWorkers int
	// NginxPool names the pool nginx passes PHP requests to; "" = the first pool.
	NginxPool string
	// NginxKeepalive, when > 0, keeps that many FastCGI connections per nginx worker to php-fpm
	// (upstream keepalive with fastcgi_keep_conn on).
	NginxKeepalive int
	// NginxPHP are extra directives for nginx's PHP location, one each (fastcgi_buffers 16 16k, say).
	NginxPHP []string

	Pools []Pool
	// Defines are passed to php-fpm as -d KEY=VALUE (settings that only the master reads, such as
	// opcache.memory_consumption, must go here rather than in a pool); under mod_php they are an ini file of
	// the scan dir. DocrootVar in a value stands for the served copy's docroot
	// (opcache.preload=${DOCROOT}/preload.php).
	Defines map[string]string

	// RunDir keeps configs and logs; "" = a directory inside the private directory, removed at Stop.
	RunDir string
	// User runs the workers when phptune runs as root; default www-data (or nobody).
	User string
	// FastStop makes Stop end php-fpm, nginx and Apache at once (SIGTERM) rather than gracefully (SIGQUIT, which waits
	// for requests in flight and takes seconds for a large pool: 5.5 s for 128 static workers against 0.35 s):
	// for stacks that serve nobody when they stop, such as tune's arms between trials.
	FastStop bool
	// CheckPHP, when set, says whether the start took effect, given PHP's first process (php-fpm's master, or
	// Apache's parent under mod_php): it is asked as soon as PHP is up (php-fpm's first pool answers its ping),
	// before the stack waits for its workers and starts its HTTP server, so that a start it refuses costs little
	// (huge code pages: where the loader put PHP's text decides). Its error stops the stack; Start returns it
	// wrapped in ErrCheckPHP.
	CheckPHP func(pid int) error

	portPicker func() (int, error) // tests: the ports picked, to lose the race between pick and bind
}

// Servers: what serves HTTP, and how it runs PHP.
const (
	ServerNginx        = "nginx"
	ServerApacheFPM    = "apache-fpm"
	ServerApacheModPHP = "apache-modphp"
)

// apache says whether cfg's HTTP server is Apache.
func (cfg Config) apache() bool {
	return !cfg.NoNginx && (cfg.Server == ServerApacheFPM || cfg.Server == ServerApacheModPHP)
}

// modPHP says whether PHP runs inside the HTTP server (no php-fpm).
func (cfg Config) modPHP() bool { return !cfg.NoNginx && cfg.Server == ServerApacheModPHP }

// DocrootVar in a Defines value is replaced by the served docroot.
const DocrootVar = "${DOCROOT}"

// DefaultPools is what `phptune serve` starts: Debian's pool settings twice, one pool on a unix socket
// (behind nginx) and one on TCP, so both FastCGI transports can be driven directly.
func DefaultPools() []Pool {
	return []Pool{{Name: "unix", Listen: ListenUnix}, {Name: "tcp", Listen: ListenTCP}}
}

// ServePools are DefaultPools of process manager pm with maxChildren children each: a dynamic pool smaller than
// the 5 children Debian's spare-server settings assume gets them scaled down with it.
func ServePools(pm string, maxChildren int) []Pool {
	pools := DefaultPools()
	for i := range pools {
		pools[i].PM, pools[i].MaxChildren = pm, maxChildren
		if pm == "dynamic" && maxChildren < 5 {
			pools[i].StartServers, pools[i].MinSpare, pools[i].MaxSpare = 1, 1, maxChildren
		}
	}
	return pools
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// defaultFront is the front controller when Config.Front is not given.
const defaultFront = "index.php"
