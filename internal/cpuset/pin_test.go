package cpuset

import (
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/phptune/phptune/internal/measure"
)

// Spread pins a group's members but its leader one to each CPU in turn, in pid order; the leader keeps its set.
func TestSpreadPinsTheMembersInTurn(t *testing.T) {
	all, err := Allowed()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", "sleep 30 & sleep 30 & sleep 30 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pg := cmd.Process.Pid
	defer func() { syscall.Kill(-pg, syscall.SIGKILL); cmd.Wait() }()
	var pids []int
	for deadline := time.Now().Add(5 * time.Second); len(pids) < 4 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if pids, err = measure.ProcessGroup(pg); err != nil {
			t.Fatal(err)
		}
	}
	if len(pids) != 4 {
		t.Fatalf("group %d: %v, want the shell and its three sleeps", pg, pids)
	}
	if err := Spread(pg, all); err != nil {
		t.Fatal(err)
	}
	slices.Sort(pids)
	i := 0
	for _, pid := range pids {
		var m unix.CPUSet
		if err := unix.SchedGetaffinity(pid, &m); err != nil {
			t.Fatal(err)
		}
		want := Set{all[i%len(all)]}
		if pid == pg {
			want = all
		} else {
			i++
		}
		if got := setOf(&m); !slices.Equal(got, want) {
			t.Errorf("pid %d (leader %d): CPUs %s, want %s", pid, pg, got, want)
		}
	}
}
