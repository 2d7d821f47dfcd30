package stack

import (
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// Listen kinds for a pool.
const (
	ListenUnix = "unix"
	ListenTCP  = "tcp"
)

// Pool is one php-fpm pool. Zero values take Debian's defaults (pm = dynamic, max_children = 5, ...).
type Pool struct {
	Name         string // pool name; also names its socket
	Listen       string // ListenUnix or ListenTCP
	PM           string // static, dynamic or ondemand
	MaxChildren  int
	StartServers int
	MinSpare     int
	MaxSpare     int
	MaxRequests  int
	Backlog      int               // listen.backlog; 0 = php-fpm's default
	StatusPath   string            // pm.status_path; default /fpm-status
	PingPath     string            // ping.path; default /fpm-ping
	AdminValues  map[string]string // php_admin_value[...] of this pool
	Extra        []string          // raw pool directives, one a line, for knobs not modelled here
}

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
	// NoNginx serves FastCGI only.
	NoNginx bool
	// HTTPPort for nginx; 0 = a free port.
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
	// opcache.memory_consumption, must go here rather than in a pool). DocrootVar in a value stands for the
	// served copy's docroot (opcache.preload=${DOCROOT}/preload.php).
	Defines map[string]string

	// RunDir keeps configs and logs; "" = a directory inside the private directory, removed at Stop.
	RunDir string
	// User runs the workers when phptune runs as root; default www-data (or nobody).
	User string
	// FastStop makes Stop end php-fpm and nginx at once (SIGTERM) rather than gracefully (SIGQUIT, which waits
	// for requests in flight and takes seconds for a large pool: 5.5 s for 128 static workers against 0.35 s):
	// for stacks that serve nobody when they stop, such as tune's arms between trials.
	FastStop bool

	portPicker func() (int, error) // tests: the ports picked, to lose the race between pick and bind
}

// DocrootVar in a Defines value is replaced by the served docroot.
const DocrootVar = "${DOCROOT}"

// DefaultPools is what `phptune serve` starts: Debian's pool settings twice, one pool on a unix socket
// (behind nginx) and one on TCP, so both FastCGI transports can be driven directly.
func DefaultPools() []Pool {
	return []Pool{{Name: "unix", Listen: ListenUnix}, {Name: "tcp", Listen: ListenTCP}}
}

func (p *Pool) withDefaults() {
	if p.PM == "" {
		p.PM = "dynamic"
	}
	if p.MaxChildren == 0 {
		p.MaxChildren = 5
	}
	if p.PM == "dynamic" {
		if p.StartServers == 0 {
			p.StartServers = min(2, p.MaxChildren)
		}
		if p.MinSpare == 0 {
			p.MinSpare = 1
		}
		if p.MaxSpare == 0 {
			p.MaxSpare = max(p.MinSpare, min(3, p.MaxChildren))
		}
	}
	if p.StatusPath == "" {
		p.StatusPath = "/fpm-status"
	}
	if p.PingPath == "" {
		p.PingPath = "/fpm-ping"
	}
}

func (p *Pool) validate() error {
	if p.Name == "" || strings.ContainsAny(p.Name, " []/\n") {
		return fmt.Errorf("pool name %q: use letters, digits, - and _", p.Name)
	}
	switch p.Listen {
	case ListenUnix, ListenTCP:
	default:
		return fmt.Errorf("pool %s: listen %q: want unix or tcp", p.Name, p.Listen)
	}
	switch p.PM {
	case "static", "dynamic", "ondemand":
	default:
		return fmt.Errorf("pool %s: pm %q: want static, dynamic or ondemand", p.Name, p.PM)
	}
	if p.MaxChildren < 1 {
		return fmt.Errorf("pool %s: max_children %d: want at least 1", p.Name, p.MaxChildren)
	}
	if p.PM == "dynamic" && !(p.MinSpare <= p.StartServers && p.StartServers <= p.MaxSpare && p.MaxSpare <= p.MaxChildren) {
		return fmt.Errorf("pool %s: dynamic pm needs min_spare <= start_servers <= max_spare <= max_children (got %d, %d, %d, %d)",
			p.Name, p.MinSpare, p.StartServers, p.MaxSpare, p.MaxChildren)
	}
	return nil
}

