// Package accesslog builds a URL mix for phptune from a real access log: it reads nginx or Apache
// logs (plain or gzip), drops what should not be replayed, collapses IDs into routes, chooses the
// routes that carry the traffic (and the time) and gives each a few concrete URIs with integer
// weights for a weighted round-robin.
//
//	mix, err := accesslog.Read([]string{"/var/log/nginx/access.log", "/var/log/nginx/access.log.2.gz"},
//		accesslog.Options{Top: 10})
//	if err != nil {
//		return err
//	}
//	mix.Summary(os.Stderr)
//	for _, r := range mix.Routes {
//		for _, e := range r.Examples {
//			urls = append(urls, URL{Path: e.URI, Weight: e.Weight})
//		}
//	}
//
// # Formats
//
// With Options.Format empty, each file's format is detected from its first parseable lines; a file
// is "combined" as soon as one line matches combined, and "common" after 10 lines matched only common.
// Auto-detect accepts exactly:
//
//	combined: PREFIX [TIME] "REQUEST" STATUS BYTES "REFERER" "USER-AGENT" [TRAILING FIELDS]
//	common:   PREFIX [TIME] "REQUEST" STATUS BYTES [TRAILING FIELDS]
//
// PREFIX is anything before the first " [" (so "$remote_addr - $remote_user", Apache's "%h %l %u"
// and vhost_combined's "%v:%p %h %l %u" all fit), TIME anything up to "] \"", REQUEST is
// "METHOD URI PROTO" with URI starting with "/" and PROTO with "HTTP/", STATUS is digits, BYTES runs
// to the next space. Quoted fields may hold \" (Apache) or \x22 (nginx). Trailing fields are
// ignored except a request time, looked up in this order:
//
//	rt=0.123 or request_time=0.123      seconds (value may be quoted)
//	a bare number with a dot: 0.123      seconds, the first such field (nginx "$request_time" appended,
//	                                     also when "$upstream_response_time" follows it)
//	urt=0.120 or upstream_response_time=0.120
//	                                     seconds, a fallback; "0.1, 0.2" lists are summed, "-" ignored
//
// Integers without a dot are not taken as times (they may be bytes or milliseconds).
//
// # Patterns
//
// Otherwise Options.Format is an nginx log_format pattern if it holds a $variable ($name or ${name}),
// else an Apache LogFormat string (surrounding quotes and \" escapes as in the Apache config are
// undone). The pattern is compiled once into literal text and fields; a field runs to the first
// occurrence of the literal text after it (skipping \" when that text starts with a quote), the last
// field to the end of the line, and text after a final literal is ignored. Fields read:
//
//	request line "METHOD URI PROTO"   $request                %r
//	method                            $request_method         %m
//	URI with query                    $request_uri            %U%q
//	path, query                       $uri/$document_uri, $args/$query_string ($uri$is_args$args
//	                                  glued is fine)          %U, %q
//	status                            $status                 %s, %>s, %<s
//	request time                      $request_time (s)       %D (µs), %T or %{s}T (s), %{ms}T, %{us}T
//	request time fallback             $upstream_response_time
//
// Any other variable or directive is matched and skipped. The URI is taken from $request_uri, else the
// request line, else path and query; the method from $request_method, else the request line, else GET.
//
// # Time stamps
//
// Each line's stamp gives the load over time (Mix.Load: requests a second, concurrency, service time; see
// Load). Read are:
//
//	nginx $time_local, and the bracket       25/Nov/2026:14:17:23 +0000 (an ISO 8601 stamp there is read too)
//	  of combined and common
//	nginx $time_iso8601                      2026-11-25T14:17:23+00:00 (a fraction of a second, Z, too)
//	nginx $msec                              1795616243.123
//	Apache %t                                [25/Nov/2026:14:17:23 +0000]
//	Apache %{sec}t, %{msec}t, %{usec}t       counts since 1970; %{msec_frac}t and %{usec_frac}t as the
//	                                         fraction of another %{...}t ("%{%d/%b/%Y %T}t.%{msec_frac}t")
//	Apache %{FORMAT}t                        strftime: %d %e %b %h %B %m %Y %y %H %k %I %l %p %M %S %T %R
//	                                         %D %F %z %Z %s %a %A %%; a format with another directive is not read
//
// nginx stamps a line when the request ends; Apache's %t and %{...}t when it began, unless the format starts
// with "end:". A stamp without a zone (%Z other than UTC or GMT, none at all) is taken as UTC, so a clock
// change in such a log shifts an hour. A stamp to the second stands for the middle of its second. A stamp that
// does not read leaves the line counted in the mix and in Load.Untimed, not in the rates.
package accesslog
