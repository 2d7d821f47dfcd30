package measure

// The limits of the place a pool runs in: the host's memory and CPUs, narrowed by a cgroup's (v1 or v2). A
// container's pool may use the cgroup's memory, not the host's: sized for the host, it is the OOM killer that
// answers (sclorg/s2i-php-container#416). Read from files only: /proc/PID/cgroup names the cgroup,
// /proc/PID/mountinfo where each hierarchy is mounted, and the limit files along the path to the hierarchy's root
// (a parent's limit binds its children too).

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// Limits are the memory and CPUs a pool may use where it runs.
type Limits struct {
	// Cgroup is the memory cgroup's path in its hierarchy ("/system.slice/php8.2-fpm.service"); "" when the
	// process is in no memory-limited cgroup that could be read.
	Cgroup string `json:"cgroup,omitempty"`
	// Version is the cgroup version the memory controller was read from: 1, 2, or 0 for none.
	Version int `json:"cgroup_version,omitempty"`
	// MemoryMax is the tightest memory limit on the cgroup's path, in bytes; 0 when there is none.
	MemoryMax int64 `json:"memory_max,omitempty"`
	// MemoryMaxFile is the file that set it ("/sys/fs/cgroup/memory/app/memory.limit_in_bytes").
	MemoryMaxFile string `json:"memory_max_file,omitempty"`
	// MemoryHigh is v2's memory.high, where the kernel throttles and reclaims; 0 when unset.
	MemoryHigh int64 `json:"memory_high,omitempty"`
	// MemoryUsed is what the cgroup holds now, less the page cache the kernel can drop (inactive file pages).
	MemoryUsed int64 `json:"memory_used,omitempty"`
	// CPUQuota is the CPUs a CFS quota allows (quota / period, the tightest on the path); 0 when there is none.
	CPUQuota float64 `json:"cpu_quota,omitempty"`
	// CPUQuotaFile is the file that set it ("/sys/fs/cgroup/cpu/app/cpu.cfs_quota_us"), and CPUCgroup the cpu
	// controller's cgroup path, which need not be the memory's (v1 hierarchies are separate).
	CPUQuotaFile string `json:"cpu_quota_file,omitempty"`
	CPUCgroup    string `json:"cpu_cgroup,omitempty"`
	// CPUSet is the number of CPUs in the effective cpuset; 0 when unknown.
	CPUSet int `json:"cpuset_cpus,omitempty"`
	// The host's: processors this process may run on, MemTotal and MemAvailable.
	HostCPUs         int   `json:"host_cpus"`
	HostMemTotal     int64 `json:"host_mem_total"`
	HostMemAvailable int64 `json:"host_mem_available"`

	dir string // the memory cgroup's directory, for the OOM counter
}

// ReadLimits reads the limits of this process's own cgroup (cgroup ""), or of a named one: a directory under a
// cgroup mount (/sys/fs/cgroup/memory/app) or a path in the hierarchy (/system.slice/php8.2-fpm.service).
func ReadLimits(cgroup string) (Limits, error) { return sysfs{root: "/"}.limits("self", cgroup) }

// ReadPlace is ReadLimits for the place a pool is sized for: with no cgroup to read (not Linux's /proc) and none
// named, the host's CPUs and available memory alone.
func ReadPlace(cgroup string) (Limits, error) {
	lim, err := ReadLimits(cgroup)
	if err != nil && cgroup == "" {
		lim = Limits{HostCPUs: runtime.NumCPU()}
		lim.HostMemAvailable, _ = MemAvailable()
		return lim, nil
	}
	return lim, err
}

// ReadLimitsOf reads the limits of the cgroup process pid is in (a live pool's master).
func ReadLimitsOf(pid int) (Limits, error) { return sysfs{root: "/"}.limits(strconv.Itoa(pid), "") }

// CPUs is the CPUs the pool may use: the host's, the cpuset's and the quota's, the least.
func (l Limits) CPUs() float64 {
	n := float64(max(l.HostCPUs, 1))
	if l.CPUSet > 0 {
		n = min(n, float64(l.CPUSet))
	}
	if l.CPUQuota > 0 {
		n = min(n, l.CPUQuota)
	}
	return n
}

// WholeCPUs is CPUs rounded up, at least 1: a quota of 1.5 CPUs keeps two busy part of the time.
func (l Limits) WholeCPUs() int { return max(1, int(math.Ceil(l.CPUs()-1e-9))) }

// Memory is what a pool started now may use, and what bounds it: the host's MemAvailable less a reserve for
// everything else on it (a tenth, at least 512 MiB), or, when tighter, the cgroup's limit less what the cgroup
// holds already and a reserve of its own (a twentieth of the limit, at least 16 MiB: its OOM killer acts at the
// limit itself). The cgroup's memory.high counts as its limit: above it the kernel throttles the pool.
func (l Limits) Memory() (int64, string) {
	n, bound, _ := l.memory()
	return n, bound
}

