// Package profile says why a configuration is fast or slow, per request: system calls (strace attached to the
// pool's workers), instructions (callgrind on php-cgi with the pool's settings), memory per worker, opcache's
// state and huge pages, for any knob.Config, several variants side by side.
package profile

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/fcgi"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/phpini"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/textline"
)

// Schema is the JSON schema of a Result.
const Schema = "phptune/profile/v1"

// Options describe a profile run.
type Options struct {
	// Stack is the app and the programs (App or AppFS, Front, PHPFPM, User); pools and defines come from each
	// variant's configuration. nginx is not started: requests go to php-fpm over FastCGI with the params
	// nginx would send.
	Stack   stack.Config
	AppName string
	// URLs are the requests, weighted (the mix's proportions hold for the syscall count and the instruction
	// average).
	URLs    []load.MixItem
	Request load.Request // method, headers, body
	// Variants: the first is the baseline the others are compared with.
	Variants []Variant
	// Requests sent under strace per variant (default 200), after Warmup rounds of the URLs (default 5).
	Requests, Warmup int
	// InstrWarmup and InstrN are php-cgi -T's warm-ups and measured requests (defaults 2 and 3); Functions > 0
	// keeps that many functions by inclusive cost.
	InstrWarmup, InstrN, Functions int
	PHPCGI, Valgrind               string
	// NoSyscalls and NoInstructions skip those parts (and their prerequisites).
	NoSyscalls, NoInstructions bool
	// Slowlog, when >= 1 s, sets php-fpm's request_slowlog_timeout for an untraced run of Requests requests
	// after the traced one (the slowlog uses ptrace itself, so it cannot run under strace).
	Slowlog time.Duration
	// Wall adds excimer's wall-clock and CPU sampling of Requests requests, on a stack of its own.
	Wall    bool
	Timeout time.Duration // per request; default 30 s
	// Progress, when set, is told what is being done.
	Progress func(variant, step string)
}

// Variant is a named configuration.
type Variant struct {
	Name   string
	Config knob.Config
}

// Variants are the configurations to profile: the baseline, base with each of knobs (--knob NAME=VALUE) set, and
// beside it, for each of compares (--compare NAME=VALUE), the baseline with that one set too, named by it. known
// are the knobs a name may be (knob.SetNamed).
func Variants(base knob.Config, known []knob.Knob, knobs, compares []string) ([]Variant, error) {
	for _, kv := range knobs {
		if err := knob.SetNamed(&base, known, "--knob", kv); err != nil {
			return nil, err
		}
	}
	vs := []Variant{{Name: "baseline", Config: base}}
	for _, kv := range compares {
		c := base.Clone()
		if err := knob.SetNamed(&c, known, "--compare", kv); err != nil {
			return nil, err
		}
		vs = append(vs, Variant{Name: kv, Config: c})
	}
	return vs, nil
}

// Without skips the parts named by --without: syscalls, instructions.
func (o *Options) Without(parts []string) error {
	for _, part := range parts {
		switch part {
		case "syscalls":
			o.NoSyscalls = true
		case "instructions":
			o.NoInstructions = true
		default:
			return exitcode.UsageErrorf("--without %s: want syscalls or instructions", part)
		}
	}
	return nil
}

// Result is a profile run: schema phptune/profile/v1.
type Result struct {
	Schema      string          `json:"schema"`
	App         string          `json:"app"`
	URLs        []URL           `json:"urls"`
	Started     time.Time       `json:"started"`
	ElapsedS    float64         `json:"elapsed_s"`
	Partial     bool            `json:"partial,omitempty"`
	Requests    int             `json:"requests"` // per variant under strace
	Variants    []VariantResult `json:"variants"`
	Host        measure.Host    `json:"host"`
	CommandLine []string        `json:"command_line,omitempty"`
}

// URL is one request of the mix.
type URL struct {
	URI    string `json:"uri"`
	Weight int    `json:"weight"`
}

