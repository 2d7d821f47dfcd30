package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/check"
	"github.com/phptune/phptune/internal/fcgi"
	"github.com/phptune/phptune/internal/loopback"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/procgroup"
	"github.com/phptune/phptune/internal/stack"
)

// TestCheckHeldPool: a pool of 2 whose every worker is held by a kept FastCGI connection to a page that sleeps,
// with 6 more connections waiting, cannot answer its status page: check reads its queue from the kernel and its
// workers from /proc, and exits 3 naming pm.max_children with the queue's depth.
func TestCheckHeldPool(t *testing.T) {
	app := writeApp(t, map[string]string{"index.php": "<?php echo 'ok';\n", "sleep.php": "<?php sleep(120);\n"})
	s := checkStack(t, app, stack.Pool{Name: "held", Listen: stack.ListenUnix, PM: "static", MaxChildren: 2}, nil)
	ep := s.Pools[0]
	holdWorkers(t, ep.Network, ep.Address, filepath.Join(s.Docroot, "sleep.php"), 8)
	waitFor(t, "6 connections waiting in the accept queue", func() bool {
		q, err := measure.ReadListenQueue(ep.Network, ep.Address)
		return err == nil && q.Queued >= 6
	})
	res, r := checkJSON(t, confOf(s), "--for", "2s", "--interval", "500ms")
	p := res.Pools[0]
	f := findingOf(p, check.FindUnanswered)
	if r.code != 3 || f == nil || !strings.Contains(f.Title, "pm.max_children = 2") || !strings.Contains(f.Title, "every worker held") {
		t.Fatalf("exit %d, findings %+v, queue %+v; want exit 3 and %s naming pm.max_children\n%s", r.code, p.Findings, p.Queue, check.FindUnanswered, r.stderr)
	}
	if p.Held == nil || p.Held.Busy != 2 || p.Held.Workers != 2 || p.Queue.Peak != 6 || p.Queue.Source != "kernel" {
		t.Errorf("held %+v, queue %+v: want 2 of 2 workers held and 6 connections waiting", p.Held, p.Queue)
	}
	for _, w := range p.Held.States {
		if w.Syscall != "clock_nanosleep" && w.Syscall != "nanosleep" {
			t.Errorf("worker %+v: want it found sleeping in its request", w)
		}
	}
	if !strings.Contains(strings.Join(f.Evidence, "\n"), "2 of 2 held: 2 in ") {
		t.Errorf("evidence %q", f.Evidence)
	}
	if sg, ok := suggestion(p, "pm.max_children"); !ok || sg.Current != "2" || sg.Suggested != strconv.Itoa(2+p.Queue.Peak) {
		t.Errorf("suggestion %+v", sg)
	}
}

// holdWorkers opens n FastCGI connections to address, each asking for script: the first ones hold a worker each,
// the others wait in the accept queue. They are closed at the end of the test.
func holdWorkers(t *testing.T, network, address, script string, n int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, n)
	params := []fcgi.Param{{Name: "SCRIPT_FILENAME", Value: script}, {Name: "SCRIPT_NAME", Value: "/" + filepath.Base(script)},
		{Name: "REQUEST_METHOD", Value: "GET"}}
	for i := 0; i < n; i++ {
		go func() {
			fcgi.Get(ctx, network, address, params)
			done <- struct{}{}
		}()
	}
	t.Cleanup(func() {
		cancel()
		for i := 0; i < n; i++ {
			<-done
		}
	})
}

// waitFor polls cond until it holds, failing the test after 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(end) {
			t.Fatalf("waited 30s for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func findingOf(p *check.Pool, id string) *check.Finding {
	i := slices.IndexFunc(p.Findings, func(f check.Finding) bool { return f.ID == id })
	if i < 0 {
		return nil
	}
	return &p.Findings[i]
}

