package measure

// The php-fpm pools running on this host, found read-only: the masters by their title in /proc
// ("php-fpm: master process (/etc/php/8.2/fpm/php-fpm.conf)"), their workers by theirs ("php-fpm: pool www") and
// parent, each pool's settings from the configuration the master names, and the workers' memory from
// /proc/PID/smaps_rollup. Nothing is sent to a pool and no file is written.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

const (
	masterTitle = "php-fpm: master process"
	poolTitle   = "php-fpm: pool "
)

// RunningPool is one pool of a running php-fpm master. The embedded FPMPoolConfig comes from the configuration
// file the master names; when that cannot be read (another user's, or gone), only Name is set, from the
// workers' titles, and ConfigError says why. The file may have changed since the master read it (a reload
// makes the master read it again).
type RunningPool struct {
	FPMPoolConfig
	MasterPID int `json:"master_pid"`
	// MasterTitle is the master's command line as php-fpm rewrote it.
	MasterTitle string `json:"master_title"`
	// Config is the main configuration file the master was started with, as its title names it. A caller that
	// started pools of its own tells them apart by MasterPID or by Config (phptune's lie under its private dirs).
	Config      string `json:"config"`
	ConfigError string `json:"config_error,omitempty"`
	// ConfigDenied says the configuration could not be read for lack of permission (root could).
	ConfigDenied bool `json:"config_denied,omitempty"`
	// Prefix is php-fpm's prefix the configuration's relative include= lines were taken from (FPMPrefixes).
	Prefix string `json:"prefix,omitempty"`
	// ConfigFiles are the files read: the main one, then its includes.
	ConfigFiles []string `json:"config_files,omitempty"`
	// Workers are the pool's worker pids, ascending (the master's children titled with the pool's name).
	Workers []int `json:"workers"`
	// WorkerUID and WorkerGID are the first worker's real user and group ids; -1 without a worker.
	WorkerUID int `json:"worker_uid"`
	WorkerGID int `json:"worker_gid"`
	// Memory is the workers' memory now: private (USS = Private_Clean + Private_Dirty, max and mean) and shared.
	Memory WorkerMemory `json:"memory"`
	// MasterUSS is the master's private memory, bytes.
	MasterUSS int64 `json:"master_uss"`
	// MemoryError says why the memory could not be read (another user's processes, when not root).
	MemoryError string `json:"memory_error,omitempty"`
}

// fpmProc is a php-fpm process found in /proc.
type fpmProc struct {
	pid, ppid int
	start     uint64
	title     string
}

// RunningPools lists the pools of every php-fpm master on this host, masters in pid order, pools in their
// configuration's order (pools seen only in the workers' titles after them). A master whose configuration
// cannot be read is listed with what /proc shows: its pools by the workers' titles, or one entry without a name
// when it has no worker. prefix is php-fpm's -p for relative include= lines ("": guessed, FPMPrefixes).
func RunningPools(prefix string) ([]RunningPool, error) {
	procs, err := fpmProcs()
	if err != nil {
		return nil, err
	}
	var out []RunningPool
	for _, m := range procs {
		if strings.HasPrefix(m.title, masterTitle) {
			out = append(out, masterPools(m, procs, prefix)...)
		}
	}
	return out, nil
}

// fpmProcs scans /proc for processes titled "php-fpm: ...", in pid order.
func fpmProcs() ([]fpmProc, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, fmt.Errorf("list /proc: %w", err)
	}
	var out []fpmProc
	buf := make([]byte, 4096)
	for _, name := range names {
		pid, ok := atoi([]byte(name))
		if !ok || pid <= 0 {
			continue
		}
		b, err := readProcFile(procPath(int(pid), "cmdline"), buf)
		if err != nil || !bytes.HasPrefix(b, []byte("php-fpm: ")) {
			continue // gone, a kernel thread, or not php-fpm
		}
		buf = b[:0]
		title := string(bytes.TrimSpace(bytes.ReplaceAll(bytes.TrimRight(b, "\x00"), []byte{0}, []byte{' '})))
		st, b2, err := readStat(int(pid), buf)
		buf = b2
		if err != nil || st.state == 'Z' {
			continue
		}
		out = append(out, fpmProc{pid: int(pid), ppid: st.ppid, start: st.start, title: title})
	}
	slices.SortFunc(out, func(a, b fpmProc) int { return a.pid - b.pid })
	return out, nil
}