// VariantResult is one configuration's profile. Figures are per request; an Error leaves the rest empty or
// partial.
type VariantResult struct {
	Name   string      `json:"name"`
	Config string      `json:"config"`
	Knobs  knob.Config `json:"settings"`
	Error  string      `json:"error,omitempty"`

	// SyscallsPerReq is every system call of the pool (master and workers) during the traced requests, divided
	// by their number; Syscalls the same per call name; SyscallErrorsPerReq the failed ones (ENOENT of a stat...).
	SyscallsPerReq      float64            `json:"syscalls_per_req"`
	Syscalls            map[string]float64 `json:"syscalls"`
	SyscallErrorsPerReq float64            `json:"syscall_errors_per_req"`
	SyscallErrors       map[string]float64 `json:"syscall_errors,omitempty"`
	// TracedRequests are the requests strace saw (answered while every live pool process was traced), the
	// divisor of the figures above; TracedProcesses the pool processes it traced, recycled workers' successors
	// included.
	TracedRequests  int `json:"traced_requests"`
	TracedProcesses int `json:"traced_processes,omitempty"`
	FailedRequests  int `json:"failed_requests,omitempty"`

	// InstructionsPerReq is the mix's weighted mean of each URL's instructions per request (callgrind).
	InstructionsPerReq float64    `json:"instructions_per_req"`
	Instructions       []URLInstr `json:"instructions,omitempty"`
	// InstructionsOf names the variant whose counts these are, when this one has the same PHP settings.
	InstructionsOf string `json:"instructions_of,omitempty"`

	Workers   []WorkerMemory     `json:"workers,omitempty"`
	MeanPSS   int64              `json:"mean_pss"`
	MeanUSS   int64              `json:"mean_uss"`
	Opcache   *measure.Opcache   `json:"opcache,omitempty"`
	HugePages *measure.HugePages `json:"huge_pages,omitempty"`
	Slowlog   *Slowlog           `json:"slowlog,omitempty"`
	Wall      *WallTime          `json:"wall_time,omitempty"`
	Warnings  []string           `json:"warnings,omitempty"`
	ElapsedS  float64            `json:"elapsed_s"`
}

// URLInstr is callgrind's count for one URL.
type URLInstr struct {
	URI string `json:"uri"`
	*measure.InstrResult
}

// WorkerMemory is one worker's memory after the traced requests.
type WorkerMemory struct {
	PID int   `json:"pid"`
	PSS int64 `json:"pss"`
	USS int64 `json:"uss"`
	RSS int64 `json:"rss"`
}

// Slowlog is what php-fpm's slowlog caught in an untraced run.
type Slowlog struct {
	Timeout  float64  `json:"timeout_s"`
	Requests int      `json:"requests"`
	Entries  int      `json:"entries"`          // php-fpm checks on its heartbeat: it can miss a request just over the limit
	Traces   []string `json:"traces,omitempty"` // the first few, as php-fpm wrote them
}

// Run profiles every variant in turn. A variant that fails carries its error; the others are still measured.
// On cancellation it returns the variants done so far, Partial set, and the context's error.
func Run(ctx context.Context, o Options) (*Result, error) {
	if len(o.Variants) == 0 {
		return nil, exitcode.UsageErrorf("profile: no configuration to profile")
	}
	if len(o.URLs) == 0 {
		o.URLs = []load.MixItem{{URI: "/", Weight: 1}}
	}
	o.URLs = slices.Clone(o.URLs)
	for i := range o.URLs {
		if o.URLs[i].Weight <= 0 {
			o.URLs[i].Weight = 1
		}
		if !strings.HasPrefix(o.URLs[i].URI, "/") {
			return nil, exitcode.UsageErrorf("URL %q: want a path starting with /", o.URLs[i].URI)
		}
	}
	if o.Requests <= 0 {
		o.Requests = 200
	}
	if o.Warmup <= 0 {
		o.Warmup = 5
	}
	if o.Timeout <= 0 {
		o.Timeout = load.DefaultTimeout
	}
	if o.Request.Method == "" {
		o.Request.Method = "GET"
	}
	if o.Slowlog > 0 && o.Slowlog < time.Second {
		return nil, exitcode.UsageErrorf("slowlog timeout %s: php-fpm counts it in whole seconds, give 1s or more", o.Slowlog)
	}
	// Prerequisites before anything starts.
	fpm, err := stack.FindPHPFPM(o.Stack.PHPFPM)
	if err != nil {
		return nil, err
	}
	if !o.NoSyscalls {
		if _, err := measure.FindStrace(); err != nil {
			return nil, err
		}
	}
	if !o.NoInstructions {
		if _, err := measure.FindValgrind(o.Valgrind); err != nil {
			return nil, err
		}
		if o.PHPCGI, err = measure.FindPHPCGI(o.PHPCGI, fpm); err != nil {
			return nil, err
		}
	}
	if o.Wall {
		if err := checkExcimer(ctx, fpm); err != nil {
			return nil, err
		}
	}
	res := &Result{Schema: Schema, App: o.AppName, Started: time.Now(), Requests: o.Requests}
	for _, u := range o.URLs {
		res.URLs = append(res.URLs, URL{URI: u.URI, Weight: u.Weight})
	}
	res.Host, _ = measure.ReadHost()
	instr := map[string]*VariantResult{} // by PHP settings: php-cgi sees nothing else of a configuration
	for i, v := range o.Variants {
		vr := runVariant(ctx, o, v, instr)
		res.Variants = append(res.Variants, vr)
		if ctx.Err() != nil {
			res.Partial = true
			// The variants not run say so, whether the signal came during the last one or just after it.
			for _, rest := range o.Variants[i+1:] {
				res.Variants = append(res.Variants, VariantResult{Name: rest.Name, Config: rest.Config.String(), Knobs: rest.Config, Error: "interrupted"})
			}
			break
		}
	}
	res.ElapsedS = time.Since(res.Started).Seconds()
	if ctx.Err() != nil {
		res.Partial = true
		return res, ctx.Err()
	}
	return res, nil
}

