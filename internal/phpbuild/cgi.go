package phpbuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/fcgi"
)

// App is a docroot with a front controller, served to php-cgi the way nginx would pass requests to php-fpm.
type App struct {
	Docroot string // absolute
	Front   string // index.php
	// Markers are content checks per request URI (a preset's): see Check.
	Markers map[string]*regexp.Regexp
}

// Check is CheckResponse, and the URI's marker must be in the response: an error page served with status 200
// (a database error page is a fast 200) must not be trained on or timed.
func (a App) Check(uri string, res CGIResult) error {
	if err := CheckResponse(uri, res); err != nil {
		return err
	}
	if m := a.Markers[uri]; m != nil && !m.Match(res.Head) {
		return fmt.Errorf("the app's answer to %s lacks its content check /%s/ (an error page?): fix the app (or prepare the workload again) before training", uri, m)
	}
	return nil
}

// Env is the CGI environment of one GET request for uri ("/articles?page=2"): the params our FastCGI client
// (and nginx's fastcgi.conf with try_files to the front controller) sends.
func (a App) Env(method, uri string) []string {
	u, err := url.Parse(uri)
	if err != nil {
		u = &url.URL{Path: uri}
	}
	script := filepath.Join(a.Docroot, a.Front)
	params := fcgi.CGIParams(fcgi.CGIOptions{
		Method:         method,
		ScriptFilename: script,
		DocumentRoot:   a.Docroot,
		ScriptName:     "/" + a.Front,
		RequestURI:     u.RequestURI(),
		QueryString:    u.RawQuery,
	})
	env := make([]string, 0, len(params)+1)
	for _, p := range params {
		env = append(env, p.Name+"="+p.Value)
	}
	return env
}

// INI is the php.ini phptune runs every PHP binary with (php-cgi -n -d ...): opcache on as in production.
func INI(opcache string, jit bool) []string {
	d := []string{
		"opcache.enable=1",
		"opcache.enable_cli=1",
		"opcache.memory_consumption=128",
		"opcache.interned_strings_buffer=16",
		"opcache.max_accelerated_files=10000",
		"opcache.validate_timestamps=0",
		"memory_limit=256M",
		"display_errors=0",
		"log_errors=1",
		"error_log=/dev/stderr",
	}
	if opcache != "" {
		d = append([]string{"zend_extension=" + opcache}, d...)
	}
	if jit {
		d = append(d, "opcache.jit=tracing", "opcache.jit_buffer_size=64M")
	} else {
		d = append(d, "opcache.jit=off", "opcache.jit_buffer_size=0")
	}
	return d
}

// CGIRun is one `php-cgi -T warmup,repeats` run of one request.
type CGIRun struct {
	CGI     string   // the php-cgi binary
	INI     []string // -d settings (INI(...))
	Env     []string // the request's CGI environment; nil runs Script from the command line
	Script  string   // for command-line runs (the guard, bench.php)
	Warmup  int
	Repeats int
	CPU     int      // pin to this CPU with taskset; -1 = no pinning
	Wrapper []string // a program that runs php-cgi (valgrind ...), before taskset's
	OwnINI  bool     // use the binary's own php.ini (no -n)
}

// CGIResult is what one run gave.
type CGIResult struct {
	Status  int           // HTTP status of the (first) response: 200 unless a Status header says otherwise
	Elapsed time.Duration // php-cgi's "Elapsed time" over the timed repeats
	Head    []byte        // the start of stdout
	Stderr  string
}

// PerRequest is the time of one timed repeat.
func (r CGIResult) PerRequest(repeats int) time.Duration {
	if repeats <= 0 {
		return 0
	}
	return r.Elapsed / time.Duration(repeats)
}

func (r CGIRun) args() (string, []string) {
	var argv []string
	argv = append(argv, r.Wrapper...)
	if r.CPU >= 0 {
		argv = append(argv, "taskset", "-c", strconv.Itoa(r.CPU))
	}
	argv = append(argv, r.CGI)
	if !r.OwnINI {
		argv = append(argv, "-n")
	}
	for _, d := range r.INI {
		argv = append(argv, "-d", d)
	}
	argv = append(argv, "-T", fmt.Sprintf("%d,%d", r.Warmup, r.Repeats))
	if r.Env == nil {
		argv = append(argv, "-q", r.Script)
	}
	return argv[0], argv[1:]
}

// Run runs php-cgi and parses its status and elapsed time.
func (r CGIRun) Run(ctx context.Context) (CGIResult, error) {
	name, args := r.args()
	env := r.Env
	if env == nil {
		env = []string{}
	}
	env = append(env, "PATH="+os.Getenv("PATH"))
	cmd := command(ctx, "", env, name, args...)
	head := &capped{max: 1 << 20} // a whole page for the content checks
	var stderr bytes.Buffer
	cmd.Stdout = head
	cmd.Stderr = &stderr
	err := cmd.Run()
	res := CGIResult{Head: head.b.Bytes(), Stderr: stderr.String()}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if err != nil {
		return res, fmt.Errorf("%s: %w: %s", filepath.Base(r.CGI), err, phpError(res.Stderr))
	}
	res.Status = ParseStatus(res.Head)
	el, err := ParseElapsed(res.Stderr)
	if err != nil {
		return res, fmt.Errorf("%s: %w", filepath.Base(r.CGI), err)
	}
	res.Elapsed = el
	return res, nil
}