// CgroupBound says whether the cgroup's limit, not the host's memory, bounds Memory.
func (l Limits) CgroupBound() bool {
	_, _, c := l.memory()
	return c
}

func (l Limits) memory() (int64, string, bool) {
	host := l.HostMemAvailable - max(l.HostMemAvailable/10, 512<<20)
	byCgroup := false
	bound := fmt.Sprintf("the host's available memory (%s, less a reserve of %s)", mib(l.HostMemAvailable),
		mib(max(l.HostMemAvailable/10, 512<<20)))
	limit := l.MemoryMax
	file := l.MemoryMaxFile
	if l.MemoryHigh > 0 && (limit == 0 || l.MemoryHigh < limit) {
		limit, file = l.MemoryHigh, filepath.Join(l.dir, "memory.high")
	}
	if limit > 0 {
		reserve := max(limit/20, 16<<20)
		if c := limit - l.MemoryUsed - reserve; c < host {
			host, byCgroup = c, true
			bound = fmt.Sprintf("the cgroup %s's limit (%s in %s, %s in use, less a reserve of %s)", l.Cgroup, mib(limit), file,
				mib(l.MemoryUsed), mib(reserve))
		}
	}
	return max(host, 0), bound, byCgroup
}

// OOMKills is how many processes the kernel's OOM killer has killed in the memory cgroup so far (its
// descendants included); ok is false when there is no memory cgroup or the kernel keeps no count.
func (l Limits) OOMKills() (n int64, ok bool) {
	if l.dir == "" {
		return 0, false
	}
	name := "memory.events" // v2
	if l.Version == 1 {
		name = "memory.oom_control"
	}
	b, err := os.ReadFile(filepath.Join(l.dir, name))
	if err != nil {
		return 0, false
	}
	v, ok := keyed(b)["oom_kill"]
	return v, ok
}

// MemoryPeak is the most the memory cgroup has held since it was made (v1's memory.max_usage_in_bytes, v2's
// memory.peak); ok is false when there is no memory cgroup or the kernel keeps no such figure.
func (l Limits) MemoryPeak() (n int64, ok bool) {
	if l.dir == "" {
		return 0, false
	}
	name := "memory.peak" // v2, from Linux 5.19
	if l.Version == 1 {
		name = "memory.max_usage_in_bytes"
	}
	b, err := os.ReadFile(filepath.Join(l.dir, name))
	if err != nil {
		return 0, false
	}
	n, err = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}

func mib(b int64) string { return fmt.Sprintf("%d MiB", b>>20) }

// sysfs reads /proc and /sys under root: "/" on a host, a directory of captured files in tests.
type sysfs struct{ root string }

func (s sysfs) path(p string) string { return filepath.Join(s.root, p) }

// mount is a cgroup hierarchy's mount: where it is, and which cgroup path its root is (a container sees its own
// cgroup as "/" when the namespace hides the rest).
type mount struct {
	point, root string
	version     int
	controllers map[string]bool // v1: the controllers mounted there
}

func (s sysfs) limits(pid, named string) (Limits, error) {
	var l Limits
	l.HostCPUs = runtime.NumCPU()
	mem, err := readMeminfoAt(s.path("/proc/meminfo"))
	if err != nil {
		return l, err
	}
	l.HostMemTotal, l.HostMemAvailable = mem["MemTotal"], mem["MemAvailable"]
	mounts, err := s.mounts(pid)
	if err != nil {
		return l, err
	}
	paths, err := s.cgroupPaths(pid)
	if err != nil {
		return l, err
	}
	memDir, cpuDir, setDir, v, err := s.dirs(mounts, paths, named)
	if err != nil {
		return l, err
	}
	if memDir.dir != "" {
		l.Version, l.Cgroup, l.dir = v, memDir.cgroup, memDir.dir
		s.readMemory(&l, memDir)
	}
	if cpuDir.dir != "" {
		l.CPUCgroup = cpuDir.cgroup
		l.CPUQuota, l.CPUQuotaFile = s.quota(cpuDir)
	}
	if setDir.dir != "" {
		l.CPUSet = s.cpuset(setDir.dir, v)
	}
	return l, nil
}

// cgroupDir is a cgroup's directory and the mount it is under (the walk up for limits stops there).
type cgroupDir struct {
	dir, top, cgroup string
	version          int // its hierarchy's cgroup version
}