// Failed counts the variants that carry an error.
func (r *Result) Failed() int {
	n := 0
	for _, v := range r.Variants {
		if v.Error != "" {
			n++
		}
	}
	return n
}

func runVariant(ctx context.Context, o Options, v Variant, instr map[string]*VariantResult) VariantResult {
	start := time.Now()
	vr := VariantResult{Name: v.Name, Config: v.Config.String(), Knobs: v.Config.Clone()}
	key := phpSettings(v.Config)
	if prev, ok := instr[key]; ok && !o.NoInstructions {
		// Pool, listen and keep-alive knobs do not reach php-cgi: the counts would be the same.
		vr.Instructions, vr.InstructionsPerReq, vr.InstructionsOf = prev.Instructions, prev.InstructionsPerReq, prev.Name
		o.NoInstructions = true
	}
	err := profileVariant(ctx, o, v, &vr)
	if err == nil && vr.InstructionsOf == "" && len(vr.Instructions) > 0 {
		instr[key] = &vr
	}
	if err != nil {
		if ctx.Err() != nil {
			vr.Error = "interrupted"
		} else {
			vr.Error = err.Error()
		}
	}
	vr.ElapsedS = time.Since(start).Seconds()
	return vr
}

func (o Options) progress(v, step string) {
	if o.Progress != nil {
		o.Progress(v, step)
	}
}

// request is one URL's FastCGI request and its CGI params.
type request struct {
	uri    string
	weight int
	params []fcgi.Param
	body   []byte
	req    *fcgi.Request
}

