package measure

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// burnCPU spins until this process has used d more CPU time (so it holds under contention).
func burnCPU(t testing.TB, d time.Duration) {
	start, err := SelfCPU()
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for {
		for i := 0; i < 1e6; i++ {
			x += i
		}
		if now, _ := SelfCPU(); now-start >= d {
			break
		}
	}
	_ = x
}

func TestReadProcSelf(t *testing.T) {
	before, err := ReadProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	burnCPU(t, 300*time.Millisecond)
	after, err := ReadProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if grew := after.CPU - before.CPU; grew < 250*time.Millisecond {
		t.Errorf("CPU grew by %v after a 300 ms busy loop", grew)
	}
	if after.PID != os.Getpid() || after.PPID != os.Getppid() {
		t.Errorf("pid %d ppid %d, want %d %d", after.PID, after.PPID, os.Getpid(), os.Getppid())
	}
	if after.Comm == "" || !strings.Contains(after.Cmdline, "measure") {
		t.Errorf("comm %q cmdline %q", after.Comm, after.Cmdline)
	}
	if after.USS <= 0 || after.RSS < after.USS || after.PSS <= 0 || after.PSS > after.RSS {
		t.Errorf("memory: RSS %d PSS %d USS %d", after.RSS, after.PSS, after.USS)
	}
	if after.RSS != after.USS+after.SharedClean+after.SharedDirty {
		t.Errorf("RSS %d != USS %d + shared %d + %d", after.RSS, after.USS, after.SharedClean, after.SharedDirty)
	}
	t.Logf("%+v", after)
}

func TestReadProcGone(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadProc(cmd.Process.Pid); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadProc of an exited process: %v, want os.ErrNotExist", err)
	}

	// A zombie (exited, not reaped) has no memory to read: gone too, but still in its process group.
	z := exec.Command("true")
	if err := z.Start(); err != nil {
		t.Fatal(err)
	}
	defer z.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, _, err := readStat(z.Process.Pid, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st.state == 'Z' {
			pids, err := ProcessGroup(st.pgrp)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range pids {
				found = found || p == z.Process.Pid
			}
			if !found {
				t.Errorf("zombie %d not in its group %d: %v", z.Process.Pid, st.pgrp, pids)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("child never became a zombie")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := ReadProc(z.Process.Pid); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadProc of a zombie: %v, want os.ErrNotExist", err)
	}
}

func TestParseStat(t *testing.T) {
	line := "4242 (a (weird) name) S 1 4240 4240 0 -1 4194560 100 0 0 0 123 45 6 7 20 0 1 0 98765 1000 200 " +
		"18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
	st, err := parseStat([]byte(line), true)
	if err != nil {
		t.Fatal(err)
	}
	want := statLine{pid: 4242, ppid: 1, pgrp: 4240, comm: "a (weird) name", state: 'S', ticks: 168, childTicks: 13, start: 98765}
	if st != want {
		t.Errorf("got %+v\nwant %+v", st, want)
	}
	if _, err := parseStat([]byte("12 (x) S 1 2 3\n"), false); err == nil {
		t.Error("a short line parsed")
	}
}

func TestSelfCPU(t *testing.T) {
	a, err := SelfCPU()
	if err != nil {
		t.Fatal(err)
	}
	burnCPU(t, 50*time.Millisecond)
	b, _ := SelfCPU()
	if b-a < 50*time.Millisecond {
		t.Errorf("SelfCPU grew by %v", b-a)
	}
}

func TestHostAndMemAvailable(t *testing.T) {
	h, err := ReadHost()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", h)
	if h.CPUs < 1 || h.CPUsOnline < 1 || h.MemTotal < 64<<20 || h.Kernel == "" {
		t.Errorf("implausible host %+v", h)
	}
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err == nil {
		switch h.THP {
		case "always", "madvise", "never":
		default:
			t.Errorf("THP mode %q", h.THP)
		}
	}
	avail, err := MemAvailable()
	if err != nil {
		t.Fatal(err)
	}
	if avail <= 0 || avail > h.MemTotal {
		t.Errorf("MemAvailable %d of MemTotal %d", avail, h.MemTotal)
	}
	if got := bracketed("always [madvise] never\n"); got != "madvise" {
		t.Errorf("bracketed: %q", got)
	}
}