// masterPools is one master's pools.
func masterPools(m fpmProc, procs []fpmProc, prefix string) []RunningPool {
	base := RunningPool{MasterPID: m.pid, MasterTitle: m.title, Config: masterConfigPath(m.title), WorkerUID: -1, WorkerGID: -1}
	// Workers by pool name, in pid order.
	workers := map[string][]fpmProc{}
	var names []string
	for _, p := range procs {
		if p.ppid != m.pid || !strings.HasPrefix(p.title, poolTitle) {
			continue
		}
		name := strings.TrimSpace(strings.TrimPrefix(p.title, poolTitle))
		if _, ok := workers[name]; !ok {
			names = append(names, name)
		}
		workers[name] = append(workers[name], p)
	}
	var pools []RunningPool
	cfg, err := readMasterConfig(m.pid, base.Config, prefix, names)
	if err != nil {
		base.ConfigError, base.ConfigDenied = err.Error(), errors.Is(err, fs.ErrPermission)
	} else {
		base.ConfigFiles, base.Prefix = cfg.Files, cfg.Prefix
		for _, pc := range cfg.Pools {
			p := base
			p.FPMPoolConfig = pc
			pools = append(pools, p)
		}
	}
	for _, name := range names {
		if !slices.ContainsFunc(pools, func(p RunningPool) bool { return p.Name == name }) {
			p := base
			p.Name = name
			if err == nil {
				p.ConfigError = fmt.Sprintf("pool %s is not in %s read with php-fpm's prefix %s: give the master's -p with --prefix DIR "+
					"(relative include= lines are taken from it), or reload php-fpm if the file changed since it was read", name, base.Config, cfg.Prefix)
			}
			pools = append(pools, p)
		}
	}
	if len(pools) == 0 {
		pools = append(pools, base)
	}
	for i := range pools {
		pools[i].readWorkers(m, workers[pools[i].Name])
	}
	return pools
}

// readWorkers fills the pool's workers, their ids and their memory.
func (p *RunningPool) readWorkers(m fpmProc, ws []fpmProc) {
	buf := make([]byte, 4096)
	acc := newMemAcc()
	for _, w := range ws {
		p.Workers = append(p.Workers, w.pid)
		mem, b, err := readMem(w.pid, buf)
		buf = b
		if err != nil {
			if !isGone(err) && p.MemoryError == "" {
				p.MemoryError = memoryError(err)
			}
			continue
		}
		acc.add(w.pid, w.start, mem)
	}
	p.Memory = acc.memory()
	if len(ws) > 0 {
		p.WorkerUID, p.WorkerGID = ProcIDs(ws[0].pid)
	}
	if mem, _, err := readMem(m.pid, buf); err == nil {
		p.MasterUSS = mem.privateClean + mem.privateDirty
	} else if !isGone(err) && p.MemoryError == "" {
		p.MemoryError = memoryError(err)
	}
}

func memoryError(err error) string {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Sprintf("%v: run as root or as the pool's user to read its workers' memory", err)
	}
	return err.Error()
}

// masterConfigPath is the file in "php-fpm: master process (/etc/php/8.2/fpm/php-fpm.conf)".
func masterConfigPath(title string) string {
	rest := strings.TrimSpace(strings.TrimPrefix(title, masterTitle))
	if len(rest) >= 2 && rest[0] == '(' && rest[len(rest)-1] == ')' {
		return rest[1 : len(rest)-1]
	}
	return ""
}

// readMasterConfig reads the master's configuration as the master sees it: a relative path from its working
// directory, a master in another mount namespace (a container) through /proc/PID/root, ${VAR} from its
// environment where readable.
func readMasterConfig(pid int, path, prefix string, pools []string) (*FPMConfig, error) {
	if path == "" {
		return nil, fmt.Errorf("the master's title names no configuration file")
	}
	if !filepath.IsAbs(path) {
		cwd, err := os.Readlink(procPath(pid, "cwd"))
		if err != nil {
			return nil, fmt.Errorf("configuration %s is relative and the master's directory is unreadable: %w", path, err)
		}
		path = filepath.Join(cwd, path)
	}
	if OtherMountNamespace(pid) {
		// Includes inside would name paths of the container too; reading them through the root is left out.
		return nil, fmt.Errorf("the master runs in another mount namespace (a container): read %s inside it", path)
	}
	return ReadFPMConfigFrom(path, FPMPrefixes(path, pid, prefix), masterEnv(pid), pools)
}

// OtherMountNamespace says whether pid sees another filesystem than this process (a container; false when that
// cannot be told).
func OtherMountNamespace(pid int) bool {
	theirs, err1 := os.Readlink(procPath(pid, "ns/mnt"))
	ours, err2 := os.Readlink("/proc/self/ns/mnt")
	return err1 == nil && err2 == nil && theirs != ours
}

// masterEnv is the master's environment for ${VAR} in its configuration, or this process's where it is not
// readable.
func masterEnv(pid int) func(string) string {
	b, err := os.ReadFile(procPath(pid, "environ"))
	if err != nil {
		return os.Getenv
	}
	env := map[string]string{}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if k, v, ok := strings.Cut(string(kv), "="); ok {
			env[k] = v
		}
	}
	return func(k string) string { return env[k] }
}

// ProcIDs are a process's real user and group ids from /proc/PID/status; -1 when unreadable.
func ProcIDs(pid int) (uid, gid int) {
	uid, gid = -1, -1
	b, err := os.ReadFile(procPath(pid, "status"))
	if err != nil {
		return uid, gid
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		f := strings.Fields(v)
		if !ok || len(f) == 0 {
			continue
		}
		switch k {
		case "Uid":
			uid, _ = strconv.Atoi(f[0])
		case "Gid":
			gid, _ = strconv.Atoi(f[0])
		}
	}
	return uid, gid
}