func profileVariant(ctx context.Context, o Options, v Variant, vr *VariantResult) error {
	o.progress(v.Name, "starting php-fpm")
	st, reqs, c, err := startVariant(ctx, o, v)
	if err != nil {
		return err
	}
	defer st.Stop(context.Background())
	defer c.close()
	pool := st.Pools[0]
	script, err := measure.WriteOpcacheScript(st.PrivDir)
	if err != nil {
		return err
	}
	if err := dateBack(script); err != nil {
		return err
	}

	// Each URL once, checked: a failing app is not worth profiling.
	o.progress(v.Name, "checking the URLs")
	for _, r := range reqs {
		status, stderr, err := c.do(ctx, r)
		if err != nil {
			return fmt.Errorf("%s: %w", r.uri, err)
		}
		if status < 200 || status > 299 {
			return fmt.Errorf("%s answered %d%s: fix the app or the --url list", r.uri, status, phpSays(stderr))
		}
	}
	seq := sequence(reqs)
	o.progress(v.Name, "warming up")
	for i := 0; i < o.Warmup*len(seq); i++ {
		if _, _, err := c.do(ctx, reqs[seq[i%len(seq)]]); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	master := st.PID("php-fpm")
	ocBefore, _ := readOpcache(ctx, pool, script)

	if !o.NoSyscalls {
		o.progress(v.Name, fmt.Sprintf("%d requests under strace", o.Requests))
		if err := traceSyscalls(ctx, o, c, reqs, seq, master, vr); err != nil {
			return err
		}
	}
	workers, err := workerPIDs(master)
	if err != nil {
		return err
	}
	for _, pid := range workers {
		p, err := measure.ReadProc(pid)
		if err != nil {
			continue // a worker that just exited (max_requests, ondemand)
		}
		vr.Workers = append(vr.Workers, WorkerMemory{PID: pid, PSS: p.PSS, USS: p.USS, RSS: p.RSS})
		vr.MeanPSS += p.PSS
		vr.MeanUSS += p.USS
	}
	if n := int64(len(vr.Workers)); n > 0 {
		vr.MeanPSS /= n
		vr.MeanUSS /= n
	}

	o.progress(v.Name, "opcache status")
	oc, err := readOpcache(ctx, pool, script)
	if err != nil {
		vr.Warnings = append(vr.Warnings, "opcache status: "+err.Error())
	} else {
		// The hit rate of the traced requests alone: the cache's own counters include the warm-up's compiles.
		if ocBefore != nil && oc.Enabled {
			hits, misses := oc.Hits-ocBefore.Hits, oc.Misses-ocBefore.Misses
			if hits+misses > 0 {
				oc.Hits, oc.Misses, oc.HitRate = hits, misses, 100*float64(hits)/float64(hits+misses)
				oc.HitRateWindow = "traced requests"
			}
		}
		vr.Opcache = oc
		vr.Warnings = append(vr.Warnings, oc.Warnings()...)
	}
	if len(workers) > 0 {
		hcp := v.Config.Defines["opcache.huge_code_pages"]
		if oc != nil && oc.INI != nil {
			hcp = oc.INI["opcache.huge_code_pages"]
		}
		if hp, err := measure.ReadHugePages(workers[0], hcp); err == nil {
			vr.HugePages = hp
		} else {
			vr.Warnings = append(vr.Warnings, "huge pages: "+err.Error())
		}
	}

	if o.Slowlog > 0 {
		o.progress(v.Name, "slowlog run")
		if vr.Slowlog, err = slowlogRun(ctx, o, st, c, reqs, seq); err != nil {
			return err
		}
	}

	if !o.NoInstructions {
		if err := countInstructions(ctx, o, v, st, reqs, vr); err != nil {
			return err
		}
	}
	if o.Wall {
		o.progress(v.Name, "wall-time sampling")
		if vr.Wall, err = wallRun(ctx, o, v); err != nil {
			return fmt.Errorf("wall-time view: %w", err)
		}
	}
	return nil
}

// buildRequests makes each URL's FastCGI request for the served copy, with the params nginx would send.
func buildRequests(o Options, st *stack.Stack, front string) []request {
	pool := st.Pools[0]
	var reqs []request
	front = "/" + strings.TrimPrefix(front, "/")
	for _, u := range o.URLs {
		_, query, _ := strings.Cut(u.URI, "?")
		t := load.Target{Protocol: load.FastCGI, Network: pool.Network, Address: pool.Address, Script: st.Script(),
			DocumentRoot: st.Docroot, ScriptName: front, RequestURI: u.URI, Query: query}
		r := u.RequestOver(o.Request)
		p := load.FastCGIParams(t, r)
		reqs = append(reqs, request{uri: u.URI, weight: u.Weight, params: p, body: r.Body, req: fcgi.NewRequest(p, r.Body)})
	}
	return reqs
}

// traceSyscalls attaches strace to the pool, sends o.Requests requests and divides by those strace saw. A
// strace that hung detaching (strace 6.1's vfork deadlock, see measure.Strace) is measured once more.
func traceSyscalls(ctx context.Context, o Options, c *sender, reqs []request, seq []int, master int, vr *VariantResult) error {
	tr, err := traceOnce(ctx, o, c, reqs, seq, master)
	if errors.Is(err, measure.ErrStraceHung) {
		vr.Warnings = append(vr.Warnings, fmt.Sprintf("syscalls measured twice: %v", err))
		tr, err = traceOnce(ctx, o, c, reqs, seq, master)
	}
	if err != nil {
		return err
	}
	if tr.seen == 0 {
		return errors.New("strace saw no request")
	}
	vr.TracedRequests, vr.FailedRequests, vr.TracedProcesses = tr.seen, tr.failed, tr.procs
	if tr.failed > 0 {
		vr.Warnings = append(vr.Warnings, fmt.Sprintf("%d of %d traced requests failed", tr.failed, tr.seen))
	}
	perRequest(tr.tab, float64(tr.seen), vr)
	return nil
}

// perRequest divides strace's counts by the requests it saw.
func perRequest(tab *measure.SyscallTable, n float64, vr *VariantResult) {
	vr.Syscalls = map[string]float64{}
	for _, r := range tab.Rows {
		vr.Syscalls[r.Name] = float64(r.Calls) / n
		if r.Errors > 0 {
			if vr.SyscallErrors == nil {
				vr.SyscallErrors = map[string]float64{}
			}
			vr.SyscallErrors[r.Name] = float64(r.Errors) / n
		}
	}
	vr.SyscallsPerReq = float64(tab.TotalCalls) / n
	vr.SyscallErrorsPerReq = float64(tab.TotalErrors) / n
}

// traced is one strace run: its table, the requests answered while every live pool process was traced, how
// many of those failed, and the processes traced (recycled workers add theirs).
type traced struct {
	tab          *measure.SyscallTable
	seen, failed int
	procs        int
}

// traceOnce sends o.Requests requests under strace. measure.TraceGroup returns once every live process of the
// pool is traced, and the master's new workers are followed, so each request answered after it was seen.
func traceOnce(ctx context.Context, o Options, c *sender, reqs []request, seq []int, master int) (traced, error) {
	tr, err := measure.TraceGroup(ctx, master)
	if err != nil {
		return traced{}, err
	}
	var sendErr error
	var t traced
	for i := 0; i < o.Requests; i++ {
		status, _, err := c.do(ctx, reqs[seq[i%len(seq)]])
		if err != nil {
			sendErr = err
			break
		}
		t.seen++
		if status < 200 || status > 299 {
			t.failed++
		}
	}
	t.procs = tr.Processes()
	tab, stopErr := tr.Stop()
	if sendErr != nil {
		return traced{}, fmt.Errorf("requests under strace: %w", sendErr)
	}
	t.tab = tab
	return t, stopErr
}

// countInstructions runs callgrind once per URL with the variant's settings, while the stack (and so the
// served copy of the app, at the same paths) is up.
func countInstructions(ctx context.Context, o Options, v Variant, st *stack.Stack, reqs []request, vr *VariantResult) error {
	per, by, err := instructionsOfMix(ctx, o, v, st.PHPINI, st.Docroot, st.Script(), reqs)
	if err != nil {
		return err
	}
	vr.InstructionsPerReq, vr.Instructions = per, by
	return nil
}

// instructionsOfMix runs callgrind once per URL with the variant's PHP settings over the php.ini php-fpm reads
// (base), and weighs the counts by the mix.
func instructionsOfMix(ctx context.Context, o Options, v Variant, base phpini.Files, docroot, script string, reqs []request) (float64, []URLInstr, error) {
	ini := maps.Clone(v.Config.INI)
	if ini == nil {
		ini = map[string]string{}
	}
	for k, val := range v.Config.Defines {
		ini[k] = strings.ReplaceAll(val, stack.DocrootVar, docroot) // opcache.preload=${DOCROOT}/preload.php
	}
	if ini["opcache.preload"] != "" && ini["opcache.preload_user"] == "" && os.Geteuid() == 0 {
		// As root, PHP refuses to preload without a user to run the script as; php-cgi stays root here.
		ini["opcache.preload_user"] = "root"
	}
	// The URLs are counted side by side, one callgrind a CPU: callgrind runs a program about 50 times slower
	// on one core, and instruction counts do not depend on what else runs.
	by := make([]URLInstr, len(reqs))
	errs := make([]error, len(reqs))
	sem := make(chan struct{}, max(1, runtime.NumCPU()))
	var wg sync.WaitGroup
	var mu sync.Mutex // o.Progress is not required to be safe for concurrent use
	for i, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			mu.Lock()
			o.progress(v.Name, "callgrind "+r.uri)
			mu.Unlock()
			ir, err := measure.Instructions(ctx, measure.InstrOptions{Valgrind: o.Valgrind, PHPCGI: o.PHPCGI, Script: script,
				Env: measure.CGIEnv(r.params), Body: r.body, INIFile: base.INI, ScanDir: base.ScanDir, INI: ini,
				Warmup: o.InstrWarmup, N: o.InstrN, Functions: o.Functions})
			if err != nil {
				errs[i] = fmt.Errorf("instructions of %s: %w", r.uri, err)
				return
			}
			by[i] = URLInstr{URI: r.uri, InstrResult: ir}
		}()
	}
	wg.Wait()
	var sum, weights float64
	for i, r := range reqs {
		if errs[i] != nil {
			return 0, nil, errs[i]
		}
		sum += float64(by[i].PerRequest) * float64(r.weight)
		weights += float64(r.weight)
	}
	return sum / weights, by, nil
}

