package stack

// The nginx part of a stack: a whole nginx.conf that reads no system file (-c), its temp dirs in the private
// directory, PHP passed to one of the stack's pools.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/phptune/phptune/internal/exitcode"
)

// startNginx renders nginx.conf, passing PHP to cfg's nginx pool, and starts nginx on port.
func (s *Stack) startNginx(cfg Config, w workers, bin string, port int) error {
	upstream := s.Pools[0]
	if cfg.NginxPool != "" {
		var ok bool
		if upstream, ok = s.Pool(cfg.NginxPool); !ok {
			return exitcode.UsageErrorf("nginx pool %q: no such pool", cfg.NginxPool)
		}
	}
	up := upstream.Address
	if upstream.Network == ListenUnix {
		up = "unix:" + up
	}
	for _, t := range []string{"client_body", "fastcgi", "proxy", "uwsgi", "scgi"} {
		d := filepath.Join(s.PrivDir, "nginx", t)
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("nginx temp dir: %w", err)
		}
		if w.uid >= 0 {
			if err := os.Chown(d, w.uid, w.gid); err != nil {
				return fmt.Errorf("nginx temp dir: %w", err)
			}
		}
	}
	conf := renderNginx(nginxVars{RunDir: s.RunDir, PrivDir: s.PrivDir, Docroot: s.Docroot, Front: cfg.Front, User: w.user,
		Upstream: up, Port: port, Workers: cfg.NginxWorkers, Keepalive: cfg.NginxKeepalive, PHP: cfg.NginxPHP})
	nginxConf := filepath.Join(s.RunDir, "nginx.conf")
	if err := writeFileAtomic(nginxConf, []byte(conf)); err != nil {
		return err
	}
	return s.spawn("nginx", nil, bin, "-e", filepath.Join(s.RunDir, "nginx-error.log"), "-p", s.RunDir, "-c", nginxConf)
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