// renderFPM renders php-fpm's configuration: one [global] section and a section per pool.
func renderFPM(runDir string, pools []Pool, addrs []string, user, group string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "; written by phptune; php-fpm reads only this file (-y)\n[global]\n")
	fmt.Fprintf(&b, "pid = %s/php-fpm.pid\nerror_log = %s/php-fpm.log\nlog_level = notice\ndaemonize = no\n", runDir, runDir)
	// Bounded graceful stop: children finish their request, or are killed after this.
	b.WriteString("process_control_timeout = 5s\n")
	for i, p := range pools {
		fmt.Fprintf(&b, "\n[%s]\n", p.Name)
		if user != "" {
			fmt.Fprintf(&b, "user = %s\ngroup = %s\n", user, group)
		}
		fmt.Fprintf(&b, "listen = %s\n", addrs[i])
		if p.Listen == ListenUnix {
			// Reachable by nginx's workers (the workers' user when root, else us) and by phptune, nobody else.
			if user != "" {
				fmt.Fprintf(&b, "listen.owner = %s\nlisten.group = %s\nlisten.mode = 0660\n", user, group)
			} else {
				b.WriteString("listen.mode = 0600\n")
			}
		}
		for _, line := range p.Directives() {
			b.WriteString(line + "\n")
		}
		fmt.Fprintf(&b, "pm.status_path = %s\nping.path = %s\n", p.StatusPath, p.PingPath)
		for _, line := range p.Extra {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// Directives are the pool's settings as php-fpm reads them, one a line, from listen.backlog to its
// php_admin_values: the one rendering of a pool's tunable part, for the pools phptune starts and for the files
// tune writes for a real installation (which differ only in where they listen and who runs them).
func (p Pool) Directives() []string {
	var d []string
	if p.Backlog > 0 {
		d = append(d, fmt.Sprintf("listen.backlog = %d", p.Backlog))
	}
	d = append(d, "pm = "+p.PM, fmt.Sprintf("pm.max_children = %d", p.MaxChildren))
	switch p.PM {
	case "dynamic":
		d = append(d, fmt.Sprintf("pm.start_servers = %d", p.StartServers), fmt.Sprintf("pm.min_spare_servers = %d", p.MinSpare),
			fmt.Sprintf("pm.max_spare_servers = %d", p.MaxSpare))
	case "ondemand":
		d = append(d, "pm.process_idle_timeout = 10s") // php-fpm's default, said where a reader looks for it
	}
	d = append(d, fmt.Sprintf("pm.max_requests = %d", p.MaxRequests))
	for _, k := range sortedKeys(p.AdminValues) {
		d = append(d, fmt.Sprintf("php_admin_value[%s] = %s", k, p.AdminValues[k]))
	}
	return d
}

// LocationDirectives are the directives of nginx's PHP location besides fastcgi_pass and the FastCGI params
// (no trailing semicolons): fastcgi_keep_conn when the upstream keeps connections, then php's (fastcgi_buffers
// 16 16k, say). The one list for the nginx phptune starts and the snippet tune writes.
func LocationDirectives(keepalive bool, php []string) []string {
	var d []string
	if keepalive {
		d = append(d, "fastcgi_keep_conn on")
	}
	for _, x := range php {
		d = append(d, strings.TrimSuffix(strings.TrimSpace(x), ";"))
	}
	return d
}

type nginxVars struct {
	RunDir, PrivDir, Docroot, Front, User, Upstream string
	Port, Workers, Keepalive                        int
	PHP                                             []string
}

// renderNginx renders a whole nginx.conf that reads no system file.
func renderNginx(v nginxVars) string {
	var b strings.Builder
	b.WriteString("# written by phptune; nginx reads only this file (-c)\n")
	if v.User != "" {
		fmt.Fprintf(&b, "user %s;\n", v.User)
	}
	workers := "auto"
	if v.Workers > 0 {
		workers = fmt.Sprint(v.Workers)
	}
	fmt.Fprintf(&b, "worker_processes %s;\npid %s/nginx.pid;\nerror_log %s/nginx-error.log warn;\ndaemon off;\n", workers, v.RunDir, v.RunDir)
	b.WriteString("events { worker_connections 4096; }\n\nhttp {\n")
	b.WriteString("    access_log off;\n    server_tokens off;\n    sendfile on;\n    tcp_nodelay on;\n")
	b.WriteString("    default_type application/octet-stream;\n")
	b.WriteString("    types { text/html html htm; text/css css; application/javascript js; application/json json;\n" +
		"            image/png png; image/jpeg jpg jpeg; image/gif gif; image/svg+xml svg; text/plain txt; }\n")
	for _, t := range []string{"client_body", "fastcgi", "proxy", "uwsgi", "scgi"} {
		fmt.Fprintf(&b, "    %s_temp_path %s/nginx/%s;\n", t, v.PrivDir, t)
	}
	fmt.Fprintf(&b, "\n    upstream php {\n        server %s;\n", v.Upstream)
	if v.Keepalive > 0 {
		fmt.Fprintf(&b, "        keepalive %d;\n", v.Keepalive)
	}
	b.WriteString("    }\n\n    server {\n")
	fmt.Fprintf(&b, "        listen 127.0.0.1:%d;\n        server_name localhost;\n        root %s;\n        index %s;\n\n", v.Port, v.Docroot, v.Front)
	// Answered by nginx itself: the health check must not wait on the app (a page that hangs is the app's fault).
	b.WriteString("        location = /phptune-health-check {\n            return 204;\n        }\n\n")
	// Dotfiles (.env, .git, .htaccess) are never served, nor run: only /.well-known is public by convention.
	b.WriteString("        location ~ /\\.(?!well-known/) {\n            return 404;\n        }\n\n")
	fmt.Fprintf(&b, "        location / {\n            try_files $uri /%s$is_args$args;\n        }\n\n", v.Front)
	b.WriteString("        location ~ \\.php$ {\n            try_files $uri =404;\n            fastcgi_pass php;\n")
	for _, d := range LocationDirectives(v.Keepalive > 0, v.PHP) {
		fmt.Fprintf(&b, "            %s;\n", d)
	}
	b.WriteString(fastcgiParams)
	b.WriteString("        }\n    }\n}\n")
	return b.String()
}

// fastcgiParams mirrors Debian's /etc/nginx/fastcgi_params plus SCRIPT_FILENAME, so that no system file is read.
const fastcgiParams = `            fastcgi_param SCRIPT_FILENAME   $document_root$fastcgi_script_name;
            fastcgi_param QUERY_STRING      $query_string;
            fastcgi_param REQUEST_METHOD    $request_method;
            fastcgi_param CONTENT_TYPE      $content_type;
            fastcgi_param CONTENT_LENGTH    $content_length;
            fastcgi_param SCRIPT_NAME       $fastcgi_script_name;
            fastcgi_param REQUEST_URI       $request_uri;
            fastcgi_param DOCUMENT_URI      $document_uri;
            fastcgi_param DOCUMENT_ROOT     $document_root;
            fastcgi_param SERVER_PROTOCOL   $server_protocol;
            fastcgi_param REQUEST_SCHEME    $scheme;
            fastcgi_param HTTPS             $https if_not_empty;
            fastcgi_param GATEWAY_INTERFACE CGI/1.1;
            fastcgi_param SERVER_SOFTWARE   nginx/$nginx_version;
            fastcgi_param REMOTE_ADDR       $remote_addr;
            fastcgi_param REMOTE_PORT       $remote_port;
            fastcgi_param SERVER_ADDR       $server_addr;
            fastcgi_param SERVER_PORT       $server_port;
            fastcgi_param SERVER_NAME       $server_name;
            fastcgi_param REDIRECT_STATUS   200;
`

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
