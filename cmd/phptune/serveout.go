package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/textline"
	"github.com/phptune/phptune/internal/workload"
)

// serveJSON prints the endpoints as schema phptune/serve/v1: a pool's keys only when the stack has it.
func serveJSON(w io.Writer, s *stack.Stack, app *workload.App, name string, services []string) {
	script := s.Script()
	out := map[string]any{"schema": "phptune/serve/v1", "app": name, "http": s.HTTPURL, "server": s.Server, "docroot": s.Docroot,
		"script": script, "run_dir": s.RunDir, "php_fpm": s.FPMBin, "urls": serveURLs(app), "services": services}
	tcp, unix := s.Endpoints()
	if tcp.Address != "" {
		out["fastcgi_tcp"] = map[string]any{"address": tcp.Address, "target": tcp.URL(script), "status_path": tcp.StatusPath}
	}
	if unix.Address != "" {
		out["fastcgi_unix"] = map[string]any{"socket": unix.Address, "target": unix.URL(script), "status_path": unix.StatusPath}
	}
	report.WriteJSON(w, out)
}

// servePrint prints the endpoints and a bench command for each.
func servePrint(w io.Writer, s *stack.Stack, app *workload.App, name string, services []string, forDur time.Duration) {
	script := s.Script()
	tcp, unix := s.Endpoints()
	fmt.Fprintf(w, "phptune serve: %s, served from %s\n", name, s.Docroot)
	fmt.Fprintf(w, "  %-16s %s\n", "HTTP ("+s.HTTPServer()+")", s.HTTPURL)
	if s.Server != stack.ServerNginx {
		fmt.Fprintf(w, "  %-16s %s\n", "runtime", s.Server)
	}
	if tcp.Address != "" {
		fmt.Fprintf(w, "  FastCGI TCP      %s   (pool %q, status %s)\n", tcp.Address, tcp.Name, tcp.StatusPath)
	}
	if unix.Address != "" {
		fmt.Fprintf(w, "  FastCGI unix     %s   (pool %q, behind %s)\n", unix.Address, unix.Name, s.HTTPServer())
	}
	if len(s.Pools) > 0 {
		fmt.Fprintf(w, "  php-fpm          %s\n", s.FPMBin)
	}
	fmt.Fprintf(w, "  configs, logs    %s\n", s.RunDir)
	if len(services) > 0 {
		fmt.Fprintf(w, "  services         %s (stopped with it)\n", strings.Join(services, ", "))
	}
	path, marker := app.FirstURL()
	check, reqURI := "", ""
	if marker != nil {
		check = " --expect-body " + textline.Quote(marker.String())
	}
	if path != "/" {
		reqURI = " --request-uri " + textline.Quote(path)
	}
	fmt.Fprintf(w, "\n  phptune bench %s -c 8 -d 10s%s\n", textline.Quote(strings.TrimSuffix(s.HTTPURL, "/")+path), check)
	// Real apps read the Host header (HTTP_HOST), which only a web server sends unasked.
	host := " -H " + textline.Quote("Host: "+strings.TrimSuffix(strings.TrimPrefix(s.HTTPURL, "http://"), "/"))
	if tcp.Address != "" {
		fmt.Fprintf(w, "  phptune bench %s -c 4 -d 10s --fpm-status %s%s%s%s\n", textline.Quote(fcgiTarget(tcp.URL(script), path)), tcp.StatusPath, reqURI, host, check)
	}
	if unix.Address != "" {
		fmt.Fprintf(w, "  phptune bench %s -c 4 -d 10s%s%s%s\n", textline.Quote(fcgiTarget(unix.URL(script), path)), reqURI, host, check)
	}
	fmt.Fprintln(w)
	if forDur > 0 {
		fmt.Fprintf(w, "Serving for %s (Ctrl-C stops it sooner).\n", forDur)
	} else {
		fmt.Fprintf(w, "Serving until Ctrl-C.\n")
	}
}
