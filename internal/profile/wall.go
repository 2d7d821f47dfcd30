package profile

// The wall-time view: Debian's php-excimer samples each request's PHP stack on a wall-clock timer and on a CPU
// timer side by side, so that time spent waiting (sleeps, sockets, locks, the disk) shows as wall time without
// CPU time. It runs on a stack of its own, started with auto_prepend_file set to a sampling script, so that the
// syscall and instruction counts of the variant never include the sampler.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/stack"
)

// WallTime is where requests spend their time by excimer's samples, per request.
type WallTime struct {
	PeriodMs  float64    `json:"period_ms"`
	Requests  int        `json:"requests"`
	WallMs    float64    `json:"wall_ms_per_req"`
	CPUMs     float64    `json:"cpu_ms_per_req"`
	Functions []WallFunc `json:"functions"` // by inclusive wall time, largest first
}

// WallFunc is one PHP function's (or file's) inclusive wall and CPU time per request, and its own wall time.
type WallFunc struct {
	Name       string  `json:"name"`
	WallMs     float64 `json:"wall_ms"`
	CPUMs      float64 `json:"cpu_ms"`
	SelfWallMs float64 `json:"selfwall_ms"`
}

const wallPeriod = 0.0001 // seconds between samples

// checkExcimer tells whether php-fpm loads excimer, or which package to install.
func checkExcimer(ctx context.Context, fpmBin string) error {
	out, err := exec.CommandContext(ctx, fpmBin, "-m").Output()
	if err != nil {
		return fmt.Errorf("%s -m: %w", fpmBin, err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.TrimSpace(l) == "excimer" {
			return nil
		}
	}
	return exitcode.MissingErrorf("the wall-time view needs the excimer extension: install it (apt-get install php-excimer)")
}

func wallScript(dir string) string {
	return fmt.Sprintf(`<?php
// written by phptune: wall-clock and CPU sampling of each request with excimer
(static function () {
    if (!class_exists('ExcimerProfiler', false)) {
        return;
    }
    $wall = new ExcimerProfiler();
    $wall->setPeriod(%[2]g);
    $wall->setEventType(EXCIMER_REAL);
    $cpu = new ExcimerProfiler();
    $cpu->setPeriod(%[2]g);
    $cpu->setEventType(EXCIMER_CPU);
    $wall->start();
    $cpu->start();
    register_shutdown_function(static function () use ($wall, $cpu) {
        $wall->stop();
        $cpu->stop();
        file_put_contents(%[1]q . '/wall.collapsed', $wall->getLog()->formatCollapsed(), FILE_APPEND | LOCK_EX);
        file_put_contents(%[1]q . '/cpu.collapsed', $cpu->getLog()->formatCollapsed(), FILE_APPEND | LOCK_EX);
    });
})();
`, dir, wallPeriod)
}

// wallRun starts the variant once more with the sampler prepended, warms it up, samples o.Requests requests.
func wallRun(ctx context.Context, o Options, v Variant) (*WallTime, error) {
	dir, err := os.MkdirTemp("", "phptune-wall-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// The workers' user writes the samples here.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "prepend.php")
	if err := os.WriteFile(script, []byte(wallScript(dir)), 0o644); err != nil {
		return nil, err
	}
	logs := []string{filepath.Join(dir, "wall.collapsed"), filepath.Join(dir, "cpu.collapsed")}
	for _, l := range logs {
		if err := os.WriteFile(l, nil, 0o666); err != nil {
			return nil, err
		}
		if err := os.Chmod(l, 0o666); err != nil {
			return nil, err
		}
	}
	if err := dateBack(script); err != nil {
		return nil, err
	}
	cfg := v.Config.Clone()
	cfg.SetINI("auto_prepend_file", script)
	st, reqs, c, err := startVariant(ctx, o, Variant{Name: v.Name, Config: cfg})
	if err != nil {
		return nil, err
	}
	defer st.Stop(context.Background())
	defer c.close()
	seq := sequence(reqs)
	for i := 0; i < o.Warmup*len(seq); i++ {
		if _, _, err := c.do(ctx, reqs[seq[i%len(seq)]]); err != nil {
			return nil, fmt.Errorf("wall-time warm-up: %w", err)
		}
	}
	for _, l := range logs {
		if err := os.Truncate(l, 0); err != nil {
			return nil, err
		}
	}
	for i := 0; i < o.Requests; i++ {
		if _, _, err := c.do(ctx, reqs[seq[i%len(seq)]]); err != nil {
			return nil, fmt.Errorf("wall-time run: %w", err)
		}
	}
	wall, err := readCollapsed(logs[0])
	if err != nil {
		return nil, err
	}
	cpu, err := readCollapsed(logs[1])
	if err != nil {
		return nil, err
	}
	w := summarizeWall(wall, cpu, o.Requests, 15)
	for i := range w.Functions {
		w.Functions[i].Name = strings.ReplaceAll(w.Functions[i].Name, st.Docroot+"/", "") // the private copy's path says nothing
	}
	return w, nil
}

// collapsed is a sampled profile: per frame name, inclusive and self sample counts, and the total.
type collapsed struct {
	total      int64
	incl, self map[string]int64
}

// readCollapsed reads excimer's collapsed format: "frame;frame;...;leaf COUNT" a line.
func readCollapsed(path string) (*collapsed, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c := &collapsed{incl: map[string]int64{}, self: map[string]int64{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		n, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: malformed line %q", path, line)
		}
		frames := strings.Split(line[:i], ";")
		c.total += n
		seen := map[string]bool{}
		for _, fr := range frames {
			if fr == "" {
				continue // excimer's frame for code outside any function or file
			}
			if !seen[fr] { // recursion counts once
				c.incl[fr] += n
				seen[fr] = true
			}
		}
		c.self[frames[len(frames)-1]] += n
	}
	return c, sc.Err()
}

func summarizeWall(wall, cpu *collapsed, requests, top int) *WallTime {
	ms := func(n int64) float64 { return float64(n) * wallPeriod * 1000 / float64(requests) }
	w := &WallTime{PeriodMs: wallPeriod * 1000, Requests: requests, WallMs: ms(wall.total), CPUMs: ms(cpu.total)}
	for name, n := range wall.incl {
		w.Functions = append(w.Functions, WallFunc{Name: name, WallMs: ms(n), CPUMs: ms(cpu.incl[name]), SelfWallMs: ms(wall.self[name])})
	}
	sort.Slice(w.Functions, func(i, j int) bool {
		if w.Functions[i].WallMs != w.Functions[j].WallMs {
			return w.Functions[i].WallMs > w.Functions[j].WallMs
		}
		return w.Functions[i].Name < w.Functions[j].Name
	})
	if len(w.Functions) > top {
		w.Functions = w.Functions[:top]
	}
	return w
}

// startVariant starts php-fpm for a variant (no nginx), dates the served copy back and builds the requests.
func startVariant(ctx context.Context, o Options, v Variant) (*stack.Stack, []request, *sender, error) {
	sc := o.Stack
	v.Config.Apply(&sc, "profile")
	sc.NoNginx, sc.NginxKeepalive, sc.RunDir = true, 0, ""
	if o.Slowlog > 0 {
		// Relative paths are relative to php-fpm's prefix, the run dir.
		sc.Pools[0].Extra = append(sc.Pools[0].Extra, "slowlog = slow.log",
			fmt.Sprintf("request_slowlog_timeout = %ds", int(o.Slowlog.Seconds())))
	}
	st, err := stack.Start(ctx, sc)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("start php-fpm: %w", err)
	}
	// The served copy is fresh from the copy, and opcache does not cache a file younger than
	// opcache.file_update_protection (2 s): every request would compile it again. Date it back.
	if err := dateBack(st.Docroot); err != nil {
		st.Stop(context.Background())
		return nil, nil, nil, err
	}
	pool := st.Pools[0]
	reqs := buildRequests(o, st, sc.Front)
	c := &sender{network: pool.Network, address: pool.Address, keep: v.Config.Keepalive, timeout: o.Timeout}
	return st, reqs, c, nil
}
