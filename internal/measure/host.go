package measure

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Host describes the machine for a result's environment record.
type Host struct {
	CPUModel   string `json:"cpu_model"`
	CPUs       int    `json:"cpus"`        // CPUs this process may run on (runtime.NumCPU: affinity, not quota)
	CPUsOnline int    `json:"cpus_online"` // processors listed in /proc/cpuinfo
	MemTotal   int64  `json:"mem_total"`   // bytes
	Kernel     string `json:"kernel"`      // release, e.g. "6.1.0-18-amd64"
	// THP is the transparent huge pages mode (the bracketed word of
	// /sys/kernel/mm/transparent_hugepage/enabled): "always", "madvise" or "never"; "" when the kernel has none.
	THP          string `json:"thp"`
	NrHugepages  int    `json:"nr_hugepages"`   // reserved huge pages (vm.nr_hugepages)
	HugePageSize int64  `json:"huge_page_size"` // bytes (Hugepagesize in /proc/meminfo), 0 when absent
}

// ReadHost reads the CPU, memory, kernel and huge pages set-up. What a kernel may lack (THP, hugetlb) is left
// empty; what every Linux has (/proc/cpuinfo, /proc/meminfo, the release) is an error when unreadable.
func ReadHost() (Host, error) {
	h := Host{CPUs: runtime.NumCPU()}
	cpuinfo, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return h, err
	}
	h.CPUModel, h.CPUsOnline = parseCPUInfo(cpuinfo)
	mem, err := readMeminfo()
	if err != nil {
		return h, err
	}
	h.MemTotal, h.HugePageSize = mem["MemTotal"], mem["Hugepagesize"]
	rel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return h, err
	}
	h.Kernel = strings.TrimSpace(string(rel))
	if b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err == nil {
		h.THP = bracketed(string(b))
	}
	if b, err := os.ReadFile("/proc/sys/vm/nr_hugepages"); err == nil {
		h.NrHugepages, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	return h, nil
}

// MemAvailable is the kernel's estimate of memory available for new work without swapping, in bytes.
func MemAvailable() (int64, error) {
	mem, err := readMeminfo()
	if err != nil {
		return 0, err
	}
	v, ok := mem["MemAvailable"]
	if !ok {
		return 0, fmt.Errorf("no MemAvailable in /proc/meminfo")
	}
	return v, nil
}

// readMeminfo reads /proc/meminfo: values with a kB unit in bytes, the others (HugePages_Total, ...) as they are.
func readMeminfo() (map[string]int64, error) { return readMeminfoAt("/proc/meminfo") }

// readMeminfoAt reads a meminfo file at path (/proc/meminfo, or a captured one).
func readMeminfoAt(path string) (map[string]int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(val)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, key, err)
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		m[key] = n
	}
	return m, nil
}

// parseCPUInfo gives the first CPU's model name and the number of processors. ARM lists no "model name" on
// older kernels: "Hardware" or "Processor" then stand in.
func parseCPUInfo(b []byte) (model string, n int) {
	alt := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "processor":
			n++
		case "model name", "cpu model", "cpu": // x86 and ARM, MIPS, POWER
			if model == "" {
				model = val
			}
		case "Hardware", "Processor", "uarch":
			if alt == "" {
				alt = val
			}
		}
	}
	if model == "" {
		model = alt
	}
	return model, n
}

// bracketed gives the word in brackets of a sysfs choice list: "always [madvise] never" -> "madvise".
func bracketed(s string) string {
	i, j := strings.IndexByte(s, '['), strings.IndexByte(s, ']')
	if i < 0 || j < i {
		return strings.TrimSpace(s)
	}
	return s[i+1 : j]
}
