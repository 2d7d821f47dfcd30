package measure

// Instructions per request with callgrind (DESIGN 3): php-cgi -T WARMUP+N runs the same request WARMUP+N times in
// one process, and valgrind counts every instruction. The count is blind to caches and layout, but it is
// repeatable, so it screens CPU-only knobs (opcache, JIT, validate_timestamps, realpath cache) without timed
// trials.
//
// Start-up is excluded with --dump-after=php_request_shutdown: callgrind writes one profile part at the end of
// every request, so part 1 holds module start-up plus the first request, part k (k > 1) exactly request k, and
// the part written at exit holds module shutdown. One run gives every request's own count. The alternatives were
// worse: subtracting a warm-up-only run costs a second valgrind run and carries two start-ups' noise into the
// difference; --toggle-collect=php_execute_script would miss each request's start-up and shutdown (request
// activation, opcache's per-request checks, destructors, output flushing), which are part of what a request
// costs and what some knobs change.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/fcgi"
	"github.com/phptune/phptune/internal/phpini"
	"github.com/phptune/phptune/internal/procgroup"
)

// InstrOptions describe one request to count under callgrind.
type InstrOptions struct {
	Valgrind string // valgrind binary; "" = valgrind on PATH
	PHPCGI   string // php-cgi binary (FindPHPCGI)
	Script   string // absolute path of the front controller (SCRIPT_FILENAME)
	Docroot  string // DOCUMENT_ROOT, when Env does not carry one
	// Env is the request's CGI environment, NAME=VALUE (CGIEnv turns FastCGI params into it). Nothing else of
	// phptune's environment reaches php-cgi.
	Env []string
	// INIFile is passed as -c (php-fpm's php.ini, so both SAPIs start from the same settings); "" = php-cgi's
	// own. ScanDir is PHP_INI_SCAN_DIR (php-fpm's conf.d); "" = php-cgi's compiled-in one.
	INIFile, ScanDir string
	// Body is the request body: php-cgi reads each request's CONTENT_LENGTH bytes from its stdin, which gets the
	// body once for every request run.
	Body []byte
	// NoINI runs php-cgi with -n: no php.ini at all, only INI (a source build's prefix has none of its own).
	NoINI bool
	// INI settings, passed as -d KEY=VALUE in key order.
	INI map[string]string
	// Warmup requests run first and are not counted (opcache compiles and caches on the first); N are measured.
	// Defaults 2 and 3: the counts repeat, and a median of three outvotes one request that revalidated timestamps.
	Warmup, N int
	// Functions, when > 0, keeps that many functions with the largest inclusive cost per measured request.
	Functions int
	// Dir receives callgrind's files; "" = a temporary directory removed afterwards.
	Dir string
}

// InstrResult is what callgrind counted.
type InstrResult struct {
	// PerRequest is the median of the measured requests' counts. The median rather than the mean because
	// opcache revalidates timestamps every revalidate_freq seconds of wall time, and under valgrind a request
	// takes about fifty times longer: the mean would charge a revalidation to every few requests, where a
	// server at full speed spreads it over thousands. Mean is the total of the measured part divided by N.
	PerRequest int64   `json:"per_request"`
	Mean       float64 `json:"mean"`
	Min        int64   `json:"min"`
	Max        int64   `json:"max"`
	// Requests are the measured requests' own counts, in order.
	Requests []int64 `json:"requests"`
	// StartupAndFirst is part 1: module start-up and the first (warm-up) request; Shutdown the part at exit.
	StartupAndFirst int64      `json:"startup_and_first"`
	Shutdown        int64      `json:"shutdown"`
	Warmup          int        `json:"warmup"`
	N               int        `json:"n"`
	Functions       []FuncCost `json:"functions,omitempty"`
	Command         []string   `json:"command"`
}

// FuncCost is one function's instructions per measured request: Inclusive counts its callees, Self does not.
type FuncCost struct {
	Name      string  `json:"name"`
	Object    string  `json:"object,omitempty"`
	Inclusive float64 `json:"inclusive"`
	Self      float64 `json:"self"`
}

// FindValgrind returns path (checked) or valgrind from PATH, with the Debian package to install when missing.
func FindValgrind(path string) (string, error) {
	if path == "" {
		path = "valgrind"
	}
	p, err := exec.LookPath(path)
	if err != nil {
		return "", exitcode.MissingErrorf("valgrind not found: install it (apt-get install valgrind)")
	}
	return p, nil
}