// dirs finds the directories of the memory, cpu and cpuset controllers: v1 where the controller is mounted on
// its own hierarchy (a hybrid host mounts v1 controllers and an empty v2), else v2's one directory. A named
// cgroup missing from a controller's hierarchy (v1 hierarchies are separate) leaves that controller unread; one
// missing from all of them is an error.
func (s sysfs) dirs(mounts []mount, paths map[string]string, named string) (memD, cpuD, setD cgroupDir, version int, err error) {
	if named != "" {
		named = hierarchyPath(mounts, named)
	}
	find := func(ctrl string) (cgroupDir, int) {
		for _, m := range mounts {
			if m.version == 1 && m.controllers[ctrl] {
				d := s.dirIn(m, paths[ctrl], named)
				d.version = 1
				return d, 1
			}
		}
		for _, m := range mounts {
			if m.version == 2 && s.v2Has(m, ctrl) {
				d := s.dirIn(m, paths[""], named)
				d.version = 2
				return d, 2
			}
		}
		return cgroupDir{}, 0
	}
	var cv int
	memD, version = find("memory")
	cpuD, cv = find("cpu")
	setD, _ = find("cpuset")
	var missing error
	for _, d := range []*cgroupDir{&memD, &cpuD, &setD} {
		if d.dir == "" {
			continue
		}
		if _, err := os.Stat(d.dir); err != nil {
			missing, *d = err, cgroupDir{}
		}
	}
	if memD.dir == "" {
		version = 0
		if cpuD.dir != "" {
			version = cv
		}
	}
	if named != "" && memD.dir == "" && cpuD.dir == "" {
		why := "no memory or cpu controller is mounted to read it from"
		if missing != nil {
			why = missing.Error() + " (give a directory under /sys/fs/cgroup or a path as /proc/PID/cgroup shows it)"
		}
		return memD, cpuD, setD, 0, fmt.Errorf("cgroup %s: %s", named, why)
	}
	return memD, cpuD, setD, version, nil
}

// hierarchyPath turns a directory under a cgroup mount (/sys/fs/cgroup/memory/app) into the cgroup's path in
// its hierarchy (/app); a path is returned as it is.
func hierarchyPath(mounts []mount, p string) string {
	p = filepath.Clean(p)
	for _, m := range mounts {
		if rel, err := filepath.Rel(m.point, p); err == nil && !strings.HasPrefix(rel, "..") && m.point != "/" {
			return filepath.Join(m.root, "/"+filepath.ToSlash(rel))
		}
	}
	return p
}

// v2Has says whether a v2 hierarchy runs controller ctrl (its root's cgroup.controllers lists it).
func (s sysfs) v2Has(m mount, ctrl string) bool {
	b, err := os.ReadFile(filepath.Join(s.path(m.point), "cgroup.controllers"))
	if err != nil {
		return false
	}
	for _, c := range strings.Fields(string(b)) {
		if c == ctrl {
			return true
		}
	}
	return false
}

// dirIn is the directory of cgroup path p (or of named, when given: a path in the hierarchy) under mount m.
func (s sysfs) dirIn(m mount, p, named string) cgroupDir {
	top := s.path(m.point)
	if named != "" {
		p = named
	}
	if p == "" {
		return cgroupDir{}
	}
	rel := p
	if m.root != "/" {
		if r, err := filepath.Rel(m.root, p); err == nil && !strings.HasPrefix(r, "..") {
			rel = r
		}
	}
	return cgroupDir{dir: filepath.Join(top, rel), top: top, cgroup: p}
}

// up calls f with d's directory and each parent's up to its mount's root.
func up(d cgroupDir, f func(dir string)) {
	for dir := d.dir; ; dir = filepath.Dir(dir) {
		f(dir)
		if dir == d.top || len(dir) <= len(d.top) || dir == "/" {
			return
		}
	}
}

// readMemory fills the tightest memory limit on the path, memory.high (v2) and what the cgroup holds.
func (s sysfs) readMemory(l *Limits, d cgroupDir) {
	limitFile := "memory.max"
	if l.Version == 1 {
		limitFile = "memory.limit_in_bytes"
	}
	up(d, func(dir string) {
		if v, ok := readLimit(filepath.Join(dir, limitFile)); ok && (l.MemoryMax == 0 || v < l.MemoryMax) {
			l.MemoryMax, l.MemoryMaxFile = v, filepath.Join(dir, limitFile)
		}
		if l.Version == 2 {
			if v, ok := readLimit(filepath.Join(dir, "memory.high")); ok && (l.MemoryHigh == 0 || v < l.MemoryHigh) {
				l.MemoryHigh = v
			}
		}
	})
	usage := "memory.current"
	if l.Version == 1 {
		usage = "memory.usage_in_bytes"
	}
	if b, err := os.ReadFile(filepath.Join(d.dir, usage)); err == nil {
		l.MemoryUsed, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if st, err := os.ReadFile(filepath.Join(d.dir, "memory.stat")); err == nil {
			m := keyed(st)
			cache, ok := m["inactive_file"] // v2, and v1's own (non-hierarchical) figure
			if t, okT := m["total_inactive_file"]; okT {
				cache, ok = t, true // v1, with its descendants, as usage_in_bytes counts them
			}
			if ok && cache <= l.MemoryUsed {
				l.MemoryUsed -= cache
			}
		}
	}
}