type capped struct {
	b   bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.b.Len(); room > 0 {
		c.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

var elapsedRe = regexp.MustCompile(`Elapsed time: ([0-9]+(?:\.[0-9]+)?) sec`)

// ParseElapsed reads the last "Elapsed time: S.UUUUUU sec" line that php-cgi -T prints on stderr.
func ParseElapsed(stderr string) (time.Duration, error) {
	m := elapsedRe.FindAllStringSubmatch(stderr, -1)
	if len(m) == 0 {
		return 0, errors.New(`no "Elapsed time" in php-cgi's output (was it run with -T?)`)
	}
	s, err := strconv.ParseFloat(m[len(m)-1][1], 64)
	if err != nil {
		return 0, fmt.Errorf("elapsed time %q: %w", m[len(m)-1][1], err)
	}
	return time.Duration(s * float64(time.Second)), nil
}

// ParseStatus reads the HTTP status from php-cgi's response headers: a "Status: NNN" header, else 200.
func ParseStatus(out []byte) int {
	head := out
	if i := bytes.Index(out, []byte("\r\n\r\n")); i >= 0 {
		head = out[:i]
	} else if i := bytes.Index(out, []byte("\n\n")); i >= 0 {
		head = out[:i]
	}
	for _, l := range strings.Split(string(head), "\n") {
		l = strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(l, "Status:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				if n, err := strconv.Atoi(f[0]); err == nil {
					return n
				}
			}
		}
	}
	return 200
}

// phpError is PHP's first error message in stderr, else its last line.
func phpError(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if i := strings.Index(l, "PHP Fatal error"); i >= 0 {
			return strings.TrimSpace(l[i:])
		}
		if i := strings.Index(l, "PHP Parse error"); i >= 0 {
			return strings.TrimSpace(l[i:])
		}
	}
	for _, l := range strings.Split(stderr, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "Elapsed time:") {
			return l
		}
	}
	return ""
}

// CGITrainer trains an instrumented build with php-cgi -T over the app's URLs, each with its own CGI
// environment, opcache on (and the JIT as it will run).
type CGITrainer struct {
	App     App
	AppHash string   // hash of the app's files (HashFS)
	URLs    []string // request URIs
	Repeats int      // timed repeats per URL (after as many warm-ups)
	JIT     bool
}

// Hash identifies the training inputs.
func (t *CGITrainer) Hash() string {
	h := sha256.New()
	fmt.Fprintf(h, "cgi\n%s\n%s\n%d\n%v\n", t.AppHash, strings.Join(t.URLs, "\n"), t.Repeats, t.JIT)
	fmt.Fprintf(h, "%s\n", strings.Join(INI("", t.JIT), "\n"))
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Train runs each URL; a response with a server error stops the training with the URL and PHP's message.
func (t *CGITrainer) Train(ctx context.Context, cgi, opcache string, log io.Writer) error {
	if len(t.URLs) == 0 {
		return errors.New("no training URLs")
	}
	n := max(t.Repeats, 1)
	for _, u := range t.URLs {
		r := CGIRun{CGI: cgi, INI: INI(opcache, t.JIT), Env: t.App.Env("GET", u), Warmup: min(n, 10), Repeats: n, CPU: -1}
		res, err := r.Run(ctx)
		if err != nil {
			return fmt.Errorf("training request %s: %w", u, err)
		}
		fmt.Fprintf(log, "train %s: status %d, %v per request\n", u, res.Status, res.PerRequest(n))
		if err := t.App.Check(u, res); err != nil {
			return err
		}
	}
	return nil
}

// CheckResponse fails on a server error or a PHP fatal error: training or timing an app that errors would
// optimise or measure the error path.
func CheckResponse(uri string, res CGIResult) error {
	if res.Status >= 500 {
		return fmt.Errorf("the app answers %s with status %d: fix the app or the URL before training (%s)", uri, res.Status, phpError(res.Stderr))
	}
	for _, l := range strings.Split(res.Stderr, "\n") {
		if strings.Contains(l, "PHP Fatal error") || strings.Contains(l, "PHP Parse error") {
			return fmt.Errorf("the app fails on %s: %s", uri, strings.TrimSpace(l))
		}
	}
	return nil
}

// HashFS hashes an app's files (names and contents).
func HashFS(app fs.FS) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(app, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(app, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", p, len(b))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:16], err
}

func numCPU() int { return runtime.NumCPU() }