// ScreenInstructions counts the instructions per request of a configuration's PHP settings over o's URL mix
// with php-cgi alone, no php-fpm started: the cheap, repeatable screen for CPU-only knobs (opcache, JIT,
// validate_timestamps, realpath cache) before timed trials. o.Stack.App is read in place (never changed); the
// embedded AppFS is written to a temporary directory. Options other than the app, URLs, request and the
// instruction settings are ignored.
func ScreenInstructions(ctx context.Context, o Options, cfg knob.Config) (float64, []URLInstr, error) {
	fpm, err := stack.FindPHPFPM(o.Stack.PHPFPM)
	if err != nil {
		return 0, nil, err
	}
	if _, err := measure.FindValgrind(o.Valgrind); err != nil {
		return 0, nil, err
	}
	if o.PHPCGI, err = measure.FindPHPCGI(o.PHPCGI, fpm); err != nil {
		return 0, nil, err
	}
	if len(o.URLs) == 0 {
		o.URLs = []load.MixItem{{URI: "/", Weight: 1}}
	}
	if o.Request.Method == "" {
		o.Request.Method = "GET"
	}
	front := o.Stack.Front
	if front == "" {
		front = "index.php"
	}
	docroot := o.Stack.App
	if docroot == "" {
		if o.Stack.AppFS == nil {
			return 0, nil, exitcode.UsageErrorf("no app given")
		}
		dir, err := os.MkdirTemp("", "phptune-screen-")
		if err != nil {
			return 0, nil, err
		}
		defer os.RemoveAll(dir)
		if err := os.CopyFS(dir, o.Stack.AppFS); err != nil {
			return 0, nil, fmt.Errorf("write the app: %w", err)
		}
		// opcache does not cache files younger than opcache.file_update_protection (2 s).
		if err := dateBack(dir); err != nil {
			return 0, nil, err
		}
		docroot = dir
	}
	if docroot, err = filepath.Abs(docroot); err != nil {
		return 0, nil, err
	}
	script := filepath.Join(docroot, front)
	if _, err := os.Stat(script); err != nil {
		return 0, nil, exitcode.UsageErrorf("app %s has no front controller %s", docroot, front)
	}
	var reqs []request
	for _, u := range o.URLs {
		w := max(u.Weight, 1)
		_, query, _ := strings.Cut(u.URI, "?")
		t := load.Target{Protocol: load.FastCGI, Network: "unix", Script: script, DocumentRoot: docroot,
			ScriptName: "/" + strings.TrimPrefix(front, "/"), RequestURI: u.URI, Query: query}
		r := u.RequestOver(o.Request)
		reqs = append(reqs, request{uri: u.URI, weight: w, params: load.FastCGIParams(t, r), body: r.Body})
	}
	iniDir, err := os.MkdirTemp("", "phptune-ini-")
	if err != nil {
		return 0, nil, err
	}
	defer os.RemoveAll(iniDir)
	base, err := phpini.Baseline(fpm, iniDir)
	if err != nil {
		return 0, nil, err
	}
	return instructionsOfMix(ctx, o, Variant{Name: "screen", Config: cfg}, base, docroot, script, reqs)
}