// FindStrace returns strace from PATH, with the Debian package to install when missing.
func FindStrace() (string, error) {
	p, err := exec.LookPath("strace")
	if err != nil {
		return "", exitcode.MissingErrorf("strace not found: install it (apt-get install strace)")
	}
	return p, nil
}

// FindPHPCGI returns path when given, else the php-cgi of the same version as fpmBin (php-fpm8.2 -> php-cgi8.2
// in /usr/bin, or php-cgi beside a custom build's php-fpm).
func FindPHPCGI(path, fpmBin string) (string, error) {
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", exitcode.UsageErrorf("--php-cgi %s: not an executable program: %v", path, err)
		}
		return filepath.Abs(p)
	}
	var cands []string
	ver := phpini.Version(fpmBin)
	if ver != "" {
		cands = append(cands, "/usr/bin/php-cgi"+ver)
	}
	dir := filepath.Dir(fpmBin)
	// A source build keeps php-fpm in sbin and php-cgi in bin.
	cands = append(cands, filepath.Join(dir, "php-cgi"), filepath.Join(filepath.Dir(dir), "bin", "php-cgi"))
	if ver == "" {
		cands = append(cands, "/usr/bin/php-cgi")
	}
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return c, nil
		}
	}
	pkg := "php-cgi"
	if ver != "" {
		pkg = "php" + ver + "-cgi"
	}
	return "", exitcode.MissingErrorf("php-cgi for %s not found: install it (apt-get install %s) or pass --php-cgi PATH", fpmBin, pkg)
}

// CGIEnv turns FastCGI params (fcgi.CGIParams) into a CGI environment.
func CGIEnv(params []fcgi.Param) []string {
	env := make([]string, 0, len(params))
	for _, p := range params {
		env = append(env, p.Name+"="+p.Value)
	}
	return env
}

// jitOn tells whether the settings switch opcache's JIT on (valgrind must then watch for code written at run time).
func jitOn(ini map[string]string) bool {
	switch strings.ToLower(ini["opcache.jit"]) {
	case "", "0", "off", "disable", "false", "no":
		return false
	}
	b := strings.ToLower(ini["opcache.jit_buffer_size"])
	return b != "" && b != "0"
}

