package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/bench/internal/capture"
)

// Three rounds whose ratios with / without are e^0.1, e^0.2 and e^0.3: the log ratios' mean is 0.2, their sd 0.1,
// and Student's t for 2 degrees of freedom at 97.5% is 4.303 (a t table), so the 95% CI of the geometric mean is
// exp(0.2 +- 4.303 x 0.1 / sqrt(3)).
func TestLogRatioCI(t *testing.T) {
	without := []float64{100, 200, 50}
	with := []float64{100 * math.Exp(0.1), 200 * math.Exp(0.2), 50 * math.Exp(0.3)}
	m, lo, hi := logRatioCI(with, without)
	h := 4.303 * 0.1 / math.Sqrt(3)
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"mean", m, math.Exp(0.2)}, {"low", lo, math.Exp(0.2 - h)}, {"high", hi, math.Exp(0.2 + h)}} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s %.6f, want %.6f", c.name, c.got, c.want)
		}
	}
}

// The report gives each arm's medians, the ratios with / without and check's own CPU.
func TestReport(t *testing.T) {
	without := arm{goodput: []float64{100, 110, 90}, capacity: []float64{50, 60, 40}}
	with := arm{goodput: []float64{100 * math.Exp(0.1), 110 * math.Exp(0.2), 90 * math.Exp(0.3)},
		capacity: []float64{50, 60, 40}, cpu: []float64{0.001, 0.003, 0.002}}
	out := capture.Stdout(t, func() { report(without, with, 5*time.Second, time.Second, 4, 8) })
	lines := strings.Split(out, "\n")
	first := "3 rounds (ABBA), 5s trials after 1s warm-up; demo on a static pool of 4, 8 connections"
	if !strings.HasPrefix(lines[0], first) {
		t.Errorf("first line %q", lines[0])
	}
	// The medians: goodput 100 without; with it, the middle of 110.5, 134.4 and 121.5.
	medians := map[string][]string{
		"without": {"100.0", "50.0"},
		"with":    {fmt.Sprintf("%.1f", 90*math.Exp(0.3)), "50.0"},
	}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) == 4 && f[1] == "check" {
			if want := medians[f[0]]; !slices.Equal(f[2:], want) {
				t.Errorf("%s check: medians %v, want %v", f[0], f[2:], want)
			}
			delete(medians, f[0])
		}
	}
	if len(medians) > 0 {
		t.Errorf("no line of the medians of %v:\n%s", medians, out)
	}
	h := 4.303 * 0.1 / math.Sqrt(3)
	for _, want := range []string{
		fmt.Sprintf("with / without, goodput: %.4f  95%% CI [%.4f, %.4f]",
			math.Exp(0.2), math.Exp(0.2-h), math.Exp(0.2+h)),
		"with / without, capacity (php-fpm, nginx and check's CPU): 1.0000  95% CI [1.0000, 1.0000]",
		"check's own CPU: 2.00 ms a second",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// Rounds kept in a file come back as they were, the file appended to across runs; a line that is not five
// figures, or a negative one, is an error naming the line.
func TestRoundLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rounds")
	rounds := [][2]figures{
		{{goodput: 700, capacity: 350.5}, {goodput: 690, capacity: 349, checkCPU: 0.0012}},
		{{goodput: 710, capacity: 351}, {goodput: 705.25, capacity: 350, checkCPU: 0.0011}},
		{{goodput: 1e6, capacity: 2e-3}, {goodput: 3, capacity: 4, checkCPU: 0}},
	}
	for _, part := range [][][2]figures{rounds[:2], rounds[2:]} { // two runs, one file
		l, err := openRoundLog(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range part {
			if err := l.add(r[0], r[1]); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	without, with, err := readRounds(path)
	if err != nil {
		t.Fatal(err)
	}
	var want [2]arm
	for _, r := range rounds {
		for i := range want {
			want[i].goodput = append(want[i].goodput, r[i].goodput)
			want[i].capacity = append(want[i].capacity, r[i].capacity)
		}
		want[1].cpu = append(want[1].cpu, r[1].checkCPU)
	}
	if fmt.Sprint(without) != fmt.Sprint(want[0]) || fmt.Sprint(with) != fmt.Sprint(want[1]) {
		t.Errorf("read back\n %v\n %v\nwant\n %v\n %v", without, with, want[0], want[1])
	}
	for _, bad := range []string{"1\t2\t3\t4\n", "1\t2\t3\t4\t5\t6\n", "1\t2\t-3\t4\t5\n", "1\t2\tx\t4\t5\n"} {
		p := filepath.Join(t.TempDir(), "bad")
		if err := os.WriteFile(p, []byte("1\t2\t3\t4\t5\n"+bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := readRounds(p); err == nil || !strings.Contains(err.Error(), p+":2:") {
			t.Errorf("line %q: %v, want an error at line 2", bad, err)
		}
	}
}

// Without -rounds-file nothing is kept, and keeping nothing is no error.
func TestNoRoundLog(t *testing.T) {
	l, err := openRoundLog("")
	if l != nil || err != nil {
		t.Fatalf("openRoundLog(\"\") = %v, %v", l, err)
	}
	if err := l.add(figures{goodput: 1}, figures{goodput: 2}); err != nil {
		t.Error(err)
	}
	if err := l.Close(); err != nil {
		t.Error(err)
	}
	if _, err := openRoundLog(filepath.Join(t.TempDir(), "no", "such", "dir", "rounds")); err == nil {
		t.Error("a rounds file in a missing directory: no error")
	}
}

// threadsCPU sums this test process's threads' CPU (it has used some to get here), and a process without
// threads to read is an error.
func TestThreadsCPU(t *testing.T) {
	d, err := threadsCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if d <= 0 {
		t.Errorf("this process's CPU so far: %v", d)
	}
	if _, err := threadsCPU(-1); err == nil {
		t.Error("pid -1: no error")
	}
}

func TestRunWantsTheBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "no-phptune")
	err := run(bin, 1, time.Second, time.Second, 1, 1, "")
	if err == nil || !strings.Contains(err.Error(), bin) {
		t.Errorf("run without the binary: %v, want an error naming it", err)
	}
}