// workerPIDs are the pool's processes other than the master.
func workerPIDs(master int) ([]int, error) {
	pids, err := measure.ProcessGroup(master)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(pids, func(p int) bool { return p == master }), nil
}

// sequence spreads the URLs by weight over one cycle (smooth weighted round-robin).
func sequence(reqs []request) []int {
	total := 0
	for _, r := range reqs {
		total += r.weight
	}
	cur := make([]int, len(reqs))
	seq := make([]int, 0, total)
	for len(seq) < total {
		best := 0
		for i, r := range reqs {
			cur[i] += r.weight
			if cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= total
		seq = append(seq, best)
	}
	return seq
}

// sender sends requests one at a time, on a new connection each (as nginx does without upstream keep-alive) or
// on one kept connection.
type sender struct {
	network, address string
	keep             bool
	timeout          time.Duration
	client           *fcgi.Client
	resp             fcgi.Response
}

func (s *sender) do(ctx context.Context, r request) (status int, stderr []byte, err error) {
	cl := s.client
	if !s.keep {
		cl = fcgi.NewClient(s.network, s.address, 5*time.Second)
		defer cl.Close()
	} else if cl == nil {
		cl = fcgi.NewClient(s.network, s.address, 5*time.Second)
		s.client = cl
	}
	if err := cl.Do(ctx, r.req, &s.resp, time.Now().Add(s.timeout)); err != nil {
		return 0, nil, err
	}
	return s.resp.Status, s.resp.Stderr, nil
}

func (s *sender) close() {
	if s.client != nil {
		s.client.Close()
	}
}

func phpSays(stderr []byte) string {
	s := strings.TrimSpace(string(stderr))
	if s == "" {
		return ""
	}
	return " (PHP says: " + textline.First(s) + ")"
}

// Diff is one row of a side-by-side table: a name and each variant's value.
type Diff struct {
	Name   string
	Values []float64
}

// SyscallRows are the syscalls of all variants, sorted by the largest difference from the baseline (then by
// the baseline's count); rows under 0.05 calls per request in every variant are left out.
func (r *Result) SyscallRows() []Diff {
	names := map[string]bool{}
	for _, v := range r.Variants {
		for n := range v.Syscalls {
			names[n] = true
		}
	}
	var rows []Diff
	for n := range names {
		d := Diff{Name: n}
		keep := false
		for _, v := range r.Variants {
			d.Values = append(d.Values, v.Syscalls[n])
			keep = keep || v.Syscalls[n] >= 0.05
		}
		if keep {
			rows = append(rows, d)
		}
	}
	spread := func(d Diff) float64 {
		m := 0.0
		for _, x := range d.Values[1:] {
			m = max(m, abs(x-d.Values[0]))
		}
		return m
	}
	sort.Slice(rows, func(i, j int) bool {
		si, sj := spread(rows[i]), spread(rows[j])
		if si != sj {
			return si > sj
		}
		if rows[i].Values[0] != rows[j].Values[0] {
			return rows[i].Values[0] > rows[j].Values[0]
		}
		return rows[i].Name < rows[j].Name
	})
	return rows
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// slowlogRun sends o.Requests untraced requests and collects what php-fpm's slowlog wrote meanwhile: the
// stack of every request slower than request_slowlog_timeout (a wall-time view: waits on the network, sleeps,
// locks, which instruction counts never show).
func slowlogRun(ctx context.Context, o Options, st *stack.Stack, c *sender, reqs []request, seq []int) (*Slowlog, error) {
	path := st.LogPath("slow.log")
	before := fileSize(path)
	for i := 0; i < o.Requests; i++ {
		if _, _, err := c.do(ctx, reqs[seq[i%len(seq)]]); err != nil {
			return nil, fmt.Errorf("slowlog run: %w", err)
		}
	}
	// php-fpm writes the trace from the master on its timer tick, up to a second after the timeout.
	select {
	case <-time.After(1200 * time.Millisecond):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	sl := &Slowlog{Timeout: o.Slowlog.Seconds(), Requests: o.Requests}
	data := readFrom(path, before)
	for _, block := range strings.Split(strings.TrimSpace(data), "\n\n") {
		if strings.TrimSpace(block) == "" {
			continue
		}
		sl.Entries++
		if len(sl.Traces) < 5 {
			sl.Traces = append(sl.Traces, strings.ReplaceAll(strings.TrimSpace(block), st.Docroot+"/", ""))
		}
	}
	return sl, nil
}

func readOpcache(ctx context.Context, pool stack.Endpoint, script string) (*measure.Opcache, error) {
	rc, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return measure.ReadOpcache(rc, pool.Network, pool.Address, script)
}

// phpSettings is what php-cgi is given of a configuration: its ini settings and defines.
func phpSettings(c knob.Config) string {
	m := maps.Clone(c.INI)
	if m == nil {
		m = map[string]string{}
	}
	maps.Copy(m, c.Defines)
	keys := slices.Sorted(maps.Keys(m))
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + m[k] + "\n")
	}
	return b.String()
}