// Instructions runs php-cgi under callgrind and returns the instructions per measured request.
func Instructions(ctx context.Context, o InstrOptions) (*InstrResult, error) {
	if o.Warmup <= 0 {
		o.Warmup = 2
	}
	if o.N <= 0 {
		o.N = 3
	}
	vg, err := FindValgrind(o.Valgrind)
	if err != nil {
		return nil, err
	}
	if o.PHPCGI == "" || o.Script == "" {
		return nil, errors.New("instructions: PHPCGI and Script are required")
	}
	dir := o.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "phptune-callgrind-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
	}
	out := filepath.Join(dir, "callgrind.out")
	args := []string{"--tool=callgrind", "--callgrind-out-file=" + out, "--dump-after=php_request_shutdown"}
	if jitOn(o.INI) {
		args = append(args, "--smc-check=all-non-file")
	}
	args = append(args, o.PHPCGI)
	if o.NoINI {
		args = append(args, "-n")
	} else if o.INIFile != "" {
		args = append(args, "-c", o.INIFile)
	}
	keys := make([]string, 0, len(o.INI))
	for k := range o.INI {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-d", k+"="+o.INI[k])
	}
	// PHP's time limit counts CPU time, which callgrind stretches 50 times and more (with the JIT, whose code it
	// must watch, more still): WordPress's page under the tracing JIT hit the 30 s limit. The count needs the
	// request whole, so the limit is lifted, the settings' own too (the last -d wins). max_input_time's timer (60 s
	// in Debian's php.ini) is armed at a request's start and, under php-cgi -T, lasts the request: WordPress under
	// the JIT then met "Maximum execution time of 0 seconds exceeded". -1 leaves it to max_execution_time.
	args = append(args, "-d", "max_execution_time=0", "-d", "max_input_time=-1")
	// php-cgi's opcache runs for the "cgi-fcgi" SAPI; enable_cli covers PHP builds that report "cli" here.
	if _, ok := o.INI["opcache.enable_cli"]; !ok {
		args = append(args, "-d", "opcache.enable_cli=1")
	}
	// -T W+N, not -T W,N: php-cgi built with valgrind's headers (HAVE_VALGRIND, which PHP's configure turns on
	// whenever they are installed) stops callgrind's instrumentation during -T's warm-up, so no warm-up request
	// would be dumped and module start-up would land in the first measured part. The warm-up is ours to skip.
	args = append(args, "-T", strconv.Itoa(o.Warmup+o.N))

	cmd := exec.CommandContext(ctx, vg, args...)
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin"}, o.Env...)
	if o.Docroot != "" && !slices.ContainsFunc(o.Env, func(e string) bool { return strings.HasPrefix(e, "DOCUMENT_ROOT=") }) {
		cmd.Env = append(cmd.Env, "DOCUMENT_ROOT="+o.Docroot)
	}
	if !slices.ContainsFunc(o.Env, func(e string) bool { return strings.HasPrefix(e, "SCRIPT_FILENAME=") }) {
		cmd.Env = append(cmd.Env, "SCRIPT_FILENAME="+o.Script, "REDIRECT_STATUS=200", "REQUEST_METHOD=GET")
	}
	if o.ScanDir != "" {
		cmd.Env = append(cmd.Env, "PHP_INI_SCAN_DIR="+o.ScanDir)
	}
	cmd.Dir = dir
	if len(o.Body) > 0 {
		cmd.Stdin = bytes.NewReader(bytes.Repeat(o.Body, o.Warmup+o.N))
	}
	// php-cgi writes every response to stdout: keep the first for the check, count the rest.
	stdout := &headWriter{max: 64 << 10}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &limitWriter{w: &stderr, n: 1 << 20}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	procgroup.KillOnCancel(cmd, 0)
	res := &InstrResult{Warmup: o.Warmup, N: o.N, Command: append([]string{vg}, args...)}
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if msg := phpError(stdout.buf.Bytes(), stderr.Bytes()); msg != "" {
		return nil, fmt.Errorf("php-cgi %s: %s", o.Script, msg)
	}
	if runErr != nil {
		return nil, fmt.Errorf("valgrind php-cgi: %w: %s", runErr, lastLinesOf(stderr.String(), 3))
	}
	total := o.Warmup + o.N
	var parts []*callgrindPart
	for k := 1; k <= total; k++ {
		p, err := readCallgrind(fmt.Sprintf("%s.%d", out, k), o.Functions > 0)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("callgrind wrote %d of %d request parts: php-cgi %s has no php_request_shutdown symbol to split requests at", k-1, total, o.PHPCGI)
			}
			return nil, err
		}
		parts = append(parts, p)
	}
	if _, err := os.Stat(fmt.Sprintf("%s.%d", out, total+1)); err == nil {
		return nil, fmt.Errorf("callgrind wrote more request parts than the %d requests run: cannot tell requests apart", total)
	}
	res.StartupAndFirst = parts[0].total
	if last, err := readCallgrind(out, false); err == nil {
		res.Shutdown = last.total
	}
	measured := parts[o.Warmup:]
	var sum int64
	for _, p := range measured {
		res.Requests = append(res.Requests, p.total)
		sum += p.total
	}
	sorted := slices.Clone(res.Requests)
	slices.Sort(sorted)
	res.Min, res.Max = sorted[0], sorted[len(sorted)-1]
	res.PerRequest = sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		res.PerRequest = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	res.Mean = float64(sum) / float64(len(measured))
	if o.Functions > 0 {
		res.Functions = topFunctions(measured, o.Functions)
	}
	return res, nil
}

// phpError finds a failed request in php-cgi's output: a Status header of 500 or more in the first response, or
// a PHP fatal error.
func phpError(stdout, stderr []byte) string {
	for _, b := range [][]byte{stderr, stdout} {
		for _, l := range strings.Split(string(b), "\n") {
			if i := strings.Index(l, "PHP Fatal error:"); i >= 0 {
				return strings.TrimSpace(l[i:])
			}
			if i := strings.Index(l, "PHP Parse error:"); i >= 0 {
				return strings.TrimSpace(l[i:])
			}
		}
	}
	head, _, _ := bytes.Cut(stdout, []byte("\r\n\r\n"))
	for _, l := range strings.Split(string(head), "\r\n") {
		if v, ok := strings.CutPrefix(l, "Status: "); ok {
			if code, err := strconv.Atoi(strings.Fields(v + " ")[0]); err == nil && code >= 500 {
				return "answered " + strings.TrimSpace(v)
			}
		}
	}
	return ""
}

