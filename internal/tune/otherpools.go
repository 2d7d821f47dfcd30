package tune

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/phptune/phptune/internal/bytesize"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/measure"
)

// OtherPool is a php-fpm pool already running where the pool is sized for, and the memory kept for it: what it
// may still grow to (its max_children workers at its largest worker's private memory now) beyond what its
// workers hold already, which the memory figure (available memory, or a cgroup's limit less its use) has
// counted out.
type OtherPool struct {
	Name        string `json:"name"`
	Config      string `json:"config"` // the master's configuration file
	File        string `json:"file,omitempty"`
	MasterPID   int    `json:"master_pid"`
	MaxChildren int    `json:"max_children"` // 0: not known (its configuration could not be read)
	Workers     int    `json:"workers"`      // running now
	WorkerBytes int64  `json:"worker_bytes"` // its largest worker's private memory now
	HeldBytes   int64  `json:"held_bytes"`   // what its workers hold now
	// Reserved is what is kept for it beyond HeldBytes: (MaxChildren - Workers) x WorkerBytes.
	Reserved int64  `json:"reserved_bytes"`
	Note     string `json:"note,omitempty"`
}

// OtherPools are the running pools that share the memory the pool is sized in: every pool on the host when the
// host's memory bounds it, the pools whose masters run in the cgroup (or below it) when a cgroup's does. Pools
// whose master is self (phptune's own) are left out.
func OtherPools(pools []measure.RunningPool, lim measure.Limits, cgroupBound bool, cgroupOf func(pid int) string) []OtherPool {
	var out []OtherPool
	for _, p := range pools {
		if cgroupBound && !under(cgroupOf(p.MasterPID), lim.Cgroup) {
			continue
		}
		o := OtherPool{Name: p.Name, Config: p.Config, File: p.File, MasterPID: p.MasterPID, MaxChildren: p.MaxChildren,
			Workers: len(p.Workers), WorkerBytes: p.Memory.PeakUSS, HeldBytes: int64(len(p.Workers)) * p.Memory.MeanUSS}
		switch {
		case p.MemoryError != "":
			o.Note = "its workers' memory could not be read: " + p.MemoryError
		case p.ConfigError != "":
			o.Note = "its configuration could not be read (" + p.ConfigError + "): only what it holds now is counted"
		case o.Workers == 0:
			o.Note = "no worker running: its workers' size is not known"
		default:
			o.Reserved = int64(max(o.MaxChildren-o.Workers, 0)) * o.WorkerBytes
		}
		out = append(out, o)
	}
	return out
}

// under says whether cgroup path p is root or below it.
func under(p, root string) bool {
	if p == "" || root == "" {
		return false
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && !strings.HasPrefix(rel, "..")
}

// Reserve is the memory kept for the other pools, and a line naming them for the output.
func Reserve(others []OtherPool) (int64, string) {
	var sum int64
	var names []string
	for _, o := range others {
		sum += o.Reserved
		names = append(names, fmt.Sprintf("%s (%d of %d children at %.1f MiB: %.1f MiB kept)", o.Name, o.Workers, o.MaxChildren,
			float64(o.WorkerBytes)/(1<<20), float64(o.Reserved)/(1<<20)))
	}
	if len(names) == 0 {
		return 0, ""
	}
	return sum, "other php-fpm pools here: " + strings.Join(names, ", ")
}

// SizeForPlace sizes the run (SizeFor) for the place cgroup names (--cgroup: a path as /proc/PID/cgroup shows it,
// or its directory under /sys/fs/cgroup; "": the one phptune runs in), read by measure.ReadPlace; memory (--memory,
// a size such as 4GiB) wins over its memory when given.
func (o *Options) SizeForPlace(cgroup, memory string) error {
	lim, err := measure.ReadPlace(cgroup)
	if err != nil {
		return exitcode.UsageErrorf("--cgroup: %v", err)
	}
	var bytes int64
	if memory != "" {
		if bytes, err = bytesize.Parse(memory); err != nil || bytes <= 0 {
			return exitcode.UsageErrorf("--memory %q: want a size such as 4GiB or 512MiB", memory)
		}
	}
	return o.SizeFor(lim, bytes, "--memory "+memory)
}

// SizeFor sizes the run for the place lim (measure.ReadPlace): its CPUs set nginx's workers (unless set), and
// the memory the pool may use is memory when given (from says where it came from: "--memory 4GiB"), else lim's
// less what the php-fpm pools already running in that memory may still grow to.
func (o *Options) SizeFor(lim measure.Limits, memory int64, from string) error {
	o.Limits = &lim
	if o.Stack.NginxWorkers == 0 {
		o.Stack.NginxWorkers = lim.WholeCPUs()
	}
	if memory > 0 {
		o.Memory, o.MemoryFrom = memory, from
		return nil
	}
	o.Memory, o.MemoryFrom = lim.Memory()
	// The pools already running in the same memory keep what they may still grow to.
	if pools, err := measure.RunningPools(""); err == nil {
		o.OtherPools = OtherPools(pools, lim, lim.CgroupBound(), func(pid int) string {
			l, _ := measure.ReadLimitsOf(pid)
			return l.Cgroup
		})
		if kept, names := Reserve(o.OtherPools); names != "" {
			o.Memory -= kept
			o.MemoryFrom += "; less " + names
		}
	}
	if o.Memory <= 0 {
		return exitcode.UsageErrorf("no memory is left for a pool: %s; free some or give --memory", o.MemoryFrom)
	}
	return nil
}
