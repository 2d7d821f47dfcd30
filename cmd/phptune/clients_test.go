package main

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

type clientsJSON struct {
	Schema  string `json:"schema"`
	Partial bool   `json:"partial"`
	Results []struct {
		Target      string   `json:"target"`
		Op          string   `json:"op"`
		Model       string   `json:"model"`
		Client      string   `json:"client"`
		Concurrency int      `json:"concurrency"`
		Available   bool     `json:"available"`
		OpsPerS     *float64 `json:"ops_per_s"`
		Speedup     *float64 `json:"speedup"`
		Error       string   `json:"error"`
		Note        string   `json:"note"`
		Best        bool     `json:"best"`
	} `json:"results"`
}

// TestClientsEveryModel runs `phptune clients` briefly against a real Tarantool: every model gets a row with a
// throughput, JSON on stdout, result.json and chart.html in --out.
func TestClientsEveryModel(t *testing.T) {
	out := t.TempDir()
	r := phptune(t, "clients", "--target", "tarantool", "--tarantool-ops", "select,sql_select", "--revs", "150",
		"--iterations", "2", "--pause", "0", "--warmup-revs", "10", "--sweep-iterations", "1", "--fibers", "2,4",
		"--procs", "2", "--depth", "8", "--json", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var res clientsJSON
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	if res.Schema != "phptune/clients/v1" || res.Partial {
		t.Errorf("schema %q partial %v", res.Schema, res.Partial)
	}
	got := map[string]bool{}
	for _, row := range res.Results {
		got[row.Op+" "+row.Model] = true
		// Each model's pick is compared with sync; a neighbour it beat has its own figures and says so.
		picked := row.Best && row.Note == ""
		if row.Available && (row.OpsPerS == nil || *row.OpsPerS <= 0 || (row.Speedup != nil) != picked || row.Error != "" ||
			(!picked && !strings.HasPrefix(row.Note, "not picked"))) {
			t.Errorf("row %+v", row)
		}
		if (row.Model == "swoole" || row.Model == "parallel") && row.Available {
			t.Errorf("%s available without its extension", row.Model)
		}
	}
	for _, op := range []string{"select", "sql_select"} {
		for _, m := range []string{"sync", "fibers", "processes", "processes+fibers", "pipeline", "swoole", "parallel"} {
			if !got[op+" "+m] {
				t.Errorf("no row for %s %s", op, m)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil || !strings.Contains(string(b), `"phptune/clients/v1"`) {
		t.Errorf("result.json: %v", err)
	}
	h, err := os.ReadFile(filepath.Join(out, "chart.html"))
	if err != nil || !strings.Contains(string(h), "<svg") || !strings.Contains(string(h), "pipeline x8") {
		t.Errorf("chart.html: %v", err)
	}
}

func TestClientsBadInput(t *testing.T) {
	if r := phptune(t, "clients", "--models", "threads"); r.code != 2 || !strings.Contains(r.stderr, `unknown model "threads"`) {
		t.Errorf("unknown model: exit %d %s", r.code, r.stderr)
	}
	if r := phptune(t, "clients", "--tarantool-ops", "drop"); r.code != 2 || !strings.Contains(r.stderr, `unknown tarantool operation "drop"`) {
		t.Errorf("unknown op: exit %d %s", r.code, r.stderr)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	r := phptune(t, "clients", "--target", "redis", "--redis-port", port, "--pause", "0")
	if r.code != 2 || !strings.Contains(r.stderr, "port "+port+" is taken") {
		t.Errorf("taken port: exit %d %s", r.code, r.stderr)
	}
	// A PATH with php but no tarantool: the error names the Debian package.
	dir := t.TempDir()
	php, err := exec.LookPath("php")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(php, filepath.Join(dir, "php")); err != nil {
		t.Fatal(err)
	}
	// A PHP whose extensions cannot be found: the error names php8.2-msgpack.
	wrapper := filepath.Join(dir, "php-noext")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\nexec "+php+" -d extension_dir=/nonexistent \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := phptune(t, "clients", "--php", wrapper); r.code != 2 || !strings.Contains(r.stderr, "install the Debian package php8.2-msgpack") {
		t.Errorf("no msgpack: exit %d %s", r.code, r.stderr)
	}
	cmd := exec.Command(binPath(t), "clients", "--target", "tarantool")
	cmd.Env = append(os.Environ(), "PATH="+dir)
	outb, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(outb), "install the Debian package tarantool") {
		t.Errorf("missing tarantool: exit %d %s", cmd.ProcessState.ExitCode(), outb)
	}
}

// TestClientsInterruptKeepsPartialResults: Ctrl-C mid-run exits 130, keeps the rows so far (partial) and stops
// the server it started.
func TestClientsInterruptKeepsPartialResults(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	out := t.TempDir()
	// 1000 iterations of 500 revolutions: far more than the wait for the second.
	w := startWatched(t, nil, "clients", "--target", "tarantool", "--tarantool-port", port, "--models", "sync",
		"--revs", "500", "--iterations", "1000", "--pause", "0", "--json", "--out", out)
	// Ctrl-C once the first iteration is done: its row must be kept.
	w.until(t, "a second iteration", func() bool { return strings.Contains(w.se.String(), " iteration 2/") })
	if code, _ := w.stop(t, syscall.SIGINT); code != 130 {
		t.Fatalf("exit %d, want 130: %s", code, w.se.String())
	}
	var res clientsJSON
	if err := json.Unmarshal([]byte(w.so.String()), &res); err != nil || !res.Partial {
		t.Fatalf("partial JSON: %v %s", err, w.so.String())
	}
	if len(res.Results) == 0 || res.Results[0].OpsPerS == nil {
		t.Errorf("no rows kept: %s", w.so.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil || !strings.Contains(string(b), `"partial": true`) {
		t.Errorf("result.json: %v", err)
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second); err == nil {
		c.Close()
		t.Errorf("tarantool still listening on %s after the interrupt", port)
	}
}
