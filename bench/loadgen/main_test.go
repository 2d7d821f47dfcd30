package main

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/phptune/phptune/bench/internal/capture"
)

// Three rounds at 4 connections in which phptune's generator costs exactly twice wrk's, and wrk alone at 16; a
// short line (a note) is skipped.
const results = `4 wrk 1 10.0 1000
4 phptune 1 20.0 1000
4 wrk 2 12 1000
4 phptune 2 24 1000
# a note

4 wrk 3 8 1000
4 phptune 3 16 1000
16 wrk 1 5 100
`

func TestRead(t *testing.T) {
	rows, order, err := read(bufio.NewScanner(strings.NewReader(results)))
	if err != nil {
		t.Fatal(err)
	}
	if want := []key{{4, "wrk"}, {4, "phptune"}, {16, "wrk"}}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if got := rows[key{4, "wrk"}]; len(got) != 3 || got[1] != 10 || got[2] != 12 || got[3] != 8 {
		t.Errorf("wrk at 4 connections by round: %v", got)
	}
	for _, bad := range []string{"4 wrk x 1.0", "four wrk 1 1.0", "4 wrk 1 fast"} {
		_, _, err := read(bufio.NewScanner(strings.NewReader(bad)))
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("line %q: %v, want an error quoting it", bad, err)
		}
	}
}

// Only the rounds that measured both tools pair, in round order.
func TestPaired(t *testing.T) {
	x, y := paired(map[int]float64{1: 1, 2: 2, 3: 3}, map[int]float64{4: 40, 3: 30, 2: 20})
	if !slices.Equal(x, []float64{2, 3}) || !slices.Equal(y, []float64{20, 30}) {
		t.Errorf("paired = %v, %v; want [2 3], [20 30]", x, y)
	}
}

func TestValuesAndList(t *testing.T) {
	v := values(map[int]float64{3: 0.5, 1: 12, 2: 7.125})
	if !slices.Equal(v, []float64{12, 7.125, 0.5}) {
		t.Errorf("values = %v, want in round order", v)
	}
	if got := list(v); got != "12.00 7.12 0.50" {
		t.Errorf("list = %q", got)
	}
}

// The summary: each tool's median and rounds by connections, and the ratio of the tools measured together,
// numerator over reference: 2 in every round.
func TestRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results")
	if err := os.WriteFile(path, []byte(results), 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	out := capture.Stdout(t, func() { err = run([]string{path}) })
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"4 connections: generator CPU per request (us), median of the rounds\n",
		"  wrk             10.00  (3 rounds: 10.00 12.00 8.00)\n",
		"  phptune         20.00  (3 rounds: 20.00 24.00 16.00)\n",
		"  ratio phptune/wrk 2.000 [2.000, 2.000] (95%, achieved ",
		"16 connections: generator CPU per request (us), median of the rounds\n" +
			"  wrk              5.00  (1 rounds: 5.00)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "ratio "); n != 1 {
		t.Errorf("%d ratio lines, want 1 (only phptune and wrk were measured together):\n%s", n, out)
	}
	for _, args := range [][]string{nil, {path, path}} {
		if err := run(args); err == nil || !strings.Contains(err.Error(), "usage") {
			t.Errorf("run(%q): %v, want the usage", args, err)
		}
	}
	if err := run([]string{filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("a missing results file: no error")
	}
}