// TestCheckDockerLayout: the official image's layout under a prefix of its own (php-fpm.conf including
// etc/php-fpm.d/*.conf: www.conf, docker.conf, zz-docker.conf with "listen = PORT", bound dual-stack on [::]),
// started as `php-fpm -y FILE -p PREFIX`, its pool ondemand and idle: check reads the pool by its file and by
// its address (the status path then the running pool's own), its accept queue and its opcache.
func TestCheckDockerLayout(t *testing.T) {
	prefix, port := dockerLayout(t)
	runFPM(t, prefix, port)
	conf := filepath.Join(prefix, "etc", "php-fpm.conf")
	for _, target := range []string{conf, "tcp:127.0.0.1:" + strconv.Itoa(port)} {
		res, r := checkJSON(t, target, "--for", "2s", "--interval", "500ms")
		p := res.Pools[0]
		if r.code != 0 || p.Name != "www" || p.StatusPath != "/fpm-status" || p.Settings.PM != "ondemand" || p.Settings.MaxChildren != 3 {
			t.Errorf("%s: exit %d, pool %s status %s settings %+v findings %+v\n%s", target, r.code, p.Name, p.StatusPath, p.Settings, p.Findings, r.stderr)
		}
		if p.Samples < 3 || p.Queue.Source != "kernel" || p.QueueSamples < 3 || p.Opcache.Reads < 1 || p.Opcache.Why != "" {
			t.Errorf("%s: %d samples, queue %+v from %d reads, opcache %d reads (%s): not a real look at the pool", target, p.Samples, p.Queue,
				p.QueueSamples, p.Opcache.Reads, p.Opcache.Why)
		}
	}
	if left, _ := filepath.Glob("/run/phptune-check-*/*"); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// dockerLayout writes docker-library/php's php-fpm configuration under a new prefix, its port a free one.
func dockerLayout(t *testing.T) (prefix string, port int) {
	t.Helper()
	prefix = t.TempDir()
	port, err := loopback.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"etc/php-fpm.conf": "[global]\npid = run/php-fpm.pid\nerror_log = log/php-fpm.log\ninclude=etc/php-fpm.d/*.conf\n",
		"etc/php-fpm.d/www.conf": "[www]\nuser = www-data\ngroup = www-data\nlisten = 127.0.0.1:9000\npm = dynamic\npm.max_children = 5\n" +
			"pm.start_servers = 2\npm.min_spare_servers = 1\npm.max_spare_servers = 3\n",
		"etc/php-fpm.d/docker.conf": "[global]\nerror_log = /proc/self/fd/2\nlog_limit = 8192\n\n[www]\naccess.log = /proc/self/fd/2\n" +
			"clear_env = no\ncatch_workers_output = yes\ndecorate_workers_output = no\n",
		// The image's zz-docker.conf, with the pool a test needs: ondemand, a status page.
		"etc/php-fpm.d/zz-docker.conf": fmt.Sprintf("[global]\ndaemonize = no\n\n[www]\nlisten = %d\npm = ondemand\npm.max_children = 3\n"+
			"pm.status_path = /fpm-status\n", port),
	}
	for _, dir := range []string{"etc/php-fpm.d", "run", "log"} {
		if err := os.MkdirAll(filepath.Join(prefix, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(prefix, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return prefix, port
}

// runFPM starts php-fpm8.2 on the layout at prefix, in the foreground as the image runs it, until the test ends,
// and waits for its port to listen.
func runFPM(t *testing.T, prefix string, port int) {
	t.Helper()
	cmd := exec.Command("php-fpm8.2", "-y", filepath.Join(prefix, "etc", "php-fpm.conf"), "-p", prefix)
	log, err := os.Create(filepath.Join(prefix, "log", "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start php-fpm8.2 (make deps): %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		procgroup.Signal(cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			procgroup.Kill(cmd.Process.Pid)
			<-exited
		}
		log.Close()
	})
	waitFor(t, "php-fpm to listen", func() bool {
		select {
		case <-exited:
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("php-fpm8.2 exited:\n%s", b)
		default:
		}
		_, err := measure.ReadListenQueue("tcp", "127.0.0.1:"+strconv.Itoa(port))
		return err == nil
	})
}