// callgrindPart is one profile part: its total and, when asked, each function's self and call costs.
type callgrindPart struct {
	total int64
	fns   map[string]*fnCost
}

type fnCost struct {
	object      string
	self, calls int64
}

// readCallgrind reads a callgrind output file (format version 1, one event: Ir). With fns, it sums each
// function's own cost lines (self) and the cost lines that follow its calls= lines (inclusive cost of the call,
// self-recursion left out so that a recursive function is not counted twice).
func readCallgrind(path string, fns bool) (*callgrindPart, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p := &callgrindPart{}
	if fns {
		p.fns = map[string]*fnCost{}
	}
	names := map[string]string{} // compressed "(id)" -> name, per file
	objects := map[string]string{}
	resolve := func(table map[string]string, v string) string {
		if !strings.HasPrefix(v, "(") {
			return v
		}
		id, name, _ := strings.Cut(v, ")")
		id += ")"
		name = strings.TrimSpace(name)
		if name != "" {
			table[id] = name
			return name
		}
		return table[id]
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var cur *fnCost
	curName, curObj, callee := "", "", ""
	afterCall, haveSummary := false, false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		c := line[0]
		if (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*' {
			if !fns {
				continue
			}
			fields := strings.Fields(line)
			var v int64
			if len(fields) >= 2 {
				v, _ = strconv.ParseInt(fields[1], 10, 64)
			}
			if cur != nil {
				if afterCall {
					if callee != curName {
						cur.calls += v
					}
				} else {
					cur.self += v
				}
			}
			afterCall = false
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			if v, ok := strings.CutPrefix(line, "summary:"); ok {
				p.total, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err != nil {
					return nil, fmt.Errorf("%s: summary %q: %w", path, v, err)
				}
				haveSummary = true
			} else if v, ok := strings.CutPrefix(line, "totals:"); ok && !haveSummary {
				p.total, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				haveSummary = true
			}
			continue
		}
		if !fns {
			continue
		}
		switch key {
		case "ob":
			curObj = resolve(objects, val)
		case "cob":
			resolve(objects, val)
		case "fn":
			curName = resolve(names, val)
			k := curObj + "\x00" + curName
			if cur = p.fns[k]; cur == nil {
				cur = &fnCost{object: curObj}
				p.fns[k] = cur
			}
		case "cfn":
			callee = resolve(names, val)
		case "calls":
			afterCall = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if !haveSummary {
		return nil, fmt.Errorf("%s: not a callgrind profile (no summary line)", path)
	}
	return p, nil
}

// topFunctions averages the parts' function costs and keeps the n largest by inclusive cost, leaving out the
// frames that enclose the whole request.
func topFunctions(parts []*callgrindPart, n int) []FuncCost {
	sum := map[string]*FuncCost{}
	for _, p := range parts {
		for k, c := range p.fns {
			fc := sum[k]
			if fc == nil {
				_, name, _ := strings.Cut(k, "\x00")
				fc = &FuncCost{Name: name, Object: filepath.Base(c.object)}
				sum[k] = fc
			}
			fc.Self += float64(c.self)
			fc.Inclusive += float64(c.self + c.calls)
		}
	}
	var total float64
	for _, p := range parts {
		total += float64(p.total)
	}
	total /= float64(len(parts))
	out := make([]FuncCost, 0, len(sum))
	for _, fc := range sum {
		fc.Self /= float64(len(parts))
		fc.Inclusive /= float64(len(parts))
		// The frames around the request loop (main, php-cgi's own loop) hold the whole request: they say nothing.
		if fc.Inclusive >= 0.999*total {
			continue
		}
		out = append(out, *fc)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Inclusive != out[j].Inclusive {
			return out[i].Inclusive > out[j].Inclusive
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// headWriter keeps the first max bytes written and discards the rest.
type headWriter struct {
	buf bytes.Buffer
	max int
}

func (w *headWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// limitWriter writes up to n bytes to w and discards the rest.
type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(l.n, len(p))
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

func lastLinesOf(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}