// noLimitV1 is what v1's memory.limit_in_bytes reads without a limit (PAGE_COUNTER_MAX pages, page-aligned);
// anything at or above a petabyte is taken as none.
const noLimit = int64(1) << 50

// readLimit reads a limit file: a number of bytes, "max" (v2: none) or v1's huge "no limit" value.
func readLimit(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 || v >= noLimit {
		return 0, false
	}
	return v, true
}

// quota is the tightest CFS quota on the path, in CPUs, and its file: v1 cpu.cfs_quota_us over cpu.cfs_period_us
// (-1: none), v2 cpu.max "QUOTA PERIOD" ("max ...": none). The cpu controller's own version is read, not the
// memory's: a host may mount the two in different versions.
func (s sysfs) quota(d cgroupDir) (float64, string) {
	best, file := 0.0, ""
	up(d, func(dir string) {
		var q, p float64
		name := "cpu.max"
		if d.version == 1 {
			name = "cpu.cfs_quota_us"
			qs, err1 := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us"))
			ps, err2 := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us"))
			if err1 != nil || err2 != nil {
				return
			}
			q, _ = strconv.ParseFloat(strings.TrimSpace(string(qs)), 64)
			p, _ = strconv.ParseFloat(strings.TrimSpace(string(ps)), 64)
		} else {
			b, err := os.ReadFile(filepath.Join(dir, "cpu.max"))
			if err != nil {
				return
			}
			f := strings.Fields(string(b))
			if len(f) != 2 || f[0] == "max" {
				return
			}
			q, _ = strconv.ParseFloat(f[0], 64)
			p, _ = strconv.ParseFloat(f[1], 64)
		}
		if q > 0 && p > 0 && (best == 0 || q/p < best) {
			best, file = q/p, filepath.Join(dir, name)
		}
	})
	return best, file
}

// cpuset counts the CPUs of the effective cpuset (v1 cpuset.effective_cpus, else cpuset.cpus; v2
// cpuset.cpus.effective); 0 when none can be read.
func (s sysfs) cpuset(dir string, version int) int {
	names := []string{"cpuset.cpus.effective", "cpuset.cpus"}
	if version == 1 {
		names = []string{"cpuset.effective_cpus", "cpuset.cpus"}
	}
	for _, n := range names {
		if b, err := os.ReadFile(filepath.Join(dir, n)); err == nil {
			if c := countCPUList(strings.TrimSpace(string(b))); c > 0 {
				return c
			}
		}
	}
	return 0
}

// countCPUList counts a kernel CPU list such as "0-3,8,10-11"; 0 when it cannot be read.
func countCPUList(s string) int {
	n := 0
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}

// cgroupPaths reads /proc/PID/cgroup: v1 lines "ID:controller,controller:/path" give each controller's path,
// v2's "0::/path" the path under key "".
func (s sysfs) cgroupPaths(pid string) (map[string]string, error) {
	b, err := os.ReadFile(s.path(filepath.Join("/proc", pid, "cgroup")))
	if err != nil {
		return nil, fmt.Errorf("read the process's cgroup: %w", err)
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			out[""] = f[2]
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			out[c] = f[2]
		}
	}
	return out, nil
}

// mounts reads the cgroup hierarchies from /proc/PID/mountinfo: "ID PARENT MAJ:MIN ROOT POINT OPTS ... - TYPE
// SOURCE SUPEROPTS".
func (s sysfs) mounts(pid string) ([]mount, error) {
	b, err := os.ReadFile(s.path(filepath.Join("/proc", pid, "mountinfo")))
	if err != nil {
		return nil, fmt.Errorf("read the mounts: %w", err)
	}
	var out []mount
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 1 {
			continue
		}
		m := mount{root: f[3], point: unescapeMount(f[4])}
		switch g[0] {
		case "cgroup2":
			m.version = 2
		case "cgroup":
			m.version, m.controllers = 1, map[string]bool{}
			if len(g) >= 3 {
				for _, o := range strings.Split(g[2], ",") {
					m.controllers[o] = true
				}
			}
		default:
			continue
		}
		out = append(out, m)
	}
	return out, nil
}

// unescapeMount undoes mountinfo's octal escapes (a space is \040).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// keyed reads "key value" lines (memory.stat, memory.events, memory.oom_control).
func keyed(b []byte) map[string]int64 {
	m := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		if v, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			m[f[0]] = v
		}
	}
	return m
}
